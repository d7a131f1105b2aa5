//! A tool's output schema, compiled once into the plan that directs how
//! its structured results become JSON (see [`crate::to_json::to_json_directed`]),
//! as the input schema directs how arguments become R values.
//!
//! R cannot tell a length-1 vector from a scalar, nor `NA` in a field that
//! may be `null` from one that may not: the schema can. The plan says, for
//! each part of a result, what the schema makes certain: an array (so a
//! length-1 vector is still an array), a scalar of a JSON type (so a
//! vector of another length is an error naming the field), an object and
//! its fields (which are required), and whether `null` may stand there.
//! Where the schema leaves a part open (mixed `anyOf` branches, a schema
//! without `type`), the plan says nothing and the value is written as
//! jsonlite would; the compiled validator has the last word either way.

use crate::from_json::Shape;
use mcp_core::protocol::validation::ANNOTATIONS;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// One part of a result, as the output schema describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    /// Whether `null` may stand here, as far as the schema tells: false
    /// only where the schema certainly refuses it.
    pub nullable: bool,
    /// The type helper that declares such a part, for error messages.
    pub helper: &'static str,
    /// The schema of this part (and of every part inside it) says nothing
    /// beyond what the plan records: its kind, whether null may stand
    /// there, an object's fields, which are required and whether others
    /// are allowed. Then whether a value conforms can be told from the R
    /// value (see [`crate::to_json::conforms`]).
    pub exact: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// The schema does not make the shape certain.
    Any,
    Scalar(Scalar),
    Array(Box<Node>),
    Object(Object),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    Number,
    Integer,
    String,
    Boolean,
}

impl Scalar {
    /// "a number", for error messages.
    pub fn described(self) -> &'static str {
        match self {
            Scalar::Number => "a number",
            Scalar::Integer => "an integer",
            Scalar::String => "a string",
            Scalar::Boolean => "TRUE or FALSE",
        }
    }
}

/// An object's declared fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object {
    pub fields: Vec<Field>,
    /// No fields but the declared ones (`additionalProperties: false`).
    pub closed: bool,
    /// Field positions by name.
    index: HashMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub node: Node,
    pub required: bool,
}

impl Object {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.index.get(name).map(|&i| &self.fields[i])
    }

    fn add(&mut self, name: &str, node: Node, required: bool) {
        match self.index.get(name) {
            Some(&i) => {
                let field = &mut self.fields[i];
                field.required |= required;
                if field.node.kind == Kind::Any {
                    field.node = node;
                }
            }
            None => {
                self.index.insert(name.to_string(), self.fields.len());
                self.fields.push(Field {
                    name: name.to_string(),
                    node,
                    required,
                });
            }
        }
    }
}

impl Node {
    fn any() -> Node {
        Node {
            kind: Kind::Any,
            nullable: true,
            helper: "type_from_schema",
            exact: false,
        }
    }
}

/// Deeper than this (a recursive `$ref`), parts are left open.
const MAX_DEPTH: usize = 32;
/// Past this many subschemas, the rest are left open.
const MAX_VISITS: usize = 10_000;

/// The plan of an output schema.
pub fn plan(schema: &Value) -> Node {
    Planner {
        root: schema,
        visits: std::cell::Cell::new(0),
    }
    .node(schema, 0)
}

struct Planner<'a> {
    root: &'a Value,
    visits: std::cell::Cell<usize>,
}

impl Planner<'_> {
    fn node(&self, schema: &Value, depth: usize) -> Node {
        let Value::Object(map) = schema else {
            return Node::any();
        };
        self.visits.set(self.visits.get() + 1);
        if depth > MAX_DEPTH || self.visits.get() > MAX_VISITS {
            return Node::any();
        }
        // Every part that constrains the value: its own keywords, its
        // `$ref`, each `allOf` branch, and `anyOf`/`oneOf` taken together.
        let mut parts = vec![self.own(map, depth)];
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            parts.push(self.node(target, depth + 1));
        }
        if let Some(Value::Array(all)) = map.get("allOf") {
            parts.extend(all.iter().map(|s| self.node(s, depth + 1)));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                parts.push(self.either(branches, depth));
            }
        }
        let exact = parts.len() == 1 && parts[0].exact;
        Node {
            exact,
            ..all_of(parts)
        }
    }

    /// What the schema's own `type` (or `enum`/`const`, or `properties`)
    /// says.
    fn own(&self, map: &Map<String, Value>, depth: usize) -> Node {
        let (types, nullable) = match map.get("type") {
            Some(Value::String(t)) => (vec![t.as_str()], t == "null"),
            Some(Value::Array(ts)) => {
                let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
                let nullable = names.contains(&"null");
                (
                    names.into_iter().filter(|t| *t != "null").collect(),
                    nullable,
                )
            }
            _ => (Vec::new(), true),
        };
        let kind_name = match types.as_slice() {
            [one] => Some(*one),
            [a, b] if [*a, *b].contains(&"integer") && [*a, *b].contains(&"number") => {
                Some("number")
            }
            [] if map.contains_key("type") => Some("null"),
            _ => None,
        };
        let (kind, helper) = match kind_name {
            Some("number") => (Kind::Scalar(Scalar::Number), "type_number"),
            Some("integer") => (Kind::Scalar(Scalar::Integer), "type_integer"),
            Some("string") => (Kind::Scalar(Scalar::String), "type_string"),
            Some("boolean") => (Kind::Scalar(Scalar::Boolean), "type_boolean"),
            Some("array") => {
                let items = match map.get("items") {
                    Some(items) if items.is_object() => self.node(items, depth + 1),
                    _ => Node::any(),
                };
                (Kind::Array(Box::new(items)), "type_array")
            }
            Some("object") => (Kind::Object(self.object(map, depth)), "type_object"),
            None if !map.contains_key("type") && map.contains_key("properties") => {
                (Kind::Object(self.object(map, depth)), "type_object")
            }
            _ => (Kind::Any, "type_from_schema"),
        };
        let exact = exact_keywords(map, &kind);
        let mut node = Node {
            kind,
            nullable,
            helper,
            exact,
        };
        // `enum` and `const` decide whether null may stand here, and the
        // kind when the schema has no `type`.
        let values: Option<Vec<&Value>> = match (map.get("enum"), map.get("const")) {
            (Some(Value::Array(values)), _) => Some(values.iter().collect()),
            (_, Some(value)) => Some(vec![value]),
            _ => None,
        };
        if let Some(values) = values {
            node.nullable &= values.iter().any(|v| v.is_null());
            if node.kind == Kind::Any {
                node.kind = values_kind(&values);
            }
            if map.contains_key("enum") {
                node.helper = "type_enum";
            }
        }
        node
    }

    fn object(&self, map: &Map<String, Value>, depth: usize) -> Object {
        let required: Vec<&str> = match map.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut object = Object {
            closed: map.get("additionalProperties") == Some(&Value::Bool(false)),
            ..Object::default()
        };
        if let Some(Value::Object(properties)) = map.get("properties") {
            for (name, schema) in properties {
                let node = self.node(schema, depth + 1);
                object.add(name, node, required.contains(&name.as_str()));
            }
        }
        object
    }

    /// `anyOf`/`oneOf`: null may stand here if a branch allows it; the
    /// shape is certain if the branches that are not only `null` agree.
    fn either(&self, branches: &[Value], depth: usize) -> Node {
        let nodes: Vec<Node> = branches.iter().map(|s| self.node(s, depth + 1)).collect();
        let nullable = nodes.iter().any(|n| n.nullable);
        let only_null = |b: &Value| {
            b.get("type").and_then(Value::as_str) == Some("null")
                || b.get("const").is_some_and(Value::is_null)
        };
        let mut shaped = branches
            .iter()
            .zip(nodes)
            .filter(|(b, _)| !only_null(b))
            .map(|(_, n)| n);
        let Some(first) = shaped.next() else {
            return Node {
                nullable,
                ..Node::any()
            };
        };
        let agree = shaped.all(|n| n.kind == first.kind);
        Node {
            kind: if agree { first.kind } else { Kind::Any },
            nullable,
            helper: if agree {
                first.helper
            } else {
                "type_from_schema"
            },
            exact: false,
        }
    }

    /// A local reference (`#`, `#/$defs/point`, with `~0`, `~1` and
    /// percent escapes); remote ones were refused when the schema was checked.
    fn resolve(&self, reference: &str) -> Option<&Value> {
        let pointer = reference.strip_prefix('#')?;
        let decoded = percent_decode(pointer)?;
        self.root.pointer(&decoded)
    }
}

/// Whether a schema of this kind says no more than the plan records (see
/// [`Node::exact`]): only `type` and annotations, an array's `items`
/// (itself exact), an object's `properties` (each exact), `required` and
/// a yes-or-no `additionalProperties`.
fn exact_keywords(map: &Map<String, Value>, kind: &Kind) -> bool {
    let allowed = |key: &str| {
        key == "type"
            || ANNOTATIONS.contains(&key)
            || match kind {
                Kind::Array(_) => key == "items",
                Kind::Object(_) => {
                    key == "properties"
                        || key == "required"
                        || (key == "additionalProperties"
                            && map.get(key).is_some_and(Value::is_boolean))
                }
                _ => false,
            }
    };
    let parts_exact = match kind {
        Kind::Any => false,
        Kind::Scalar(_) => true,
        Kind::Array(items) => items.exact,
        // Every required name is a declared field (so the plan knows it).
        Kind::Object(object) => {
            object.fields.iter().all(|f| f.node.exact)
                && match map.get("required") {
                    None => true,
                    Some(Value::Array(names)) => names
                        .iter()
                        .all(|n| n.as_str().is_some_and(|n| object.field(n).is_some())),
                    Some(_) => false,
                }
        }
    };
    map.contains_key("type") && parts_exact && map.keys().all(|k| allowed(k))
}

/// A JSON pointer's percent escapes decoded (`%20` is a space).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The kind `enum` or `const` values give when they share one JSON type
/// (`null` among them aside).
fn values_kind(values: &[&Value]) -> Kind {
    let mut kinds = values.iter().filter(|v| !v.is_null()).map(|v| match v {
        Value::String(_) => Some(Scalar::String),
        Value::Bool(_) => Some(Scalar::Boolean),
        Value::Number(_) => Some(Scalar::Number),
        _ => None,
    });
    match kinds.next() {
        Some(Some(first)) if kinds.all(|k| k == Some(first)) => Kind::Scalar(first),
        _ => Kind::Any,
    }
}

/// The parts that all constrain one value, together: the first certain
/// kind decides (objects pool the fields of every object part), and null
/// may stand there only if every part allows it.
fn all_of(parts: Vec<Node>) -> Node {
    let mut decided = Node::any();
    for part in parts {
        decided.nullable &= part.nullable;
        match (&mut decided.kind, part.kind) {
            (Kind::Any, kind) => {
                decided.kind = kind;
                decided.helper = part.helper;
            }
            (Kind::Object(mine), Kind::Object(theirs)) => {
                for field in theirs.fields {
                    mine.add(&field.name, field.node, field.required);
                }
            }
            _ => {}
        }
    }
    decided
}

impl Node {
    /// How JSON arguments this part describes become R values.
    pub fn shape(&self) -> Shape {
        match &self.kind {
            Kind::Any => Shape::Raw,
            Kind::Scalar(Scalar::Number) => Shape::Number,
            Kind::Scalar(Scalar::Integer) => Shape::Integer,
            Kind::Scalar(Scalar::String) => Shape::String,
            Kind::Scalar(Scalar::Boolean) => Shape::Boolean,
            Kind::Array(items) => Shape::Array(Box::new(items.shape())),
            Kind::Object(object) => Shape::Object(
                object
                    .fields
                    .iter()
                    .map(|f| (f.name.clone(), f.node.shape()))
                    .collect(),
            ),
        }
    }

    /// The helper call that would let `null` stand here, for messages:
    /// `type_number(nullable = TRUE)`.
    pub fn nullable_helper(&self) -> String {
        match self.helper {
            "type_object" => "type_object(..., .nullable = TRUE)".to_string(),
            "type_from_schema" => "\"null\" among its types, in type_from_schema()".to_string(),
            "type_array" => "type_array(..., nullable = TRUE)".to_string(),
            "type_enum" => "type_enum(..., nullable = TRUE)".to_string(),
            helper => format!("{helper}(nullable = TRUE)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field<'a>(node: &'a Node, name: &str) -> &'a Field {
        let Kind::Object(object) = &node.kind else {
            panic!("not an object: {node:?}");
        };
        object.field(name).unwrap()
    }

    #[test]
    fn helpers_schemas_become_certain_plans() {
        let schema = json!({"type": "object", "properties": {
            "cars": {"type": "array", "items": {"type": "string"}},
            "n": {"type": "integer"},
            "mean": {"type": ["number", "null"]},
            "rows": {"type": "array", "items": {"type": "object",
                "properties": {"ozone": {"type": ["integer", "null"]}, "month": {"type": "integer"}},
                "required": ["month"]}},
            "colour": {"type": ["string", "null"], "enum": ["red", "blue", null]}
        }, "required": ["cars", "n"], "additionalProperties": false});
        let node = plan(&schema);
        assert!(!node.nullable);
        let cars = field(&node, "cars");
        assert!(cars.required);
        assert_eq!(
            cars.node.kind,
            Kind::Array(Box::new(Node {
                kind: Kind::Scalar(Scalar::String),
                nullable: false,
                helper: "type_string",
                exact: true,
            }))
        );
        assert_eq!(field(&node, "n").node.kind, Kind::Scalar(Scalar::Integer));
        assert!(!field(&node, "n").node.nullable);
        assert!(field(&node, "mean").node.nullable);
        assert!(!field(&node, "mean").required);
        let Kind::Array(row) = &field(&node, "rows").node.kind else {
            panic!()
        };
        assert!(field(row, "ozone").node.nullable);
        assert!(!field(row, "month").node.nullable);
        assert!(field(row, "month").required);
        let colour = &field(&node, "colour").node;
        assert!(colour.nullable);
        assert_eq!(colour.helper, "type_enum");
    }

    #[test]
    fn composed_schemas_are_followed_and_null_only_where_allowed() {
        let schema = json!({
            "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}},
            "type": "object",
            "properties": {
                "p": {"$ref": "#/$defs/point"},
                "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "either": {"oneOf": [{"type": "string"}, {"type": "number"}]},
                "both": {"allOf": [{"type": ["number", "null"]}, {"type": "number"}]},
                "open": {},
                "kinds": {"enum": [1, 2]}
            }
        });
        let node = plan(&schema);
        assert_eq!(
            field(&field(&node, "p").node, "x").node.kind,
            Kind::Scalar(Scalar::Number)
        );
        let maybe = &field(&node, "maybe").node;
        assert_eq!(maybe.kind, Kind::Scalar(Scalar::String));
        assert!(maybe.nullable);
        let either = &field(&node, "either").node;
        assert_eq!(either.kind, Kind::Any);
        assert!(!either.nullable);
        let both = &field(&node, "both").node;
        assert_eq!(both.kind, Kind::Scalar(Scalar::Number));
        assert!(!both.nullable, "allOf: every part must allow null");
        assert_eq!(field(&node, "open").node, Node::any());
        let kinds = &field(&node, "kinds").node;
        assert_eq!(kinds.kind, Kind::Scalar(Scalar::Number));
        assert!(!kinds.nullable);
    }

    #[test]
    fn recursive_schemas_end_open() {
        let schema = json!({"$defs": {"t": {"type": "object", "properties": {
            "l": {"$ref": "#/$defs/t"}, "r": {"$ref": "#/$defs/t"}}}}, "$ref": "#/$defs/t"});
        assert!(matches!(plan(&schema).kind, Kind::Object(_)));
    }
}
