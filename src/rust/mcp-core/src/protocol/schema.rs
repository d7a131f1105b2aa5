//! JSON Schema 2020-12: checking the schemas tools advertise, and turning
//! validation failures into text a model can act on.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

/// What the members of the root object are called in problems:
/// `missing required argument "x"`, or `missing required field "x"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Naming {
    /// Tool arguments: `argument` at the root, `property` below.
    #[default]
    Arguments,
    /// Fields of a result, at every depth.
    Fields,
}

/// How many unexpected property names one problem lists.
const MAX_NAMES: usize = 10;

/// Compiles a schema for repeated validation. Remote and file `$ref`s are
/// never fetched: they fail here.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| e.to_string())
}

/// Checks that `schema` is a valid JSON Schema (2020-12 unless it names
/// another dialect in `$schema`) that compiles, and that it keeps to what MCP
/// clients accept: `items` on every array schema.
pub fn check(schema: &Value) -> Result<(), String> {
    if !(schema.is_object() || schema.is_boolean()) {
        return Err("a JSON Schema must be an object".into());
    }
    if let Err(e) = jsonschema::meta::validate(schema) {
        let path = pointer_to_path(e.instance_path().as_str());
        let at = if path.is_empty() {
            String::new()
        } else {
            format!(" at `{path}`")
        };
        return Err(format!("not a valid JSON Schema{at}: {e}"));
    }
    compile(schema).map(|_| ())?;
    arrays_have_items(schema, "")
}

/// Every schema that may describe an array must say what its items are
/// (VS Code rejects tools whose array parameters lack `items`).
fn arrays_have_items(schema: &Value, path: &str) -> Result<(), String> {
    match schema {
        Value::Object(map) => {
            let is_array = match map.get("type") {
                Some(Value::String(t)) => t == "array",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                _ => false,
            };
            if is_array && !map.contains_key("items") && !map.contains_key("prefixItems") {
                let at = if path.is_empty() {
                    "the root".to_string()
                } else {
                    format!("`{path}`")
                };
                return Err(format!(
                    "the array schema at {at} has no `items`; clients such as VS Code reject such tools"
                ));
            }
            for (key, sub) in map {
                // Data, not subschemas.
                if matches!(key.as_str(), "enum" | "const" | "examples" | "default") {
                    continue;
                }
                arrays_have_items(sub, &join(path, key))?;
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, sub)| arrays_have_items(sub, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `/payload/items/0` -> `payload.items[0]`.
pub fn pointer_to_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(&segment);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    out
}

/// One line for one problem, e.g. `x: expected a number, got "three"`.
/// `prefix` is the JSON pointer of the value the error's own path starts
/// from (empty for the root).
pub fn describe_at(prefix: &str, e: &ValidationError) -> String {
    describe_named(prefix, e, Naming::Arguments)
}

/// As [`describe_at`], with the members named as `naming` says.
pub fn describe_named(prefix: &str, e: &ValidationError, naming: Naming) -> String {
    let path = pointer_to_path(&format!("{prefix}{}", e.instance_path().as_str()));
    let at_root = path.is_empty();
    let member = match (naming, at_root) {
        (Naming::Fields, _) => "field",
        (_, true) => "argument",
        (_, false) => "property",
    };
    let body = match e.kind() {
        ValidationErrorKind::Type { kind } => {
            format!(
                "expected {}, got {}",
                type_names(kind),
                preview(e.instance())
            )
        }
        ValidationErrorKind::Required { property } => {
            format!("missing required {member} {property}")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let what = member;
            let plural = if unexpected.len() == 1 { "" } else { "s" };
            let mut names: Vec<String> = unexpected
                .iter()
                .take(MAX_NAMES)
                .map(|n| Value::from(n.as_str()).to_string())
                .collect();
            if unexpected.len() > MAX_NAMES {
                names.push(format!("and {} more", unexpected.len() - MAX_NAMES));
            }
            format!("unexpected {what}{plural} {}", names.join(", "))
        }
        ValidationErrorKind::Enum { options } => {
            let listed = match options.as_ref() {
                Value::Array(values) => values.iter().map(preview).collect::<Vec<_>>().join(", "),
                other => preview(other),
            };
            format!("expected one of {listed}, got {}", preview(e.instance()))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!(
                "expected {}, got {}",
                preview(expected_value),
                preview(e.instance())
            )
        }
        _ => e.to_string(),
    };
    if at_root {
        body
    } else {
        format!("{path}: {body}")
    }
}

/// Whether a type error's expected types include `array`.
pub fn expects_array(kind: &TypeKind) -> bool {
    match kind {
        TypeKind::Single(t) => t.as_str() == "array",
        TypeKind::Multiple(set) => set.iter().any(|t| t.as_str() == "array"),
    }
}

fn type_names(kind: &TypeKind) -> String {
    let names: Vec<&str> = match kind {
        TypeKind::Single(t) => vec![article(t.as_str())],
        TypeKind::Multiple(set) => set.iter().map(|t| article(t.as_str())).collect(),
    };
    names.join(" or ")
}

fn article(type_name: &str) -> &'static str {
    match type_name {
        "integer" => "an integer",
        "number" => "a number",
        "string" => "a string",
        "boolean" => "a boolean",
        "array" => "an array",
        "object" => "an object",
        _ => "null",
    }
}

/// The offending value as compact JSON, shortened for long values. Only
/// the shown part is written, however large the value.
fn preview(v: &Value) -> String {
    const LIMIT: usize = 60;
    let mut head = Head {
        text: Vec::new(),
        room: LIMIT * 4 + 4,
    };
    let complete = serde_json::to_writer(&mut head, v).is_ok();
    let text = String::from_utf8_lossy(&head.text);
    if complete && text.chars().count() <= LIMIT {
        text.into_owned()
    } else {
        let cut: String = text.chars().take(LIMIT).collect();
        format!("{cut}...")
    }
}

/// A writer that keeps the first bytes and then refuses more, so that
/// serialising a huge value stops early.
struct Head {
    text: Vec<u8>,
    room: usize,
}

impl std::io::Write for Head {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::other("enough"));
        }
        let n = buf.len().min(self.room);
        self.text.extend_from_slice(&buf[..n]);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn problems(schema: Value, instance: Value) -> Vec<String> {
        let v = compile(&schema).unwrap();
        v.iter_errors(&instance)
            .map(|e| describe_at("", &e))
            .collect()
    }

    fn add_schema() -> Value {
        json!({"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},
               "required":["x","y"],"additionalProperties":false})
    }

    #[test]
    fn type_errors_name_the_argument_and_the_value() {
        assert_eq!(
            problems(add_schema(), json!({"x":"three","y":1})),
            vec![r#"x: expected a number, got "three""#]
        );
    }

    #[test]
    fn missing_and_unexpected_arguments() {
        assert_eq!(
            problems(add_schema(), json!({"x":1})),
            vec![r#"missing required argument "y""#]
        );
        assert_eq!(
            problems(add_schema(), json!({"x":1,"y":2,"z":3})),
            vec![r#"unexpected argument "z""#]
        );
    }

    #[test]
    fn nested_paths_and_enums() {
        let schema = json!({"type":"object","properties":{
            "items":{"type":"array","items":{"type":"integer"}},
            "color":{"type":"string","enum":["red","blue"]}}});
        assert_eq!(
            problems(schema.clone(), json!({"items":[1,2,"x"]})),
            vec![r#"items[2]: expected an integer, got "x""#]
        );
        assert_eq!(
            problems(schema, json!({"color":"green"})),
            vec![r#"color: expected one of "red", "blue", got "green""#]
        );
    }

    #[test]
    fn long_lists_of_unexpected_names_are_shortened() {
        let names: Map<String, Value> = (0..25).map(|i| (format!("n{i}"), json!(1))).collect();
        let lines = problems(
            json!({"type":"object","properties":{"a":{}},"additionalProperties":false}),
            Value::Object(names),
        );
        assert_eq!(lines.len(), 1);
        assert!(lines[0].ends_with(r#""n9", and 15 more"#), "{}", lines[0]);
    }

    #[test]
    fn long_values_are_shortened() {
        let long = "a".repeat(500);
        let lines = problems(json!({"type":"number"}), json!(long));
        assert!(lines[0].len() < 100, "{}", lines[0]);
        assert!(lines[0].ends_with("..."), "{}", lines[0]);
        let short = problems(json!({"type":"number"}), json!([1, "é"]));
        assert_eq!(short, vec![r#"expected a number, got [1,"é"]"#]);
    }

    #[test]
    fn valid_schemas_pass_the_check() {
        check(&add_schema()).unwrap();
        check(&json!({"type":"string","format":"date"})).unwrap();
        check(&json!({"$defs":{"p":{"type":"string"}},"type":"object",
                      "properties":{"a":{"$ref":"#/$defs/p"}}}))
        .unwrap();
        check(&json!(true)).unwrap();
    }

    #[test]
    fn invalid_schemas_name_the_problem() {
        let err = check(&json!({"type":"strnig"})).unwrap_err();
        assert!(err.contains("not a valid JSON Schema"), "{err}");
        let err = check(&json!({"type":"object","properties":[]})).unwrap_err();
        assert!(err.contains("properties"), "{err}");
        let err = check(&json!({"type":"object","properties":{"a":{"type":"array"}}})).unwrap_err();
        assert!(err.contains("`properties.a` has no `items`"), "{err}");
        assert!(check(&json!({"$ref":"https://example.com/schema.json"})).is_err());
        assert!(check(&json!({"type":"string","pattern":"(unclosed"})).is_err());
        assert!(check(&json!([1, 2])).is_err());
    }

    #[test]
    fn data_keywords_are_not_walked_as_schemas() {
        check(&json!({"type":"object","default":{"type":"array"},
                      "examples":[{"type":"array"}]}))
        .unwrap();
    }

    #[test]
    fn pointer_paths_read_naturally() {
        assert_eq!(pointer_to_path(""), "");
        assert_eq!(pointer_to_path("/x"), "x");
        assert_eq!(pointer_to_path("/a/b/3/c"), "a.b[3].c");
        assert_eq!(pointer_to_path("/a~1b/~0c"), "a/b.~c");
    }
}
