//! A decoder for server-sent events (the `text/event-stream` format of the
//! WHATWG HTML standard), as MCP's Streamable HTTP uses them: bytes arrive in
//! chunks of any size, lines end in `\n`, `\r\n` or `\r`, and a blank line
//! ends an event. Only what MCP needs is kept: the event's type, its data
//! and its id, and the reconnection delay the server asks for.
//!
//! A line longer than the limit is an error rather than a growing buffer: a
//! server cannot make the client hold more than one message's worth.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field; `"message"` when absent.
    pub kind: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The last event id seen on the stream so far (ids persist across
    /// events, as the standard says), if any.
    pub id: Option<String>,
}

/// Incremental decoder: feed it bytes, take the events they complete.
#[derive(Debug)]
pub struct Decoder {
    max_line: usize,
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` starting the next one
    /// belongs to that line break.
    after_cr: bool,
    kind: String,
    data: String,
    has_data: bool,
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

impl Decoder {
    pub fn new(max_line: usize) -> Decoder {
        Decoder {
            max_line,
            line: Vec::new(),
            after_cr: false,
            kind: String::new(),
            data: String::new(),
            has_data: false,
            last_id: None,
            retry_ms: None,
        }
    }

    /// The last event id the stream set (for `Last-Event-ID` on resume).
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection delay the server last asked for with `retry:`.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Decodes `chunk`, appending completed events to `out`. An error names
    /// a line over the limit; the decoder is then unusable.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> Result<(), String> {
        for &byte in chunk {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.process_line(&line, out);
                }
                _ => {
                    if self.line.len() >= self.max_line {
                        return Err(format!(
                            "the server sent an event line longer than {} bytes",
                            self.max_line
                        ));
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(())
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<Event>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // a comment, such as a keep-alive ping
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"event" => self.kind = value.into_owned(),
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"id" if !value.contains('\0') => self.last_id = Some(value.into_owned()),
            b"retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        let kind = std::mem::take(&mut self.kind);
        let data = std::mem::take(&mut self.data);
        if !std::mem::take(&mut self.has_data) {
            return;
        }
        out.push(Event {
            kind: if kind.is_empty() {
                "message".to_string()
            } else {
                kind
            },
            data,
            id: self.last_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> (Vec<Event>, Decoder) {
        let mut decoder = Decoder::new(1024);
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            decoder.feed(chunk, &mut out).unwrap();
        }
        (out, decoder)
    }

    #[test]
    fn events_are_the_same_whatever_the_chunk_boundaries() {
        let input = b": ping\r\n\r\nid: s1:1\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n\
                      data: first\rdata: second\r\rretry: 1500\nid: s1:2\ndata:x\n\n";
        for piece in 1..input.len() {
            let (events, decoder) = decode_in_pieces(input, piece);
            assert_eq!(
                events,
                vec![
                    Event {
                        kind: "message".into(),
                        data: "{\"a\":1}".into(),
                        id: Some("s1:1".into())
                    },
                    Event {
                        kind: "message".into(),
                        data: "first\nsecond".into(),
                        id: Some("s1:1".into())
                    },
                    Event {
                        kind: "message".into(),
                        data: "x".into(),
                        id: Some("s1:2".into())
                    },
                ],
                "chunks of {piece} bytes"
            );
            assert_eq!(decoder.retry_ms(), Some(1500));
            assert_eq!(decoder.last_id(), Some("s1:2"));
        }
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_but_its_id_is_kept() {
        // The 2025-11-25 priming event: an id and empty data.
        let (events, decoder) = decode_in_pieces(b"id: p0\n\nevent: endpoint\n\n", 7);
        assert!(events.is_empty());
        assert_eq!(decoder.last_id(), Some("p0"));
        let (events, _) = decode_in_pieces(b"id: p0\ndata\n\n", 3);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "");
    }

    #[test]
    fn an_unfinished_event_is_held_until_its_blank_line() {
        let (events, _) = decode_in_pieces(b"data: {\"half\":", 4);
        assert!(events.is_empty());
    }

    #[test]
    fn a_line_over_the_limit_is_an_error() {
        let mut decoder = Decoder::new(8);
        let mut out = Vec::new();
        decoder.feed(b"data: 12\n", &mut out).unwrap();
        let err = decoder.feed(b"data: 123456789", &mut out).unwrap_err();
        assert!(err.contains("longer than 8 bytes"), "{err}");
    }
}
