//! Elicitation forms: the restricted schema `elicitation/create` allows for
//! its `requestedSchema`, and the shape each revision can carry.
//!
//! A form is a flat object whose properties are one of these fields (the
//! 2025-11-25 `PrimitiveSchemaDefinition`, unchanged in 2026-07-28):
//! - text: `{type: string, minLength?, maxLength?, format?, default?}`;
//! - number: `{type: number|integer, minimum?, maximum?, default?}`;
//! - yes/no: `{type: boolean, default?}`;
//! - single choice: `{type: string, enum, default?}`, with titles as
//!   `oneOf: [{const, title}]`, or in the legacy way as `enumNames`;
//! - several choices: `{type: array, items: {type: string, enum} | {anyOf:
//!   [{const, title}]}, minItems?, maxItems?, default?}`.
//!
//! Each may carry `title` and `description`. 2025-06-18 knows no defaults
//! (but on booleans), no `oneOf` titles and no multi-select:
//! [`for_revision`] rewrites what it can and refuses the rest.

use crate::protocol::revision::Revision;
use serde_json::{json, Map, Value};

const STRING_FORMATS: [&str; 4] = ["date", "date-time", "email", "uri"];

/// What kind of field a property schema is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Text,
    Number,
    Integer,
    Boolean,
    Choice,
    TitledChoice,
    LegacyTitledChoice,
    Choices,
    TitledChoices,
}

/// Checks a whole `requestedSchema`: `{type: "object", properties, required?}`.
pub fn check_form(schema: &Value) -> Result<(), String> {
    let Value::Object(map) = schema else {
        return Err("the form must be a JSON object schema".into());
    };
    if map.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the form must have `type: \"object\"`".into());
    }
    let properties = match map.get("properties") {
        Some(Value::Object(p)) => p,
        _ => return Err("the form must have `properties`, an object of fields".into()),
    };
    for (key, _) in map.iter() {
        if !matches!(key.as_str(), "type" | "properties" | "required" | "$schema") {
            return Err(format!(
                "the form may hold only `type`, `properties` and `required`, not `{key}`"
            ));
        }
    }
    for (name, field) in properties {
        check_field(field).map_err(|e| format!("field `{name}`: {e}"))?;
    }
    match map.get("required") {
        None => Ok(()),
        Some(Value::Array(names)) => names.iter().try_for_each(|n| match n.as_str() {
            Some(n) if properties.contains_key(n) => Ok(()),
            _ => Err(format!("`required` names {n}, which is not a field")),
        }),
        Some(_) => Err("`required` must be an array of field names".into()),
    }
}

/// Checks one field; the error says what the field may be.
pub fn check_field(schema: &Value) -> Result<(), String> {
    classify(schema).map(|_| ())
}

fn classify(schema: &Value) -> Result<Field, String> {
    let Value::Object(map) = schema else {
        return Err("a field must be a JSON object schema".into());
    };
    let kind = match map.get("type").and_then(Value::as_str) {
        Some("string") if map.contains_key("oneOf") => Field::TitledChoice,
        Some("string") if map.contains_key("enumNames") => Field::LegacyTitledChoice,
        Some("string") if map.contains_key("enum") => Field::Choice,
        Some("string") => Field::Text,
        Some("number") => Field::Number,
        Some("integer") => Field::Integer,
        Some("boolean") => Field::Boolean,
        Some("array") => match map.get("items") {
            Some(items) if items.get("anyOf").is_some() => Field::TitledChoices,
            _ => Field::Choices,
        },
        _ => {
            return Err(
                "a field must have `type` \"string\", \"number\", \"integer\", \"boolean\" \
                 or \"array\" (of choices); forms hold no nested objects"
                    .into(),
            )
        }
    };
    let allowed = allowed_keys(kind);
    if let Some(key) = map
        .keys()
        .find(|k| !allowed.contains(&k.as_str()) && !matches!(k.as_str(), "title" | "description"))
    {
        return Err(format!(
            "`{key}` is not allowed in this field (allowed: {})",
            allowed.join(", ")
        ));
    }
    for key in ["title", "description"] {
        if map.get(key).is_some_and(|v| !v.is_string()) {
            return Err(format!("`{key}` must be a string"));
        }
    }
    check_kind(kind, map)?;
    Ok(kind)
}

fn allowed_keys(kind: Field) -> &'static [&'static str] {
    match kind {
        Field::Text => &["type", "minLength", "maxLength", "format", "default"],
        Field::Number | Field::Integer => &["type", "minimum", "maximum", "default"],
        Field::Boolean => &["type", "default"],
        Field::Choice => &["type", "enum", "default"],
        Field::TitledChoice => &["type", "oneOf", "default"],
        Field::LegacyTitledChoice => &["type", "enum", "enumNames", "default"],
        Field::Choices | Field::TitledChoices => {
            &["type", "items", "minItems", "maxItems", "default"]
        }
    }
}

fn check_kind(kind: Field, map: &Map<String, Value>) -> Result<(), String> {
    let default = map.get("default");
    match kind {
        Field::Text => {
            for key in ["minLength", "maxLength"] {
                non_negative_integer(map, key)?;
            }
            if let Some(format) = map.get("format") {
                if !format.as_str().is_some_and(|f| STRING_FORMATS.contains(&f)) {
                    return Err(format!(
                        "`format` must be one of {}",
                        STRING_FORMATS.join(", ")
                    ));
                }
            }
            expect_default(default, Value::is_string, "a string")
        }
        Field::Number | Field::Integer => {
            for key in ["minimum", "maximum"] {
                if map.get(key).is_some_and(|v| !v.is_number()) {
                    return Err(format!("`{key}` must be a number"));
                }
            }
            if kind == Field::Integer {
                expect_default(default, is_whole, "a whole number")
            } else {
                expect_default(default, Value::is_number, "a number")
            }
        }
        Field::Boolean => expect_default(default, Value::is_boolean, "true or false"),
        Field::Choice => {
            let values = strings(map.get("enum"), "enum")?;
            choice_default(default, &values)
        }
        Field::LegacyTitledChoice => {
            let values = strings(map.get("enum"), "enum")?;
            let names = strings(map.get("enumNames"), "enumNames")?;
            if names.len() != values.len() {
                return Err("`enumNames` must name each value of `enum`, in order".into());
            }
            choice_default(default, &values)
        }
        Field::TitledChoice => {
            let values = titled_options(map.get("oneOf"), "oneOf")?;
            choice_default(default, &values)
        }
        Field::Choices | Field::TitledChoices => {
            for key in ["minItems", "maxItems"] {
                non_negative_integer(map, key)?;
            }
            let items = map.get("items").and_then(Value::as_object).ok_or(
                "`items` must be `{type: \"string\", enum: [...]}` or `{anyOf: [{const, title}, ...]}`",
            )?;
            let values = if kind == Field::TitledChoices {
                if items.keys().any(|k| k != "anyOf") {
                    return Err(
                        "titled choices must have `items: {anyOf: [{const, title}, ...]}`".into(),
                    );
                }
                titled_options(items.get("anyOf"), "items.anyOf")?
            } else {
                let plain = items.get("type").and_then(Value::as_str) == Some("string")
                    && items.keys().all(|k| k == "type" || k == "enum");
                if !plain {
                    return Err("choices must have `items: {type: \"string\", enum: [...]}`".into());
                }
                strings(items.get("enum"), "items.enum")?
            };
            match default {
                None => Ok(()),
                Some(Value::Array(chosen)) => chosen
                    .iter()
                    .try_for_each(|c| choice_default(Some(c), &values)),
                Some(_) => Err("`default` must be an array of the choices".into()),
            }
        }
    }
}

fn is_whole(v: &Value) -> bool {
    v.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn expect_default(
    default: Option<&Value>,
    ok: fn(&Value) -> bool,
    what: &str,
) -> Result<(), String> {
    match default {
        Some(v) if !ok(v) => Err(format!("`default` must be {what}")),
        _ => Ok(()),
    }
}

fn non_negative_integer(map: &Map<String, Value>, key: &str) -> Result<(), String> {
    match map.get(key) {
        Some(v) if v.as_u64().is_none() => Err(format!("`{key}` must be a non-negative integer")),
        _ => Ok(()),
    }
}

fn strings<'a>(values: Option<&'a Value>, key: &str) -> Result<Vec<&'a str>, String> {
    let error = || format!("`{key}` must be a non-empty array of strings");
    let list = values.and_then(Value::as_array).ok_or_else(error)?;
    let out: Option<Vec<&str>> = list.iter().map(Value::as_str).collect();
    out.filter(|o| !o.is_empty()).ok_or_else(error)
}

fn titled_options<'a>(options: Option<&'a Value>, key: &str) -> Result<Vec<&'a str>, String> {
    let error =
        || format!("`{key}` must be a non-empty array of `{{const, title}}` options (strings)");
    let list = options.and_then(Value::as_array).ok_or_else(error)?;
    let out: Option<Vec<&str>> = list
        .iter()
        .map(|o| {
            let o = o.as_object()?;
            let ok = o.len() == 2 && o.get("title").is_some_and(Value::is_string);
            o.get("const").and_then(Value::as_str).filter(|_| ok)
        })
        .collect();
    out.filter(|o| !o.is_empty()).ok_or_else(error)
}

fn choice_default(default: Option<&Value>, values: &[&str]) -> Result<(), String> {
    match default {
        None => Ok(()),
        Some(Value::String(d)) if values.contains(&d.as_str()) => Ok(()),
        Some(d) => Err(format!("`default` {d} is not one of the choices")),
    }
}

/// Whether the content of an accepted answer fits the form: the client is
/// meant to check it, but the tool must not get a value of another type
/// than its form promised. Lists up to three problems.
pub fn check_content(form: &Value, content: &Value) -> Result<(), String> {
    let validator = crate::protocol::schema::compile(form)?;
    let problems: Vec<String> = validator
        .iter_errors(content)
        .take(3)
        .map(|e| crate::protocol::schema::describe_at("", &e).replace("argument", "field"))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the answer does not fit the form: {}",
            problems.join("; ")
        ))
    }
}

/// The form as `rev` can carry it. 2025-06-18 gets titled choices as
/// `enumNames` and no defaults but on booleans; several-choice fields
/// cannot be carried there at all.
pub fn for_revision(form: &Value, rev: Revision) -> Result<Value, String> {
    if rev >= Revision::V2025_11_25 {
        return Ok(form.clone());
    }
    let mut form = form.clone();
    let Some(Value::Object(properties)) = form.get_mut("properties") else {
        return Ok(form);
    };
    for (name, field) in properties.iter_mut() {
        let kind = classify(field).map_err(|e| format!("field `{name}`: {e}"))?;
        let Value::Object(map) = field else { continue };
        match kind {
            Field::Choices | Field::TitledChoices => {
                return Err(format!(
                    "field `{name}` lets the user pick several choices, which protocol \
                     revision {rev} cannot ask for (2025-11-25 or later can)"
                ))
            }
            Field::TitledChoice => {
                let options = map.shift_remove("oneOf").unwrap_or_default();
                let options = options.as_array().cloned().unwrap_or_default();
                let values: Vec<Value> = options.iter().map(|o| o["const"].clone()).collect();
                let names: Vec<Value> = options.iter().map(|o| o["title"].clone()).collect();
                map.insert("enum".into(), json!(values));
                map.insert("enumNames".into(), json!(names));
            }
            _ => {}
        }
        if kind != Field::Boolean {
            map.shift_remove("default");
        }
    }
    Ok(form)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(field: Value) -> Value {
        json!({"type": "object", "properties": {"f": field}})
    }

    #[test]
    fn every_field_kind_with_its_default_is_accepted() {
        for field in [
            json!({"type": "string", "default": "John Doe", "title": "Name", "minLength": 1}),
            json!({"type": "string", "format": "email"}),
            json!({"type": "integer", "default": 30, "minimum": 0}),
            json!({"type": "number", "default": 95.5}),
            json!({"type": "boolean", "default": true}),
            json!({"type": "string", "enum": ["a", "b"], "default": "b"}),
            json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}], "default": "a"}),
            json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}),
            json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"], "maxItems": 2}),
            json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}, "minItems": 1}),
        ] {
            assert_eq!(check_form(&form(field.clone())), Ok(()), "{field}");
        }
    }

    #[test]
    fn fields_outside_the_subset_are_refused_with_the_reason() {
        let refused = |field: Value, says: &str| {
            let e = check_form(&form(field.clone())).unwrap_err();
            assert!(e.contains(says), "{field}: {e}");
        };
        refused(
            json!({"type": "object", "properties": {}}),
            "no nested objects",
        );
        refused(
            json!({"type": "string", "default": 3}),
            "`default` must be a string",
        );
        refused(json!({"type": "integer", "default": 2.5}), "a whole number");
        refused(
            json!({"type": "string", "enum": ["a"], "default": "z"}),
            "not one of the choices",
        );
        refused(
            json!({"type": "string", "enum": [1, 2]}),
            "array of strings",
        );
        refused(
            json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}),
            "each value",
        );
        refused(
            json!({"type": "string", "oneOf": [{"const": "a"}]}),
            "{const, title}",
        );
        refused(
            json!({"type": "array", "items": {"type": "number"}}),
            "choices must have",
        );
        refused(
            json!({"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["q"]}),
            "not one of",
        );
        refused(
            json!({"type": "string", "pattern": "x"}),
            "`pattern` is not allowed",
        );
        refused(
            json!({"type": "string", "format": "ipv4"}),
            "`format` must be one of",
        );
        assert!(
            check_form(&json!({"type": "object", "properties": {}, "required": ["x"]})).is_err()
        );
        assert!(check_form(&json!({"type": "array"})).is_err());
    }

    #[test]
    fn answers_must_fit_their_form() {
        let f = json!({"type": "object", "properties": {
            "age": {"type": "integer"},
            "pick": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
        }, "required": ["age"]});
        assert_eq!(check_content(&f, &json!({"age": 3, "pick": ["a"]})), Ok(()));
        let e = check_content(&f, &json!({"age": "old", "pick": ["z"]})).unwrap_err();
        assert_eq!(
            e,
            "the answer does not fit the form: age: expected an integer, got \"old\"; \
             pick[0]: expected one of \"a\", \"b\", got \"z\""
        );
        let e = check_content(&f, &json!({})).unwrap_err();
        assert!(e.contains("missing required field \"age\""), "{e}");
    }

    #[test]
    fn revision_2025_06_18_gets_legacy_titles_and_no_defaults() {
        let titled = form(json!({
            "type": "string", "default": "a",
            "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]
        }));
        assert_eq!(
            for_revision(&titled, Revision::V2025_06_18).unwrap(),
            form(json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}))
        );
        assert_eq!(
            for_revision(&titled, Revision::V2025_11_25).unwrap(),
            titled
        );
        let flag = form(json!({"type": "boolean", "default": true}));
        assert_eq!(for_revision(&flag, Revision::V2025_06_18).unwrap(), flag);
        let several = form(json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}));
        let e = for_revision(&several, Revision::V2025_06_18).unwrap_err();
        assert!(e.contains("several choices"), "{e}");
    }
}
