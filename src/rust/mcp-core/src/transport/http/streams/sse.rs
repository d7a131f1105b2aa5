//! Writing event streams: a message as an SSE event, and the response body
//! ([`SseBody`]) that replays what a log kept, then follows its channel.

use super::channel::{EventId, Piece, StreamRx};
use super::log::EventLog;
use super::log::Resumed;
use super::postbox::OnDrop;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// Messages up to this size are copied into their event's frame; larger
/// ones are sent as they are kept, between a head and a tail of their own,
/// so that no connection copies a large message.
pub(super) const COPIED_BELOW: usize = 16 * 1024;

/// The head of an SSE event carrying one message (its `data:` line
/// follows), with its id on a resumable stream.
pub(super) fn event_head(id: Option<EventId>) -> String {
    match id {
        Some(id) => format!("id: {id}\nevent: message\ndata: "),
        None => "event: message\ndata: ".to_string(),
    }
}

/// One SSE event carrying one message, its JSON on a single `data:` line
/// (the engine writes compact JSON, without newlines), with its id on a
/// resumable stream.
pub fn sse_event(message: &[u8], id: Option<EventId>) -> Bytes {
    let mut event = event_head(id).into_bytes();
    event.reserve(message.len() + 2);
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The frames of one event: one, or for a large message three, the
/// message among them shared with wherever it is kept.
pub(super) fn event_frames(line: &Bytes, id: Option<EventId>, out: &mut VecDeque<Bytes>) {
    if line.len() < COPIED_BELOW {
        let mut event = event_head(id).into_bytes();
        event.extend_from_slice(line);
        event.extend_from_slice(b"\n\n");
        out.push_back(Bytes::from(event));
    } else {
        out.push_back(Bytes::from(event_head(id)));
        out.push_back(line.clone());
        out.push_back(Bytes::from_static(b"\n\n"));
    }
}

/// The first event of a resumable stream (2025-11-25): its id and no
/// message, so a client the server lets go at once can still resume, and
/// how long to wait before reconnecting.
pub fn priming_event(id: EventId, retry: Duration) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {}\ndata:\n\n", retry.as_millis()))
}

/// What a resumed connection sends first: the events it missed, read from
/// the stream's log one at a time (so nothing is copied for it), while it
/// is the stream's current connection.
pub(super) struct Replay {
    pub(super) log: Arc<EventLog>,
    pub(super) connection: u64,
    /// The next event to send is the first kept from here...
    pub(super) next: u64,
    /// ...up to this one; later ones come through the channel.
    pub(super) until: u64,
}

/// A `text/event-stream` response body: the messages of one stream, with
/// a comment now and then so an idle stream stays open through proxies
/// (and a client that has gone is noticed). It ends after the response;
/// dropped before that (the client went away), it runs its guard.
pub struct SseBody {
    /// Frames ready to send: a priming event, the parts of an event.
    pub(super) frames: VecDeque<Bytes>,
    /// Pieces to send before reading the channel.
    pub(super) queued: VecDeque<Piece>,
    pub(super) replay: Option<Replay>,
    pub(super) rx: StreamRx,
    pub(super) keepalive: tokio::time::Interval,
    /// The response is among the frames: nothing is read after it.
    pub(super) ended: bool,
    /// Every frame is sent.
    pub(super) done: bool,
    pub(super) guard: OnDrop,
    /// Held for the life of the stream (a place among the open streams).
    pub(super) _place: Option<super::super::limits::Place>,
}

impl SseBody {
    /// `first` are the events to send before what `rx` brings.
    pub fn new(
        first: impl IntoIterator<Item = Piece>,
        rx: StreamRx,
        keepalive: Duration,
        guard: OnDrop,
        place: Option<super::super::limits::Place>,
    ) -> SseBody {
        let mut keepalive = tokio::time::interval(keepalive);
        keepalive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut queued = VecDeque::new();
        for piece in first {
            let last = matches!(piece, Piece::Final(..));
            queued.push_back(piece);
            if last {
                break;
            }
        }
        SseBody {
            frames: VecDeque::new(),
            queued,
            replay: None,
            rx,
            keepalive,
            ended: false,
            done: false,
            guard,
            _place: place,
        }
    }

    /// The body of a resumed connection: what it missed, then the rest.
    pub fn resumed(
        resumed: Resumed,
        keepalive: Duration,
        guard: OnDrop,
        place: Option<super::super::limits::Place>,
    ) -> SseBody {
        let Resumed {
            log,
            after,
            until,
            rx,
            connection,
        } = resumed;
        let mut body = SseBody::new([], rx, keepalive, guard, place);
        body.replay = Some(Replay {
            log,
            connection,
            next: after + 1,
            until,
        });
        body
    }

    /// Starts the stream with a priming event (see [`priming_event`]).
    pub fn primed(mut self, id: EventId, retry: Duration) -> SseBody {
        self.frames.push_front(priming_event(id, retry));
        self
    }

    /// Queues the frames of a piece; after the response, the stream ends.
    pub(super) fn render(&mut self, piece: Piece) {
        let (Piece::Note(line, id) | Piece::Final(line, id)) = &piece;
        event_frames(line, *id, &mut self.frames);
        if matches!(piece, Piece::Final(..)) {
            self.ended = true;
            self.guard.disarm();
        }
    }

    /// The next piece to send that is at hand: queued, or missed by a
    /// resumed connection.
    pub(super) fn next_at_hand(&mut self) -> Option<Piece> {
        if let Some(piece) = self.queued.pop_front() {
            return Some(piece);
        }
        let replay = self.replay.as_mut()?;
        let piece = replay.log.event_in(replay.next, replay.until);
        match &piece {
            Some(Piece::Note(_, Some(id)) | Piece::Final(_, Some(id))) => replay.next = id.seq + 1,
            _ => replay.next = replay.until + 1,
        }
        piece
    }

    /// A later resumption of the same stream took this connection's place.
    pub(super) fn superseded(&self) -> bool {
        self.replay
            .as_ref()
            .is_some_and(|r| !r.log.is_current(r.connection))
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
        if self.superseded() {
            // One connection reads a stream: the newer one goes on.
            self.done = true;
            return Poll::Ready(None);
        }
        if self.frames.is_empty() && !self.ended {
            if let Some(piece) = self.next_at_hand() {
                self.render(piece);
            }
        }
        if let Some(frame) = self.frames.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        }
        if self.ended {
            self.done = true;
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(piece)) => {
                self.render(piece);
                let frame = self.frames.pop_front().expect("a piece has frames");
                self.done = self.ended && self.frames.is_empty();
                return Poll::Ready(Some(Ok(Frame::data(frame))));
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
