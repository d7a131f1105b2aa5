//! Tool results: content blocks, structured content, and how a result is
//! written for each protocol revision.

use crate::engine::registry::Tool;
use crate::protocol::revision::Revision;
use crate::protocol::streamed::{escape_into, JsonStream, StreamedLine};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

/// What a content block carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text {
        text: String,
    },
    Image {
        data: String,
        mime_type: String,
    },
    Audio {
        data: String,
        mime_type: String,
    },
    ResourceLink {
        uri: String,
        name: String,
        title: Option<String>,
        description: Option<String>,
        mime_type: Option<String>,
        size: Option<u64>,
    },
    Resource {
        uri: String,
        mime_type: Option<String>,
        body: ResourceBody,
    },
}

/// An embedded resource holds text or base64 data, never both.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceBody {
    Text(String),
    Blob(String),
}

/// A content block with its optional annotations and `_meta`, both already
/// in wire form (camelCase keys).
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub content: Content,
    pub annotations: Option<Map<String, Value>>,
    pub meta: Option<Map<String, Value>>,
}

impl Block {
    pub fn text(text: impl Into<String>) -> Block {
        Block {
            content: Content::Text { text: text.into() },
            annotations: None,
            meta: None,
        }
    }

    pub(crate) fn type_name(&self) -> &'static str {
        match self.content {
            Content::Text { .. } => "text",
            Content::Image { .. } => "image",
            Content::Audio { .. } => "audio",
            Content::ResourceLink { .. } => "resource_link",
            Content::Resource { .. } => "resource",
        }
    }

    pub(crate) fn supported_in(&self, rev: Revision) -> bool {
        match self.content {
            Content::Audio { .. } => rev.has_audio(),
            Content::ResourceLink { .. } => rev.has_resource_link(),
            _ => true,
        }
    }

    pub(crate) fn to_wire(&self, rev: Revision) -> Value {
        let mut block = Map::new();
        block.insert("type".into(), Value::from(self.type_name()));
        match &self.content {
            Content::Text { text } => {
                block.insert("text".into(), Value::from(text.as_str()));
            }
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                block.insert("data".into(), Value::from(data.as_str()));
                block.insert("mimeType".into(), Value::from(mime_type.as_str()));
            }
            Content::ResourceLink {
                uri,
                name,
                title,
                description,
                mime_type,
                size,
            } => {
                block.insert("uri".into(), Value::from(uri.as_str()));
                block.insert("name".into(), Value::from(name.as_str()));
                insert_some(&mut block, "title", title);
                insert_some(&mut block, "description", description);
                insert_some(&mut block, "mimeType", mime_type);
                if let Some(size) = size {
                    block.insert("size".into(), Value::from(*size));
                }
            }
            Content::Resource {
                uri,
                mime_type,
                body,
            } => {
                let mut resource = Map::new();
                resource.insert("uri".into(), Value::from(uri.as_str()));
                insert_some(&mut resource, "mimeType", mime_type);
                match body {
                    ResourceBody::Text(text) => {
                        resource.insert("text".into(), Value::from(text.as_str()))
                    }
                    ResourceBody::Blob(blob) => {
                        resource.insert("blob".into(), Value::from(blob.as_str()))
                    }
                };
                block.insert("resource".into(), Value::Object(resource));
            }
        }
        if let Some(annotations) = &self.annotations {
            let mut annotations = annotations.clone();
            if !rev.has_last_modified() {
                annotations.shift_remove("lastModified");
            }
            if !annotations.is_empty() {
                block.insert("annotations".into(), Value::Object(annotations));
            }
        }
        if let (Some(meta), true) = (&self.meta, rev.has_structured_output()) {
            block.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(block)
    }
}

fn insert_some(map: &mut Map<String, Value>, key: &str, value: &Option<String>) {
    if let Some(value) = value {
        map.insert(key.into(), Value::from(value.as_str()));
    }
}

/// A tool's answer, as the R side built it.
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub content: Vec<Block>,
    /// Structured content as compact JSON text.
    pub structured: Option<JsonText>,
    pub is_error: bool,
    pub meta: Option<Map<String, Value>>,
    /// What the embedder vouches for about `structured`.
    pub vouched: Vouched,
}

/// What the embedder that built a result vouches for, so that large
/// structured content is neither read again nor held twice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Vouched {
    /// `structured` was checked against the tool's output schema already
    /// (mcpserver checks a data frame column by column in R's memory), so
    /// [`check_output`] does not read it again.
    pub conforms: bool,
    /// The result's first text block is `structured` itself, as JSON text:
    /// it is not in `content` but written from `structured` when the
    /// result is rendered (the text mirror the spec asks for).
    pub mirrored: bool,
}

/// JSON text known to hold one JSON value.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonText(Box<str>);

impl JsonText {
    pub fn into_string(self) -> String {
        self.0.into_string()
    }

    /// Text a JSON writer produced, taken as it is: a large result is not
    /// read again just to learn that it is JSON.
    pub fn written(text: String) -> JsonText {
        JsonText(text.into_boxed_str())
    }

    /// Text from elsewhere, checked to be one JSON value.
    pub fn parse(text: String) -> serde_json::Result<JsonText> {
        serde_json::from_str::<serde::de::IgnoredAny>(&text)?;
        Ok(JsonText::written(text))
    }

    pub fn get(&self) -> &str {
        &self.0
    }
}

impl From<Box<RawValue>> for JsonText {
    fn from(raw: Box<RawValue>) -> JsonText {
        JsonText(raw.get().into())
    }
}

impl ToolResult {
    /// A failed call the model can read: one text block, `isError: true`.
    pub fn error(message: impl Into<String>) -> ToolResult {
        ToolResult {
            content: vec![Block::text(message)],
            structured: None,
            is_error: true,
            meta: None,
            vouched: Vouched::default(),
        }
    }

    /// The result with its text mirror (see [`Vouched::mirrored`]) in
    /// `content`, for readers of `content` other than [`render`].
    pub fn with_mirror(&self) -> std::borrow::Cow<'_, ToolResult> {
        match (&self.structured, self.vouched.mirrored) {
            (Some(structured), true) => {
                let mut whole = self.clone();
                whole.content.insert(0, Block::text(structured.get()));
                whole.vouched.mirrored = false;
                std::borrow::Cow::Owned(whole)
            }
            _ => std::borrow::Cow::Borrowed(self),
        }
    }
}

/// A successful result that breaks the tool's own output schema: the server
/// must not send it (clients reject it), so it becomes a -32603 error.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchemaViolation {
    pub message: String,
    pub data: Value,
}

/// Checks a result against the tool's output schema. Error results are
/// exempt: the spec requires conforming structured content only on success.
pub fn check_output(tool: &Tool, result: &ToolResult) -> Result<(), OutputSchemaViolation> {
    let (Some(validator), false) = (&tool.output_validator, result.is_error) else {
        return Ok(());
    };
    let name = &tool.def.name;
    let Some(raw) = &result.structured else {
        return Err(OutputSchemaViolation {
            message: format!(
                "Tool \"{name}\" declares an output schema but returned no structured content"
            ),
            data: json!({ "tool": name }),
        });
    };
    if result.vouched.conforms {
        return Ok(());
    }
    let span = crate::util::spans::span("output schema: check the JSON text", raw.get().len());
    let checked = validator.check(raw.get(), false);
    drop(span);
    let Err(problems) = checked else {
        return Ok(());
    };
    let hints = &tool.def.output_hints;
    let advice: Vec<&str> = [
        (problems.kinds.not_an_array, &hints.not_an_array),
        (problems.kinds.null, &hints.null),
    ]
    .into_iter()
    .filter_map(|(found, hint)| if found { hint.as_deref() } else { None })
    .collect();
    let lines = problems.lines();
    let mut message = format!(
        "Tool \"{name}\" returned structured content that does not match its output schema: {}",
        lines.join("; ")
    );
    for hint in advice {
        message.push_str(". ");
        message.push_str(hint);
    }
    Err(OutputSchemaViolation {
        message,
        data: json!({ "tool": name, "problems": lines }),
    })
}

/// Writes the `CallToolResult` for `rev` as JSON text. `extra_meta` is merged
/// into the result's `_meta` (the serverInfo of 2026-07-28, related-task ids).
pub fn render(
    tool: &Tool,
    result: &ToolResult,
    rev: Revision,
    extra_meta: Option<&Map<String, Value>>,
) -> String {
    let unsupported = unsupported_types(&result.content, rev);
    if !unsupported.is_empty() {
        let downgraded = ToolResult::error(format!(
            "MCP protocol {rev} does not support tool-result content type(s): {}.",
            unsupported.join(", ")
        ));
        return render_checked(tool, &downgraded, rev, extra_meta);
    }
    render_checked(tool, result, rev, extra_meta)
}

fn unsupported_types(content: &[Block], rev: Revision) -> Vec<&'static str> {
    let mut types: Vec<&'static str> = Vec::new();
    for block in content {
        let name = block.type_name();
        if !block.supported_in(rev) && !types.contains(&name) {
            types.push(name);
        }
    }
    types
}

fn render_checked(
    tool: &Tool,
    result: &ToolResult,
    rev: Revision,
    extra_meta: Option<&Map<String, Value>>,
) -> String {
    // Built as text so large structured content is copied, never re-parsed;
    // room is left for the JSON-RPC envelope (see `jsonrpc::success_owned`).
    let structured = result.structured.as_ref().map(|s| s.get());
    let structured_len = structured.map_or(0, str::len);
    let mirrored = result.vouched.mirrored && structured.is_some();
    // Escaping JSON text adds a backslash per quote, about a fifth of a
    // table's bytes; room never touched costs no resident memory.
    let mirror_len = if mirrored { 2 * structured_len + 32 } else { 0 };
    let mut out = String::with_capacity(ENVELOPE_ROOM + 64 + structured_len + mirror_len);
    let shape = Shape {
        mirror: mirrored,
        structured: structured.map(|s| s.starts_with('{')),
    };
    lay_out(
        &mut out,
        tool,
        result,
        shape,
        rev,
        extra_meta,
        &mut |out, hole| {
            let text = structured.expect("holes only for structured content");
            match hole {
                // SAFETY: `escape_into` appends whole UTF-8 characters and
                // ASCII escapes only.
                Hole::Mirror => escape_into(unsafe { out.as_mut_vec() }, text.as_bytes()),
                Hole::Structured => out.push_str(text),
            }
        },
    );
    out
}

/// The two parts of a result that can be large, written by the caller of
/// [`lay_out`].
enum Hole {
    /// The structured content as the inside of the text mirror's string.
    Mirror,
    /// The structured content itself.
    Structured,
}

/// What [`lay_out`] must know of the structured content without seeing it.
#[derive(Clone, Copy)]
struct Shape {
    /// The first text block mirrors it (see [`Vouched::mirrored`]).
    mirror: bool,
    /// Whether there is some, and whether it is a JSON object (anything
    /// else is wrapped as `{"result": ...}` where the revision asks).
    structured: Option<bool>,
}

/// Writes a `CallToolResult` for `rev`, calling `fill` where each [`Hole`]
/// goes. `result`'s own structured content is not read here.
fn lay_out(
    out: &mut String,
    tool: &Tool,
    result: &ToolResult,
    shape: Shape,
    rev: Revision,
    extra_meta: Option<&Map<String, Value>>,
    fill: &mut dyn FnMut(&mut String, Hole),
) {
    out.push_str("{\"content\":[");
    let mut first = true;
    if shape.mirror {
        out.push_str("{\"type\":\"text\",\"text\":\"");
        fill(out, Hole::Mirror);
        out.push_str("\"}");
        first = false;
    }
    for block in &result.content {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&block.to_wire(rev).to_string());
    }
    out.push_str("],\"isError\":");
    out.push_str(if result.is_error { "true" } else { "false" });
    if let (Some(object), true) = (shape.structured, rev.has_structured_output()) {
        out.push_str(",\"structuredContent\":");
        let wrap = tool.def.wraps_output(rev) || (!rev.allows_any_output_root() && !object);
        if wrap {
            out.push_str("{\"result\":");
        }
        fill(out, Hole::Structured);
        if wrap {
            out.push('}');
        }
    }
    let meta = merge_meta(result.meta.as_ref(), extra_meta);
    if let Some(meta) = meta {
        out.push_str(",\"_meta\":");
        out.push_str(&Value::Object(meta).to_string());
    }
    if rev.is_modern() {
        out.push_str(",\"resultType\":\"complete\"");
    }
    out.push('}');
}

/// A successful result whose only content is structured content that is
/// still being written, mirrored as its text block (see
/// [`crate::protocol::streamed`]): the response line for request `id`
/// around it. `meta` is the tool's own result `_meta`; `object` whether
/// the content is a JSON object (anything else may be wrapped).
pub fn render_streamed(
    tool: &Tool,
    id: &crate::protocol::jsonrpc::RequestId,
    (meta, object): (Option<Map<String, Value>>, bool),
    rev: Revision,
    extra_meta: Option<&Map<String, Value>>,
    content: JsonStream,
) -> StreamedLine {
    let result = ToolResult {
        content: Vec::new(),
        structured: None,
        is_error: false,
        meta,
        vouched: Vouched::default(),
    };
    let shape = Shape {
        mirror: true,
        structured: Some(object),
    };
    let mut pieces = Vec::new();
    let mut out = crate::protocol::jsonrpc::success_head(id);
    lay_out(
        &mut out,
        tool,
        &result,
        shape,
        rev,
        extra_meta,
        &mut |out, _| pieces.push(std::mem::take(out)),
    );
    out.push('}');
    let mut pieces = pieces.into_iter();
    let head = pieces.next().expect("the mirror's hole");
    let middle = pieces.next();
    let structured = middle.is_some();
    let (middle, tail) = match middle {
        Some(middle) => (middle, out),
        // No structured content in this revision: the mirror only.
        None => (out, String::new()),
    };
    StreamedLine {
        head,
        mirror: true,
        middle,
        structured,
        tail,
        content,
    }
}

/// Bytes a rendered result keeps free for the JSON-RPC envelope around it,
/// so that wrapping a large one moves it in place rather than copying it.
pub const ENVELOPE_ROOM: usize = 128;

/// The result `_meta`: the tool's own keys, then the server's.
pub fn merge_meta(
    own: Option<&Map<String, Value>>,
    extra: Option<&Map<String, Value>>,
) -> Option<Map<String, Value>> {
    match (own, extra) {
        (None, None) => None,
        (Some(m), None) | (None, Some(m)) => Some(m.clone()),
        (Some(own), Some(extra)) => {
            let mut merged = own.clone();
            for (k, v) in extra {
                merged.insert(k.clone(), v.clone());
            }
            Some(merged)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::registry::Registry;
    use crate::protocol::tool::ToolDef;

    fn tool_with_output(schema: Option<Value>) -> Registry {
        Registry::new(vec![ToolDef {
            name: "t".into(),
            description: Some("d".into()),
            input_schema: json!({"type":"object","properties":{}}),
            output_schema: schema,
            ..ToolDef::default()
        }])
        .unwrap()
    }

    fn push_json_string(out: &mut String, text: &str) {
        out.push('"');
        // SAFETY: as in `render_checked`.
        escape_into(unsafe { out.as_mut_vec() }, text.as_bytes());
        out.push('"');
    }

    #[test]
    fn the_text_mirror_is_escaped_as_serde_json_escapes() {
        let text = "{\"a\":\"q\\\"b\\\\\\n\u{1}\t\u{8}\u{c}\r é\"}";
        let mut out = String::new();
        push_json_string(&mut out, text);
        assert_eq!(out, serde_json::to_string(text).unwrap());
        // Runs cut at every place, appended after other text.
        let tricky = "a\"b\\c\u{1}\n\u{1f}\u{7f} é😀 plain run \"\"\\\\ end";
        for (start, _) in tricky.char_indices() {
            let text = &tricky[start..];
            let mut out = String::from("x");
            push_json_string(&mut out, text);
            assert_eq!(
                out[1..],
                serde_json::to_string(text).unwrap(),
                "from {start}"
            );
        }
        let mut out = String::new();
        push_json_string(&mut out, "");
        assert_eq!(out, "\"\"");
    }

    fn raw(text: &str) -> Option<JsonText> {
        Some(JsonText::parse(text.to_string()).unwrap())
    }

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    fn every_block() -> Vec<Block> {
        let annotations =
            json!({"audience":["user"],"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"});
        vec![
            Block {
                content: Content::Text { text: "hi".into() },
                annotations: Some(annotations.as_object().unwrap().clone()),
                meta: Some(json!({"m":1}).as_object().unwrap().clone()),
            },
            Block {
                content: Content::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                },
                annotations: None,
                meta: None,
            },
            Block {
                content: Content::Audio {
                    data: "AAAA".into(),
                    mime_type: "audio/wav".into(),
                },
                annotations: None,
                meta: None,
            },
            Block {
                content: Content::ResourceLink {
                    uri: "file:///a".into(),
                    name: "a".into(),
                    title: None,
                    description: Some("d".into()),
                    mime_type: None,
                    size: Some(3),
                },
                annotations: None,
                meta: None,
            },
            Block {
                content: Content::Resource {
                    uri: "file:///b".into(),
                    mime_type: Some("text/plain".into()),
                    body: ResourceBody::Text("b".into()),
                },
                annotations: None,
                meta: None,
            },
        ]
    }

    #[test]
    fn every_block_type_renders_in_wire_form() {
        let reg = tool_with_output(None);
        let result = ToolResult {
            content: every_block(),
            structured: None,
            is_error: false,
            meta: None,
            vouched: Vouched::default(),
        };
        let out = parse(&render(reg.tool(0), &result, Revision::V2025_11_25, None));
        let c = &out["content"];
        assert_eq!(
            c[0],
            json!({"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"},"_meta":{"m":1}})
        );
        assert_eq!(
            c[1],
            json!({"type":"image","data":"AAAA","mimeType":"image/png"})
        );
        assert_eq!(c[2]["type"], "audio");
        assert_eq!(
            c[3],
            json!({"type":"resource_link","uri":"file:///a","name":"a","description":"d","size":3})
        );
        assert_eq!(
            c[4],
            json!({"type":"resource","resource":{"uri":"file:///b","mimeType":"text/plain","text":"b"}})
        );
        assert_eq!(out["isError"], false);
        assert!(out.get("resultType").is_none());
    }

    #[test]
    fn old_revisions_refuse_new_block_types_whole() {
        let reg = tool_with_output(None);
        let result = ToolResult {
            content: every_block(),
            structured: None,
            is_error: false,
            meta: None,
            vouched: Vouched::default(),
        };
        let out = parse(&render(reg.tool(0), &result, Revision::V2024_11_05, None));
        assert_eq!(out["isError"], true);
        assert_eq!(
            out["content"][0]["text"],
            "MCP protocol 2024-11-05 does not support tool-result content type(s): audio, resource_link."
        );
        let out = parse(&render(reg.tool(0), &result, Revision::V2025_03_26, None));
        assert_eq!(
            out["content"][0]["text"],
            "MCP protocol 2025-03-26 does not support tool-result content type(s): resource_link."
        );
    }

    #[test]
    fn block_fields_are_gated() {
        let reg = tool_with_output(None);
        let result = ToolResult {
            content: vec![every_block().remove(0)],
            structured: raw(r#"{"a":1}"#),
            is_error: false,
            meta: Some(json!({"r":1}).as_object().unwrap().clone()),
            vouched: Vouched::default(),
        };
        let out = parse(&render(reg.tool(0), &result, Revision::V2025_03_26, None));
        assert_eq!(
            out["content"][0],
            json!({"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0.5}})
        );
        assert!(out.get("structuredContent").is_none());
        assert_eq!(out["_meta"], json!({"r":1}));
    }

    #[test]
    fn modern_results_carry_result_type_and_merged_meta() {
        let reg = tool_with_output(None);
        let mut result = ToolResult::error("boom");
        result.meta = Some(json!({"own":true}).as_object().unwrap().clone());
        let extra = json!({"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}});
        let out = parse(&render(
            reg.tool(0),
            &result,
            Revision::V2026_07_28,
            extra.as_object(),
        ));
        assert_eq!(out["resultType"], "complete");
        assert_eq!(out["_meta"]["own"], true);
        assert_eq!(
            out["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "s"
        );
    }

    #[test]
    fn output_schema_is_enforced_on_success_only() {
        let reg = tool_with_output(Some(
            json!({"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}),
        ));
        let tool = reg.tool(0);
        let mut result = ToolResult {
            content: vec![Block::text("{}")],
            structured: None,
            is_error: false,
            meta: None,
            vouched: Vouched::default(),
        };
        let err = check_output(tool, &result).unwrap_err();
        assert!(
            err.message.contains("returned no structured content"),
            "{}",
            err.message
        );
        assert_eq!(err.data["tool"], "t");
        result.structured = raw(r#"{"sum":"x"}"#);
        let err = check_output(tool, &result).unwrap_err();
        assert!(
            err.message.contains(r#"sum: expected a number, got "x""#),
            "{}",
            err.message
        );
        result.structured = raw(r#"{"sum":3}"#);
        check_output(tool, &result).unwrap();
        check_output(tool, &ToolResult::error("failed")).unwrap();
    }

    #[test]
    fn a_mirrored_result_renders_its_text_from_the_structured_bytes() {
        let reg = tool_with_output(None);
        let text = r#"{"name":"a \"quoted\" é","n":[1,2]}"#;
        let result = ToolResult {
            content: vec![Block::text("after")],
            structured: raw(text),
            is_error: false,
            meta: None,
            vouched: Vouched {
                conforms: false,
                mirrored: true,
            },
        };
        let out = parse(&render(reg.tool(0), &result, Revision::V2025_11_25, None));
        assert_eq!(out["content"][0], json!({"type": "text", "text": text}));
        assert_eq!(out["content"][1]["text"], "after");
        assert_eq!(out["structuredContent"], parse(text));
        // Readers of the blocks other than `render` see the mirror too.
        let whole = result.with_mirror();
        assert_eq!(whole.content.len(), 2);
        assert_eq!(whole.content[0], Block::text(text));
    }

    #[test]
    fn vouched_content_is_not_read_again_but_unvouched_content_is() {
        let reg = tool_with_output(Some(
            json!({"type":"object","properties":{"sum":{"type":"number"}}}),
        ));
        let mut result = ToolResult {
            content: Vec::new(),
            structured: raw(r#"{"sum":"x"}"#),
            is_error: false,
            meta: None,
            vouched: Vouched::default(),
        };
        assert!(check_output(reg.tool(0), &result).is_err());
        result.vouched.conforms = true;
        assert!(
            check_output(reg.tool(0), &result).is_ok(),
            "the embedder's word is taken"
        );
    }

    #[test]
    fn output_problems_name_fields_and_add_the_embedders_advice() {
        let schema = json!({"type":"object","properties":{
            "sum":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}},
            "row":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}},
            "required":["sum"],"additionalProperties":false});
        let reg = Registry::new(vec![ToolDef {
            name: "t".into(),
            input_schema: json!({"type":"object"}),
            output_schema: Some(schema),
            output_hints: crate::protocol::tool::OutputHints {
                not_an_array: Some("Wrap it".into()),
                null: Some("Declare it nullable".into()),
            },
            ..ToolDef::default()
        }])
        .unwrap();
        let tool = reg.tool(0);
        let check = |text: &str| {
            let result = ToolResult {
                content: vec![Block::text("{}")],
                structured: raw(text),
                is_error: false,
                meta: None,
                vouched: Vouched::default(),
            };
            check_output(tool, &result).unwrap_err().message
        };
        let message = check(r#"{"extra":1,"row":{}}"#);
        assert!(
            message.contains(r#"missing required field "sum""#),
            "{message}"
        );
        assert!(message.contains(r#"unexpected field "extra""#), "{message}");
        assert!(
            message.contains(r#"row: missing required field "n""#),
            "{message}"
        );
        assert!(!message.contains("argument") && !message.contains("Wrap it"));
        let message = check(r#"{"sum":1,"tags":"a"}"#);
        assert!(
            message.ends_with(r#"tags: expected an array, got "a". Wrap it"#),
            "{message}"
        );
        let message = check(r#"{"sum":null,"tags":"a"}"#);
        assert!(
            message.ends_with(". Wrap it. Declare it nullable"),
            "{message}"
        );
    }

    #[test]
    fn array_structured_content_is_wrapped_for_old_clients() {
        let reg = tool_with_output(Some(json!({"type":"array","items":{"type":"number"}})));
        let result = ToolResult {
            content: vec![Block::text("[1,2]")],
            structured: raw("[1,2]"),
            is_error: false,
            meta: None,
            vouched: Vouched::default(),
        };
        check_output(reg.tool(0), &result).unwrap();
        let old = parse(&render(reg.tool(0), &result, Revision::V2025_11_25, None));
        assert_eq!(old["structuredContent"], json!({"result":[1,2]}));
        let new = parse(&render(reg.tool(0), &result, Revision::V2026_07_28, None));
        assert_eq!(new["structuredContent"], json!([1, 2]));
    }
}
