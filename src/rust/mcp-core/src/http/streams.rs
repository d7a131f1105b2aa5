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

use crate::engine::JobId;
use crate::jsonrpc::RequestId;
use crate::server::{Cause, Mailbox};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;

/// Messages one stream holds for a client that reads slowly; one more place
/// is kept for the response.
pub const STREAM_CAPACITY: usize = 256;

/// One message on its way to a client.
#[derive(Debug)]
pub enum Piece {
    /// A notification or server request; more follows.
    Note(String),
    /// The response that ends the stream.
    Final(String),
}

pub type StreamTx = mpsc::Sender<Piece>;
pub type StreamRx = mpsc::Receiver<Piece>;

pub fn stream() -> (StreamTx, StreamRx) {
    mpsc::channel(STREAM_CAPACITY + 1)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The routes of one engine's messages (see the module docs).
#[derive(Default)]
pub struct Postbox {
    streams: Mutex<HashMap<RequestId, StreamTx>>,
    jobs: Mutex<HashMap<JobId, RequestId>>,
    standalone: Mutex<Option<StreamTx>>,
    /// Jobs whose request to the client found no stream to go on: no
    /// answer can come, which the job must learn (see [`Mailbox::lost_requests`]).
    lost: Mutex<Vec<JobId>>,
}

impl Postbox {
    /// Messages for request `id` go to `tx` until its response. False if a
    /// request with this id is still waiting for its response.
    pub fn open(&self, id: &RequestId, tx: StreamTx) -> bool {
        let mut streams = lock(&self.streams);
        if streams.get(id).is_some_and(|old| !old.is_closed()) {
            return false;
        }
        streams.insert(id.clone(), tx);
        true
    }

    /// The client of request `id` stopped reading: its messages are dropped.
    pub fn forget(&self, id: &RequestId) {
        lock(&self.streams).remove(id);
        lock(&self.jobs).retain(|_, r| r != id);
    }

    /// Opens the session's GET stream; false if one is open already.
    pub fn open_standalone(&self, tx: StreamTx) -> bool {
        let mut standalone = lock(&self.standalone);
        if standalone.as_ref().is_some_and(|old| !old.is_closed()) {
            return false;
        }
        *standalone = Some(tx);
        true
    }

    /// Whether any stream of this engine is still open (a session with one
    /// is not idle).
    pub fn has_open_streams(&self) -> bool {
        lock(&self.streams).values().any(|tx| !tx.is_closed())
            || lock(&self.standalone)
                .as_ref()
                .is_some_and(|tx| !tx.is_closed())
    }

    fn send_note(tx: &StreamTx, line: String) {
        // The last place is the response's.
        if tx.capacity() > 1 {
            let _ = tx.try_send(Piece::Note(line));
        }
    }

    fn deliver_response(&self, ids: Vec<RequestId>, line: String) {
        let mut streams = lock(&self.streams);
        let mut target = None;
        for id in &ids {
            if let Some(tx) = streams.remove(id) {
                target.get_or_insert(tx);
            }
        }
        drop(streams);
        lock(&self.jobs).retain(|_, r| !ids.contains(r));
        if let Some(tx) = target {
            let _ = tx.try_send(Piece::Final(line));
        }
    }

    fn stream_of(&self, cause: &Cause) -> Option<StreamTx> {
        let request = match cause {
            Cause::Inbound(id) => id.clone(),
            Cause::Job(job) => lock(&self.jobs).get(job).cloned(),
            Cause::Timer => None,
        };
        let streams = lock(&self.streams);
        request
            .and_then(|id| streams.get(&id).cloned())
            .filter(|tx| !tx.is_closed())
    }
}

impl Mailbox for Postbox {
    fn deliver(&self, line: String, cause: &Cause) {
        let kind = kind(&line);
        if let Kind::Response(ids) = kind {
            return self.deliver_response(ids, line);
        }
        let target = self
            .stream_of(cause)
            .or_else(|| lock(&self.standalone).clone())
            .filter(|tx| tx.capacity() > 1);
        match (target, kind, cause) {
            (Some(tx), _, _) => Postbox::send_note(&tx, line),
            (None, Kind::Request, Cause::Job(job)) => lock(&self.lost).push(*job),
            _ => {}
        }
    }

    fn lost_requests(&self) -> Vec<JobId> {
        std::mem::take(&mut *lock(&self.lost))
    }

    fn job_ended(&self, job: JobId) {
        // After its response the stream is gone already; otherwise the
        // call was cancelled, and dropping its sender ends the stream.
        if let Some(request) = lock(&self.jobs).remove(&job) {
            lock(&self.streams).remove(&request);
        }
    }

    fn job_started(&self, job: JobId, request: &RequestId) {
        lock(&self.jobs).insert(job, request.clone());
    }
}

enum Kind {
    /// A response (or a batch of them) to these request ids.
    Response(Vec<RequestId>),
    /// A request of the server's (it waits for the client's answer).
    Request,
    /// A notification.
    Other,
}

const HEAD: &str = "{\"jsonrpc\":\"2.0\",\"id\":";

/// What the engine wrote. Its messages have a fixed shape
/// (`{"jsonrpc":"2.0","id":…,"result"|"error"|"method"…}`, notifications
/// without the id, batches as arrays), so a response is told apart from
/// the head of the line alone, however large its result.
fn kind(line: &str) -> Kind {
    if line.starts_with('[') {
        let ids = serde_json::from_str::<Vec<serde_json::Value>>(line)
            .unwrap_or_default()
            .iter()
            .filter_map(|m| m.get("id").filter(|id| !id.is_null()))
            .filter_map(|id| {
                serde_json::value::RawValue::from_string(id.to_string())
                    .ok()
                    .and_then(|raw| RequestId::from_raw(&raw))
            })
            .collect();
        return Kind::Response(ids);
    }
    if !line.starts_with(HEAD) {
        return Kind::Other;
    }
    let prefix = &line.as_bytes()[..line.len().min(crate::framing::PREFIX_KEPT)];
    let Some(id) = crate::framing::sniff_id(prefix) else {
        // `"id":null`: an error for a message whose id was unreadable.
        return Kind::Response(Vec::new());
    };
    let rest = &line[HEAD.len()..];
    let after_id = rest.find(",\"").map_or("", |at| &rest[at..]);
    if after_id.starts_with(",\"method\"") {
        Kind::Request
    } else {
        Kind::Response(vec![id])
    }
}

/// The JSON-RPC error code of a response line, if it is an error.
pub fn error_code(line: &str) -> Option<i64> {
    if !line.starts_with(HEAD) || !line.contains(",\"error\":{\"code\":") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    value.get("error")?.get("code")?.as_i64()
}

/// Runs a closure when dropped, unless disarmed: how a handler learns that
/// its client went away before the response was written.
pub struct OnDrop(Option<Box<dyn FnOnce() + Send>>);

impl OnDrop {
    pub fn new(f: impl FnOnce() + Send + 'static) -> OnDrop {
        OnDrop(Some(Box::new(f)))
    }

    pub fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// One SSE event carrying one message, its JSON on a single `data:` line
/// (the engine writes compact JSON, without newlines).
pub fn sse_event(message: &str) -> Bytes {
    let mut event = String::with_capacity(message.len() + 24);
    event.push_str("event: message\ndata: ");
    event.push_str(message);
    event.push_str("\n\n");
    Bytes::from(event)
}

/// A `text/event-stream` response body: the messages of one stream, with
/// a comment now and then so an idle stream stays open through proxies
/// (and a client that has gone is noticed). It ends after the response;
/// dropped before that (the client went away), it runs its guard.
pub struct SseBody {
    first: Option<Piece>,
    rx: StreamRx,
    keepalive: tokio::time::Interval,
    done: bool,
    guard: OnDrop,
    /// Held for the life of the stream (a place among the open streams).
    _permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl SseBody {
    pub fn new(
        first: Option<Piece>,
        rx: StreamRx,
        keepalive: Duration,
        guard: OnDrop,
        permit: Option<tokio::sync::OwnedSemaphorePermit>,
    ) -> SseBody {
        let mut keepalive = tokio::time::interval(keepalive);
        keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        SseBody {
            first,
            rx,
            keepalive,
            done: false,
            guard,
            _permit: permit,
        }
    }

    fn frame(&mut self, piece: Piece) -> Frame<Bytes> {
        match piece {
            Piece::Note(line) => Frame::data(sse_event(&line)),
            Piece::Final(line) => {
                self.done = true;
                self.guard.disarm();
                Frame::data(sse_event(&line))
            }
        }
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(piece) = self.first.take() {
            let frame = self.frame(piece);
            return Poll::Ready(Some(Ok(frame)));
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(piece)) => {
                let frame = self.frame(piece);
                return Poll::Ready(Some(Ok(frame)));
            }
            Poll::Ready(None) => {
                // Nobody can send any more (the server stopped): end quietly.
                self.done = true;
                self.guard.disarm();
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if self.keepalive.poll_tick(cx).is_ready() {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b": ping\n\n")))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc;

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
        assert_eq!(error_code(&error), Some(-32601));
        assert_eq!(error_code(&response), None);
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
        assert!(matches!(rx.try_recv(), Ok(Piece::Note(_))));
        assert!(matches!(rx.try_recv(), Ok(Piece::Final(_))));
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
                Ok(Piece::Note(_)) => notes += 1,
                Ok(Piece::Final(_)) => break,
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
        assert!(matches!(rx.try_recv(), Ok(Piece::Note(_))));
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
}
