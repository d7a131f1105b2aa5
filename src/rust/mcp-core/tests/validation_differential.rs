//! A differential test: the split reader accepts exactly the values
//! `jsonschema` accepts, on many generated schema/value pairs, and reads
//! accepted values back unchanged.
//!
//! The schemas mix what tools advertise (`type_*()` objects with
//! `properties`, `required`, `items`, `enum`, nullable types) with what
//! `type_from_schema()` lets a user write by hand: `$defs`/`$ref`,
//! draft-07 `definitions` and tuple `items`, `prefixItems`,
//! `patternProperties`, `dependentSchemas`, `unevaluatedProperties`,
//! `if`/`then`/`else`, `allOf`/`anyOf`/`oneOf`, `format`, `const`,
//! bounds and `uniqueItems`; and complete tool schemas with `$schema`,
//! `$anchor`s and definitions reached through escaped pointers. The generator is seeded, so a failure names
//! a case that reproduces.

use mcp_core::protocol::validation::Checker;
use serde_json::{json, Map, Value};

/// A small deterministic generator (xorshift64*), so no extra crate is needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Property names are drawn from a few, so values and schemas meet.
const NAMES: &[&str] = &["a", "b", "c", "enum", "x_1"];
const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "null", "array", "object",
];
const DEFS: &[&str] = &["d0", "d1"];

struct Gen<'a> {
    rng: &'a mut Rng,
    /// `definitions` (draft-07) or `$defs`.
    defs_key: &'static str,
    draft7: bool,
    /// Whether subschemas may name another dialect (`$schema` without
    /// `$id`, which 2020-12 ignores, so their draft-07 tuples are invalid).
    nested_dialects: bool,
}

impl Gen<'_> {
    fn scalar(&mut self) -> Value {
        match self.rng.below(8) {
            0 => Value::Null,
            1 => json!(true),
            2 => json!(self.rng.below(5) as i64 - 2),
            3 => json!(1.5),
            4 => json!(""),
            5 => json!("a"),
            6 => json!("2024-01-31"),
            _ => json!("x@y.z"),
        }
    }

    /// A schema; `depth` bounds nesting.
    fn schema(&mut self, depth: usize) -> Value {
        if depth == 0 || self.rng.chance(15) {
            return self.leaf();
        }
        match self.rng.below(13) {
            0..=3 => self.object(depth),
            4..=5 => self.array(depth),
            6 => {
                let key = *self.rng.pick(&["allOf", "anyOf", "oneOf"]);
                let n = 1 + self.rng.below(3);
                let parts: Vec<Value> = (0..n).map(|_| self.schema(depth - 1)).collect();
                json!({ key: parts })
            }
            7 => {
                let mut s = json!({"if": self.schema(depth - 1), "then": self.schema(depth - 1)});
                if self.rng.chance(50) {
                    s["else"] = self.schema(depth - 1);
                }
                s
            }
            8 => {
                let name = *self.rng.pick(DEFS);
                let mut s = json!({"$ref": format!("#/{}/{name}", self.defs_key)});
                if self.rng.chance(30) {
                    s["type"] = json!(*self.rng.pick(TYPES));
                }
                s
            }
            9 => json!({"not": self.schema(depth - 1)}),
            10 => {
                // A nested definition of the same name as the root's.
                let name = *self.rng.pick(DEFS);
                let local = self.schema(depth - 1);
                json!({
                    "$defs": { name: local },
                    "$ref": format!("#/{}/{name}", self.defs_key)
                })
            }
            11 if self.nested_dialects => {
                // A nested dialect: meaningful only with its own `$id`.
                let mut s = self.array(depth);
                s["$schema"] = json!("http://json-schema.org/draft-07/schema#");
                if self.rng.chance(50) {
                    s["items"] = json!([self.schema(depth - 1)]);
                }
                s
            }
            _ => self.object(depth),
        }
    }

    fn leaf(&mut self) -> Value {
        match self.rng.below(14) {
            0 => json!(true),
            1 => json!(false),
            2 => json!({}),
            3 => json!({"type": ["string", "null"]}),
            4 => json!({"type": "integer", "minimum": 0}),
            5 => json!({"type": "number", "exclusiveMaximum": 1}),
            6 => json!({"type": "string", "enum": ["a", ""]}),
            7 => json!({"const": self.scalar()}),
            8 => json!({"type": "string", "format": *self.rng.pick(&["date", "email"])}),
            9 => json!({"type": "string", "maxLength": 1, "pattern": "^[a-z]*$"}),
            10 => json!({"enum": [null, 1, "a", [], {}]}),
            11 => json!({"type": *self.rng.pick(TYPES)}),
            12 => json!({"type": ["integer", "boolean"], "multipleOf": 2}),
            _ => json!({"$ref": format!("#/{}/{}", self.defs_key, self.rng.pick(DEFS))}),
        }
    }

    fn object(&mut self, depth: usize) -> Value {
        let mut s = Map::new();
        if self.rng.chance(80) {
            s.insert("type".into(), json!("object"));
        }
        let mut props = Map::new();
        for name in NAMES {
            if self.rng.chance(40) {
                props.insert(name.to_string(), self.schema(depth - 1));
            }
        }
        if !props.is_empty() || self.rng.chance(30) {
            s.insert("properties".into(), Value::Object(props));
        }
        if self.rng.chance(40) {
            let required: Vec<&str> = NAMES
                .iter()
                .copied()
                .filter(|_| self.rng.chance(30))
                .collect();
            s.insert("required".into(), json!(required));
        }
        match self.rng.below(5) {
            0 => {
                s.insert("additionalProperties".into(), json!(false));
            }
            1 => {
                s.insert("additionalProperties".into(), self.schema(depth - 1));
            }
            _ => {}
        }
        let extras = [
            "patternProperties",
            "dependentSchemas",
            "unevaluatedProperties",
            "minProperties",
            "maxProperties",
            "propertyNames",
            "dependentRequired",
        ];
        if self.rng.chance(25) {
            match *self.rng.pick(&extras) {
                "patternProperties" => {
                    s.insert(
                        "patternProperties".into(),
                        json!({"^x": self.schema(depth - 1)}),
                    );
                }
                "dependentSchemas" => {
                    s.insert(
                        "dependentSchemas".into(),
                        json!({"a": self.schema(depth - 1)}),
                    );
                }
                "unevaluatedProperties" => {
                    s.insert("unevaluatedProperties".into(), json!(false));
                }
                "minProperties" => {
                    s.insert("minProperties".into(), json!(1));
                }
                "maxProperties" => {
                    s.insert("maxProperties".into(), json!(2));
                }
                "propertyNames" => {
                    s.insert("propertyNames".into(), json!({"maxLength": 1}));
                }
                _ => {
                    s.insert("dependentRequired".into(), json!({"a": ["b"]}));
                }
            }
        }
        Value::Object(s)
    }

    fn array(&mut self, depth: usize) -> Value {
        let mut s = Map::new();
        if self.rng.chance(80) {
            s.insert("type".into(), json!("array"));
        }
        match self.rng.below(6) {
            0 if !self.draft7 => {
                s.insert(
                    "prefixItems".into(),
                    json!([self.schema(depth - 1), self.schema(depth - 1)]),
                );
                if self.rng.chance(50) {
                    s.insert("items".into(), self.schema(depth - 1));
                }
            }
            0 => {
                s.insert(
                    "items".into(),
                    json!([self.schema(depth - 1), self.schema(depth - 1)]),
                );
                if self.rng.chance(50) {
                    s.insert("additionalItems".into(), self.schema(depth - 1));
                }
            }
            1 => {
                s.insert("contains".into(), self.schema(depth - 1));
            }
            _ => {
                s.insert("items".into(), self.schema(depth - 1));
            }
        }
        if self.rng.chance(30) {
            s.insert("minItems".into(), json!(1));
        }
        if self.rng.chance(30) {
            s.insert("maxItems".into(), json!(2));
        }
        if self.rng.chance(30) {
            s.insert("uniqueItems".into(), json!(true));
        }
        Value::Object(s)
    }

    fn root(&mut self) -> Value {
        let mut root = match self.object(4) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        if self.draft7 {
            root.insert(
                "$schema".into(),
                json!("http://json-schema.org/draft-07/schema#"),
            );
        } else if self.rng.chance(20) {
            root.insert(
                "$schema".into(),
                json!("https://json-schema.org/draft/2020-12/schema"),
            );
        }
        let defs: Map<String, Value> = DEFS
            .iter()
            .map(|name| (name.to_string(), self.schema(2)))
            .collect();
        root.insert(self.defs_key.into(), Value::Object(defs));
        Value::Object(root)
    }

    /// A tool's input schema as `type_object()` of `type_*()` arguments
    /// writes it (each with a description; some optional), or as
    /// `type_from_schema()` takes one by hand (nullable types, nested
    /// objects, enums, arrays of objects).
    fn tool_schema(&mut self) -> Value {
        let mut props = Map::new();
        let mut required = Vec::new();
        for name in NAMES {
            if !self.rng.chance(60) {
                continue;
            }
            let mut arg = match self.rng.below(9) {
                0 => json!({"type": "number"}),
                1 => json!({"type": "integer"}),
                2 => json!({"type": "string"}),
                3 => json!({"type": "boolean"}),
                4 => json!({"type": "string", "enum": ["a", "2024-01-31"]}),
                5 => {
                    json!({"type": "array", "items": {"type": *self.rng.pick(&["number", "string"])}})
                }
                6 => json!({"type": ["string", "null"]}),
                7 => json!({"type": "object", "properties": {"a": {"type": "integer"}},
                             "required": ["a"], "additionalProperties": false}),
                _ => json!({"type": "array", "items": {"type": "object",
                             "properties": {"b": {"type": ["number", "null"]}}}}),
            };
            arg["description"] = json!(format!("argument {name}"));
            if self.rng.chance(60) {
                required.push(*name);
            }
            props.insert(name.to_string(), arg);
        }
        let mut schema = json!({"type": "object", "properties": props, "required": required});
        if self.rng.chance(70) {
            schema["additionalProperties"] = json!(false);
        }
        schema
    }

    /// A complete 2020-12 object schema as `tool(arguments =
    /// type_from_schema(...))` sends it: `$schema`, definitions whose names
    /// need escaping in a pointer (`/`, `~`, a space), `$anchor`s, `$ref`s
    /// beside other keywords, root-level composition and conditionals, and
    /// `unevaluatedProperties` that must see through all of them.
    fn complete_tool_schema(&mut self) -> Value {
        self.nested_dialects = false;
        // The generated parts refer to `d0` and `d1`.
        let mut defs: Map<String, Value> = DEFS
            .iter()
            .map(|name| (name.to_string(), self.schema(2)))
            .collect();
        defs.insert("a/b".into(), self.schema(2));
        defs.insert("c~d".into(), self.schema(2));
        defs.insert("sp ace".into(), self.schema(2));
        let mut anchored = self.object(2);
        anchored["$anchor"] = json!("thing");
        defs.insert("anchored".into(), anchored);
        let refs = ["#/$defs/a~1b", "#/$defs/c~0d", "#/$defs/sp%20ace", "#thing"];
        let mut props = Map::new();
        for name in NAMES {
            if !self.rng.chance(60) {
                continue;
            }
            let mut prop = if self.rng.chance(60) {
                json!({"$ref": *self.rng.pick(&refs)})
            } else {
                self.schema(2)
            };
            if self.rng.chance(20) && prop.is_object() {
                prop["description"] = json!(format!("argument {name}"));
            }
            props.insert(name.to_string(), prop);
        }
        let mut root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": defs,
            "properties": props,
        });
        let required: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|_| self.rng.chance(25))
            .collect();
        root["required"] = json!(required);
        match self.rng.below(5) {
            0 => {
                root["if"] = json!({"properties": {"a": {"const": "a"}}, "required": ["a"]});
                root["then"] = json!({"required": ["b"]});
                root["else"] = self.schema(2);
            }
            1 => root["allOf"] = json!([self.object(2), {"$ref": *self.rng.pick(&refs)}]),
            2 => root["oneOf"] = json!([{"required": ["a"]}, {"required": ["c"]}]),
            3 => root["anyOf"] = json!([self.schema(2), {"$ref": "#thing"}]),
            _ => {}
        }
        match self.rng.below(3) {
            0 => root["unevaluatedProperties"] = json!(false),
            1 => root["additionalProperties"] = json!(false),
            _ => {}
        }
        root
    }

    /// A value shaped like the schemas: objects keyed by the same names.
    fn value(&mut self, depth: usize) -> Value {
        if depth == 0 {
            return self.scalar();
        }
        match self.rng.below(6) {
            0..=2 => {
                let mut m = Map::new();
                for name in NAMES {
                    if self.rng.chance(50) {
                        m.insert(name.to_string(), self.value(depth - 1));
                    }
                }
                Value::Object(m)
            }
            3 => {
                let n = self.rng.below(4);
                Value::Array((0..n).map(|_| self.value(depth - 1)).collect())
            }
            _ => self.scalar(),
        }
    }
}

/// The verdicts of the reader and of `jsonschema` on one pair; on a
/// disagreement, the case.
fn compare(schema: &Value, value: &Value, drop_optional_nulls: bool) -> Result<Verdict, String> {
    let Ok(whole) = jsonschema::validator_for(schema) else {
        return Ok(Verdict::NotCompiled);
    };
    let checker = Checker::compile(schema).map_err(|e| format!("compile: {e}"))?;
    // What the reader is compared with: the value as sent, without the
    // optional root nulls when those are dropped.
    let mut expected_value = value.clone();
    if let (true, Value::Object(members)) = (drop_optional_nulls, &mut expected_value) {
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        members.retain(|name, v| !v.is_null() || required.contains(&name.as_str()));
    }
    let expected = whole.is_valid(&expected_value);
    match checker.read(&value.to_string(), drop_optional_nulls) {
        Ok(read) if expected && read == expected_value => Ok(Verdict::Accepted),
        Err(_) if !expected => Ok(Verdict::Rejected),
        got => Err(format!(
            "schema {schema}\nvalue {value}\ndrop nulls {drop_optional_nulls}\njsonschema valid: {expected}\nreader: {got:?}"
        )),
    }
}

/// What both validators said of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Verdict {
    Accepted,
    Rejected,
    /// `jsonschema` refused the schema itself: nothing to compare.
    NotCompiled,
}

fn run(seed: u64, schemas: usize, values_per_schema: usize, draft7: bool) {
    run_on(seed, schemas, values_per_schema, draft7, |g| g.root());
}

fn run_on(
    seed: u64,
    schemas: usize,
    values_per_schema: usize,
    draft7: bool,
    make: fn(&mut Gen) -> Value,
) -> std::collections::HashMap<Verdict, usize> {
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let mut verdicts = std::collections::HashMap::new();
    for case in 0..schemas {
        let mut gen = Gen {
            rng: &mut rng,
            defs_key: if draft7 { "definitions" } else { "$defs" },
            draft7,
            nested_dialects: true,
        };
        let schema = make(&mut gen);
        for _ in 0..values_per_schema {
            let value = gen.value(4);
            let drop = gen.rng.chance(50);
            match compare(&schema, &value, drop) {
                Ok(verdict) => *verdicts.entry(verdict).or_insert(0) += 1,
                Err(e) => failures.push(format!("case {case}:\n{e}")),
            }
        }
        if failures.len() >= 3 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    verdicts
}

#[test]
fn generated_2020_12_schemas_get_the_verdict_of_jsonschema() {
    let seed = std::env::var("DIFF_SEED").map_or(0x9E37_79B9_7F4A_7C15, |s| s.parse().unwrap());
    run(seed, 300, 12, false);
}

#[test]
fn generated_draft_07_schemas_get_the_verdict_of_jsonschema() {
    let seed = std::env::var("DIFF_SEED").map_or(0xD1B5_4A32_D192_ED03, |s| s.parse().unwrap());
    run(seed, 300, 12, true);
}

#[test]
fn generated_tool_argument_schemas_get_the_verdict_of_jsonschema() {
    let seed = std::env::var("DIFF_SEED").map_or(0x5851_F42D_4C95_7F2D, |s| s.parse().unwrap());
    run_on(seed, 400, 16, false, |g| g.tool_schema());
}

#[test]
fn generated_complete_tool_schemas_get_the_verdict_of_jsonschema() {
    let seed = std::env::var("DIFF_SEED").map_or(0x2545_F491_4F6C_DD1D, |s| s.parse().unwrap());
    let verdicts = run_on(seed, 300, 12, false, |g| g.complete_tool_schema());
    eprintln!("verdicts: {verdicts:?}");
    // Not vacuous: the schemas compile, and values land on both sides.
    let count = |v| verdicts.get(&v).copied().unwrap_or(0);
    assert!(count(Verdict::NotCompiled) < 300 * 12 / 4, "{verdicts:?}");
    assert!(count(Verdict::Accepted) >= 10, "{verdicts:?}");
    assert!(count(Verdict::Rejected) >= 100, "{verdicts:?}");
}
