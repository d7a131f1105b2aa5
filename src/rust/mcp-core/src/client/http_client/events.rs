//! Event streams: reading a POST's stream or the session's GET stream,
//! resuming one with `Last-Event-ID` when its connection breaks, and the
//! listener that keeps the GET stream open.

use super::exchange::{
    base_request, deliver, refused, send_request, session_headers, Exchange, Failure,
};
use super::state::{lock, problem, Kind, Outgoing, Shared, DEFAULT_RETRY, RECONNECTS};
use crate::client::sse;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, StatusCode};
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Passes on the messages of an event stream until it ends, or until the
/// answer to `awaited` (when given) has come; true if it came.
pub(super) async fn read_stream(
    shared: &Shared,
    out: &Outgoing,
    exchange: Exchange,
    decoder: &mut sse::Decoder,
    awaited: Option<&str>,
) -> Result<bool, Failure> {
    let mut body = exchange.response.into_body();
    let mut events = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Ok(false); // the connection broke: resume if possible
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        events.clear();
        decoder.feed(&data, &mut events).map_err(Failure::new)?;
        for event in events.drain(..) {
            if event.kind != "message" || event.data.is_empty() {
                continue;
            }
            let message = match serde_json::from_str::<Value>(&event.data) {
                Ok(m) => m,
                Err(e) => {
                    problem(
                        shared,
                        format!("the server sent an event that is not JSON: {e}"),
                    );
                    continue;
                }
            };
            if deliver(shared, out, message, awaited).await {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// A POST's stream ended before its answer: ask for the rest with
/// `Last-Event-ID` on a GET, as the server's event ids allow (2025-11-25
/// servers may close a stream on purpose and let the client poll).
pub(super) async fn resume(
    shared: &Arc<Shared>,
    out: &Outgoing,
    mut decoder: sse::Decoder,
) -> Result<(), Failure> {
    let awaited = out.id.as_deref();
    let mut attempts = 0;
    loop {
        let (Some(last), Some(_)) = (
            decoder.last_id().map(String::from),
            lock(&shared.session).id.clone(),
        ) else {
            return Err(Failure::new(
                "the server closed the stream before it answered the request".into(),
            ));
        };
        if attempts == RECONNECTS || shared.closing.load(Ordering::SeqCst) {
            return Err(Failure::new(format!(
                "the server's stream broke {attempts} times before it answered the request"
            )));
        }
        attempts += 1;
        tokio::time::sleep(retry_delay(&decoder)).await;
        let Ok(exchange) = open_stream(shared, Some(&last)).await else {
            continue;
        };
        let status = exchange.response.status();
        if !status.is_success() {
            return Err(refused(shared, out, exchange).await);
        }
        let before = decoder.last_id().map(String::from);
        if read_stream(shared, out, exchange, &mut decoder, awaited).await? {
            return Ok(());
        }
        if decoder.last_id().map(String::from) != before {
            attempts = 0; // progress: this was not a failed attempt
        }
    }
}

pub(super) fn retry_delay(decoder: &sse::Decoder) -> Duration {
    decoder
        .retry_ms()
        .map(|ms| Duration::from_millis(ms.min(60_000)))
        .unwrap_or(DEFAULT_RETRY)
}

/// A GET of the session's stream, resuming after `last_event` if given.
pub(super) async fn open_stream(
    shared: &Shared,
    last_event: Option<&str>,
) -> Result<Exchange, String> {
    let mut builder = base_request(shared, Method::GET).header("accept", "text/event-stream");
    builder = session_headers(shared, builder);
    if let Some(last) = last_event {
        builder = builder.header("last-event-id", last);
    }
    let request = builder
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    send_request(shared, request).await
}

/// Opens the session's GET stream once, after `notifications/initialized`.
pub(super) fn start_listening(shared: &Arc<Shared>) {
    {
        let mut session = lock(&shared.session);
        if !shared.options.listen || session.id.is_none() || session.listening {
            return;
        }
        session.listening = true;
    }
    tokio::spawn(listen(shared.clone()));
}

/// Keeps the session's GET stream open, reconnecting (with `Last-Event-ID`)
/// when it breaks, until the session ends or the server says it offers
/// none.
pub(super) async fn listen(shared: Arc<Shared>) {
    let out = Outgoing {
        body: Bytes::new(),
        kind: Kind::Other,
        id: None,
        method: Some("GET".into()),
        modern: None,
    };
    let mut decoder = sse::Decoder::new(shared.options.max_message_size);
    let mut failures = 0;
    let session = lock(&shared.session).id.clone();
    while !shared.closing.load(Ordering::SeqCst) && lock(&shared.session).id == session {
        let last = decoder.last_id().map(String::from);
        match open_stream(&shared, last.as_deref()).await {
            Ok(exchange) => {
                let status = exchange.response.status();
                // 405: the server offers no GET stream, which is fine.
                if status == StatusCode::METHOD_NOT_ALLOWED {
                    return;
                }
                if !status.is_success() {
                    let failure = refused(&shared, &out, exchange).await;
                    problem(&shared, format!("the GET stream: {}", failure.message));
                    return;
                }
                match read_stream(&shared, &out, exchange, &mut decoder, None).await {
                    Ok(_) if decoder.last_id().map(String::from) != last => failures = 0,
                    Ok(_) => failures += 1,
                    Err(failure) => {
                        problem(&shared, format!("the GET stream: {}", failure.message));
                        return;
                    }
                }
            }
            Err(e) => {
                failures += 1;
                if failures == RECONNECTS {
                    problem(&shared, format!("the GET stream: {e}"));
                }
            }
        }
        if failures >= RECONNECTS {
            return;
        }
        tokio::time::sleep(retry_delay(&decoder)).await;
    }
}
