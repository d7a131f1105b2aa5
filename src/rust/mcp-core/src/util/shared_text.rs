//! Text that is a slice of a larger, shared buffer: a request's params and
//! a tool call's arguments are slices of the line they came in, so a
//! 6 MB arguments object is not copied out of its line, and then out of
//! its params, before R reads it.
//!
//! A slice keeps its whole buffer alive. That is the point (the buffer is
//! the line, which is freed once the last slice of it goes), and it is
//! bounded: a line is at most the configured message size, and the jobs
//! and stored states that hold slices are bounded themselves.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// A slice of a shared UTF-8 buffer. Cloning shares the buffer.
#[derive(Clone)]
pub struct SharedText {
    buffer: Arc<String>,
    range: Range<usize>,
}

impl SharedText {
    /// The whole of `buffer`, without copying it.
    pub fn new(buffer: String) -> SharedText {
        let range = 0..buffer.len();
        SharedText {
            buffer: Arc::new(buffer),
            range,
        }
    }

    /// The part of this text that `part` is, sharing the buffer. `part`
    /// must be borrowed from this text (as serde's borrowed values are);
    /// anything else is copied into a buffer of its own.
    pub fn slice(&self, part: &str) -> SharedText {
        let base = self.as_str().as_ptr() as usize;
        let start = (part.as_ptr() as usize).wrapping_sub(base);
        if start > self.len() || self.len() - start < part.len() {
            return SharedText::new(part.to_owned());
        }
        let start = self.range.start + start;
        SharedText {
            buffer: Arc::clone(&self.buffer),
            range: start..start + part.len(),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.buffer[self.range.clone()]
    }

    /// The text, as [`serde_json::value::RawValue::get`] names it.
    pub fn get(&self) -> &str {
        self.as_str()
    }
}

impl Deref for SharedText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> SharedText {
        SharedText::new(text)
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> SharedText {
        SharedText::new(text.to_owned())
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &SharedText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_shares_the_buffer_and_reads_its_own_part() {
        let line = SharedText::new(r#"{"params":{"arguments":{"x":1}}}"#.to_string());
        let at = line.find("{\"arguments").unwrap();
        let params = line.slice(&line[at..line.len() - 1]);
        assert_eq!(params.get(), r#"{"arguments":{"x":1}}"#);
        let arguments = params.slice(&params[13..params.len() - 1]);
        assert_eq!(&*arguments, r#"{"x":1}"#);
        assert!(Arc::ptr_eq(&line.buffer, &arguments.buffer));
        drop(line);
        drop(params);
        assert_eq!(Arc::strong_count(&arguments.buffer), 1);
        assert_eq!(&*arguments, r#"{"x":1}"#);
    }

    #[test]
    fn text_from_elsewhere_is_copied_not_misread() {
        let line = SharedText::new("abcdef".to_string());
        let other = String::from("xyz");
        let copied = line.slice(&other);
        assert_eq!(&*copied, "xyz");
        assert!(!Arc::ptr_eq(&line.buffer, &copied.buffer));
        assert_eq!(&*line.slice(&line[6..]), "");
    }
}
