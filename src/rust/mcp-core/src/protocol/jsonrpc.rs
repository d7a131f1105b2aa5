//! JSON-RPC 2.0 framing: classifying one incoming line, and writing responses.
//!
//! Ids are kept as the exact JSON text the client sent, so integers of any
//! size and strings with any escapes round-trip unchanged. Parameters stay
//! raw until the method that owns them parses them.

use crate::util::shared_text::SharedText;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28: the request needs a client capability it did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the requested protocol version is not supported.
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// A request id as the client wrote it: a JSON string or integer literal.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct RequestId(String);

impl RequestId {
    /// Accepts a JSON string, an integer literal of any size, or a number
    /// with an integral value (`1.0`), which is echoed as written.
    pub fn from_raw(raw: &RawValue) -> Option<RequestId> {
        let text = raw.get().trim();
        if text.starts_with('"') {
            // Canonicalise escapes so `"\u0061"` and `"a"` name one request.
            let s: String = serde_json::from_str(text).ok()?;
            return Some(RequestId(serde_json::to_string(&s).ok()?));
        }
        if is_integer_literal(text) {
            return Some(RequestId(text.to_string()));
        }
        match serde_json::from_str::<f64>(text) {
            Ok(x) if x.is_finite() && x.fract() == 0.0 => Some(RequestId(text.to_string())),
            _ => None,
        }
    }

    /// Builds an id from a number the server chose (for server-to-client requests).
    pub fn from_number(n: u64) -> RequestId {
        RequestId(n.to_string())
    }

    /// The id as JSON text, ready to be written into a message.
    pub fn as_json(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
}

/// One JSON-RPC message, classified.
#[derive(Debug)]
pub enum Message {
    Request {
        id: RequestId,
        method: String,
        /// A slice of the line, not a copy (see [`SharedText`]).
        params: Option<SharedText>,
    },
    Notification {
        method: String,
        params: Option<SharedText>,
    },
    /// A response the client sent to a request of ours.
    Response {
        id: RequestId,
        result: Option<Box<RawValue>>,
        error: Option<Box<RawValue>>,
    },
    /// Valid JSON that is not a JSON-RPC 2.0 message: answered with -32600,
    /// echoing the id when one could be read.
    Invalid {
        id: Option<RequestId>,
        reason: String,
    },
}

/// What one line of input holds.
#[derive(Debug)]
pub enum Line {
    /// Only whitespace: ignored.
    Blank,
    Single(Message),
    Batch(Vec<Message>),
    /// Not JSON at all (or not UTF-8, or nested too deeply).
    ParseError(String),
    /// A message that is well-formed but for bytes that are not UTF-8
    /// inside its strings, whose top-level `id` reads the same byte for byte:
    /// not JSON, yet the request (or the client's response) it belongs to is
    /// known, so it need not be left waiting.
    NotUtf8 {
        id: RequestId,
        /// A response to a request of ours rather than a request.
        response: bool,
        reason: String,
    },
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// Keeps an explicit `null` (so `"id": null` is told apart from no id).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Classifies one line (without its line terminator). An owned line
/// (`Vec<u8>`) is not copied: the params of its messages are slices of it.
pub fn parse_line(bytes: impl Into<Vec<u8>>) -> Line {
    let text = match String::from_utf8(bytes.into()) {
        Ok(text) => SharedText::new(text),
        Err(e) => return not_utf8(e.as_bytes(), e.utf8_error().valid_up_to()),
    };
    let trimmed = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.trim_end().is_empty() {
        return Line::Blank;
    }
    if trimmed.starts_with('[') {
        return match serde_json::from_str::<Vec<&RawValue>>(trimmed) {
            Ok(items) => Line::Batch(
                items
                    .into_iter()
                    .map(|item| classify_raw(item, &text))
                    .collect(),
            ),
            Err(e) => syntax_or_invalid(trimmed, e),
        };
    }
    match serde_json::from_str::<Envelope>(trimmed) {
        Ok(env) => Line::Single(classify(env, &text)),
        Err(e) => syntax_or_invalid(trimmed, e),
    }
}

/// A line with bytes that are not UTF-8. Its id is recovered only when the
/// line is otherwise a well-formed message (decoded with the bad bytes
/// replaced) and the id read from the raw bytes is the same: an id that
/// itself holds bad bytes, or a line broken elsewhere, is never guessed at.
fn not_utf8(bytes: &[u8], at: usize) -> Line {
    let reason = format!("invalid UTF-8 at byte {at}: a message must be UTF-8 text");
    let lossy = String::from_utf8_lossy(bytes);
    let text = lossy.trim_start_matches(|c: char| c.is_ascii_whitespace());
    if !text.starts_with('{') {
        return Line::ParseError(reason);
    }
    let lossy_line = SharedText::from(text);
    let classified =
        serde_json::from_str::<Envelope>(&lossy_line).map(|e| classify(e, &lossy_line));
    let (id, response) = match classified {
        Ok(Message::Request { id, .. } | Message::Invalid { id: Some(id), .. }) => (id, false),
        Ok(Message::Response { id, .. }) => (id, true),
        _ => return Line::ParseError(reason),
    };
    if sniff_id(bytes).as_ref() != Some(&id) {
        return Line::ParseError(reason);
    }
    Line::NotUtf8 {
        id,
        response,
        reason,
    }
}

/// An envelope that failed to deserialize is either not JSON (-32700) or
/// JSON of the wrong shape (-32600).
fn syntax_or_invalid(text: &str, e: serde_json::Error) -> Line {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => Line::Single(Message::Invalid {
            id: None,
            reason: shape_reason(text, &e),
        }),
        Err(e) => Line::ParseError(describe_parse_error(&e)),
    }
}

fn shape_reason(text: &str, e: &serde_json::Error) -> String {
    match text.as_bytes().first() {
        Some(b'{') => format!("not a JSON-RPC 2.0 message: {e}"),
        _ => "a JSON-RPC message must be a JSON object".to_string(),
    }
}

fn describe_parse_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.contains("recursion limit") {
        "JSON nested too deeply".to_string()
    } else {
        text
    }
}

fn classify_raw(raw: &RawValue, line: &SharedText) -> Message {
    match serde_json::from_str::<Envelope>(raw.get()) {
        Ok(env) => classify(env, line),
        Err(e) => Message::Invalid {
            id: None,
            reason: shape_reason(raw.get(), &e),
        },
    }
}

/// `line` is the text `env` was read from, whose slices the params become.
fn classify(env: Envelope, line: &SharedText) -> Message {
    let id = env.id.map(RequestId::from_raw);
    let echo = id.clone().flatten();
    let invalid = |reason: &str| Message::Invalid {
        id: echo.clone(),
        reason: reason.to_string(),
    };
    if !env.jsonrpc.is_some_and(is_version_2) {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    let Some(method) = env.method else {
        return match (echo.clone(), env.result.is_some() || env.error.is_some()) {
            (Some(id), true) => Message::Response {
                id,
                result: env.result.map(RawValue::to_owned),
                error: env.error.map(RawValue::to_owned),
            },
            _ => invalid("`method` is missing"),
        };
    };
    let Ok(method) = serde_json::from_str::<String>(method.get()) else {
        return invalid("`method` must be a string");
    };
    let params = env.params.map(|params| line.slice(params.get()));
    match id {
        None => Message::Notification { method, params },
        Some(Some(id)) => Message::Request { id, method, params },
        Some(None) => invalid("`id` must be a string or an integer"),
    }
}

fn is_version_2(raw: &RawValue) -> bool {
    raw.get() == "\"2.0\"" || serde_json::from_str::<String>(raw.get()).is_ok_and(|s| s == "2.0")
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` around an already serialised result.
pub fn success(id: &RequestId, result_json: &str) -> String {
    let mut out = String::with_capacity(result_json.len() + id.0.len() + 32);
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    out.push_str(&id.0);
    out.push_str(",\"result\":");
    out.push_str(result_json);
    out.push('}');
    out
}

/// [`success`] around a body it owns: a body rendered with room to spare
/// (see `engine::result::ENVELOPE_ROOM`) is wrapped in place, so a large
/// result is moved once rather than copied into a second buffer.
pub fn success_owned(id: &RequestId, mut body: String) -> String {
    if body.capacity() - body.len() < id.0.len() + 32 {
        return success(id, &body);
    }
    body.insert_str(0, &success_head(id));
    body.push('}');
    body
}

/// The start of a success response, up to its result (which the caller
/// follows with the result and `}`).
pub fn success_head(id: &RequestId) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.0)
}

/// A JSON-RPC error response; `id` is `null` when the request's id is unknown.
pub fn error(id: Option<&RequestId>, code: i64, message: &str, data: Option<&Value>) -> String {
    error_response(id, &error_object(code, message, data))
}

/// The `error` member of a response: `{code, message, data?}`.
pub fn error_object(code: i64, message: &str, data: Option<&Value>) -> Value {
    let mut err = serde_json::Map::new();
    err.insert("code".into(), Value::from(code));
    err.insert("message".into(), Value::from(message));
    if let Some(data) = data {
        err.insert("data".into(), data.clone());
    }
    Value::Object(err)
}

/// The 2026-07-28 -32021 error object: the request needs client capabilities
/// it did not declare. `required` is a `ClientCapabilities` object naming
/// them (e.g. `{"elicitation": {}}`), so the client can retry declaring it.
pub fn missing_capability(message: &str, required: Value) -> Value {
    let data = serde_json::json!({ "requiredCapabilities": required });
    error_object(MISSING_CLIENT_CAPABILITY, message, Some(&data))
}

/// An error response around an error object made with [`error_object`].
pub fn error_response(id: Option<&RequestId>, error: &Value) -> String {
    let id = id.map_or("null", |id| id.as_json());
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{error}}}")
}

/// A notification the server sends.
pub fn notification(method: &str, params_json: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":{},\"params\":{params_json}}}",
        Value::from(method)
    )
}

/// A notification without params (`notifications/tools/list_changed`).
pub fn notification_without_params(method: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"method\":{}}}", Value::from(method))
}

/// A request the server sends to the client (handshake era only).
pub fn request(id: &RequestId, method: &str, params_json: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":{},\"params\":{params_json}}}",
        id.as_json(),
        Value::from(method)
    )
}

/// Reads the `id` of a JSON-RPC object from the beginning of a line that is
/// too long to parse. Only a top-level `"id"` member counts.
pub fn sniff_id(prefix: &[u8]) -> Option<RequestId> {
    let mut s = Scanner {
        bytes: prefix,
        pos: 0,
    };
    s.skip_ws();
    s.expect(b'{')?;
    loop {
        s.skip_ws();
        let key_start = s.pos;
        s.skip_string()?;
        let key = &prefix[key_start..s.pos];
        s.skip_ws();
        s.expect(b':')?;
        s.skip_ws();
        let value_start = s.pos;
        s.skip_value()?;
        if key == b"\"id\"" {
            let text = std::str::from_utf8(&prefix[value_start..s.pos]).ok()?;
            let raw = RawValue::from_string(text.to_string()).ok()?;
            return RequestId::from_raw(&raw);
        }
        s.skip_ws();
        s.expect(b',')?;
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    fn skip_string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Skips one JSON value, tracking nesting; `None` if the prefix ends first.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.pos += 1;
                }
                // A scalar cut off by the end of the prefix is incomplete.
                (self.pos > start && self.pos < self.bytes.len()).then_some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(line: &str) -> Message {
        match parse_line(line.as_bytes()) {
            Line::Single(m) => m,
            other => panic!("expected one message from {line}, got {other:?}"),
        }
    }

    fn request_id(line: &str) -> String {
        match single(line) {
            Message::Request { id, .. } => id.as_json().to_string(),
            other => panic!("expected a request from {line}, got {other:?}"),
        }
    }

    #[test]
    fn ids_round_trip_exactly() {
        for id in [
            "1",
            "-7",
            "0",
            "12345678901",
            "9007199254740993",
            "123456789012345678901234567890",
            "\"request-1\"",
            "\"\"",
            "\"ünïcödé\"",
            "1.0",
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            assert_eq!(request_id(&line), id);
        }
    }

    #[test]
    fn string_ids_are_canonical() {
        let a = request_id(r#"{"jsonrpc":"2.0","id":"\u0061","method":"ping"}"#);
        assert_eq!(a, "\"a\"");
    }

    #[test]
    fn bad_ids_are_invalid_requests_with_null_id() {
        for id in ["null", "true", "1.5", "[1]", "{}", "1e400"] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
            match single(&line) {
                Message::Invalid { id: None, .. } => {}
                other => panic!("{id}: {other:?}"),
            }
        }
    }

    #[test]
    fn notifications_have_no_id() {
        match single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#) {
            Message::Notification { method, params } => {
                assert_eq!(method, "notifications/initialized");
                assert!(params.is_none());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn envelope_errors_echo_a_valid_id() {
        for line in [
            r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
            r#"{"jsonrpc":2.0,"id":3,"method":"ping"}"#,
            r#"{"id":3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":3}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":7}"#,
        ] {
            match single(line) {
                Message::Invalid { id: Some(id), .. } => assert_eq!(id.as_json(), "3"),
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn client_responses_are_recognised() {
        match single(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#) {
            Message::Response { id, result, error } => {
                assert_eq!(id.as_json(), "5");
                assert_eq!(result.unwrap().get(), "{}");
                assert!(error.is_none());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn non_objects_are_invalid_and_garbage_is_a_parse_error() {
        for line in ["1", "\"x\"", "null", "{}", "true"] {
            assert!(
                matches!(
                    parse_line(line.as_bytes()),
                    Line::Single(Message::Invalid { .. })
                ),
                "{line}"
            );
        }
        for line in ["{not-json}", "{\"a\":", "\u{7f}", "[1,"] {
            assert!(
                matches!(parse_line(line.as_bytes()), Line::ParseError(_)),
                "{line}"
            );
        }
        assert!(matches!(parse_line(b"  \t\r"), Line::Blank));
        assert!(matches!(parse_line(b""), Line::Blank));
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        for line in [
            // Outside any string, or in an id: nothing to recover.
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"\xff}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"ping\"}",
            // Malformed besides the bad bytes.
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"p\xffng\"}",
            // No id, or not an object.
            b"{\"jsonrpc\":\"2.0\",\"method\":\"n\xff\"}",
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}]",
            b"\xff",
        ] {
            assert!(
                matches!(parse_line(line), Line::ParseError(_)),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    /// Whether `part` lies inside the buffer `base..base + len`.
    fn borrowed_from(part: &str, base: usize, len: usize) -> bool {
        let at = part.as_ptr() as usize;
        at >= base && at + part.len() <= base + len
    }

    #[test]
    fn an_owned_line_is_not_copied_its_params_are_slices_of_it() {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":[1,2,3]}}}"#.to_vec();
        let (base, len) = (line.as_ptr() as usize, line.len());
        let Line::Single(Message::Request {
            params: Some(params),
            ..
        }) = parse_line(line)
        else {
            panic!("not a request");
        };
        assert_eq!(params.get(), r#"{"name":"t","arguments":{"x":[1,2,3]}}"#);
        assert!(borrowed_from(&params, base, len));
        // Each message of a batch shares the one line too.
        let batch = br#"[{"jsonrpc":"2.0","method":"n","params":{"a":1}},{"jsonrpc":"2.0","id":2,"method":"m","params":[2]}]"#.to_vec();
        let (base, len) = (batch.as_ptr() as usize, batch.len());
        let Line::Batch(messages) = parse_line(batch) else {
            panic!("not a batch");
        };
        let texts: Vec<_> = messages
            .iter()
            .map(|m| match m {
                Message::Request {
                    params: Some(p), ..
                }
                | Message::Notification {
                    params: Some(p), ..
                } => p.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts[0].get(), r#"{"a":1}"#);
        assert_eq!(texts[1].get(), "[2]");
        assert!(texts.iter().all(|p| borrowed_from(p, base, len)));
    }

    #[test]
    fn invalid_utf8_inside_strings_keeps_a_readable_id() {
        let request = b"{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"s\":\"\xc3\x28\"}}}";
        match parse_line(request) {
            Line::NotUtf8 {
                id,
                response: false,
                reason,
            } => {
                assert_eq!(id.as_json(), "\"r-1\"");
                assert!(reason.contains("UTF-8"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // The id may come after the bad bytes, and a key may hold them.
        let late_id =
            b"{\"jsonrpc\":\"2.0\",\"method\":\"p\xffng\",\"\xfe\":1,\"id\":12345678901234567890}";
        assert!(matches!(
            parse_line(late_id),
            Line::NotUtf8 { id, response: false, .. } if id.as_json() == "12345678901234567890"
        ));
        let response = b"{\"jsonrpc\":\"2.0\",\"id\":\"ask-1\",\"result\":{\"action\":\"accept\",\"content\":{\"name\":\"\xff\"}}}";
        assert!(matches!(
            parse_line(response),
            Line::NotUtf8 { response: true, .. }
        ));
    }

    #[test]
    fn deep_nesting_never_crashes() {
        let depth = 100_000;
        let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        // Nested params stay raw until their method parses them, which fails cleanly.
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{deep}}}"#);
        match parse_line(line.as_bytes()) {
            Line::Single(Message::Request {
                params: Some(p), ..
            }) => {
                assert!(serde_json::from_str::<Value>(p.get()).is_err());
            }
            other => panic!("{:.200}", format!("{other:?}")),
        }
        // Unknown members are skipped without building them.
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":{deep}}}"#);
        assert!(matches!(
            parse_line(line.as_bytes()),
            Line::Single(Message::Request { .. })
        ));
        assert!(matches!(parse_line(deep.as_bytes()), Line::Batch(_)));
    }

    #[test]
    fn batches_are_split() {
        let line = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},5]"#;
        match parse_line(line.as_bytes()) {
            Line::Batch(items) => {
                assert_eq!(items.len(), 3);
                assert!(matches!(items[0], Message::Request { .. }));
                assert!(matches!(items[1], Message::Notification { .. }));
                assert!(matches!(items[2], Message::Invalid { .. }));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse_line(b"[]"), Line::Batch(v) if v.is_empty()));
    }

    #[test]
    fn missing_capability_names_the_capabilities_as_an_object() {
        let error = missing_capability("needs elicitation", serde_json::json!({"elicitation": {}}));
        assert_eq!(
            error,
            serde_json::json!({"code": -32021, "message": "needs elicitation",
                               "data": {"requiredCapabilities": {"elicitation": {}}}})
        );
    }

    #[test]
    fn responses_are_well_formed() {
        let id = RequestId::from_number(4);
        let ok: Value = serde_json::from_str(&success(&id, "{}")).unwrap();
        assert_eq!(ok, serde_json::json!({"jsonrpc":"2.0","id":4,"result":{}}));
        let err: Value =
            serde_json::from_str(&error(None, PARSE_ERROR, "Parse error", None)).unwrap();
        assert_eq!(
            err,
            serde_json::json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
        );
    }

    #[test]
    fn sniffs_only_top_level_ids() {
        let id = |s: &str| sniff_id(s.as_bytes()).map(|i| i.as_json().to_string());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":"a\"b","method":"x","params":{"#),
            Some(r#""a\"b""#.into())
        );
        assert_eq!(id(r#"{"params":{"id":1},"id":2,"x":"#), Some("2".into()));
        assert_eq!(id(r#"{"params":{"id":1,"#), None);
        assert_eq!(id(r#"{"id":12"#), None);
        assert_eq!(
            id(r#"{"id":12345678901234567890,"#),
            Some("12345678901234567890".into())
        );
        assert_eq!(id("[1,2"), None);
        assert_eq!(id(""), None);
    }
}
