//! One response stream: a bounded channel of [`Piece`]s (messages, ends,
//! pings), its sending half [`StreamTx`] (plain or through an event log),
//! and the ids of resumable events ([`EventId`]).

use bytes::Bytes;
use tokio::sync::mpsc;

/// Messages one stream holds for a client that reads slowly; one more place
/// is kept for the response.
pub const STREAM_CAPACITY: usize = 256;

/// Where an event sits among a session's streams: `<stream>:<seq>` on the
/// wire. Sequence 0 is the priming event, which carries no message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventId {
    pub stream: u64,
    pub seq: u64,
}

impl EventId {
    /// Reads a `Last-Event-ID` value the server gave.
    pub fn parse(text: &str) -> Option<EventId> {
        let (stream, seq) = text.trim().split_once(':')?;
        Some(EventId {
            stream: stream.parse().ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

impl std::fmt::Display for EventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.stream, self.seq)
    }
}

/// One message on its way to a client, with its event id on a resumable
/// stream.
///
/// The message's text is shared, never copied, between the resumable
/// stream that keeps it and every connection that sends it.
#[derive(Debug, Clone)]
pub enum Piece {
    /// A notification or server request; more follows.
    Note(Bytes, Option<EventId>),
    /// The response that ends the stream.
    Final(Bytes, Option<EventId>),
}

impl Piece {
    /// The message (the engine's lines are UTF-8 text).
    pub fn text(&self) -> &str {
        let (Piece::Note(line, _) | Piece::Final(line, _)) = self;
        std::str::from_utf8(line).unwrap_or_default()
    }
}

pub type StreamRx = mpsc::Receiver<Piece>;

/// The number of a resumable stream's first connection, the POST's.
pub const FIRST_CONNECTION: u64 = 0;

pub(super) fn channel() -> (mpsc::Sender<Piece>, StreamRx) {
    mpsc::channel(STREAM_CAPACITY + 1)
}

pub(super) use crate::util::threads::lock;
