//! Reading and checking values part by part gives what `jsonschema` gives
//! for the whole value, and stops after the first few problems.

use mcp_core::protocol::schema::describe_at;
use mcp_core::protocol::validation::{Checker, Rest, MAX_LISTED};
use serde_json::{json, Value};

/// Every instance is accepted or refused as `jsonschema` decides, with the
/// same problems (in any order) when there are few.
fn agrees_with_jsonschema(schema: Value, instances: &[Value]) {
    let checker = Checker::compile(&schema).unwrap();
    let whole = jsonschema::validator_for(&schema).unwrap();
    for instance in instances {
        let mut expected: Vec<String> = whole
            .iter_errors(instance)
            .map(|e| describe_at("", &e))
            .collect();
        match checker.read(&instance.to_string(), false) {
            Ok(value) => {
                assert!(
                    expected.is_empty(),
                    "{instance} accepted; expected {expected:?}"
                );
                assert_eq!(&value, instance, "read back unchanged");
            }
            Err(problems) => {
                assert_eq!(problems.rest, Rest::Nothing, "{instance}: {problems:?}");
                let mut listed = problems.listed.clone();
                listed.sort();
                expected.sort();
                assert_eq!(listed, expected, "{instance}");
            }
        }
    }
}

#[test]
fn objects_and_arrays_split_along_their_members() {
    let schema = json!({
        "type": "object",
        "properties": {
            "values": {"type": "array", "items": {"type": "number"}, "minItems": 1},
            "point": {"type": "object",
                      "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "minimum": 0}},
                      "required": ["x", "y"], "additionalProperties": false},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "uniqueItems": true},
            "extra": {"type": "object", "additionalProperties": {"type": "boolean"}},
            "label": {"type": "string", "maxLength": 3}
        },
        "required": ["values"],
        "additionalProperties": false
    });
    agrees_with_jsonschema(
        schema,
        &[
            json!({"values": [1, 2.5]}),
            json!({"values": []}),
            json!({"values": [1, "2", [], {}]}),
            json!({"values": "nope"}),
            json!({"point": {"x": 1.5, "y": -1, "z": 0}}),
            json!({"values": [1], "point": {"x": 1}}),
            json!({"values": [1], "tags": ["a", "a", "c"]}),
            json!({"values": [1], "extra": {"p": true, "q": 1}}),
            json!({"values": [1], "label": "long", "other": 1, "more": 2}),
            json!({"values": [1], "point": [1, 2], "tags": {"a": 1}}),
            json!([1, 2]),
            json!("text"),
            json!(null),
            json!({}),
        ],
    );
}

#[test]
fn definitions_and_other_dialects_mean_what_they_mean_in_the_whole() {
    let with_defs = json!({
        "$defs": {"positive": {"type": "number", "exclusiveMinimum": 0}},
        "type": "object",
        "properties": {"xs": {"type": "array", "items": {"$ref": "#/$defs/positive"}}}
    });
    agrees_with_jsonschema(
        with_defs,
        &[json!({"xs": [1, 2]}), json!({"xs": [1, 0, -3, "a"]})],
    );
    let draft7 = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "number"}, {"type": "string"}]},
            "n": {"type": "number", "exclusiveMaximum": 10}
        },
        "definitions": {"flag": {"type": "boolean"}},
        "additionalProperties": {"$ref": "#/definitions/flag"}
    });
    agrees_with_jsonschema(
        draft7,
        &[
            json!({"pair": [1, "a"], "n": 9, "f": true}),
            json!({"pair": ["a", 1], "n": 10, "f": 1}),
        ],
    );
}

#[test]
fn schemas_that_cannot_be_split_are_checked_whole() {
    let recursive = json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#"}, "n": {"anyOf": [{"type": "number"}, {"type": "null"}]}},
        "additionalProperties": false
    });
    agrees_with_jsonschema(
        recursive,
        &[
            json!({"tree": {"tree": {"n": null}}, "n": 1}),
            json!({"tree": {"tree": {"n": "x", "z": 1}}}),
        ],
    );
    // Property names are names, not keywords: a `$ref` to the root under a
    // property called `enum` must still keep the schema whole.
    let named_like_keywords = json!({
        "type": "object",
        "properties": {"enum": {"$ref": "#"}, "n": {"type": "number"}}
    });
    agrees_with_jsonschema(
        named_like_keywords,
        &[
            json!({"enum": {"n": 1}}),
            json!({"enum": {"n": "x", "enum": {"n": []}}}),
        ],
    );
    let conditional = json!({
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"required": ["a"]}
    });
    agrees_with_jsonschema(conditional, &[json!({"kind": "a"}), json!({"kind": "b"})]);
}

fn empty_arrays(n: usize) -> String {
    format!(r#"{{"values":[{}]}}"#, vec!["[]"; n].join(","))
}

#[test]
fn a_flood_of_problems_lists_the_first_few_and_says_there_are_more() {
    let checker = Checker::compile(&json!({
        "type": "object",
        "properties": {"values": {"type": "array", "items": {"type": "number"}}}
    }))
    .unwrap();
    let problems = checker.read(&empty_arrays(500_000), true).unwrap_err();
    assert_eq!(problems.listed.len(), MAX_LISTED);
    assert_eq!(problems.listed[0], "values[0]: expected a number, got []");
    assert_eq!(problems.listed[9], "values[9]: expected a number, got []");
    assert_eq!(problems.rest, Rest::More);
    assert!(
        problems
            .summary()
            .ends_with("; and more problems (only the first 10 are listed)"),
        "{}",
        problems.summary()
    );
    // Exactly as many problems as are listed: nothing more is claimed.
    let text = format!(r#"{{"values":[{}1]}}"#, "[],".repeat(MAX_LISTED));
    let problems = checker.read(&text, true).unwrap_err();
    assert_eq!(problems.listed.len(), MAX_LISTED);
    assert_eq!(problems.rest, Rest::Nothing);
}

#[test]
fn a_large_value_checked_whole_reports_its_first_problem() {
    let checker = Checker::compile(&json!({
        "type": "object",
        "properties": {"values": {"anyOf": [{"type": "array", "items": {"type": "number"}}]}}
    }))
    .unwrap();
    let problems = checker.read(&empty_arrays(200_000), true).unwrap_err();
    assert_eq!(problems.listed.len(), 1);
    assert_eq!(problems.rest, Rest::Unchecked);
    assert!(problems.summary().ends_with("; and possibly more problems"));
}

#[test]
fn large_valid_values_are_read_whole() {
    let checker = Checker::compile(&json!({
        "type": "object",
        "properties": {"values": {"type": "array", "items": {"type": "number"}}},
        "required": ["values"]
    }))
    .unwrap();
    let numbers: Vec<String> = (0..200_000).map(|i| format!("{i}.5")).collect();
    let text = format!(r#"{{"values":[{}]}}"#, numbers.join(","));
    let value = checker.read(&text, true).unwrap();
    let values = value["values"].as_array().unwrap();
    assert_eq!(values.len(), 200_000);
    assert_eq!(values[199_999], json!(199_999.5));
}

#[test]
fn null_means_not_given_only_for_optional_arguments_at_the_root() {
    let checker = Checker::compile(&json!({
        "type": "object",
        "properties": {
            "x": {"type": "number"},
            "opt": {"type": "number"},
            "nested": {"type": "object", "properties": {"inner": {"type": "number"}}}
        },
        "required": ["x"]
    }))
    .unwrap();
    assert_eq!(
        checker.read(r#"{"x":1,"opt":null}"#, true).unwrap(),
        json!({"x": 1})
    );
    assert_eq!(
        checker.read(r#"{"x":null}"#, true).unwrap_err().listed,
        vec!["x: expected a number, got null"]
    );
    assert_eq!(
        checker
            .read(r#"{"x":1,"nested":{"inner":null}}"#, true)
            .unwrap_err()
            .listed,
        vec!["nested.inner: expected a number, got null"]
    );
    assert_eq!(
        checker
            .read(r#"{"x":1,"opt":null}"#, false)
            .unwrap_err()
            .listed,
        vec!["opt: expected a number, got null"]
    );
}

#[test]
fn optional_nulls_are_dropped_when_the_root_is_checked_whole() {
    // `anyOf` keeps the root whole while its `$defs` let the document
    // split: a null for an optional argument must still mean "not given".
    let checker = Checker::compile(&json!({
        "type": "object",
        "properties": {"x": {"type": "number"}, "opt": {"$ref": "#/$defs/text"}},
        "required": ["x"],
        "anyOf": [{"required": ["x"]}],
        "$defs": {"text": {"type": "string"}}
    }))
    .unwrap();
    assert_eq!(
        checker.read(r#"{"x":1,"opt":null}"#, true).unwrap(),
        json!({"x": 1})
    );
    assert_eq!(
        checker.read(r#"{"x":1,"opt":2}"#, true).unwrap_err().listed,
        vec!["opt: expected a string, got 2"]
    );
}

#[test]
fn a_part_with_its_own_definitions_still_refers_to_the_roots() {
    // `#/$defs/d` means the root's `d` wherever it is written, even under
    // a part that defines a `d` of its own.
    let schema = json!({
        "type": "object",
        "properties": {"c": {"$defs": {"d": {"type": "object"}}, "$ref": "#/$defs/d"}},
        "$defs": {"d": {"type": "integer"}}
    });
    agrees_with_jsonschema(schema, &[json!({"c": 2}), json!({"c": {}})]);
}

#[test]
fn a_repeated_member_name_is_judged_by_its_last_value_as_when_parsed_whole() {
    // JSON parsers keep the last of repeated names; so must the reader,
    // for its verdict and for the arguments R gets.
    let checker = Checker::compile(&json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}, "p": {"type": "object",
                       "properties": {"q": {"type": "string"}}}}
    }))
    .unwrap();
    assert_eq!(
        checker.read(r#"{"x":"bad","x":1}"#, true).unwrap(),
        json!({"x": 1})
    );
    assert_eq!(
        checker.read(r#"{"p":{"q":1,"q":"s"}}"#, true).unwrap(),
        json!({"p": {"q": "s"}})
    );
    // A later null still means "not given".
    assert_eq!(
        checker.read(r#"{"x":1,"x":null}"#, true).unwrap(),
        json!({})
    );
    assert_eq!(
        checker
            .read(r#"{"x":1,"x":"bad"}"#, true)
            .unwrap_err()
            .listed,
        vec!["x: expected an integer, got \"bad\""]
    );
}
