//! Reading a request body: what its headers say it is, and within limits
//! of size and time.
//!
//! The body must be `application/json` (the media type exactly, with any
//! parameters such as `charset`), sent plainly or chunked: a body with a
//! transfer coding the server does not implement (`gzip, chunked`) gets
//! 501 and one with a content coding (`Content-Encoding: gzip`) gets 415,
//! rather than being read as if it were plain JSON.
//!
//! A client that sends its headers and then its body a byte at a time (or
//! not at all) would otherwise hold its connection, and its place among
//! [`Options::max_connections`], for as long as it likes. So a body must
//! arrive within [`Options::body_timeout`] of the head, plus one second for
//! every [`BODY_MIN_RATE`] bytes received: a large body on a slow but
//! working link gets the time it needs (the rule of Apache's
//! `mod_reqtimeout`), a trickle does not. Beyond it the client gets 408 and
//! the connection closes.
//!
//! [`Options::max_connections`]: crate::transport::http::Options::max_connections
//! [`Options::body_timeout`]: crate::transport::http::Options::body_timeout

use super::connections::BodyWatch;
use super::responses::rpc_error;
use super::state::Body;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use std::time::Duration;
use tokio::time::Instant;

/// Bytes per second a body must keep up, on average, once its first
/// [`Options::body_timeout`](crate::transport::http::Options::body_timeout) has
/// passed: 64 KiB/s (512 kbit/s), far below any network a server is
/// reached over, so only a client that means to stall falls short; and a
/// body of the default 4 MiB limit holds its connection for at most 64 s
/// beyond the timeout.
pub const BODY_MIN_RATE: usize = 64 * 1024;

/// Why a body was not read.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    /// More than the limit (413).
    TooLarge,
    /// Not in time (408).
    TimedOut,
    /// The connection broke or the framing was bad (400).
    Broken,
}

/// Checks what the headers say about the body (see the module docs): the
/// refusal to send otherwise.
#[allow(clippy::result_large_err)]
pub fn check_framing(headers: &HeaderMap) -> Result<(), Response<Body>> {
    let mut types = headers.get_all(header::CONTENT_TYPE).iter();
    let json = match (types.next(), types.next()) {
        (Some(value), None) => value.to_str().is_ok_and(is_json),
        _ => false,
    };
    if !json {
        return Err(rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            -32000,
            "Unsupported Media Type: the body must be application/json",
        ));
    }
    let transfer = codings(headers, header::TRANSFER_ENCODING);
    if transfer.iter().any(|c| c != "chunked") || transfer.len() > 1 {
        return Err(rpc_error(
            StatusCode::NOT_IMPLEMENTED,
            None,
            -32000,
            "Not Implemented: the only transfer coding this server reads is chunked",
        ));
    }
    if codings(headers, header::CONTENT_ENCODING)
        .iter()
        .any(|c| c != "identity")
    {
        let mut r = rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            -32000,
            "Unsupported Media Type: the body must not be compressed (no Content-Encoding)",
        );
        r.headers_mut().insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("identity"),
        );
        return Err(r);
    }
    Ok(())
}

/// Whether a `Content-Type` names the media type `application/json`
/// (parameters aside; `application/jsonx` or `application/json-seq` do not).
fn is_json(content_type: &str) -> bool {
    let media_type = content_type.split(';').next().unwrap_or("");
    media_type.trim().eq_ignore_ascii_case("application/json")
}

/// The codings a header lists, lower-cased, over all its lines.
fn codings(headers: &HeaderMap, name: header::HeaderName) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("?").split(','))
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty())
        .collect()
}

/// 408, and the connection closes (the rest of the body is not read).
pub fn timed_out(timeout: Duration) -> Response<Body> {
    let mut r = rpc_error(
        StatusCode::REQUEST_TIMEOUT,
        None,
        -32000,
        &format!(
            "Request Timeout: the body did not arrive in time ({} s, plus 1 s per {} KiB)",
            timeout.as_secs_f64(),
            BODY_MIN_RATE / 1024
        ),
    );
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// [`read`], marking the time on the connection's `watch`, so that the
/// server may give up on the body when it needs the connection for another
/// client (see [`crate::transport::http::connections`]).
pub async fn read_watched<B>(
    body: B,
    limit: usize,
    timeout: Duration,
    watch: Option<&BodyWatch>,
) -> Result<Bytes, BodyError>
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    let receiving = watch.map(BodyWatch::receiving);
    let given_up = async {
        match &receiving {
            Some(receiving) => receiving.given_up().await,
            None => std::future::pending().await,
        }
    };
    read(body, limit, timeout, given_up).await
}

/// Reads `body` whole: at most `limit` bytes, in time (see the module docs),
/// unless `given_up` resolves first (the server needs the connection: see
/// [`crate::transport::http::connections`]), which counts as too late.
pub async fn read<B>(
    mut body: B,
    limit: usize,
    timeout: Duration,
    given_up: impl std::future::Future<Output = ()>,
) -> Result<Bytes, BodyError>
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    tokio::pin!(given_up);
    let start = Instant::now();
    let mut received = BytesMut::new();
    // Most bodies come in one frame: kept as it is, not copied.
    let mut only: Option<Bytes> = None;
    loop {
        let allowance = Duration::from_secs_f64(
            (only.as_ref().map_or(0, Bytes::len) + received.len()) as f64 / BODY_MIN_RATE as f64,
        );
        let deadline = start + timeout + allowance;
        let next = tokio::select! {
            biased;
            next = tokio::time::timeout_at(deadline, body.frame()) => next,
            _ = &mut given_up => return Err(BodyError::TimedOut),
        };
        let frame = match next {
            Err(_) => return Err(BodyError::TimedOut),
            Ok(None) => break,
            Ok(Some(Err(_))) => return Err(BodyError::Broken),
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let total = only.as_ref().map_or(0, Bytes::len) + received.len() + data.len();
        if total > limit {
            return Err(BodyError::TooLarge);
        }
        match only.take() {
            None if received.is_empty() => only = Some(data),
            None => received.extend_from_slice(&data),
            Some(first) => {
                received.extend_from_slice(&first);
                received.extend_from_slice(&data);
            }
        }
    }
    Ok(only.unwrap_or_else(|| received.freeze()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::{Body, Frame};
    use std::collections::VecDeque;
    use std::convert::Infallible;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A body whose frames come after the given pauses (in ms).
    struct Paced {
        frames: VecDeque<(u64, &'static [u8])>,
        pause: Option<Pin<Box<tokio::time::Sleep>>>,
    }

    fn paced(frames: Vec<(u64, &'static [u8])>) -> Paced {
        Paced {
            frames: frames.into(),
            pause: None,
        }
    }

    impl Body for Paced {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            let Some(&(ms, bytes)) = self.frames.front() else {
                return Poll::Ready(None);
            };
            let pause = self
                .pause
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(ms))));
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.pause = None;
            self.frames.pop_front();
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(bytes)))))
        }
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn only_plain_or_chunked_json_bodies_pass() {
        let status = |lines: &[(&str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in lines {
                headers.append(
                    header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(value).unwrap(),
                );
            }
            check_framing(&headers).err().map(|r| r.status().as_u16())
        };
        let json = ("content-type", "application/json");
        assert_eq!(status(&[json]), None);
        assert_eq!(
            status(&[("content-type", "Application/JSON; charset=utf-8")]),
            None
        );
        assert_eq!(status(&[json, ("transfer-encoding", "chunked")]), None);
        assert_eq!(status(&[json, ("content-encoding", "identity")]), None);
        for bad in ["application/jsonx", "application/json-seq", "text/json", ""] {
            assert_eq!(status(&[("content-type", bad)]), Some(415), "{bad:?}");
        }
        assert_eq!(status(&[]), Some(415));
        assert_eq!(status(&[json, json]), Some(415));
        assert_eq!(
            status(&[json, ("transfer-encoding", "gzip, chunked")]),
            Some(501)
        );
        assert_eq!(
            status(&[json, ("transfer-encoding", "chunked, chunked")]),
            Some(501)
        );
        assert_eq!(
            status(&[
                json,
                ("transfer-encoding", "gzip"),
                ("transfer-encoding", "chunked")
            ]),
            Some(501)
        );
        assert_eq!(status(&[json, ("content-encoding", "gzip")]), Some(415));
    }

    #[test]
    fn a_body_in_time_is_read_whole_and_a_stalled_one_times_out() {
        let timeout = Duration::from_secs(10);
        let parts = vec![(0, &b"{\"a\""[..]), (3000, &b":1}"[..])];
        assert_eq!(
            run(read(paced(parts), 1024, timeout, std::future::pending())),
            Ok(Bytes::from_static(b"{\"a\":1}"))
        );
        // A byte every 2 s: after 10 s (and a few bytes' worth more) it is over.
        let trickle = (0..20).map(|_| (2000, &b"x"[..])).collect();
        assert_eq!(
            run(read(paced(trickle), 1024, timeout, std::future::pending())),
            Err(BodyError::TimedOut)
        );
        assert_eq!(
            run(read(
                paced(vec![(0, &b"0123456789"[..])]),
                4,
                timeout,
                std::future::pending()
            )),
            Err(BodyError::TooLarge)
        );
    }

    #[test]
    fn a_large_body_gets_a_second_more_for_every_64_kib() {
        static CHUNK: [u8; BODY_MIN_RATE] = [b' '; BODY_MIN_RATE];
        // 20 chunks of 64 KiB, one every 1.4 s: 28 s in all, within 10 s +
        // 20 s; a 10-s limit alone would have cut it.
        let parts = (0..20).map(|_| (1400, &CHUNK[..])).collect();
        let read = run(read(
            paced(parts),
            4 << 20,
            Duration::from_secs(10),
            std::future::pending(),
        ));
        assert_eq!(read.map(|b| b.len()), Ok(20 * BODY_MIN_RATE));
    }
}
