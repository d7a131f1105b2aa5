//! Where an HTTP engine's messages go: the response stream of the request
//! they belong to, or the session's standalone GET stream.
//!
//! A [`Postbox`] belongs to one engine (an HTTP session's, or a 2026-07-28
//! request's). The handler of each POST registers a stream under the id of
//! every request it carries; the engine's messages then find their way:
//! a response goes to the stream waiting for its id (and ends it); a
//! notification or a server-to-client request goes to the stream of the
//! request that caused it (the POST being read, or the call whose job
//! reported progress, logged or asked for input); what has no stream goes
//! to the session's GET stream if one is open, and is dropped otherwise.
//!
//! Every stream is a bounded channel. A slow reader loses notifications,
//! never its response: one place is always kept free for it.
//!
//! A handshake-era client that reads event streams gets resumable ones
//! (2025-03-26 on): the messages of each POST's stream pass through an
//! [`EventLog`] that numbers them (`id: <stream>:<seq>`) and keeps the
//! last [`LOG_CAPACITY`] of them, so a client whose connection broke (or
//! that the server let go on purpose, see [`Mailbox::close_stream`]) sends
//! `GET` with `Last-Event-ID` and gets what it missed, then the rest. A
//! session keeps at most [`MAX_LOGS`] logs, each for [`LOG_KEEP`] after its
//! last activity once no connection reads it.

mod channel;
mod log;
mod postbox;
mod sse;

pub use channel::{EventId, Piece, StreamRx, FIRST_CONNECTION, STREAM_CAPACITY};
pub use log::{stream, EventLog, Resumed, StreamTx, LOG_BYTES, LOG_CAPACITY, LOG_KEEP, MAX_LOGS};
pub use postbox::{error_code, OnDrop, Postbox};
pub use sse::{priming_event, sse_event, SseBody};

#[cfg(test)]
mod tests {
    use super::channel::lock;
    use super::postbox::{kind, Kind};
    use super::sse::COPIED_BELOW;
    use super::*;
    use crate::protocol::jsonrpc;
    use crate::protocol::jsonrpc::RequestId;
    use crate::transport::slots::{Cause, Mailbox};
    use bytes::Bytes;
    use http_body::Body;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::{Duration, Instant};
    use tokio::sync::mpsc;

    fn id(n: u64) -> RequestId {
        RequestId::from_number(n)
    }

    #[test]
    fn responses_notifications_and_server_requests_are_told_apart() {
        let response = jsonrpc::success(
            &id(7),
            "{\"content\":[{\"type\":\"text\",\"text\":\"\\\"method\\\"\"}]}",
        );
        assert!(matches!(kind(&response), Kind::Response(ids) if ids == vec![id(7)]));
        let error = jsonrpc::error(Some(&id(3)), -32601, "Method not found", None);
        assert!(matches!(kind(&error), Kind::Response(ids) if ids == vec![id(3)]));
        assert_eq!(error_code(error.as_bytes()), Some(-32601));
        assert_eq!(error_code(response.as_bytes()), None);
        let request = jsonrpc::request(&id(1), "elicitation/create", "{}");
        assert!(matches!(kind(&request), Kind::Request));
        let note = jsonrpc::notification("notifications/progress", "{}");
        assert!(matches!(kind(&note), Kind::Other));
        let batch = format!(
            "[{},{}]",
            jsonrpc::success(&id(1), "{}"),
            jsonrpc::success(&id(2), "{}")
        );
        assert!(matches!(kind(&batch), Kind::Response(ids) if ids == vec![id(1), id(2)]));
    }

    #[test]
    fn a_response_ends_its_stream_and_notes_follow_their_job() {
        let postbox = Postbox::default();
        let (tx, mut rx) = stream();
        assert!(postbox.open(&id(1), tx.clone()));
        assert!(!postbox.open(&id(1), tx), "one stream per waiting id");
        postbox.job_started(9, &id(1));
        postbox.deliver(
            jsonrpc::notification("notifications/progress", "{}"),
            &Cause::Job(9),
        );
        postbox.deliver(jsonrpc::success(&id(1), "{}"), &Cause::Job(9));
        assert!(matches!(rx.try_recv(), Ok(Piece::Note(..))));
        assert!(matches!(rx.try_recv(), Ok(Piece::Final(..))));
        // After its response, the job's messages have nowhere to go.
        postbox.deliver(
            jsonrpc::notification("notifications/progress", "{}"),
            &Cause::Job(9),
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_slow_reader_loses_notes_but_never_its_response() {
        let postbox = Postbox::default();
        let (tx, mut rx) = stream();
        postbox.open(&id(1), tx);
        for _ in 0..STREAM_CAPACITY * 2 {
            postbox.deliver(
                jsonrpc::notification("notifications/message", "{}"),
                &Cause::Inbound(Some(id(1))),
            );
        }
        postbox.deliver(jsonrpc::success(&id(1), "{}"), &Cause::Inbound(Some(id(1))));
        let mut notes = 0;
        loop {
            match rx.try_recv() {
                Ok(Piece::Note(..)) => notes += 1,
                Ok(Piece::Final(..)) => break,
                Err(e) => panic!("the response was lost: {e}"),
            }
        }
        assert_eq!(notes, STREAM_CAPACITY);
    }

    #[test]
    fn what_has_no_stream_goes_to_the_get_stream() {
        let postbox = Postbox::default();
        let (tx, mut rx) = stream();
        assert!(postbox.open_standalone(tx.clone()));
        assert!(!postbox.open_standalone(tx), "one GET stream per session");
        postbox.deliver(
            jsonrpc::notification("notifications/tools/list_changed", "{}"),
            &Cause::Timer,
        );
        assert!(matches!(rx.try_recv(), Ok(Piece::Note(..))));
        // Responses never go there.
        postbox.deliver(jsonrpc::success(&id(5), "{}"), &Cause::Timer);
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_cancelled_call_ends_its_stream_without_a_response() {
        let postbox = Postbox::default();
        let (tx, mut rx) = stream();
        postbox.open(&id(1), tx);
        postbox.job_started(4, &id(1));
        postbox.job_ended(4);
        assert!(matches!(
            rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
    }

    #[test]
    fn a_request_with_nowhere_to_go_is_reported_lost() {
        let postbox = Postbox::default();
        postbox.job_started(4, &id(1));
        postbox.deliver(
            jsonrpc::request(&id(9), "elicitation/create", "{}"),
            &Cause::Job(4),
        );
        assert_eq!(postbox.lost_requests(), vec![4]);
        assert!(postbox.lost_requests().is_empty());
    }

    fn ids_of(pieces: &[Piece]) -> Vec<u64> {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Note(_, id) | Piece::Final(_, id) => id.expect("an event id").seq,
            })
            .collect()
    }

    fn drain(rx: &mut StreamRx) -> Vec<Piece> {
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    }

    /// What a resumed connection replays from the log.
    fn missed(resumed: &Resumed) -> Vec<Piece> {
        let mut next = resumed.after + 1;
        std::iter::from_fn(|| {
            let piece = resumed.log.event_in(next, resumed.until)?;
            let (Piece::Note(_, id) | Piece::Final(_, id)) = &piece;
            next = id.expect("an event id").seq + 1;
            Some(piece)
        })
        .collect()
    }

    #[test]
    fn event_ids_read_back_and_reject_others() {
        let id = EventId { stream: 3, seq: 14 };
        assert_eq!(EventId::parse(&id.to_string()), Some(id));
        assert_eq!(EventId::parse(" 3:14 "), Some(id));
        assert_eq!(EventId::parse("3"), None);
        assert_eq!(EventId::parse("a:1"), None);
        assert_eq!(EventId::parse("1:-2"), None);
    }

    #[test]
    fn a_resumed_stream_gets_what_it_missed_then_the_rest() {
        let postbox = Postbox::default();
        let (log, mut rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        postbox.job_started(4, &id(1));
        let note = || jsonrpc::notification("notifications/progress", "{}");
        postbox.deliver(note(), &Cause::Job(4));
        assert_eq!(ids_of(&drain(&mut rx)), vec![1]);
        // The server lets the connection go; the call goes on.
        assert!(postbox.close_stream(4));
        assert!(rx.try_recv().is_err(), "the connection's channel ended");
        postbox.deliver(note(), &Cause::Job(4));
        postbox.deliver(note(), &Cause::Job(4));
        let resumed = postbox
            .resume(EventId {
                stream: log.stream,
                seq: 1,
            })
            .expect("kept");
        assert_eq!(ids_of(&missed(&resumed)), vec![2, 3]);
        let mut rx = resumed.rx;
        postbox.deliver(jsonrpc::success(&id(1), "{}"), &Cause::Job(4));
        let rest = drain(&mut rx);
        assert_eq!(ids_of(&rest), vec![4]);
        assert!(matches!(rest[0], Piece::Final(..)));
        // A client that lost that too gets it again, and the stream ends.
        let resumed = postbox
            .resume(EventId {
                stream: log.stream,
                seq: 3,
            })
            .expect("kept");
        assert_eq!(ids_of(&missed(&resumed)), vec![4]);
        let mut rx = resumed.rx;
        assert!(matches!(
            rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(postbox.resume(EventId { stream: 99, seq: 0 }).is_none());
    }

    #[test]
    fn a_stale_connection_going_away_leaves_the_resumed_one_alone() {
        let postbox = Postbox::default();
        let (log, first) = postbox.open_logged(&[id(1)], true).expect("opened");
        postbox.job_started(4, &id(1));
        // The client reconnects before the server noticed its first
        // connection broke (it notices on its next write, a keepalive).
        let Resumed {
            rx: mut resumed, ..
        } = postbox
            .resume(EventId {
                stream: log.stream,
                seq: 0,
            })
            .expect("kept");
        // Only then does the first connection's guard run.
        drop(first);
        log.detach_connection(FIRST_CONNECTION);
        postbox.deliver(jsonrpc::success(&id(1), "{}"), &Cause::Job(4));
        assert!(
            matches!(resumed.try_recv(), Ok(Piece::Final(..))),
            "the resumed connection still gets the response"
        );
    }

    #[test]
    fn a_log_keeps_its_last_events_and_a_session_its_last_logs() {
        let postbox = Postbox::default();
        let (log, _rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        for _ in 0..LOG_CAPACITY + 10 {
            postbox.deliver(
                jsonrpc::notification("notifications/message", "{}"),
                &Cause::Inbound(Some(id(1))),
            );
        }
        let resumed = postbox
            .resume(EventId {
                stream: log.stream,
                seq: 0,
            })
            .expect("kept");
        let missed = missed(&resumed);
        drop(resumed);
        assert_eq!(missed.len(), LOG_CAPACITY);
        assert_eq!(ids_of(&missed)[0], 11);
        // Logs nobody reads make room for new ones, oldest first.
        let first = log.stream;
        for n in 2..=(MAX_LOGS as u64 + 1) {
            let (log, rx) = postbox.open_logged(&[id(n)], true).expect("opened");
            drop(rx);
            log.detach();
        }
        assert!(postbox
            .resume(EventId {
                stream: first,
                seq: 0
            })
            .is_none());
        assert_eq!(lock(&postbox.logs).len(), MAX_LOGS);
        // The request of a dropped, unanswered log has nowhere to go.
        assert!(!lock(&postbox.streams).contains_key(&id(1)));
    }

    /// The frames a body sends now (without waiting), and whether it ended.
    fn frames_now(body: &mut SseBody) -> (Vec<Bytes>, bool) {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut frames = Vec::new();
        loop {
            match Pin::new(&mut *body).poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    let data = frame.into_data().expect("data");
                    if data.as_ref() != b": ping\n\n" {
                        frames.push(data);
                    }
                }
                Poll::Ready(None) => return (frames, true),
                Poll::Pending => return (frames, false),
            }
        }
    }

    #[test]
    fn resumptions_share_the_kept_events_and_a_new_one_replaces_the_old() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        let postbox = Postbox::default();
        let (log, rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        let big = format!("\"{}\"", "x".repeat(4 * COPIED_BELOW));
        postbox.deliver(jsonrpc::success(&id(1), &big), &Cause::Inbound(Some(id(1))));
        drop(rx);
        log.detach_connection(FIRST_CONNECTION);
        let kept = log.event_in(1, 1).expect("kept");
        let resume = || {
            let resumed = postbox
                .resume(EventId {
                    stream: log.stream,
                    seq: 0,
                })
                .expect("kept");
            SseBody::resumed(resumed, Duration::from_secs(60), OnDrop::new(|| {}), None)
        };
        let mut first = resume();
        let mut second = resume();
        // The first connection was replaced before it sent anything: it
        // ends, and holds nothing.
        assert_eq!(frames_now(&mut first), (Vec::new(), true));
        let (frames, ended) = frames_now(&mut second);
        assert!(ended, "the response ends the stream");
        assert_eq!(frames.len(), 3, "head, message, tail");
        assert_eq!(
            frames[1].as_ptr(),
            kept.text().as_ptr(),
            "the message is the one kept, not a copy"
        );
        let sent: Vec<u8> = frames.concat();
        let expected = sse_event(
            kept.text().as_bytes(),
            Some(EventId {
                stream: log.stream,
                seq: 1,
            }),
        );
        assert_eq!(sent, expected.to_vec());
    }

    #[test]
    fn what_streams_being_read_keep_is_bounded_too() {
        let postbox = Postbox::default();
        let (_log, _rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        let note = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"data\":\"{}\"}}}}",
            "y".repeat(LOG_BYTES / 16)
        );
        for _ in 0..64 {
            postbox.deliver(note.clone(), &Cause::Inbound(Some(id(1))));
        }
        let kept: usize = lock(&postbox.logs).iter().map(|l| l.bytes()).sum();
        assert!(kept <= LOG_BYTES, "{kept}");
        assert!(kept >= LOG_BYTES / 2, "the newest are kept: {kept}");
    }

    #[test]
    fn a_session_keeps_a_bounded_size_of_messages() {
        let postbox = Postbox::default();
        let big = format!("\"{}\"", "x".repeat(LOG_BYTES / 3));
        for n in 1..=4 {
            let (log, rx) = postbox.open_logged(&[id(n)], true).expect("opened");
            postbox.deliver(jsonrpc::success(&id(n), &big), &Cause::Inbound(Some(id(n))));
            drop(rx);
            log.detach();
        }
        let kept: usize = lock(&postbox.logs).iter().map(|l| l.bytes()).sum();
        assert!(kept <= LOG_BYTES, "{kept}");
        assert_eq!(lock(&postbox.logs).len(), 2, "the newest two");
        // A response answered as JSON keeps nothing.
        let (log, _rx) = postbox.open_logged(&[id(9)], true).expect("opened");
        postbox.deliver(jsonrpc::success(&id(9), "{}"), &Cause::Inbound(Some(id(9))));
        log.discard();
        assert_eq!(log.bytes(), 0);
    }

    #[test]
    fn logs_nobody_reads_expire() {
        let postbox = Postbox::default();
        let (log, rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        postbox.sweep_logs(Instant::now() + LOG_KEEP * 2);
        assert_eq!(lock(&postbox.logs).len(), 1, "a read log is kept");
        drop(rx);
        log.detach();
        postbox.sweep_logs(Instant::now() + LOG_KEEP / 2);
        assert_eq!(lock(&postbox.logs).len(), 1);
        postbox.sweep_logs(Instant::now() + LOG_KEEP);
        assert!(lock(&postbox.logs).is_empty());
        assert!(!lock(&postbox.streams).contains_key(&id(1)));
    }

    #[test]
    fn a_cancelled_call_ends_its_resumable_stream() {
        let postbox = Postbox::default();
        let (_log, mut rx) = postbox.open_logged(&[id(1)], true).expect("opened");
        postbox.job_started(4, &id(1));
        postbox.job_ended(4);
        assert!(matches!(
            rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
        assert!(!postbox.has_open_streams());
    }

    #[test]
    fn a_stream_without_priming_cannot_be_let_go() {
        let postbox = Postbox::default();
        let (_log, _rx) = postbox.open_logged(&[id(1)], false).expect("opened");
        postbox.job_started(4, &id(1));
        assert!(!postbox.close_stream(4));
    }

    #[test]
    fn a_plain_stream_cannot_be_let_go() {
        let postbox = Postbox::default();
        let (tx, _rx) = stream();
        postbox.open(&id(1), tx);
        postbox.job_started(4, &id(1));
        assert!(!postbox.close_stream(4));
        assert!(!postbox.close_stream(5), "an unknown job");
    }
}
