//! One tool's definition, and how it is written for each protocol revision.

use crate::protocol::revision::Revision;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// Longest name the spec allows (2025-11-25 `server/tools.mdx`).
pub const MAX_NAME_LEN: usize = 128;
/// Clients prefix tool names (`mcp__server__tool`) and model APIs cap the
/// result at 64 characters, so longer names earn a warning.
pub const SAFE_NAME_LEN: usize = 64;

/// Whether a tool may run as a task (2025-11-25 `execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    #[default]
    Forbidden,
    Optional,
    Required,
    /// A 2026-07-28 call starts as a plain call (its questions answered by
    /// `input_required` rounds) and becomes a task when the tool says so;
    /// elsewhere as [`TaskSupport::Optional`].
    Deferred,
}

impl TaskSupport {
    pub fn parse(text: &str) -> Option<TaskSupport> {
        match text {
            "forbidden" => Some(TaskSupport::Forbidden),
            "optional" => Some(TaskSupport::Optional),
            "required" => Some(TaskSupport::Required),
            "deferred" => Some(TaskSupport::Deferred),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
            TaskSupport::Deferred => "deferred",
        }
    }

    /// The `execution.taskSupport` a 2025-11-25 client is told: a deferred
    /// tool is an optional one there (the client decides at the call).
    pub fn wire(self) -> &'static str {
        match self {
            TaskSupport::Deferred => "optional",
            other => other.as_str(),
        }
    }
}

/// A tool as the server advertises it. Schemas are plain JSON here; the
/// registry compiles them.
#[derive(Debug, Clone, Default)]
pub struct ToolDef {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// Always an object-rooted schema.
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Option<Map<String, Value>>,
    pub icons: Option<Value>,
    pub meta: Option<Map<String, Value>>,
    pub task_support: TaskSupport,
    pub timeout: Option<Duration>,
    /// Advice added to the error for a result that breaks the output
    /// schema, in the words of the embedder's language.
    pub output_hints: OutputHints,
}

/// What to say, besides the problems, when a structured result breaks its
/// output schema: how the embedder's values become the JSON at fault.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutputHints {
    /// When a value the schema wants as an array is not one.
    pub not_an_array: Option<String>,
    /// When `null` stands where the schema does not allow it.
    pub null: Option<String>,
}

/// mcplite's wording of the name rule, kept word for word so that scripts
/// matching it still do; `check_name` adds what was wrong with the name.
const NAME_RULE: &str = "`name` must be 1 to 128 characters using only letters, digits, \
                         underscore, dot, or hyphen.";
/// Rejected names are quoted up to this many characters (fewer than
/// `MAX_NAME_LEN`), so a pasted document does not flood the error.
const QUOTED_NAME_CHARS: usize = 80;

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Checks a tool name. `Ok(true)` means valid but long enough that some
/// clients will truncate or reject it. The error names the rejected value.
pub fn check_name(name: &str) -> Result<bool, String> {
    if name.is_empty() {
        return Err(format!("{NAME_RULE} Got an empty name."));
    }
    if let Some(bad) = name.chars().find(|&c| !is_name_char(c)) {
        return Err(format!(
            "{NAME_RULE} Got {}, which contains {}.",
            quote_name(name),
            quote(&bad.to_string())
        ));
    }
    // Only ASCII is left, so bytes are characters. A name this long is
    // always quoted cut short, with its length.
    if name.len() > MAX_NAME_LEN {
        return Err(format!("{NAME_RULE} Got {}.", quote_name(name)));
    }
    Ok(name.len() > SAFE_NAME_LEN)
}

/// The name as a JSON string (control characters and quotes escaped, `%`
/// kept as is); past `QUOTED_NAME_CHARS` characters only its start, and its
/// length.
fn quote_name(name: &str) -> String {
    match name.char_indices().nth(QUOTED_NAME_CHARS) {
        Some((cut, _)) => format!(
            "{} (the first {QUOTED_NAME_CHARS} of {} characters)",
            quote(&name[..cut]),
            name.chars().count()
        ),
        None => quote(name),
    }
}

fn quote(text: &str) -> String {
    Value::from(text).to_string()
}

/// Whether a schema's root is a JSON object schema (`"type": "object"`), the
/// only root revisions before 2026-07-28 allow for output schemas.
pub fn has_object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The object schema older revisions receive in place of a non-object output
/// schema: the value travels as `{"result": value}`.
pub fn wrap_output_schema(schema: &Value) -> Value {
    json!({
        "type": "object",
        "properties": { "result": schema },
        "required": ["result"]
    })
}

impl ToolDef {
    /// Whether structured results travel wrapped as `{"result": …}` for `rev`.
    pub fn wraps_output(&self, rev: Revision) -> bool {
        match &self.output_schema {
            Some(schema) => !rev.allows_any_output_root() && !has_object_root(schema),
            None => false,
        }
    }

    /// The `Tool` object of `rev`: fields the revision lacks are left out.
    pub fn to_wire(&self, rev: Revision) -> Value {
        let mut tool = Map::new();
        tool.insert("name".into(), Value::from(self.name.as_str()));
        if let (Some(title), true) = (&self.title, rev.has_structured_output()) {
            tool.insert("title".into(), Value::from(title.as_str()));
        }
        if let Some(description) = &self.description {
            tool.insert("description".into(), Value::from(description.as_str()));
        }
        tool.insert("inputSchema".into(), self.input_schema.clone());
        if let (Some(annotations), true) = (&self.annotations, rev.has_tool_annotations()) {
            if !annotations.is_empty() {
                tool.insert("annotations".into(), Value::Object(annotations.clone()));
            }
        }
        if let (Some(schema), true) = (&self.output_schema, rev.has_structured_output()) {
            let schema = if self.wraps_output(rev) {
                wrap_output_schema(schema)
            } else {
                schema.clone()
            };
            tool.insert("outputSchema".into(), schema);
        }
        if let (Some(icons), true) = (&self.icons, rev.has_icons()) {
            tool.insert("icons".into(), icons.clone());
        }
        if rev.has_core_tasks() && self.task_support != TaskSupport::Forbidden {
            tool.insert(
                "execution".into(),
                json!({ "taskSupport": self.task_support.wire() }),
            );
        }
        if let (Some(meta), true) = (&self.meta, rev.has_structured_output()) {
            tool.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_tool() -> ToolDef {
        ToolDef {
            name: "add".into(),
            title: Some("Add".into()),
            description: Some("Adds".into()),
            input_schema: json!({"type":"object","properties":{},"additionalProperties":false}),
            output_schema: Some(json!({"type":"object","properties":{"sum":{"type":"number"}}})),
            annotations: Some(json!({"readOnlyHint": true}).as_object().unwrap().clone()),
            icons: Some(json!([{"src":"https://example.com/i.png"}])),
            meta: Some(json!({"k":1}).as_object().unwrap().clone()),
            task_support: TaskSupport::Optional,
            timeout: None,
            output_hints: OutputHints::default(),
        }
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn fields_are_gated_per_revision() {
        let t = full_tool();
        assert_eq!(
            keys(&t.to_wire(Revision::V2024_11_05)),
            ["name", "description", "inputSchema"]
        );
        assert_eq!(
            keys(&t.to_wire(Revision::V2025_03_26)),
            ["name", "description", "inputSchema", "annotations"]
        );
        assert_eq!(
            keys(&t.to_wire(Revision::V2025_06_18)),
            [
                "name",
                "title",
                "description",
                "inputSchema",
                "annotations",
                "outputSchema",
                "_meta"
            ]
        );
        assert_eq!(
            keys(&t.to_wire(Revision::V2025_11_25)),
            [
                "name",
                "title",
                "description",
                "inputSchema",
                "annotations",
                "outputSchema",
                "icons",
                "execution",
                "_meta"
            ]
        );
        assert_eq!(
            keys(&t.to_wire(Revision::V2026_07_28)),
            [
                "name",
                "title",
                "description",
                "inputSchema",
                "annotations",
                "outputSchema",
                "icons",
                "_meta"
            ]
        );
    }

    #[test]
    fn non_object_output_schemas_are_wrapped_before_2026() {
        let mut t = full_tool();
        t.output_schema = Some(json!({"type":"array","items":{"type":"number"}}));
        let old = t.to_wire(Revision::V2025_11_25);
        assert_eq!(old["outputSchema"]["properties"]["result"]["type"], "array");
        assert_eq!(old["outputSchema"]["required"], json!(["result"]));
        let new = t.to_wire(Revision::V2026_07_28);
        assert_eq!(new["outputSchema"]["type"], "array");
        assert!(t.wraps_output(Revision::V2025_06_18));
        assert!(!t.wraps_output(Revision::V2026_07_28));
    }

    #[test]
    fn names_follow_the_spec() {
        assert_eq!(check_name("abc.DEF_123-valid"), Ok(false));
        assert_eq!(check_name(&"a".repeat(64)), Ok(false));
        assert_eq!(check_name(&"a".repeat(65)), Ok(true));
        assert_eq!(check_name(&"a".repeat(128)), Ok(true));
        for bad in ["", "a b", "a/b", "ümlaut", &"a".repeat(129)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_rejected_name_is_named_in_the_error() {
        let rule = "`name` must be 1 to 128 characters using only letters, digits, \
                    underscore, dot, or hyphen.";
        let error = |name: &str| check_name(name).unwrap_err();
        assert_eq!(
            error("bad%sname%n"),
            format!("{rule} Got \"bad%sname%n\", which contains \"%\".")
        );
        assert_eq!(
            error("ümlaut"),
            format!("{rule} Got \"ümlaut\", which contains \"ü\".")
        );
        assert_eq!(
            error("two\nlines"),
            format!("{rule} Got \"two\\nlines\", which contains \"\\n\".")
        );
        assert_eq!(error(""), format!("{rule} Got an empty name."));
        assert_eq!(
            error(&"a".repeat(129)),
            format!(
                "{rule} Got \"{}\" (the first 80 of 129 characters).",
                "a".repeat(80)
            )
        );
        let pasted = format!("{} tail", "b".repeat(200));
        assert_eq!(
            error(&pasted),
            format!(
                "{rule} Got \"{}\" (the first 80 of 205 characters), which contains \" \".",
                "b".repeat(80)
            )
        );
    }

    #[test]
    fn empty_annotations_are_left_out() {
        let mut t = full_tool();
        t.annotations = Some(Map::new());
        assert!(t
            .to_wire(Revision::V2025_11_25)
            .get("annotations")
            .is_none());
    }
}
