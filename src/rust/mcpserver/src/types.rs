//! Type helpers (`type_number()`, `type_object()`, ...) read from their R
//! form: the JSON Schema a tool advertises, and the plan for turning a
//! client's JSON arguments into R values.

use crate::check;
use crate::from_json::Shape;
use crate::rvalue::{element, field, is_flag, is_named_list, is_single_string, RValue};
use crate::to_json;
use extendr_api::prelude::*;
use extendr_ffi::SEXPTYPE;
use serde_json::{json, Map, Value};

/// One type helper, parsed.
#[derive(Debug, Clone)]
pub struct TypeNode {
    pub spec: TypeSpec,
    pub description: Option<String>,
    pub required: bool,
    /// Whether `null` is a value too (`nullable = TRUE`).
    pub nullable: bool,
    /// The value a form shows first (`default =`), as JSON.
    pub default: Option<Value>,
}

#[derive(Debug, Clone)]
pub enum TypeSpec {
    Boolean,
    Integer,
    Number,
    String,
    /// Values, and their JSON type when they agree.
    Enum {
        values: Vec<Value>,
        kind: Option<&'static str>,
        /// A label for each value (`titles =`), shown instead of it.
        titles: Option<Vec<String>>,
    },
    Array(Box<TypeNode>),
    Object {
        properties: Vec<(String, TypeNode)>,
        additional: bool,
    },
    /// `type_from_schema()`: used verbatim.
    Schema(Value),
    Ignore,
}

fn flag(x: RValue, default: bool) -> bool {
    if x.kind() == SEXPTYPE::LGLSXP && x.len() == 1 {
        // SAFETY: a length-1 logical vector.
        unsafe { *extendr_ffi::LOGICAL(x.0) == 1 }
    } else {
        default
    }
}

pub fn is_type(x: RValue) -> bool {
    x.kind() == SEXPTYPE::VECSXP && x.inherits("mcpserver_type")
}

/// Parses a type helper's R list (already validated by its constructor).
pub fn parse(x: RValue) -> Result<TypeNode, String> {
    if !is_type(x) {
        return Err("not a type helper".into());
    }
    let kind = field(x, "kind").as_single_string().unwrap_or_default();
    let description = field(x, "description")
        .as_single_string()
        .map(|s| s.into_owned());
    let required = flag(field(x, "required"), true);
    let default = match field(x, "default") {
        d if d.is_null() => None,
        d => Some(json_of(d)?),
    };
    let spec = match kind.as_ref() {
        "boolean" => TypeSpec::Boolean,
        "integer" => TypeSpec::Integer,
        "number" => TypeSpec::Number,
        "string" => TypeSpec::String,
        "enum" => {
            let values = field(x, "values");
            let mut out = Vec::with_capacity(values.len());
            let mut kinds = Vec::with_capacity(values.len());
            for i in 0..values.len() {
                let v = if values.kind() == SEXPTYPE::VECSXP {
                    element(values, i)
                } else {
                    values
                };
                kinds.push(r_scalar_kind(v));
                let text = to_json::to_json(v).map_err(|e| e.to_string())?;
                out.push(serde_json::from_str(&text).map_err(|e| e.to_string())?);
            }
            let titles = field(x, "titles");
            // Checked by `type_enum()`; read only as the strings they are.
            let titles = (titles.kind() == SEXPTYPE::STRSXP).then(|| {
                (0..titles.len())
                    .map(|i| titles.string(i).unwrap_or_default().into_owned())
                    .collect()
            });
            TypeSpec::Enum {
                values: out,
                kind: common_kind(&kinds),
                titles,
            }
        }
        "array" => TypeSpec::Array(Box::new(parse(field(x, "items"))?)),
        "object" => {
            let props = field(x, "properties");
            let names = props.names();
            let mut properties = Vec::with_capacity(props.len());
            for i in 0..props.len() {
                let name = names.string(i).unwrap_or_default().into_owned();
                properties.push((name, parse(element(props, i))?));
            }
            TypeSpec::Object {
                properties,
                additional: flag(field(x, "additional_properties"), false),
            }
        }
        "from_schema" => TypeSpec::Schema(schema_from_list(field(x, "schema"))?),
        "ignore" => TypeSpec::Ignore,
        other => return Err(format!("unknown type helper kind `{other}`")),
    };
    Ok(TypeNode {
        spec,
        description,
        required,
        nullable: flag(field(x, "nullable"), false),
        default,
    })
}

fn json_of(x: RValue) -> Result<Value, String> {
    let text = to_json::to_json(x).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// The JSON type an R enum value stands for: by its R type, so `c(1, 2)`
/// is `number` and `1:2` is `integer`.
fn r_scalar_kind(v: RValue) -> &'static str {
    match v.kind() {
        SEXPTYPE::STRSXP => "string",
        SEXPTYPE::LGLSXP => "boolean",
        SEXPTYPE::INTSXP if v.inherits("factor") => "string",
        SEXPTYPE::INTSXP => "integer",
        SEXPTYPE::REALSXP => "number",
        _ => "other",
    }
}

/// One type when the values agree (integers and other numbers together are
/// `number`), none when they are mixed.
fn common_kind(kinds: &[&'static str]) -> Option<&'static str> {
    let first = *kinds.first()?;
    if kinds.iter().all(|k| *k == first) {
        return matches!(first, "string" | "boolean" | "integer" | "number").then_some(first);
    }
    if kinds.iter().all(|k| matches!(*k, "integer" | "number")) {
        return Some("number");
    }
    None
}

/// A schema written as an R list, as JSON. R has one empty list for `[]` and
/// `{}`, and mcplite scripts write `properties = list()` for "no
/// properties": wherever JSON Schema wants a schema or a map of schemas, an
/// empty list is read as `{}`.
fn schema_from_list(x: RValue) -> Result<Value, String> {
    let text = to_json::to_json(x).map_err(|e| e.to_string())?;
    let mut schema: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    empty_lists_as_objects(&mut schema);
    Ok(schema)
}

// Keywords whose value is a map from names to schemas.
use mcp_core::protocol::validation::NAMED_SUBSCHEMAS as SCHEMA_MAPS;
/// Keywords whose value is one schema (`items` may also be a list of them).
const SCHEMA_VALUES: [&str; 12] = [
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// Turns `[]` into `{}` at `schema` and wherever a schema or a map of
/// schemas sits below it; values such as `enum`, `required` or `default`
/// keep their empty arrays.
fn empty_lists_as_objects(schema: &mut Value) {
    fn empty_list_to_object(v: &mut Value) {
        if v.as_array().is_some_and(Vec::is_empty) {
            *v = Value::Object(Map::new());
        }
    }
    empty_list_to_object(schema);
    let Value::Object(map) = schema else {
        return;
    };
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAPS.contains(&key) {
            empty_list_to_object(value);
            if let Value::Object(entries) = value {
                // `dependencies` may map to a list of names instead.
                for entry in entries
                    .values_mut()
                    .filter(|e| e.is_object() || key != "dependencies")
                {
                    empty_lists_as_objects(entry);
                }
            }
        } else if SCHEMA_VALUES.contains(&key) {
            match value {
                Value::Array(list) if key == "items" && !list.is_empty() => {
                    list.iter_mut().for_each(empty_lists_as_objects)
                }
                _ => empty_lists_as_objects(value),
            }
        } else if SCHEMA_LISTS.contains(&key) {
            if let Value::Array(list) = value {
                list.iter_mut().for_each(empty_lists_as_objects);
            }
        }
    }
}

impl TypeNode {
    /// The JSON Schema this helper advertises, `description` last.
    pub fn schema(&self) -> Value {
        let mut s = Map::new();
        match &self.spec {
            TypeSpec::Boolean => {
                s.insert("type".into(), json!("boolean"));
            }
            TypeSpec::Integer => {
                s.insert("type".into(), json!("integer"));
            }
            TypeSpec::Number => {
                s.insert("type".into(), json!("number"));
            }
            TypeSpec::String => {
                s.insert("type".into(), json!("string"));
            }
            TypeSpec::Enum {
                values,
                kind,
                titles,
            } => {
                if let Some(t) = kind {
                    s.insert("type".into(), json!(t));
                }
                match titles {
                    Some(titles) => {
                        s.insert("oneOf".into(), titled_options(values, titles));
                    }
                    None => {
                        s.insert("enum".into(), Value::Array(values.clone()));
                    }
                }
            }
            TypeSpec::Array(items) => {
                s.insert("type".into(), json!("array"));
                s.insert("items".into(), items.schema());
            }
            TypeSpec::Object {
                properties,
                additional,
            } => {
                let mut schema =
                    object_schema(properties, *additional, self.description.as_deref());
                if self.nullable {
                    allow_null(&mut schema);
                }
                return schema;
            }
            TypeSpec::Schema(schema) => return schema.clone(),
            TypeSpec::Ignore => return json!({}),
        }
        if self.nullable {
            let mut schema = Value::Object(s);
            allow_null(&mut schema);
            let Value::Object(map) = schema else {
                unreachable!("still an object")
            };
            s = map;
        }
        if let Some(d) = &self.default {
            s.insert("default".into(), d.clone());
        }
        if let Some(d) = &self.description {
            s.insert("description".into(), json!(d));
        }
        Value::Object(s)
    }

    /// This helper as a field of an elicitation form: as [`TypeNode::schema`],
    /// but several titled choices take the form's `items: {anyOf}` shape.
    fn form_field(&self) -> Value {
        let mut field = self.schema();
        if let TypeSpec::Array(items) = &self.spec {
            if let TypeSpec::Enum {
                values,
                titles: Some(titles),
                ..
            } = &items.spec
            {
                field["items"] = json!({ "anyOf": titled_options(values, titles) });
            }
        }
        field
    }

    /// How JSON arguments of this type become R values.
    pub fn shape(&self) -> Shape {
        match &self.spec {
            TypeSpec::Boolean => Shape::Boolean,
            TypeSpec::Integer => Shape::Integer,
            TypeSpec::Number => Shape::Number,
            TypeSpec::String => Shape::String,
            TypeSpec::Enum { kind, .. } => match kind {
                Some("string") => Shape::String,
                Some("boolean") => Shape::Boolean,
                Some("integer") => Shape::Integer,
                Some("number") => Shape::Number,
                _ => Shape::Raw,
            },
            TypeSpec::Array(items) => Shape::Array(Box::new(items.shape())),
            TypeSpec::Object { properties, .. } => Shape::Object(
                properties
                    .iter()
                    .filter(|(_, t)| !matches!(t.spec, TypeSpec::Ignore))
                    .map(|(n, t)| (n.clone(), t.shape()))
                    .collect(),
            ),
            TypeSpec::Schema(_) | TypeSpec::Ignore => Shape::Raw,
        }
    }
}

/// Lets `null` stand where `schema` does: `"type": ["number", "null"]`, and
/// `null` among the values of an enum (listed, or titled options).
fn allow_null(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::String(t)) = map.get("type") {
        let t = t.clone();
        map.insert("type".into(), json!([t, "null"]));
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.push(Value::Null);
    }
    if let Some(Value::Array(options)) = map.get_mut("oneOf") {
        options.push(json!({ "const": null }));
    }
}

/// `[{"const": value, "title": title}, …]`.
fn titled_options(values: &[Value], titles: &[String]) -> Value {
    values
        .iter()
        .zip(titles)
        .map(|(v, t)| json!({ "const": v, "title": t }))
        .collect()
}

/// `{"type":"object","properties":{…},"required":[…],"additionalProperties":…}`.
pub fn object_schema(
    properties: &[(String, TypeNode)],
    additional: bool,
    description: Option<&str>,
) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for (name, node) in properties {
        if matches!(node.spec, TypeSpec::Ignore) {
            continue;
        }
        props.insert(name.clone(), node.schema());
        if node.required {
            required.push(json!(name));
        }
    }
    let mut s = Map::new();
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        s.insert("required".into(), Value::Array(required));
    }
    s.insert("additionalProperties".into(), json!(additional));
    if let Some(d) = description {
        s.insert("description".into(), json!(d));
    }
    Value::Object(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(spec: TypeSpec) -> TypeNode {
        TypeNode {
            spec,
            description: None,
            required: true,
            nullable: false,
            default: None,
        }
    }

    #[test]
    fn enum_types_follow_their_values() {
        assert_eq!(common_kind(&["string", "string"]), Some("string"));
        assert_eq!(common_kind(&["integer", "integer"]), Some("integer"));
        assert_eq!(common_kind(&["integer", "number"]), Some("number"));
        assert_eq!(common_kind(&["boolean"]), Some("boolean"));
        assert_eq!(common_kind(&["string", "integer"]), None);
        assert_eq!(common_kind(&[]), None);
    }

    #[test]
    fn empty_lists_are_objects_where_schemas_belong() {
        let mut schema = json!({
            "type": "object",
            "properties": [],
            "additionalProperties": [],
            "required": [],
            "$defs": {"point": {"type": "object", "properties": []}},
            "allOf": [{"properties": {"p": {"properties": []}}}],
            "dependencies": {"a": [], "b": {"properties": []}},
            "items": [[], {"properties": []}],
            "enum": [[], {}],
            "default": [],
            "not": []
        });
        empty_lists_as_objects(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {},
                "additionalProperties": {},
                "required": [],
                "$defs": {"point": {"type": "object", "properties": {}}},
                "allOf": [{"properties": {"p": {"properties": {}}}}],
                "dependencies": {"a": [], "b": {"properties": {}}},
                "items": [{}, {"properties": {}}],
                "enum": [[], {}],
                "default": [],
                "not": {}
            })
        );
        let mut root = json!([]);
        empty_lists_as_objects(&mut root);
        assert_eq!(root, json!({}));
    }

    #[test]
    fn schemas_match_mcplite_shapes() {
        let mut n = node(TypeSpec::Number);
        n.description = Some("x".into());
        assert_eq!(
            n.schema().to_string(),
            r#"{"type":"number","description":"x"}"#
        );
        let arr = node(TypeSpec::Array(Box::new(node(TypeSpec::String))));
        assert_eq!(
            arr.schema(),
            json!({"type":"array","items":{"type":"string"}})
        );
        let mut optional = node(TypeSpec::Integer);
        optional.required = false;
        let obj = object_schema(
            &[
                ("a".into(), node(TypeSpec::Boolean)),
                ("b".into(), optional),
                ("c".into(), node(TypeSpec::Ignore)),
            ],
            false,
            None,
        );
        assert_eq!(
            obj.to_string(),
            r#"{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"integer"}},"required":["a"],"additionalProperties":false}"#
        );
        assert_eq!(
            object_schema(&[], false, None).to_string(),
            r#"{"type":"object","properties":{},"additionalProperties":false}"#
        );
    }
}

/// Checks shared by every type helper: `NULL` or the error.
/// @noRd
#[extendr]
fn check_type_args_(description: Robj, required: Robj) -> Robj {
    let description = RValue::of(&description);
    let result = if !(description.is_null() || is_single_string(description)) {
        Err("`description` must be a single string.".to_string())
    } else if !is_flag(RValue::of(&required)) {
        Err("`required` must be TRUE or FALSE.".to_string())
    } else {
        Ok(())
    };
    check::outcome(result)
}

/// @noRd
#[extendr]
fn check_enum_values_(values: Robj) -> Robj {
    let values = RValue::of(&values);
    let result = if values.len() == 0 {
        Err("`values` must contain at least one enum value.".to_string())
    } else {
        check::serialisable(values, "values")
    };
    check::outcome(result)
}

/// @noRd
#[extendr]
fn check_items_(items: Robj) -> Robj {
    let ok = is_type(RValue::of(&items));
    check::outcome(if ok {
        Ok(())
    } else {
        Err("`items` must be a mcpserver or compatible ellmer type helper.".into())
    })
}

/// `type_object()` properties: named, and each a type helper.
/// @noRd
#[extendr]
fn check_properties_(properties: Robj) -> Robj {
    let props = RValue::of(&properties);
    let result = (|| {
        if props.len() > 0 && !is_named_list(props) {
            return Err("Object properties must be supplied as named type helpers.".to_string());
        }
        for i in 0..props.len() {
            if !is_type(element(props, i)) {
                return Err(
                    "Each entry in `arguments` must be a mcpserver or compatible ellmer type helper.".to_string(),
                );
            }
        }
        Ok(())
    })();
    check::outcome(result)
}

/// A schema given to `type_from_schema()` as an R list: plain lists only,
/// and a valid JSON Schema that MCP clients accept.
/// @noRd
#[extendr]
fn check_schema_(schema: Robj, what: &str) -> Robj {
    let schema = RValue::of(&schema);
    let result = (|| {
        check::plain_schema_list(schema, what)?;
        let value = schema_from_list(schema)
            .map_err(|e| format!("`{what}` must be JSON serializable: {e}"))?;
        mcp_core::protocol::schema::check(&value).map_err(|e| format!("`{what}` is {e}"))
    })();
    check::outcome(result)
}

/// The schema a type helper advertises, as JSON text.
/// @noRd
#[extendr]
fn type_schema_(x: Robj, pretty: bool) -> Robj {
    match parse(RValue::of(&x)) {
        Ok(node) => crate::json::render(&node.schema(), pretty).into_robj(),
        Err(e) => check::fail(e),
    }
}

extendr_module! {
    mod types;
    fn check_type_args_;
    fn check_enum_values_;
    fn check_items_;
    fn check_properties_;
    fn check_schema_;
    fn type_schema_;
    fn input_schema_properties_;
}

/// The `requestedSchema` of an elicitation, and the shape its answers
/// take in R: a flat object of text, number, yes/no and choice fields (see
/// `mcp_core::protocol::elicitation`). `type_from_schema()` fields are taken as they
/// are, if the form allows them.
pub fn elicitation_form(x: RValue) -> Result<(Value, Shape), String> {
    const WHAT: &str = "`schema` must be a type_object() (or a named list of type helpers) whose \
                        properties are type_string(), type_number(), type_integer(), type_boolean(), \
                        type_enum() of strings, type_array() of such a type_enum(), or \
                        type_from_schema() of one such field.";
    let node = parse(x).map_err(|_| WHAT.to_string())?;
    let TypeSpec::Object { properties, .. } = &node.spec else {
        return Err(WHAT.into());
    };
    let mut fields = Map::new();
    let mut shapes = Vec::new();
    let mut required = Vec::new();
    for (name, property) in properties {
        if property.nullable {
            return Err(format!(
                "`schema`: field `{name}` cannot be nullable in a form (a person leaves a \
                 field empty instead: declare it with `required = FALSE`)"
            ));
        }
        let field = match &property.spec {
            TypeSpec::Ignore => continue,
            TypeSpec::Object { .. } => return Err(WHAT.into()),
            _ => property.form_field(),
        };
        mcp_core::protocol::elicitation::check_field(&field)
            .map_err(|e| format!("`schema`: field `{name}`: {e}"))?;
        shapes.push((name.clone(), form_shape(&field)));
        fields.insert(name.clone(), field);
        if property.required {
            required.push(json!(name));
        }
    }
    let mut form = json!({ "type": "object", "properties": fields });
    if !required.is_empty() {
        form["required"] = Value::Array(required);
    }
    mcp_core::protocol::elicitation::check_form(&form).map_err(|e| format!("`schema`: {e}"))?;
    Ok((form, Shape::Object(shapes)))
}

/// The R value a form field's answer becomes: several choices a character
/// vector, the others a scalar of their type.
fn form_shape(field: &Value) -> Shape {
    match field["type"].as_str() {
        Some("string") => Shape::String,
        Some("number") => Shape::Number,
        Some("integer") => Shape::Integer,
        Some("boolean") => Shape::Boolean,
        Some("array") => Shape::Array(Box::new(Shape::String)),
        _ => Shape::Raw,
    }
}

/// How JSON arguments described by a complete JSON Schema become R values:
/// as far as the schema makes a value's type certain, following local
/// `$ref`s and `allOf`, and `anyOf`/`oneOf` when every branch agrees;
/// mcplite's raw shapes wherever it does not. The schema is read as an
/// output schema is (see [`crate::output`]), so both directions agree.
pub fn shape_from_schema(root: &Value) -> Shape {
    crate::output::plan(root).shape()
}

/// A complete schema given as a tool's `arguments`: it must describe an
/// object (`type: "object"`), as every revision's `inputSchema` must.
/// Returns the names of its top-level properties, for the check against
/// the function's arguments.
/// @noRd
#[extendr]
fn input_schema_properties_(schema: Robj) -> Robj {
    let result = (|| {
        let schema = schema_from_list(RValue::of(&schema))?;
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(
                "a type_from_schema() given as `arguments` must be an object schema \
                        (`\"type\": \"object\"`), as MCP requires of a tool's input schema"
                    .to_string(),
            );
        }
        let names: Vec<String> = match shape_from_schema(&schema) {
            Shape::Object(properties) => properties.into_iter().map(|(n, _)| n).collect(),
            _ => Vec::new(),
        };
        Ok(names)
    })();
    match result {
        Ok(names) => Robj::from(names),
        Err(e) => check::fail(e),
    }
}

#[cfg(test)]
mod schema_shape_tests {
    use super::*;

    #[test]
    fn shapes_follow_refs_composition_and_agreeing_branches() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "integer"}}},
                "tags": {"type": "array", "items": {"type": "string"}},
                "self": {"type": "object", "properties": {"next": {"$ref": "#/$defs/self"}}}
            },
            "properties": {
                "origin": {"$ref": "#/$defs/point"},
                "path": {"type": "array", "items": {"$ref": "#/$defs/point"}},
                "tags": {"$ref": "#/$defs/tags"},
                "count": {"allOf": [{"minimum": 0}, {"type": "integer"}]},
                "size": {"oneOf": [{"type": "number", "maximum": 1}, {"type": "number", "minimum": 9}]},
                "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
                "kind": {"enum": ["a", "b"]},
                "maybe": {"type": ["string", "null"]},
                "chain": {"$ref": "#/$defs/self"},
                "open": {}
            },
            "allOf": [{"properties": {"extra": {"type": "boolean"}}}]
        });
        let point = Shape::Object(vec![
            ("x".into(), Shape::Number),
            ("y".into(), Shape::Integer),
        ]);
        let Shape::Object(props) = shape_from_schema(&schema) else {
            panic!("not an object shape");
        };
        let of = |name: &str| {
            props
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, s)| s.clone())
                .unwrap()
        };
        assert_eq!(of("origin"), point);
        assert_eq!(of("path"), Shape::Array(Box::new(point)));
        assert_eq!(of("tags"), Shape::Array(Box::new(Shape::String)));
        assert_eq!(of("count"), Shape::Integer);
        assert_eq!(of("size"), Shape::Number);
        assert_eq!(of("either"), Shape::Raw);
        assert_eq!(of("kind"), Shape::String);
        assert_eq!(of("maybe"), Shape::String);
        assert_eq!(of("open"), Shape::Raw);
        assert_eq!(of("extra"), Shape::Boolean);
        // A recursive reference ends in raw values, not a stack overflow.
        assert!(matches!(of("chain"), Shape::Object(_)));
    }

    #[test]
    fn self_references_that_branch_stay_cheap() {
        let schema = json!({"$defs": {"t": {"type": "object", "properties": {
            "l": {"$ref": "#/$defs/t"}, "r": {"$ref": "#/$defs/t"}}}}, "$ref": "#/$defs/t"});
        // 2^32 subschemas without the budget: this returns at once.
        assert!(matches!(shape_from_schema(&schema), Shape::Object(_)));
    }

    #[test]
    fn references_decode_pointer_escapes() {
        let schema = json!({"$defs": {"a/b c": {"type": "integer"}}, "$ref": "#/$defs/a~1b%20c"});
        assert_eq!(shape_from_schema(&schema), Shape::Integer);
        assert_eq!(
            shape_from_schema(&json!({"$ref": "#/$defs/missing"})),
            Shape::Raw
        );
    }
}
