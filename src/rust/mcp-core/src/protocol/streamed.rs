//! A response line written while its largest part is still being made.
//!
//! A tool's large structured result (a data frame of 100,000 rows is some
//! 20 MB of JSON) goes out twice in its response: escaped, as the text
//! block the spec asks for, then as `structuredContent`. Written whole,
//! the pipe only starts moving once the last row is encoded. Instead, the
//! embedder that encodes it hands each finished part over a
//! [`JsonSink`] as soon as it is written, and the writer thread sends it
//! escaped at once; it keeps the parts and sends them again, unescaped,
//! once the producer [`JsonSink::finish`]es. Encoding and writing then
//! overlap, and the parts are never copied into one answer.
//!
//! Only the producer can know the JSON will come out whole, so it commits
//! to this path only for values it can write without failing; a producer
//! that goes away without finishing leaves a broken line, which the writer
//! ends so that the next line is read as usual.
//!
//! The parts a stream holds count as output waiting for the client, as a
//! whole line's bytes do, through a [`Meter`]: a client that stops reading
//! cannot make the server encode one large value after another into
//! memory. They count from the moment they are handed over until the line
//! is written, or dropped unwritten.

use std::io::{self, Write};
use std::sync::{mpsc, Arc, Mutex};

/// One step of the producer.
enum Part {
    /// The next bytes of the JSON value, cut between UTF-8 characters.
    Json(String),
    /// The value is complete.
    End,
}

/// Where the bytes a stream holds are counted (the transport's bound on
/// output waiting for the client).
pub trait Meter: Send + Sync {
    fn queued(&self, bytes: usize);
    fn released(&self, bytes: usize);
}

/// The bytes one stream has counted with its [`Meter`], shared by both
/// ends. Once the writer's end is gone nothing more is counted, and what
/// was counted has been released, so a part in flight at that moment is
/// neither lost nor counted twice.
struct Ledger {
    meter: Arc<dyn Meter>,
    /// Bytes counted and not yet released; `None` once closed.
    held: Mutex<Option<usize>>,
}

impl Ledger {
    /// Counts `bytes` about to be handed over; false once closed.
    fn hold(&self, bytes: usize) -> bool {
        let mut held = lock(&self.held);
        let Some(total) = held.as_mut() else {
            return false;
        };
        *total += bytes;
        self.meter.queued(bytes);
        true
    }

    /// Releases everything counted and counts nothing more.
    fn close(&self) {
        if let Some(total) = lock(&self.held).take() {
            self.meter.released(total);
        }
    }
}

use crate::util::threads::lock;

/// The producer's end: the parts of one JSON value, in order.
pub struct JsonSink {
    parts: mpsc::Sender<Part>,
    ledger: Option<Arc<Ledger>>,
}

/// The writer's end of a [`JsonSink`]. Dropping it (once the line is
/// written, or unwritten) releases what its parts were counted as.
pub struct JsonStream {
    parts: mpsc::Receiver<Part>,
    ledger: Option<Arc<Ledger>>,
}

impl std::fmt::Debug for JsonStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsonStream")
    }
}

impl Drop for JsonStream {
    fn drop(&mut self) {
        if let Some(ledger) = &self.ledger {
            ledger.close();
        }
    }
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Part::Json(text) => write!(f, "Json({} bytes)", text.len()),
            Part::End => f.write_str("End"),
        }
    }
}

/// A connected sink and stream. The channel is unbounded so that the
/// producer (R's thread) never waits for a client that reads slowly: what
/// it holds is at most the value itself, which it would hold anyway.
pub fn json_stream() -> (JsonSink, JsonStream) {
    stream_with(None)
}

/// [`json_stream`] whose parts are counted with `meter` while they wait
/// to be written.
pub fn metered_json_stream(meter: Arc<dyn Meter>) -> (JsonSink, JsonStream) {
    stream_with(Some(Arc::new(Ledger {
        meter,
        held: Mutex::new(Some(0)),
    })))
}

fn stream_with(ledger: Option<Arc<Ledger>>) -> (JsonSink, JsonStream) {
    let (parts, rx) = mpsc::channel();
    let sink = JsonSink {
        parts,
        ledger: ledger.clone(),
    };
    (sink, JsonStream { parts: rx, ledger })
}

impl JsonSink {
    /// Hands over the next part; false once nobody will write it (the call
    /// was cancelled, or the client has gone), so the producer can stop.
    pub fn send(&self, part: String) -> bool {
        if part.is_empty() {
            return true;
        }
        if let Some(ledger) = &self.ledger {
            if !ledger.hold(part.len()) {
                return false;
            }
        }
        // Should the stream go between the count and the send, closing it
        // released the count already.
        self.parts.send(Part::Json(part)).is_ok()
    }

    /// The value is complete.
    pub fn finish(self) {
        let _ = self.parts.send(Part::End);
    }
}

/// A response line whose structured content arrives through a
/// [`JsonStream`]: `head`, the content escaped as a JSON string's inside
/// (when `mirror`), `middle`, the content as it is (when `structured`),
/// then `tail`.
#[derive(Debug)]
pub struct StreamedLine {
    pub head: String,
    pub mirror: bool,
    pub middle: String,
    pub structured: bool,
    pub tail: String,
    pub content: JsonStream,
}

impl StreamedLine {
    /// The line with the content left out: the response as far as its
    /// shape goes, for readers that need no more (a span's verdict).
    pub fn outline(&self) -> String {
        format!("{}{}{}", self.head, self.middle, self.tail)
    }

    /// Writes the line and its newline as the parts arrive; returns the
    /// bytes written. Fails only if `out` does; a producer that went away
    /// without finishing gets its line ended where it stopped (the client
    /// cannot parse that line, but every later line stays whole).
    pub fn write_to(self, out: &mut impl Write) -> io::Result<usize> {
        let mut written = self.head.len();
        out.write_all(self.head.as_bytes())?;
        let mut kept = Vec::new();
        let mut escaped = Vec::new();
        let mut whole = false;
        while let Ok(part) = self.content.parts.recv() {
            let Part::Json(text) = part else {
                whole = true;
                break;
            };
            if self.mirror {
                // A block at a time, so that a part handed over whole (a
                // result written before the call ended) is escaped while
                // the pipe drains, not all before it.
                for block in text.as_bytes().chunks(ESCAPED_BLOCK) {
                    escaped.clear();
                    escape_into(&mut escaped, block);
                    out.write_all(&escaped)?;
                    written += escaped.len();
                }
            }
            if self.structured {
                kept.push(text);
            }
        }
        if whole {
            out.write_all(self.middle.as_bytes())?;
            written += self.middle.len();
            for part in &kept {
                out.write_all(part.as_bytes())?;
                written += part.len();
            }
            out.write_all(self.tail.as_bytes())?;
            written += self.tail.len();
        }
        out.write_all(b"\n")?;
        Ok(written + 1)
    }
}

/// Bytes escaped at a time by [`StreamedLine::write_to`].
const ESCAPED_BLOCK: usize = 64 * 1024;

/// What each byte becomes in a JSON string: 0 for itself, `u` for a
/// `\u00XX` escape, otherwise the letter after the backslash.
const ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table
};

/// Appends the UTF-8 bytes `text` escaped as the inside of a JSON string,
/// as serde_json escapes them. Bytes of multi-byte characters are copied
/// as they are, so `text` may be cut anywhere and escaped piece by piece.
/// JSON text is full of quotes (two per key), so each byte is looked up
/// and pushed rather than copying runs between escapes.
pub fn escape_into(out: &mut Vec<u8>, text: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // Quotes and backslashes at most double a byte; control bytes, rare in
    // JSON text, may ask for more room below.
    out.reserve(text.len() + text.len() / 4 + 16);
    for &b in text {
        let escape = ESCAPES[b as usize];
        if escape == 0 {
            out.push(b);
        } else if escape == b'u' {
            let hex = [HEX[(b >> 4) as usize], HEX[(b & 0xf) as usize]];
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex[0], hex[1]]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(mirror: bool, structured: bool) -> (JsonSink, StreamedLine) {
        let (sink, content) = json_stream();
        (sink, line_of(content, mirror, structured))
    }

    fn line_of(content: JsonStream, mirror: bool, structured: bool) -> StreamedLine {
        StreamedLine {
            head: "H\"".into(),
            mirror,
            middle: "\"M".into(),
            structured,
            tail: "T".into(),
            content,
        }
    }

    #[test]
    fn the_parts_are_written_escaped_then_whole() {
        let (sink, line) = line(true, true);
        assert!(sink.send("[{\"a\":".into()));
        assert!(sink.send("\"x\\y\n\u{1}é\"}]".into()));
        sink.finish();
        let mut out = Vec::new();
        let n = line.write_to(&mut out).unwrap();
        let value = "[{\"a\":\"x\\y\n\u{1}é\"}]";
        let escaped = serde_json::to_string(value).unwrap();
        let expected = format!("H{escaped}M{value}T\n");
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        assert_eq!(n, expected.len());
    }

    #[test]
    fn without_structured_content_only_the_mirror_is_written() {
        let (sink, line) = line(true, false);
        sink.send("{\"a\":1}".into());
        sink.finish();
        let mut out = Vec::new();
        line.write_to(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "H\"{\\\"a\\\":1}\"MT\n");
    }

    #[test]
    fn a_producer_gone_before_the_end_leaves_one_broken_line() {
        let (sink, line) = line(true, true);
        sink.send("[1,".into());
        drop(sink);
        let mut out = Vec::new();
        line.write_to(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "H\"[1,\n");
    }

    #[test]
    fn the_producer_learns_when_nobody_writes_its_parts() {
        let (sink, line) = line(true, true);
        assert!(sink.send("[".into()));
        drop(line);
        assert!(!sink.send("1".into()));
    }

    #[derive(Default)]
    struct Counted(Mutex<(usize, usize)>);

    impl Meter for Counted {
        fn queued(&self, bytes: usize) {
            lock(&self.0).0 += bytes;
        }
        fn released(&self, bytes: usize) {
            lock(&self.0).1 += bytes;
        }
    }

    fn metered_line() -> (Arc<Counted>, JsonSink, StreamedLine) {
        let meter = Arc::new(Counted::default());
        let (sink, content) = metered_json_stream(meter.clone());
        (meter, sink, line_of(content, true, true))
    }

    #[test]
    fn parts_count_as_queued_output_until_their_line_is_written() {
        let (meter, sink, line) = metered_line();
        assert!(sink.send("[1,".into()));
        assert!(sink.send("2]".into()));
        assert_eq!(*lock(&meter.0), (5, 0));
        sink.finish();
        line.write_to(&mut Vec::new()).unwrap();
        assert_eq!(*lock(&meter.0), (5, 5));
    }

    #[test]
    fn a_line_dropped_unwritten_releases_its_parts_and_counts_no_more() {
        let (meter, sink, line) = metered_line();
        assert!(sink.send("[1,".into()));
        drop(line);
        assert_eq!(*lock(&meter.0), (3, 3));
        assert!(!sink.send("2]".into()));
        assert_eq!(*lock(&meter.0), (3, 3));
    }

    #[test]
    fn a_line_whose_producer_died_releases_its_parts_once_written() {
        let (meter, sink, line) = metered_line();
        assert!(sink.send("[1,".into()));
        drop(sink);
        line.write_to(&mut Vec::new()).unwrap();
        assert_eq!(*lock(&meter.0), (3, 3));
    }

    #[test]
    fn escaping_matches_serde_json_for_every_byte_class() {
        let text = "plain \"q\" \\ \n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f} é😀";
        let expected = serde_json::to_string(text).unwrap();
        let expected = &expected[1..expected.len() - 1];
        let mut out = Vec::new();
        escape_into(&mut out, text.as_bytes());
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        // Cut at every byte, inside characters too.
        for cut in 0..text.len() {
            let mut out = Vec::new();
            escape_into(&mut out, &text.as_bytes()[..cut]);
            escape_into(&mut out, &text.as_bytes()[cut..]);
            assert_eq!(String::from_utf8(out).unwrap(), expected, "cut at {cut}");
        }
    }
}
