//! Tool results: the checks `tool_result()` runs, and turning whatever a
//! tool returned into the result the protocol engine sends.

use crate::check;
use crate::content::{read_block, read_meta};
use crate::output::Node;
use crate::rvalue::{element, field, flag_value, is_flag, is_json_object, RValue};
use crate::to_json;
use extendr_api::prelude::*;
use extendr_ffi::SEXPTYPE;
use mcp_core::engine::result::{Block, JsonText, ToolResult, Vouched};

const CONTENT_REQUIRED: &str =
    "`content` must contain at least one block created by a `content_*()` constructor.";
const CONTENT_BLOCKS: &str = "`content` must contain blocks created by `content_*()` constructors.";
const STRUCTURED_OBJECT: &str = "`structured_content` must be a named JSON object.";
const RESULT_FIELDS: [&str; 4] = ["content", "structured_content", "is_error", "meta"];
/// A tool's value with `_meta` for its MCP App (R/app.R, `app_value()`):
/// `list(value, meta)`, the value sent as if the tool had returned it.
const APP_VALUE: &str = "mcpserver_app_value";

/// A content block: ours, or one an mcplite script built by hand with
/// mcplite's class (its fields are checked like ours).
fn is_block(x: RValue) -> bool {
    x.kind() == SEXPTYPE::VECSXP
        && (x.inherits("mcpserver_content") || x.inherits("mcplite_content"))
}

/// The class that marks `x` as a tool result, ours or mcplite's (scripts
/// written for mcplite may build one by hand), if it has one.
fn result_class(x: RValue) -> Option<&'static str> {
    ["mcpserver_tool_result", "mcplite_tool_result"]
        .into_iter()
        .find(|class| x.inherits(class))
}

/// Checks `tool_result()` arguments in mcplite's order. `content` is `NULL`
/// when it was not supplied. Returns the error, or when they are fine the
/// compact JSON of `structured_content` for the text block if `content` is
/// missing, `NULL` otherwise (R wraps a single block in a list itself).
/// @noRd
#[extendr]
fn check_tool_result_(
    content: Robj,
    content_missing: bool,
    structured_content: Robj,
    is_error: Robj,
    meta: Robj,
) -> Robj {
    let content = RValue::of(&content);
    let structured = RValue::of(&structured_content);
    let result = (|| -> Result<Option<String>, String> {
        // The text block of a result given only structured content is the
        // JSON written to check it: written once.
        let text = if content_missing && !structured.is_null() {
            if !is_json_object(structured) {
                return Err(STRUCTURED_OBJECT.into());
            }
            Some(structured_json(structured, None)?)
        } else {
            check_structured(structured)?;
            None
        };
        if content_missing {
            if structured.is_null() {
                return Err(CONTENT_REQUIRED.into());
            }
        } else if !is_block(content) && (content.kind() != SEXPTYPE::VECSXP || content.len() == 0) {
            return Err(CONTENT_REQUIRED.into());
        }
        if !is_flag(RValue::of(&is_error)) {
            return Err("`is_error` must be TRUE or FALSE.".into());
        }
        if !content_missing {
            if is_block(content) {
                read_block(content)?;
            } else {
                for i in 0..content.len() {
                    let block = element(content, i);
                    if !is_block(block) {
                        return Err(CONTENT_BLOCKS.into());
                    }
                    read_block(block)?;
                }
            }
        }
        read_meta(RValue::of(&meta))?;
        Ok(text)
    })();
    match result {
        Ok(Some(text)) => text.into_robj(),
        Ok(None) => ().into_robj(),
        Err(e) => check::fail(e),
    }
}

fn check_structured(x: RValue) -> Result<(), String> {
    if x.is_null() {
        return Ok(());
    }
    if !is_json_object(x) {
        return Err(STRUCTURED_OBJECT.into());
    }
    check::serialisable(x, "structured_content")
}

/// Compact JSON of a structured value, as R would see it in a text block;
/// as the tool's output schema directs, if it has one.
fn structured_json(x: RValue, output: Option<&Node>) -> Result<String, String> {
    if is_empty_list(x) {
        // `list()` stands for an empty object here, as in mcplite.
        return Ok("{}".into());
    }
    match output {
        Some(plan) => to_json::to_json_directed(x, plan).map_err(|e| structured_failure(&e)),
        None => to_json::to_json(x)
            .map_err(|e| format!("`structured_content` must be JSON serializable: {e}")),
    }
}

fn is_empty_list(x: RValue) -> bool {
    x.kind() == SEXPTYPE::VECSXP && x.len() == 0 && x.names().is_null()
}

/// Why a structured result could not be written, for the model and the
/// tool's author.
fn structured_failure(e: &to_json::MapError) -> String {
    if e.mismatch {
        format!("The structured result does not fit the tool's output schema: {e}.")
    } else {
        unconvertible("Failed to convert tool result to JSON", e)
    }
}

/// What a tool returned, turned into a result: structured content as
/// `output` (the plan of the tool's output schema) directs, if the tool
/// has one. Failures here are tool errors the model can read, never
/// protocol errors.
pub fn from_value(value: RValue, output: Option<&Node>) -> ToolResult {
    match convert(value, output) {
        Ok(result) => result,
        Err(message) => ToolResult::error(message),
    }
}

fn convert(value: RValue, output: Option<&Node>) -> Result<ToolResult, String> {
    if value.kind() == SEXPTYPE::VECSXP && value.inherits(APP_VALUE) {
        let mut result = convert(field(value, "value"), output)?;
        if let Some(extra) = read_meta(field(value, "meta"))? {
            result
                .meta
                .get_or_insert_with(Default::default)
                .extend(extra);
        }
        return Ok(result);
    }
    if let Some(class) = result_class(value) {
        return from_tool_result(value, class, output);
    }
    if let Some(plan) = output {
        // Written once: the text mirror is rendered from the same bytes.
        let json = to_json::to_json_directed(value, plan).map_err(|e| structured_failure(&e))?;
        let conforms = to_json::conforms(value, plan);
        return Ok(ToolResult {
            content: Vec::new(),
            structured: Some(JsonText::written(json)),
            is_error: false,
            meta: None,
            vouched: Vouched {
                conforms,
                mirrored: true,
            },
        });
    }
    Ok(text_result(text_of(value)?))
}

fn text_result(text: String) -> ToolResult {
    ToolResult {
        content: vec![Block::text(text)],
        structured: None,
        is_error: false,
        meta: None,
        vouched: Vouched::default(),
    }
}

/// mcplite's text rules: character vectors joined by newlines (`NA` as
/// "NA"), `NULL` as `{}`, anything else as compact JSON.
fn text_of(value: RValue) -> Result<String, String> {
    if value.is_null() {
        return Ok("{}".into());
    }
    if value.kind() == SEXPTYPE::STRSXP && !value.has_class() {
        let parts: Vec<String> = (0..value.len())
            .map(|i| {
                value
                    .string(i)
                    .map_or_else(|| "NA".to_string(), |s| s.into_owned())
            })
            .collect();
        return Ok(parts.join("\n"));
    }
    to_json::to_json(value).map_err(|e| unconvertible("Failed to convert tool result to text", &e))
}

/// A tool's value JSON cannot hold: where the bad part sits and, when it
/// is (or is inside) a classed object such as a model fit, what to return
/// instead, since the whole object is rarely what the client needs.
fn unconvertible(what: &str, e: &to_json::MapError) -> String {
    let mut message = format!("{what}: {e}");
    if let Some((class, path)) = &e.object {
        message.push('.');
        let held = if path.is_empty() {
            format!("The tool returned an object of class `{class}`")
        } else {
            format!("The tool's value holds an object of class `{class}` at `{path}`")
        };
        message.push_str(&format!(
            " {held}, which JSON cannot hold whole: return the parts the client needs, such as \
             `coef(fit)`, `broom::tidy(fit)` (a data frame), or the printed summary as text, \
             `paste(capture.output(summary(fit)), collapse = \"\\n\")`."
        ));
    }
    message
}

/// A `tool_result()` checked again, since it may have been edited or forged
/// after it was built (or built by hand, as mcplite allows). `class` is the
/// result class it carries, for the error message.
fn from_tool_result(x: RValue, class: &str, output: Option<&Node>) -> Result<ToolResult, String> {
    let names = x.names();
    let exact = x.kind() == SEXPTYPE::VECSXP
        && names.len() == RESULT_FIELDS.len()
        && RESULT_FIELDS
            .iter()
            .all(|f| (0..names.len()).any(|i| names.string(i).as_deref() == Some(*f)));
    if !exact {
        return Err(format!("Invalid canonical `{class}` fields."));
    }
    let structured = field(x, "structured_content");
    let mirror = untouched_mirror(x, output);
    // Without an output schema, the JSON written to check the structured
    // content is the one sent.
    let mut written = None;
    if mirror.is_none() {
        if output.is_none() && !structured.is_null() {
            if !is_json_object(structured) {
                return Err(STRUCTURED_OBJECT.into());
            }
            written = Some(structured_json(structured, None)?);
        } else {
            check_structured(structured)?;
        }
    }
    let mut blocks = Vec::new();
    if mirror.is_none() {
        let content = field(x, "content");
        if content.kind() != SEXPTYPE::VECSXP || content.len() == 0 {
            return Err(CONTENT_REQUIRED.into());
        }
        blocks.reserve(content.len());
        for i in 0..content.len() {
            let block = element(content, i);
            if !is_block(block) {
                return Err(CONTENT_BLOCKS.into());
            }
            blocks.push(read_block(block)?);
        }
    }
    let is_error = field(x, "is_error");
    if !is_flag(is_error) {
        return Err("`is_error` must be TRUE or FALSE.".into());
    }
    let conforms = !structured.is_null()
        && !is_empty_list(structured)
        && output.is_some_and(|plan| to_json::conforms(structured, plan));
    let mirrored = mirror.is_some();
    let structured = match (mirror.or(written), structured.is_null()) {
        (Some(json), _) => Some(JsonText::written(json)),
        (None, true) => None,
        (None, false) => Some(JsonText::written(structured_json(structured, output)?)),
    };
    Ok(ToolResult {
        content: blocks,
        structured,
        is_error: flag_value(is_error),
        meta: read_meta(field(x, "meta"))?,
        vouched: Vouched { conforms, mirrored },
    })
}

/// The attribute `tool_result()` puts on a result whose only block is the
/// JSON of its structured content: `list(structured_content, content)`,
/// the very objects the result holds.
const MIRROR: &str = "mcpserver_mirror";

/// The text of a result's only block when it is still the mirror
/// `tool_result()` wrote of the structured content, and the tool has no
/// output schema (which would write the structured content another way):
/// it is then sent as the structured content and rendered as its mirror,
/// not read and written again. Untouched means the result still holds the
/// very objects the attribute names: the attribute shares them, so R
/// copies them before any change (they are referenced twice), and a
/// changed field is another object.
fn untouched_mirror(x: RValue, output: Option<&Node>) -> Option<String> {
    let marks = x.attr_named(MIRROR);
    if output.is_some() || marks.kind() != SEXPTYPE::VECSXP || marks.len() != 2 {
        return None;
    }
    let (structured, content) = (field(x, "structured_content"), field(x, "content"));
    if structured.is_null()
        || element(marks, 0) != structured
        || element(marks, 1) != content
        || content.kind() != SEXPTYPE::VECSXP
        || content.len() != 1
    {
        return None;
    }
    let block = element(content, 0);
    if !is_block(block) || field(block, "type").as_single_string().as_deref() != Some("text") {
        return None;
    }
    field(block, "text")
        .as_single_string()
        .map(|t| t.into_owned())
}

/// What the server would send for a tool that returned `value`, for tests:
/// the `CallToolResult` of `revision` as JSON text. With `structured`, the
/// value is structured content under a schema that leaves it open.
/// @noRd
#[extendr]
fn result_json_for_test_(value: Robj, revision: &str, structured: bool) -> Robj {
    let Some(rev) = mcp_core::protocol::revision::Revision::parse(revision) else {
        return check::fail("unknown revision");
    };
    let def = mcp_core::protocol::tool::ToolDef {
        name: "t".into(),
        input_schema: serde_json::json!({"type": "object"}),
        ..Default::default()
    };
    let registry = mcp_core::engine::registry::Registry::new(vec![def]).expect("a valid test tool");
    let open = structured.then(|| crate::output::plan(&serde_json::json!({})));
    let result = from_value(RValue::of(&value), open.as_ref());
    mcp_core::engine::result::render(registry.tool(0), &result, rev, None).into_robj()
}

/// Whether the result sent for `value` (a tool without an output schema)
/// renders its text block from the structured content's bytes, for tests:
/// `tool_result()`'s own text block, untouched, is not written again.
/// @noRd
#[extendr]
fn result_mirrored_for_test_(value: Robj) -> bool {
    from_value(RValue::of(&value), None).vouched.mirrored
}

/// The structured content `tool` (its definition as `tool()` stored it)
/// sends when it returns `value`, as JSON text, before the output schema
/// checks it; or the error that converting it raises. For tests.
/// @noRd
#[extendr]
fn structured_json_for_test_(spec: Robj, value: Robj) -> Robj {
    let plan = match crate::tool::plan(RValue::of(&spec)) {
        Ok(plan) => plan,
        Err(e) => return check::fail(e),
    };
    match structured_json(RValue::of(&value), plan.output.as_ref()) {
        Ok(json) => json.into_robj(),
        Err(e) => check::fail(e),
    }
}

/// What the server sends for `tool` (its definition as `tool()` stored
/// it) when it returns `value`, for tests: the `CallToolResult` of
/// `revision` as JSON text, or `list(error =)` with the message of the
/// -32603 error a result breaking the output schema gets.
/// @noRd
#[extendr]
fn tool_result_for_test_(spec: Robj, value: Robj, revision: &str) -> Robj {
    let Some(rev) = mcp_core::protocol::revision::Revision::parse(revision) else {
        return check::fail("unknown revision");
    };
    let plan = match crate::tool::plan(RValue::of(&spec)) {
        Ok(plan) => plan,
        Err(e) => return check::fail(e),
    };
    let registry = match mcp_core::engine::registry::Registry::new(vec![plan.def]) {
        Ok(registry) => registry,
        Err(e) => return check::fail(e),
    };
    let result = from_value(RValue::of(&value), plan.output.as_ref());
    match mcp_core::engine::result::check_output(registry.tool(0), &result) {
        Ok(()) => {
            mcp_core::engine::result::render(registry.tool(0), &result, rev, None).into_robj()
        }
        Err(violation) => {
            List::from_pairs(vec![("error", Robj::from(violation.message))]).into_robj()
        }
    }
}

extendr_module! {
    mod result;
    fn check_tool_result_;
    fn result_json_for_test_;
    fn result_mirrored_for_test_;
    fn tool_result_for_test_;
    fn structured_json_for_test_;
}
