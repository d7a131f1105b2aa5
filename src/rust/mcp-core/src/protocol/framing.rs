//! Newline-delimited framing with a bound on line length.
//!
//! A line longer than the limit is skipped without being held in memory; only
//! its beginning is kept, so the request id can still be read from it and
//! the client told why its request failed.

use std::io::{self, Read};

/// How much of an oversized line is kept (for
/// [`crate::protocol::jsonrpc::sniff_id`]).
pub const PREFIX_KEPT: usize = 4096;

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// One line, without `\n` or a trailing `\r`.
    Line(Vec<u8>),
    /// A line over the limit: its first bytes and its full length.
    Oversized { prefix: Vec<u8>, length: usize },
}

pub struct LineReader<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    max: usize,
    line: Vec<u8>,
    /// Length so far of a line being skipped because it is too long.
    skipping: Option<usize>,
    eof: bool,
}

impl<R: Read> LineReader<R> {
    pub fn new(inner: R, max_line: usize) -> LineReader<R> {
        LineReader {
            inner,
            buf: vec![0u8; 64 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
            max: max_line,
            line: Vec::new(),
            skipping: None,
            eof: false,
        }
    }

    /// The next frame, or `None` at end of input. A final line without a
    /// newline is still delivered.
    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            if self.start == self.end {
                if self.eof {
                    return Ok(self.finish());
                }
                let n = match self.inner.read(&mut self.buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                self.start = 0;
                self.end = n;
                if n == 0 {
                    self.eof = true;
                    continue;
                }
            }
            let chunk = &self.buf[self.start..self.end];
            let newline = chunk.iter().position(|&b| b == b'\n');
            let take = newline.unwrap_or(chunk.len());
            self.append(take);
            self.start += take;
            if newline.is_some() {
                self.start += 1;
                return Ok(Some(self.take_frame()));
            }
        }
    }

    fn append(&mut self, take: usize) {
        let chunk = &self.buf[self.start..self.start + take];
        if let Some(length) = &mut self.skipping {
            *length += take;
            return;
        }
        if self.line.len() + take <= self.max {
            self.line.extend_from_slice(chunk);
            return;
        }
        // This chunk takes the line over the limit: keep a prefix, count the rest.
        let length = self.line.len() + take;
        let room = PREFIX_KEPT.saturating_sub(self.line.len());
        self.line.extend_from_slice(&chunk[..room.min(take)]);
        self.line.truncate(PREFIX_KEPT);
        self.line.shrink_to(PREFIX_KEPT);
        self.skipping = Some(length);
    }

    fn take_frame(&mut self) -> Frame {
        match self.skipping.take() {
            Some(length) => Frame::Oversized {
                prefix: std::mem::take(&mut self.line),
                length,
            },
            None => {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                Frame::Line(line)
            }
        }
    }

    fn finish(&mut self) -> Option<Frame> {
        if self.line.is_empty() && self.skipping.is_none() {
            None
        } else {
            Some(self.take_frame())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its data in small pieces, as a pipe does.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len() - self.pos);
            buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    fn frames(data: &[u8], max: usize, step: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(
            Trickle {
                data: data.to_vec(),
                pos: 0,
                step,
            },
            max,
        );
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().unwrap() {
            out.push(frame);
        }
        out
    }

    fn line(s: &str) -> Frame {
        Frame::Line(s.as_bytes().to_vec())
    }

    #[test]
    fn splits_lines_and_strips_crlf() {
        for step in [1, 3, 1000] {
            assert_eq!(
                frames(b"a\r\nbb\n\nccc", 100, step),
                vec![line("a"), line("bb"), line(""), line("ccc")]
            );
        }
        assert!(frames(b"", 100, 10).is_empty());
    }

    #[test]
    fn oversized_lines_are_skipped_with_their_length() {
        let mut data = b"{\"jsonrpc\":\"2.0\",\"id\":42,\"params\":\"".to_vec();
        data.extend(std::iter::repeat_n(b'x', 100_000));
        data.extend_from_slice(b"\"}\nnext\n");
        let total = data.len() - "\nnext\n".len();
        for step in [7, 4096, 1 << 20] {
            let got = frames(&data, 1000, step);
            assert_eq!(got.len(), 2);
            match &got[0] {
                Frame::Oversized { prefix, length } => {
                    assert_eq!(*length, total);
                    assert!(prefix.len() <= PREFIX_KEPT);
                    assert_eq!(
                        crate::protocol::jsonrpc::sniff_id(prefix)
                            .unwrap()
                            .as_json(),
                        "42"
                    );
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(got[1], line("next"));
        }
    }

    #[test]
    fn a_line_at_the_limit_is_kept() {
        assert_eq!(frames(b"abcd\n", 4, 2), vec![line("abcd")]);
        assert!(matches!(
            frames(b"abcde\n", 4, 2)[0],
            Frame::Oversized { length: 5, .. }
        ));
    }
}
