//! Reading a JSON value and checking it against a schema in one pass,
//! stopping after the first few problems.
//!
//! `jsonschema` collects every error before handing out the first, so a
//! call with two million wrong items costs two million errors (gigabytes).
//! Here the schema is split, once, into a plan that follows the value's
//! structure: a node whose only subschemas are `properties`, `items` and
//! `additionalProperties` is read member by member, each member checked by
//! its own subschema as soon as it is read, and the node's own keywords
//! (`type`, `required`, `minItems`, ...) by a copy of the node without its
//! subschemas. Anything else is checked as a whole. Once more problems are
//! found than are listed, the rest of the text is only skipped: no tree is
//! built for a value that will be refused.
//!
//! [`Checker::check`] walks the same plan without keeping what it read: a
//! node's own keywords are checked on a stand-in (the object's names with
//! placeholder values, an array of placeholders as long as its length
//! bounds need), so a message of millions of items costs no tree. Only a
//! node whose keywords look at its members' values (`enum`, `const`,
//! `uniqueItems`) keeps them. A value with a problem is read again by
//! [`Checker::read`], so the problems listed are the same either way.

use crate::protocol::schema::{self, Naming};
use jsonschema::Validator;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::{self, Write};

/// How many problems a message lists.
pub const MAX_LISTED: usize = 10;

/// A value checked as a whole lists all its problems only when it has at
/// most this many nodes; a larger one reports its first.
const SMALL_VALUE: usize = 1000;

/// Keywords that judge a node by itself, never by applying a subschema to
/// a part of it: checking them on a copy without subschemas is exact (the
/// [`ANNOTATIONS`] too, which judge nothing).
const NODE_KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "required",
    "dependentRequired",
    "minProperties",
    "maxProperties",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "contentEncoding",
    "contentMediaType",
];

/// The subschemas a node may be split along.
const MEMBER_KEYWORDS: &[&str] = &["properties", "items", "additionalProperties"];

/// Keywords about the whole document, allowed at the root; each part is
/// compiled with them so its `$ref`s resolve as they do in the whole.
const DOCUMENT_KEYWORDS: &[&str] = &["$schema", "$id", "$defs", "definitions"];

/// Keywords whose values map names to subschemas.
pub const NAMED_SUBSCHEMAS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// Keys whose values are data, not subschemas.
const DATA_KEYWORDS: &[&str] = &["enum", "const", "default", "examples"];

/// What was wrong with a value: the first problems, and whether there are more.
#[derive(Debug, Clone, PartialEq)]
pub struct Problems {
    pub listed: Vec<String>,
    pub rest: Rest,
    /// Which of the listed problems an embedder may explain further.
    pub kinds: ProblemKinds,
}

/// Kinds of problem among those listed, for advice on fixing them (an
/// embedder knows how its values become JSON; see
/// [`crate::protocol::tool::OutputHints`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProblemKinds {
    /// A value that is not an array where the schema wants one.
    pub not_an_array: bool,
    /// `null` where the schema does not allow it.
    pub null: bool,
}

/// What lies beyond the listed problems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// Every problem is listed.
    Nothing,
    /// More problems were found than are listed.
    More,
    /// A large value was checked as a whole and only its first problem is
    /// known; the rest was not looked at.
    Unchecked,
}

impl Problems {
    /// One line per listed problem, then one saying what was left out.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = self.listed.clone();
        match self.rest {
            Rest::Nothing => {}
            Rest::More => lines.push(format!(
                "and more problems (only the first {MAX_LISTED} are listed)"
            )),
            Rest::Unchecked => lines.push("and possibly more problems".to_string()),
        }
        lines
    }

    /// The lines joined into one sentence.
    pub fn summary(&self) -> String {
        self.lines().join("; ")
    }
}

/// A compiled schema that reads and checks values.
pub struct Checker {
    root: Validator,
    /// How to read a value part by part; `None` when the schema cannot be
    /// split (it is then checked as a whole).
    plan: Option<Node>,
    /// The root's `required` names (which members may be dropped as null).
    required: Vec<String>,
    naming: Naming,
}

enum Node {
    /// Checked as a whole when read.
    Whole(Validator, Option<Types>),
    Split(Split),
}

struct Split {
    /// The node without its subschemas: checks its own keywords.
    shallow: Validator,
    /// Its own keywords look at its members' values (`enum`, `const`,
    /// `uniqueItems`): checking without a tree keeps them for it.
    needs_members: bool,
    /// How many placeholder items an array's stand-in needs so that its
    /// `minItems` and `maxItems` judge it as they judge the array.
    stand_in_items: usize,
    properties: HashMap<String, Node>,
    /// For members not in `properties`; `None` when unconstrained (or
    /// refused, which `shallow` reports).
    additional: Option<Box<Node>>,
    items: Option<Box<Node>>,
}

impl Split {
    fn member(&self, name: &str) -> Option<&Node> {
        self.properties.get(name).or(self.additional.as_deref())
    }
}

impl Checker {
    /// Compiles `schema` and, where it can be split, its plan.
    pub fn compile(schema: &Value) -> Result<Checker, String> {
        let root = schema::compile(schema)?;
        let plan = if can_split_document(schema) {
            let document: Map<String, Value> = DOCUMENT_KEYWORDS
                .iter()
                .filter_map(|k| Some((k.to_string(), schema.get(*k)?.clone())))
                .collect();
            // A root checked whole is read whole, which drops optional nulls.
            plan_node(schema, &document, true)
                .ok()
                .filter(|plan| matches!(plan, Node::Split(_)))
        } else {
            None
        };
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        Ok(Checker {
            root,
            plan,
            required,
            naming: Naming::Arguments,
        })
    }

    /// The same checker, calling members fields in its problems (for
    /// results rather than arguments).
    pub fn naming(mut self, naming: Naming) -> Checker {
        self.naming = naming;
        self
    }

    /// Reads the JSON `text` and checks it. With `drop_optional_nulls`, a
    /// root member that is `null` and not required is left out (for tool
    /// arguments, where `null` means "not given").
    pub fn read(&self, text: &str, drop_optional_nulls: bool) -> Result<Value, Problems> {
        let mut walk = Walk::named(self.naming);
        let mut read = match &self.plan {
            Some(plan) => self.read_planned(&walk, plan, text, drop_optional_nulls),
            None => self.read_whole(&walk, text, drop_optional_nulls),
        };
        if walk.repeated_name.get() {
            // A name given twice: its first value was checked (and kept)
            // before the second replaced it. Parsed whole, the last wins.
            walk = Walk::named(self.naming);
            read = self.read_whole(&walk, text, drop_optional_nulls);
        }
        let read = read.map_err(|e| Problems {
            listed: vec![format!("not readable JSON: {e}")],
            rest: Rest::Nothing,
            kinds: ProblemKinds::default(),
        })?;
        let found = walk.found.into_inner();
        match read {
            Some(value) if found.listed.is_empty() => Ok(value),
            _ => Err(Problems {
                listed: found.listed,
                rest: found.rest,
                kinds: found.kinds,
            }),
        }
    }

    /// Checks the JSON `text` as [`Checker::read`] does, without building
    /// its tree (see the module doc): `Ok` exactly when `read` would give a
    /// value, and the same problems when it would not.
    pub fn check(&self, text: &str, drop_optional_nulls: bool) -> Result<(), Problems> {
        let Some(plan) = &self.plan else {
            return self.read(text, drop_optional_nulls).map(drop);
        };
        let walk = Walk::named(self.naming);
        let mut de = serde_json::Deserializer::from_str(text);
        let seed = Seed {
            walk: &walk,
            node: Some(plan),
            null_is_absent: false,
            optional_nulls: drop_optional_nulls.then_some(&self.required),
            keep: false,
        };
        let passed = matches!(seed.deserialize(&mut de), Ok(Some(_)))
            && de.end().is_ok()
            && walk.found.borrow().listed.is_empty()
            && !walk.repeated_name.get();
        if passed {
            Ok(())
        } else {
            self.read(text, drop_optional_nulls).map(drop)
        }
    }

    /// The root's required names.
    pub fn required(&self) -> &[String] {
        &self.required
    }

    fn read_planned(
        &self,
        walk: &Walk,
        plan: &Node,
        text: &str,
        drop_optional_nulls: bool,
    ) -> serde_json::Result<Option<Value>> {
        let mut de = serde_json::Deserializer::from_str(text);
        let seed = Seed {
            walk,
            node: Some(plan),
            null_is_absent: false,
            optional_nulls: drop_optional_nulls.then_some(&self.required),
            keep: true,
        };
        let value = seed.deserialize(&mut de)?;
        de.end()?;
        // The plan lists problems; the whole schema has the last word on
        // what passes.
        if let Some(value) = &value {
            if walk.found.borrow().listed.is_empty() && !self.root.is_valid(value) {
                walk.check_whole(&self.root, value);
            }
        }
        Ok(value)
    }

    fn read_whole(
        &self,
        walk: &Walk,
        text: &str,
        drop_optional_nulls: bool,
    ) -> serde_json::Result<Option<Value>> {
        let mut value: Value = serde_json::from_str(text)?;
        if let (true, Value::Object(members)) = (drop_optional_nulls, &mut value) {
            members.retain(|name, v| !v.is_null() || self.required.contains(name));
        }
        walk.check_whole(&self.root, &value);
        Ok(Some(value))
    }
}

/// Whether every part of the schema means the same compiled on its own
/// (with the document keywords) as within the whole: no dynamic or
/// anchored references, no nested `$id`, and `$ref`s only into `$defs`.
fn can_split_document(schema: &Value) -> bool {
    fn schema_ok(node: &Value, root: bool) -> bool {
        let Value::Object(map) = node else {
            return true;
        };
        map.iter().all(|(key, value)| match key.as_str() {
            "$dynamicRef" | "$recursiveRef" | "$dynamicAnchor" | "$recursiveAnchor" | "$anchor" => {
                false
            }
            "$id" => root,
            // A part's own definitions could shadow the root's of the same
            // name once the part is compiled with the root's.
            "$defs" | "definitions" if !root => false,
            "$ref" => value
                .as_str()
                .is_some_and(|r| r.starts_with("#/$defs/") || r.starts_with("#/definitions/")),
            k if DATA_KEYWORDS.contains(&k) => true,
            // Names, then subschemas: a property called `enum` is walked.
            k if NAMED_SUBSCHEMAS.contains(&k) => value
                .as_object()
                .is_none_or(|named| named.values().all(|sub| schema_ok(sub, false))),
            _ => nested_ok(value),
        })
    }
    /// A keyword's value: a subschema, a list of them, or data, walked
    /// alike (data that looks like a reference only costs the plan).
    fn nested_ok(value: &Value) -> bool {
        match value {
            Value::Object(_) => schema_ok(value, false),
            Value::Array(items) => items.iter().all(nested_ok),
            _ => true,
        }
    }
    schema_ok(schema, true)
}

/// Whether `node` can be read member by member.
fn can_split(node: &Value, root: bool) -> bool {
    let Value::Object(map) = node else {
        return false;
    };
    let known = |k: &str| {
        NODE_KEYWORDS.contains(&k)
            || ANNOTATIONS.contains(&k)
            || MEMBER_KEYWORDS.contains(&k)
            || (root && DOCUMENT_KEYWORDS.contains(&k))
    };
    let is_schema = |v: &Value| v.is_object() || v.is_boolean();
    map.keys().all(|k| known(k))
        && MEMBER_KEYWORDS.iter().any(|k| map.contains_key(*k))
        && map.get("items").is_none_or(is_schema)
        && map.get("additionalProperties").is_none_or(is_schema)
        && map
            .get("properties")
            .is_none_or(|p| p.as_object().is_some_and(|p| p.values().all(is_schema)))
}

fn plan_node(node: &Value, document: &Map<String, Value>, root: bool) -> Result<Node, String> {
    if !can_split(node, root) {
        let compiled = if root {
            schema::compile(node)
        } else {
            schema::compile(&with_document(node, document))
        };
        let types = Types::of(node, document);
        return compiled.map(|validator| Node::Whole(validator, types));
    }
    let plan_of = |sub: &Value| plan_node(sub, document, false);
    let properties = match node.get("properties").and_then(Value::as_object) {
        Some(props) => props
            .iter()
            .map(|(name, sub)| Ok((name.clone(), plan_of(sub)?)))
            .collect::<Result<_, String>>()?,
        None => HashMap::new(),
    };
    let additional = match node.get("additionalProperties") {
        Some(sub @ Value::Object(_)) => Some(Box::new(plan_of(sub)?)),
        _ => None,
    };
    let items = node.get("items").map(plan_of).transpose()?.map(Box::new);
    let bound = |key: &str| node.get(key).and_then(Value::as_u64).map(|n| n as usize);
    Ok(Node::Split(Split {
        shallow: schema::compile(&shallow(node, document))?,
        needs_members: ["enum", "const", "uniqueItems"]
            .iter()
            .any(|k| node.get(*k).is_some()),
        stand_in_items: bound("minItems")
            .unwrap_or(0)
            .max(bound("maxItems").map_or(0, |m| m.saturating_add(1))),
        properties,
        additional,
        items,
    }))
}

/// The JSON types a schema of only `type` (and annotations) allows, so
/// that a scalar of those types passes without its validator: the leaves
/// of arrays of millions of numbers, say. Values it does not admit go to
/// the validator, which judges (and words the problem).
#[derive(Clone, Copy)]
struct Types {
    null: bool,
    boolean: bool,
    number: bool,
    integer: bool,
    string: bool,
}

/// Keywords that never change what a schema accepts (also read by the
/// embedder's own check of values against a schema).
pub const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

impl Types {
    fn of(node: &Value, document: &Map<String, Value>) -> Option<Types> {
        let map = node.as_object()?;
        // Another dialect's `type` is left to the validator.
        if document.contains_key("$schema") {
            return None;
        }
        if !map
            .keys()
            .all(|k| k == "type" || ANNOTATIONS.contains(&k.as_str()))
        {
            return None;
        }
        let names: Vec<&str> = match map.get("type")? {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().map(Value::as_str).collect::<Option<_>>()?,
            _ => return None,
        };
        let mut types = Types {
            null: false,
            boolean: false,
            number: false,
            integer: false,
            string: false,
        };
        for name in names {
            match name {
                "null" => types.null = true,
                "boolean" => types.boolean = true,
                "number" => types.number = true,
                "integer" => types.integer = true,
                "string" => types.string = true,
                _ => return None,
            }
        }
        Some(types)
    }

    /// Whether the value certainly passes (false: ask the validator).
    fn admit(self, value: &Value) -> bool {
        match value {
            Value::Null => self.null,
            Value::Bool(_) => self.boolean,
            // An integer written as an integer; `1.0` is the validator's to judge.
            Value::Number(n) => self.number || (self.integer && !n.is_f64()),
            Value::String(_) => self.string,
            _ => false,
        }
    }
}

/// A part compiled on its own, with the document's dialect and definitions.
fn with_document(node: &Value, document: &Map<String, Value>) -> Value {
    let Value::Object(map) = node else {
        return node.clone();
    };
    let mut map = map.clone();
    let has_own_definitions = map.contains_key("$defs") || map.contains_key("definitions");
    for (key, value) in document {
        let is_definitions = key == "$defs" || key == "definitions";
        let taken = map.contains_key(key) || (is_definitions && has_own_definitions);
        if !taken {
            map.insert(key.clone(), value.clone());
        }
    }
    Value::Object(map)
}

/// The node with its subschemas made vacuous: `properties` keep their
/// names (which `additionalProperties: false` needs) but accept anything.
fn shallow(node: &Value, document: &Map<String, Value>) -> Value {
    let mut map = node.as_object().cloned().unwrap_or_default();
    for key in DOCUMENT_KEYWORDS {
        map.remove(*key);
    }
    if let Some(dialect) = document.get("$schema") {
        map.insert("$schema".into(), dialect.clone());
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for sub in props.values_mut() {
            *sub = Value::Bool(true);
        }
    }
    map.remove("items");
    if map
        .get("additionalProperties")
        .is_some_and(Value::is_object)
    {
        map.remove("additionalProperties");
    }
    Value::Object(map)
}

/// The problems found so far, and where the reader is.
#[derive(Default)]
struct Walk {
    found: RefCell<Found>,
    /// JSON pointer of the value being read.
    path: RefCell<Vec<Part>>,
    /// An object named a member twice (read whole again to decide).
    repeated_name: Cell<bool>,
    naming: Naming,
}

struct Found {
    listed: Vec<String>,
    rest: Rest,
    kinds: ProblemKinds,
}

impl Default for Found {
    fn default() -> Found {
        Found {
            listed: Vec::new(),
            rest: Rest::Nothing,
            kinds: ProblemKinds::default(),
        }
    }
}

impl Walk {
    fn named(naming: Naming) -> Walk {
        Walk {
            naming,
            ..Walk::default()
        }
    }

    /// Enough is known: the rest of the input is only skipped.
    fn stopped(&self) -> bool {
        self.found.borrow().rest != Rest::Nothing
    }

    fn add(&self, error: &jsonschema::ValidationError) {
        let mut found = self.found.borrow_mut();
        if found.rest != Rest::Nothing {
            return;
        }
        if found.listed.len() < MAX_LISTED {
            let line = schema::describe_named(&self.pointer(), error, self.naming);
            found.listed.push(line);
            if let jsonschema::error::ValidationErrorKind::Type { kind } = error.kind() {
                if error.instance().is_null() {
                    found.kinds.null = true;
                } else if schema::expects_array(kind) && !error.instance().is_array() {
                    found.kinds.not_an_array = true;
                }
            }
        } else {
            found.rest = Rest::More;
        }
    }

    /// Runs `read` with a member's name appended to the path.
    fn at_member<T>(&self, name: &str, read: impl FnOnce() -> T) -> T {
        self.at(Part::Name(name.to_string()), read)
    }

    /// Runs `read` with an item's index appended to the path.
    fn at_item<T>(&self, index: usize, read: impl FnOnce() -> T) -> T {
        self.at(Part::Index(index), read)
    }

    fn at<T>(&self, part: Part, read: impl FnOnce() -> T) -> T {
        self.path.borrow_mut().push(part);
        let result = read();
        self.path.borrow_mut().pop();
        result
    }

    /// The JSON pointer of the value being read, written only when a
    /// problem needs it (not for each of millions of items).
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        for part in self.path.borrow().iter() {
            pointer.push('/');
            match part {
                Part::Name(name) => push_escaped(&mut pointer, name),
                Part::Index(i) => write!(pointer, "{i}").expect("writing to a String"),
            }
        }
        pointer
    }

    /// Checks a value against a validator for all of it. A small value
    /// lists its problems; a large one only its first, since `jsonschema`
    /// would collect all of them at once.
    fn check_whole(&self, validator: &Validator, value: &Value) {
        if validator.is_valid(value) {
            return;
        }
        if node_count_exceeds(value, SMALL_VALUE) {
            if let Err(error) = validator.validate(value) {
                self.add(&error);
            }
            let mut found = self.found.borrow_mut();
            if found.rest == Rest::Nothing {
                found.rest = Rest::Unchecked;
            }
            return;
        }
        for error in validator.iter_errors(value) {
            self.add(&error);
            if self.stopped() {
                break;
            }
        }
    }

    /// Checks a node's own keywords (its members are checked already), so
    /// there are at most a few problems whatever its size.
    fn check_node(&self, shallow: &Validator, value: &Value) {
        if shallow.is_valid(value) {
            return;
        }
        for error in shallow.iter_errors(value) {
            self.add(&error);
            if self.stopped() {
                break;
            }
        }
    }
}

/// One step of the path to the value being read.
enum Part {
    Name(String),
    Index(usize),
}

fn push_escaped(path: &mut String, segment: &str) {
    for c in segment.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// Whether `value` has more than `limit` nodes (counting stops there).
fn node_count_exceeds(value: &Value, limit: usize) -> bool {
    fn count(value: &Value, left: &mut usize) -> bool {
        if *left == 0 {
            return true;
        }
        *left -= 1;
        match value {
            Value::Array(items) => items.iter().any(|v| count(v, left)),
            Value::Object(members) => members.values().any(|v| count(v, left)),
            _ => false,
        }
    }
    let mut left = limit;
    count(value, &mut left)
}

/// Reads one value by its plan. `None` once reading has stopped.
#[derive(Clone, Copy)]
struct Seed<'a> {
    walk: &'a Walk,
    /// `None`: unconstrained, read as is.
    node: Option<&'a Node>,
    /// A `null` here means "not given": kept out of the checks.
    null_is_absent: bool,
    /// At the root of arguments: the names that may not be dropped as null.
    optional_nulls: Option<&'a Vec<String>>,
    /// Whether the value read is kept; if not, a stand-in is returned
    /// ([`STAND_IN`], or `null` for a `null` that means "not given").
    keep: bool,
}

/// What a value read without keeping it is returned as: not `null`, so
/// that only a real `null` is dropped as "not given".
const STAND_IN: Value = Value::Bool(true);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        if self.walk.stopped() {
            IgnoredAny::deserialize(d)?;
            return Ok(None);
        }
        match self.node {
            None if self.keep => Value::deserialize(d).map(Some),
            None => {
                let null = d.deserialize_any(IsNull)?;
                Ok(Some(if null { Value::Null } else { STAND_IN }))
            }
            Some(Node::Whole(validator, types)) => {
                let value = Value::deserialize(d)?;
                if self.null_is_absent && value.is_null() {
                    return Ok(Some(value));
                }
                if !types.is_some_and(|t| t.admit(&value)) {
                    self.walk.check_whole(validator, &value);
                }
                Ok((!self.walk.stopped()).then(|| self.kept(value)))
            }
            Some(Node::Split(split)) => d.deserialize_any(SplitVisitor { seed: self, split }),
        }
    }
}

impl Seed<'_> {
    fn kept(&self, value: Value) -> Value {
        if self.keep {
            value
        } else {
            STAND_IN
        }
    }
}

/// Skips a value, telling whether it was `null`.
struct IsNull;

impl<'de> Visitor<'de> for IsNull {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_none<E: de::Error>(self) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}

/// Reads a scalar and tells whether `Types` admits it (see
/// [`Types::admit`]), building nothing; anything else is not admitted.
#[derive(Clone, Copy)]
struct Leaf(Types);

impl<'de> DeserializeSeed<'de> for Leaf {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Leaf {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(self.0.null)
    }

    fn visit_none<E: de::Error>(self) -> Result<bool, E> {
        Ok(self.0.null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(self.0.boolean)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(self.0.number || self.0.integer)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(self.0.number || self.0.integer)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        // `1.0` is the validator's to judge as an integer.
        Ok(self.0.number)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<bool, E> {
        Ok(self.0.string)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}

struct SplitVisitor<'a> {
    seed: Seed<'a>,
    split: &'a Split,
}

impl SplitVisitor<'_> {
    /// A node whose members are read: its own keywords are checked last.
    fn finish(&self, value: Value) -> Option<Value> {
        let walk = self.seed.walk;
        if !walk.stopped() {
            walk.check_node(&self.split.shallow, &value);
        }
        (!walk.stopped()).then(|| self.seed.kept(value))
    }

    fn child<'s>(&'s self, node: Option<&'s Node>, null_is_absent: bool) -> Seed<'s> {
        Seed {
            walk: self.seed.walk,
            node,
            null_is_absent,
            optional_nulls: None,
            keep: self.seed.keep || self.split.needs_members,
        }
    }

    /// Whether members and items are kept (else stand-ins are).
    fn keeps_members(&self) -> bool {
        self.seed.keep || self.split.needs_members
    }
}

impl<'de> Visitor<'de> for SplitVisitor<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<Value>, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            if members.contains_key(&name) {
                self.seed.walk.repeated_name.set(true);
            }
            let droppable = self
                .seed
                .optional_nulls
                .is_some_and(|required| !required.contains(&name));
            let seed = self.child(self.split.member(&name), droppable);
            let value = self
                .seed
                .walk
                .at_member(&name, || map.next_value_seed(seed))?;
            match value {
                None => {
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    return Ok(None);
                }
                Some(Value::Null) if droppable => {}
                Some(value) => {
                    members.insert(name, value);
                }
            }
        }
        Ok(self.finish(Value::Object(members)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Value>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        let item_plan = self.split.items.as_deref();
        let keep = self.keeps_members();
        if let (Some(Node::Whole(_, Some(types))), false) = (item_plan, keep) {
            // Leaves of a plain `type` (millions of numbers, say): judged
            // as they are read, no value built. One the types do not admit
            // stops the check, and the caller reads the text whole, which
            // words the problem.
            while let Some(admitted) = seq.next_element_seed(Leaf(*types))? {
                if !admitted {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(None);
                }
                if items.len() < self.split.stand_in_items {
                    items.push(STAND_IN);
                }
            }
            return Ok(self.finish(Value::Array(items)));
        }
        let mut index = 0;
        loop {
            let seed = self.child(item_plan, false);
            match self
                .seed
                .walk
                .at_item(index, || seq.next_element_seed(seed))?
            {
                None => break,
                Some(None) => {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(None);
                }
                Some(Some(item)) => {
                    if keep || items.len() < self.split.stand_in_items {
                        items.push(item);
                    }
                }
            }
            index += 1;
        }
        Ok(self.finish(Value::Array(items)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<Value>, E> {
        Ok(self.finish(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<Value>, E> {
        Ok(self.finish(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<Value>, E> {
        Ok(self.finish(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<Value>, E> {
        let number = serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number);
        Ok(self.finish(number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<Value>, E> {
        Ok(self.finish(Value::from(v)))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Option<Value>, E> {
        Ok(self.finish(Value::String(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<Value>, E> {
        if self.seed.null_is_absent {
            return Ok(Some(Value::Null));
        }
        Ok(self.finish(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<Value>, E> {
        self.visit_unit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `check` must agree with `read` on every value: passing exactly when
    /// `read` gives a value, with the same problems otherwise.
    fn agree(schema: Value, texts: &[&str]) {
        let checker = Checker::compile(&schema).unwrap();
        for text in texts {
            for drop in [false, true] {
                let read = checker.read(text, drop).map(|_| ());
                assert_eq!(checker.check(text, drop), read, "{schema} on {text}");
            }
        }
    }

    #[test]
    fn checking_without_a_tree_agrees_with_reading() {
        let numbers = json!({"type":"object","properties":{
            "values":{"type":"array","items":{"type":"number"},"minItems":2,"maxItems":4}},
            "required":["values"],"additionalProperties":false});
        agree(
            numbers,
            &[
                r#"{"values":[1,2]}"#,
                r#"{"values":[1]}"#,
                r#"{"values":[1,2,3,4,5]}"#,
                r#"{"values":[1,"a",3]}"#,
                r#"{"values":[1,2],"extra":null}"#,
                r#"{"values":[1,2],"extra":3}"#,
                r#"{}"#,
                r#"{"values":null}"#,
                r#"{"values":[1,2"#,
                r#"{"values":[1,2],"values":[3]}"#,
            ],
        );
        // Leaves of a plain `type`, judged as they are read.
        let leaves = json!({"type":"object","properties":{
            "ints":{"type":"array","items":{"type":"integer"},"minItems":2},
            "strs":{"type":"array","items":{"type":["string","null"]}},
            "flags":{"type":"array","items":{"type":"boolean","description":"d"}}}});
        agree(
            leaves,
            &[
                r#"{"ints":[1,2,-3],"strs":["a",null,"\u00e9\""],"flags":[true,false]}"#,
                r#"{"ints":[1.0,2]}"#,
                r#"{"ints":[1.5,2]}"#,
                r#"{"ints":[1]}"#,
                r#"{"ints":[1,"2"]}"#,
                r#"{"ints":[1,[2]]}"#,
                r#"{"ints":[1,{"a":2}]}"#,
                r#"{"ints":[1,null]}"#,
                r#"{"strs":[1]}"#,
                r#"{"strs":[]}"#,
                r#"{"flags":[true,0]}"#,
                r#"{"flags":[true,"#,
            ],
        );
        let objects = json!({"type":"object","properties":{
            "rows":{"type":"array","uniqueItems":true,"items":{"type":"object",
                "properties":{"x":{"type":["integer","null"]},"s":{"type":"string","enum":["a","b"]}},
                "required":["x"],"additionalProperties":false}},
            "open":{}, "tag":{"const":"t"}}});
        agree(
            objects,
            &[
                r#"{"rows":[{"x":1},{"x":null,"s":"a"}]}"#,
                r#"{"rows":[{"x":1},{"x":1}]}"#,
                r#"{"rows":[{"x":1.5}]}"#,
                r#"{"rows":[{"x":1.0}]}"#,
                r#"{"rows":[{"s":"a"}]}"#,
                r#"{"rows":[{"x":1,"y":2}]}"#,
                r#"{"rows":[{"x":1,"s":"c"}]}"#,
                r#"{"open":[1,{"a":null}],"tag":"t"}"#,
                r#"{"tag":"u"}"#,
                r#"{"open":null}"#,
            ],
        );
    }
}
