//! R values to JSON text, in one pass, written straight into a string.
//!
//! The mapping follows `jsonlite::toJSON(auto_unbox = TRUE, null = "null",
//! na = "null")` at full precision: shortest round-trip doubles, `NA`/`NaN`/
//! `Inf` as `null`, length-1 vectors as scalars (`I()` keeps an array),
//! factors as labels, data frames as arrays of row objects, matrices
//! row-major, dates and times as ISO 8601, raw vectors as base64, named lists
//! as objects. Values JSON cannot hold (environments, functions, external
//! pointers, calls) are an error that names where they sit, e.g. `$model$env`.
//!
//! Atomic vectors are written element by element in [`atoms`], dates and
//! times in [`time`]. The writer itself, plain and schema-directed, is one
//! module because the two call each other (a data frame is written as rows
//! directed by an empty schema; parts a schema leaves open, plainly).

mod atoms;
mod conforms;
mod time;

pub use conforms::conforms;

use crate::output::{Field, Kind, Node, Object};
use crate::rvalue::{describe_type, element, RValue};
use atoms::{is_plain_vector, write_str, Atomic};
use base64::Engine as _;
use extendr_ffi::{INTEGER, RAW, SEXPTYPE};
use std::fmt::Write as _;
use time::posixlt_texts;

/// Lists nested deeper than this are refused (R itself allows more, but no
/// client wants it and it keeps the recursion bounded).
const MAX_DEPTH: usize = 512;

/// A failed conversion: what could not be written, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct MapError {
    pub problem: String,
    pub path: String,
    /// The value does not fit the output schema that directs it (rather
    /// than having no JSON form at all).
    pub mismatch: bool,
    /// The innermost classed object (such as an `lm` fit) the value sits
    /// in or is: its first class and its path. Such objects are what users
    /// return whole when a part would do, so errors can say which parts.
    pub object: Option<(String, String)>,
}

impl std::fmt::Display for MapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.mismatch, self.path.is_empty()) {
            (true, true) => write!(f, "the result {}", self.problem),
            (true, false) => write!(f, "field `{}` {}", self.path, self.problem),
            (false, true) => f.write_str(&self.problem),
            (false, false) => write!(f, "{} (at `{}`)", self.problem, self.path),
        }
    }
}

/// Serialises an R value as compact JSON.
pub fn to_json(x: RValue) -> Result<String, MapError> {
    let mut w = Writer {
        out: String::new(),
        parts: None,
        path: Vec::new(),
        objects: Vec::new(),
    };
    w.value(x)?;
    Ok(w.out)
}

/// Serialises a structured result as its output schema directs (see
/// [`crate::output`]): where the schema says array, a vector of any
/// length is one; where it says a single value, a vector of another length
/// is an error naming the field; `NA` and `NULL` are `null` where the
/// schema allows it, a field left out where the field is optional, and an
/// error naming the field and the fix elsewhere. Parts the schema leaves
/// open are written as [`to_json`] writes them.
pub fn to_json_directed(x: RValue, plan: &Node) -> Result<String, MapError> {
    let mut w = Writer {
        out: String::new(),
        parts: None,
        path: Vec::new(),
        objects: Vec::new(),
    };
    w.directed_in(x, plan, Place::Root)?;
    Ok(w.out)
}

/// Tables smaller than this many cells are written whole: the overlap
/// [`to_json_in_parts`] buys is worth its hand-overs only for large ones.
const STREAMED_CELLS: usize = 10_000;

/// Bytes of rows handed over at a time by [`to_json_in_parts`].
const PART_BYTES: usize = 256 * 1024;

/// Whether [`to_json_in_parts`] can write `x` under `plan`: a large data
/// frame written as rows that certainly conforms to the schema (see
/// [`conforms`]) and whose every cell is written without a possible error
/// (atomic columns, no `NA` where the schema refuses one). Only for such a
/// value is the JSON known to come out whole before any of it is written,
/// which a response sent while it is written needs.
pub fn streamable(x: RValue, plan: &Node) -> bool {
    let Kind::Array(items) = &plan.kind else {
        return false;
    };
    let Kind::Object(object) = &items.kind else {
        return false;
    };
    let ok = x.kind() == SEXPTYPE::VECSXP
        && x.inherits("data.frame")
        && x.len() * data_frame_rows(x) >= STREAMED_CELLS
        && conforms(x, plan);
    if !ok {
        return false;
    }
    let names = x.names();
    let mut seen = std::collections::HashSet::new();
    (0..x.len()).all(|j| {
        let Some(key) = names.string(j).filter(|k| !k.is_empty()) else {
            return false;
        };
        let fresh = seen.insert(key.clone().into_owned());
        let Column::Atomic(column) = Column::new(element(x, j)) else {
            return false;
        };
        let refuses_missing = match object.field(&key).map(|f| (f, &f.node.kind)) {
            None => false,
            Some((field, Kind::Scalar(_))) => missing_in(field) == Missing::Refused,
            Some((_, Kind::Array(items))) => {
                !items.nullable && matches!(items.kind, Kind::Scalar(_))
            }
            Some(_) => false,
        };
        fresh && !(refuses_missing && (0..column.len()).any(|i| column.is_missing(i)))
    })
}

/// Writes a [`streamable`] value as [`to_json_directed`] would, handing
/// each finished part of about [`PART_BYTES`] to `send` as soon as it is
/// written, the last one included. False if `send` said nobody reads any
/// more, where writing stopped.
pub fn to_json_in_parts(x: RValue, plan: &Node, send: &mut dyn FnMut(String) -> bool) -> bool {
    let mut w = Writer {
        out: String::with_capacity(PART_BYTES + PART_BYTES / 8),
        parts: Some(send),
        path: Vec::new(),
        objects: Vec::new(),
    };
    let written = w.directed_in(x, plan, Place::Root);
    debug_assert!(written.is_ok(), "a streamable value failed: {written:?}");
    let rest = std::mem::take(&mut w.out);
    w.parts.as_mut().is_some_and(|send| send(rest))
}

/// Where a value sits, for the advice on a missing one.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// The whole result.
    Root,
    /// A field of an object: required, or it could be left out.
    Field,
    /// An element of an array.
    Item,
}

/// What becomes of a missing value (`NA`) in a field or column.
#[derive(Clone, Copy, PartialEq)]
enum Missing {
    /// `null`: the schema allows it.
    Null,
    /// Left out: the field is optional.
    LeftOut,
    /// An error: the field is required and may not be `null`.
    Refused,
}

fn missing_in(field: &Field) -> Missing {
    if field.node.nullable {
        Missing::Null
    } else if !field.required {
        Missing::LeftOut
    } else {
        Missing::Refused
    }
}

/// How a data frame column becomes a field of each row object.
enum Cells<'a> {
    /// As without a schema.
    Plain,
    /// One value each, `NA` as `missing` says.
    Single(Missing),
    /// An array of one value each (an atomic column where the schema wants
    /// an array per row).
    Wrapped(&'a Node),
    /// Each element directed (a list column).
    Directed(&'a Field),
}

enum Segment {
    Name(String),
    Index(usize),
}

struct Writer<'a> {
    out: String,
    /// Where finished parts of a table's rows go as they are written (see
    /// [`to_json_in_parts`]); false back once nobody reads them.
    parts: Option<&'a mut dyn FnMut(String) -> bool>,
    path: Vec<Segment>,
    /// The classed lists being written, outermost first: the depth of the
    /// path where each sits, and its first class.
    objects: Vec<(usize, String)>,
}

impl Writer<'_> {
    fn error(&self, problem: String) -> MapError {
        let object = self
            .objects
            .last()
            .map(|(depth, class)| (class.clone(), self.path_text(*depth)));
        MapError {
            problem,
            path: self.path_text(self.path.len()),
            mismatch: false,
            object,
        }
    }

    /// The value here does not fit the output schema.
    fn mismatch(&self, problem: String) -> MapError {
        MapError {
            problem,
            path: self.path_text(self.path.len()),
            mismatch: true,
            object: None,
        }
    }

    /// The first `depth` segments of the path, as R would index them.
    fn path_text(&self, depth: usize) -> String {
        let mut path = String::new();
        for seg in &self.path[..depth] {
            match seg {
                Segment::Name(n) => {
                    path.push('$');
                    path.push_str(n);
                }
                Segment::Index(i) => {
                    let _ = write!(path, "[[{}]]", i + 1);
                }
            }
        }
        path
    }

    /// Notes a classed value being written (popped once it is written).
    fn enter_object(&mut self, x: RValue) -> bool {
        let class = x.class();
        match (class.kind() == SEXPTYPE::STRSXP && class.len() > 0)
            .then(|| class.string(0))
            .flatten()
        {
            Some(first) => {
                self.objects.push((self.path.len(), first.into_owned()));
                true
            }
            None => false,
        }
    }

    /// Runs `write` with `segment` on the path.
    fn at(
        &mut self,
        segment: Segment,
        write: impl FnOnce(&mut Writer) -> Result<(), MapError>,
    ) -> Result<(), MapError> {
        self.path.push(segment);
        let result = write(self);
        self.path.pop();
        result
    }

    /// An `NA` (or `NaN`, `Inf`) where `node` does not allow `null`.
    fn refused_missing(&self, what: &str, node: &Node, place: Place) -> MapError {
        let fix = node.nullable_helper();
        let advice = match place {
            Place::Field => format!(
                "declare the field nullable ({fix}) to send null, or optional (`required = \
                 FALSE`) to leave it out"
            ),
            Place::Item => format!("declare the items nullable (type_array({fix}))"),
            Place::Root => format!("declare it nullable ({fix})"),
        };
        self.mismatch(format!(
            "is {what}, which is sent as null, but the output schema does not allow null \
             there: {advice}, or replace the missing values"
        ))
    }

    /// The value as `node` directs (see [`to_json_directed`]).
    fn directed(&mut self, x: RValue, node: &Node) -> Result<(), MapError> {
        if self.path.len() > MAX_DEPTH {
            return Err(self.error(format!("lists nested more than {MAX_DEPTH} deep")));
        }
        if x.is_null() {
            return self.directed_null(node, Place::Root);
        }
        match &node.kind {
            Kind::Any => self.value(x),
            Kind::Scalar(scalar) => {
                if !is_plain_vector(x) {
                    return self.value(x);
                }
                let n = x.len();
                if n != 1 {
                    let what = scalar.described();
                    let problem = if n == 0 {
                        format!(
                            "is a zero-length vector where the output schema expects {what}: \
                             return one value (or NA, declaring the field nullable)"
                        )
                    } else {
                        format!(
                            "has {n} values where the output schema expects one ({what}): \
                             return a single value, or declare an array with type_array()"
                        )
                    };
                    return Err(self.mismatch(problem));
                }
                let atomic = Atomic::new(x);
                if !node.nullable && atomic.is_missing(0) {
                    return Err(self.refused_missing(atomic.missing_name(0), node, Place::Root));
                }
                atomic.write(0, &mut self.out);
                Ok(())
            }
            Kind::Array(items) => self.directed_array(x, items),
            Kind::Object(object) => self.directed_object(x, object),
        }
    }

    /// `NULL` where `node` stands: `[]` for an array, `null` where allowed.
    fn directed_null(&mut self, node: &Node, place: Place) -> Result<(), MapError> {
        if matches!(node.kind, Kind::Array(_)) && !node.nullable {
            self.out.push_str("[]");
        } else if node.nullable {
            self.out.push_str("null");
        } else {
            let fix = node.nullable_helper();
            let advice = if place == Place::Field {
                format!("return a value, or declare the field nullable ({fix}) or optional (`required = FALSE`)")
            } else {
                format!("return a value, or declare it nullable ({fix})")
            };
            return Err(self.mismatch(format!(
                "is NULL, but the output schema does not allow null there: {advice}"
            )));
        }
        Ok(())
    }

    /// Where the schema says array: a vector of any length is one.
    fn directed_array(&mut self, x: RValue, items: &Node) -> Result<(), MapError> {
        if is_plain_vector(x) {
            let atomic = Atomic::new(x);
            let check = !items.nullable && matches!(items.kind, Kind::Scalar(_));
            self.out.push('[');
            for i in 0..atomic.len() {
                if i > 0 {
                    self.out.push(',');
                }
                if check && atomic.is_missing(i) {
                    self.path.push(Segment::Index(i));
                    let e = self.refused_missing(atomic.missing_name(i), items, Place::Item);
                    self.path.pop();
                    return Err(e);
                }
                atomic.write(i, &mut self.out);
            }
            self.out.push(']');
            return Ok(());
        }
        if x.kind() != SEXPTYPE::VECSXP || x.inherits("POSIXlt") {
            return self.value(x);
        }
        if x.inherits("data.frame") {
            return match &items.kind {
                Kind::Object(object) => self.directed_rows(x, object),
                _ => self.value(x),
            };
        }
        if !x.names().is_null() {
            return self.value(x);
        }
        self.out.push('[');
        for i in 0..x.len() {
            if i > 0 {
                self.out.push(',');
            }
            self.at(Segment::Index(i), |w| {
                let item = element(x, i);
                if item.is_null() {
                    w.directed_null(items, Place::Item)
                } else {
                    w.directed_in(item, items, Place::Item)
                }
            })?;
        }
        self.out.push(']');
        Ok(())
    }

    /// Where the schema says object: a named list, each declared field as
    /// its schema directs.
    fn directed_object(&mut self, x: RValue, object: &Object) -> Result<(), MapError> {
        if x.kind() != SEXPTYPE::VECSXP || x.inherits("data.frame") || x.inherits("POSIXlt") {
            return self.value(x);
        }
        let names = x.names();
        if names.is_null() {
            if x.len() == 0 {
                // `list()`, R's empty list, is the empty object here.
                self.out.push_str("{}");
                return Ok(());
            }
            return self.value(x);
        }
        let keys = self.object_keys(names)?;
        self.out.push('{');
        let mut first = true;
        for (i, key) in keys.iter().enumerate() {
            let member = element(x, i);
            let field = object.field(key);
            if let Some(field) = field {
                if member.is_null() && !field.required {
                    continue;
                }
                if missing_in(field) == Missing::LeftOut
                    && matches!(field.node.kind, Kind::Scalar(_))
                    && is_plain_vector(member)
                    && member.len() == 1
                    && Atomic::new(member).is_missing(0)
                {
                    continue;
                }
            }
            if !first {
                self.out.push(',');
            }
            first = false;
            write_str(&mut self.out, key);
            self.out.push(':');
            self.at(Segment::Name(key.clone()), |w| match field {
                None => w.value(member),
                Some(field) if member.is_null() => w.directed_null(&field.node, Place::Field),
                Some(field) => w.directed_in(member, &field.node, Place::Field),
            })?;
        }
        self.out.push('}');
        Ok(())
    }

    /// A value as its node directs, a missing single value refused in the
    /// words that fit where it stands.
    fn directed_in(&mut self, x: RValue, node: &Node, place: Place) -> Result<(), MapError> {
        if let (Kind::Scalar(_), false) = (&node.kind, node.nullable) {
            if is_plain_vector(x) && x.len() == 1 {
                let atomic = Atomic::new(x);
                if atomic.is_missing(0) {
                    return Err(self.refused_missing(atomic.missing_name(0), node, place));
                }
            }
        }
        self.directed(x, node)
    }

    /// A data frame as an array of row objects, each column as its field in
    /// `object` directs (a column `object` does not declare as without a
    /// schema). Columns are classified once; rows are then written cell by
    /// cell.
    fn directed_rows(&mut self, x: RValue, object: &Object) -> Result<(), MapError> {
        let ncol = x.len();
        let nrow = data_frame_rows(x);
        let keys = self.object_keys(x.names())?;
        let columns: Vec<Column> = (0..ncol).map(|j| Column::new(element(x, j))).collect();
        let cells: Vec<Cells> = columns
            .iter()
            .zip(&keys)
            .map(|(column, key)| match (column, object.field(key)) {
                (_, None) => Cells::Plain,
                (Column::Atomic(_), Some(field)) => match &field.node.kind {
                    Kind::Scalar(_) => Cells::Single(missing_in(field)),
                    Kind::Array(items) => Cells::Wrapped(items),
                    _ => Cells::Plain,
                },
                (Column::Other(col), Some(field)) => {
                    if col.kind() == SEXPTYPE::VECSXP && !col.inherits("data.frame") {
                        Cells::Directed(field)
                    } else {
                        Cells::Plain
                    }
                }
            })
            .collect();
        let prefixes: Vec<String> = keys
            .iter()
            .map(|k| {
                let mut p = String::with_capacity(k.len() + 3);
                write_str(&mut p, k);
                p.push(':');
                p
            })
            .collect();
        // Only the table at the root is handed over in parts.
        let in_parts = self.parts.is_some() && self.path.is_empty();
        if !in_parts {
            self.out.reserve(nrow * (ncol * 12 + 2));
        }
        let begin = self.out.len();
        self.out.push('[');
        for i in 0..nrow {
            if in_parts && self.out.len() >= PART_BYTES && !self.hand_over() {
                return Ok(());
            }
            if i == SAMPLE_ROWS && nrow > 2 * SAMPLE_ROWS && !in_parts {
                // Room for the rest as the first rows measure them (and a
                // little more), so a large table is not copied as it grows.
                let per_row = (self.out.len() - begin) / SAMPLE_ROWS;
                self.out.reserve((nrow - i) * (per_row + per_row / 16 + 1));
            }
            if i > 0 {
                self.out.push(',');
            }
            self.out.push('{');
            let mut first = true;
            for (j, column) in columns.iter().enumerate() {
                if let (Cells::Single(missing), Column::Atomic(a)) = (&cells[j], column) {
                    if *missing != Missing::Null && a.is_missing(i) {
                        if *missing == Missing::LeftOut {
                            continue;
                        }
                        let field = object.field(&keys[j]).expect("a declared column");
                        self.path.push(Segment::Name(keys[j].clone()));
                        self.path.push(Segment::Index(i));
                        let e = self.refused_missing(a.missing_name(i), &field.node, Place::Field);
                        self.path.truncate(self.path.len() - 2);
                        return Err(e);
                    }
                }
                if !first {
                    self.out.push(',');
                }
                first = false;
                self.out.push_str(&prefixes[j]);
                match (&cells[j], column) {
                    (Cells::Single(_), Column::Atomic(a)) => a.write(i, &mut self.out),
                    (Cells::Wrapped(items), Column::Atomic(a)) => {
                        if !items.nullable
                            && matches!(items.kind, Kind::Scalar(_))
                            && a.is_missing(i)
                        {
                            self.path.push(Segment::Name(keys[j].clone()));
                            self.path.push(Segment::Index(i));
                            let e = self.refused_missing(a.missing_name(i), items, Place::Item);
                            self.path.truncate(self.path.len() - 2);
                            return Err(e);
                        }
                        self.out.push('[');
                        a.write(i, &mut self.out);
                        self.out.push(']');
                    }
                    (Cells::Directed(field), Column::Other(col)) => {
                        let cell = element(*col, i);
                        self.path.push(Segment::Name(keys[j].clone()));
                        self.path.push(Segment::Index(i));
                        let written = if cell.is_null() {
                            self.directed_null(&field.node, Place::Field)
                        } else {
                            self.directed_in(cell, &field.node, Place::Field)
                        };
                        self.path.truncate(self.path.len() - 2);
                        written?;
                    }
                    (_, Column::Atomic(a)) => a.write(i, &mut self.out),
                    (_, Column::Other(col)) => {
                        self.path.push(Segment::Name(keys[j].clone()));
                        self.path.push(Segment::Index(i));
                        let written = self.cell(*col, i);
                        self.path.truncate(self.path.len() - 2);
                        written?;
                    }
                }
            }
            self.out.push('}');
        }
        self.out.push(']');
        Ok(())
    }

    /// Hands what is written so far to the parts' receiver; false if it
    /// reads no more.
    fn hand_over(&mut self) -> bool {
        let part = std::mem::replace(
            &mut self.out,
            String::with_capacity(PART_BYTES + PART_BYTES / 8),
        );
        match self.parts.as_mut() {
            Some(send) => send(part),
            None => true,
        }
    }

    fn value(&mut self, x: RValue) -> Result<(), MapError> {
        if self.path.len() > MAX_DEPTH {
            return Err(self.error(format!("lists nested more than {MAX_DEPTH} deep")));
        }
        match x.kind() {
            SEXPTYPE::NILSXP => {
                self.out.push_str("null");
                Ok(())
            }
            SEXPTYPE::VECSXP => self.list(x),
            SEXPTYPE::RAWSXP => {
                // SAFETY: RAW of a RAWSXP points at its len() bytes.
                let bytes = unsafe { std::slice::from_raw_parts(RAW(x.0), x.len()) };
                let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
                write_str(&mut self.out, &encoded);
                Ok(())
            }
            SEXPTYPE::LGLSXP
            | SEXPTYPE::INTSXP
            | SEXPTYPE::REALSXP
            | SEXPTYPE::STRSXP
            | SEXPTYPE::CPLXSXP => {
                if x.inherits("json") && x.kind() == SEXPTYPE::STRSXP && x.len() == 1 {
                    return self.embedded_json(x);
                }
                let atomic = Atomic::new(x);
                let dim = x.dim();
                if dim.kind() == SEXPTYPE::INTSXP && dim.len() >= 2 {
                    // SAFETY: an INTSXP of dim.len() elements.
                    let dims = unsafe { std::slice::from_raw_parts(INTEGER(dim.0), dim.len()) };
                    let dims: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
                    self.array(&atomic, &dims, 0, 0, 1);
                    return Ok(());
                }
                if atomic.len() == 1 && !x.inherits("AsIs") {
                    atomic.write(0, &mut self.out);
                } else {
                    self.out.push('[');
                    for i in 0..atomic.len() {
                        if i > 0 {
                            self.out.push(',');
                        }
                        atomic.write(i, &mut self.out);
                    }
                    self.out.push(']');
                }
                Ok(())
            }
            _ => {
                self.enter_object(x);
                Err(self.error(format!("cannot convert {} to JSON", describe_object(x))))
            }
        }
    }

    /// A `json`-classed string (as `jsonlite::toJSON()` returns) is embedded
    /// as it is, once checked to be JSON.
    fn embedded_json(&mut self, x: RValue) -> Result<(), MapError> {
        let text = x.string(0).unwrap_or_default();
        if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_err() {
            return Err(self.error("a `json` string that is not valid JSON".into()));
        }
        self.out.push_str(text.trim());
        Ok(())
    }

    /// Row-major nesting of an R array: the first dimension is outermost.
    /// `offset` and `stride` locate the current slice in column-major data.
    fn array(
        &mut self,
        atomic: &Atomic,
        dims: &[usize],
        level: usize,
        offset: usize,
        stride: usize,
    ) {
        let n = dims[level];
        self.out.push('[');
        for i in 0..n {
            if i > 0 {
                self.out.push(',');
            }
            let at = offset + i * stride;
            if level + 1 == dims.len() {
                atomic.write(at, &mut self.out);
            } else {
                self.array(atomic, dims, level + 1, at, stride * n);
            }
        }
        self.out.push(']');
    }

    fn list(&mut self, x: RValue) -> Result<(), MapError> {
        if x.inherits("data.frame") {
            return self.data_frame(x);
        }
        if x.inherits("POSIXlt") {
            return self.posixlt(x);
        }
        let entered = self.enter_object(x);
        let written = self.plain_list(x);
        if entered {
            self.objects.pop();
        }
        written
    }

    fn plain_list(&mut self, x: RValue) -> Result<(), MapError> {
        let names = x.names();
        if names.is_null() {
            self.out.push('[');
            for i in 0..x.len() {
                if i > 0 {
                    self.out.push(',');
                }
                self.path.push(Segment::Index(i));
                self.value(element(x, i))?;
                self.path.pop();
            }
            self.out.push(']');
            return Ok(());
        }
        let keys = self.object_keys(names)?;
        self.out.push('{');
        for (i, key) in keys.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            write_str(&mut self.out, key);
            self.out.push(':');
            self.path.push(Segment::Name(key.clone()));
            self.value(element(x, i))?;
            self.path.pop();
        }
        self.out.push('}');
        Ok(())
    }

    /// Keys of a named list: every name present, non-empty and unique
    /// (jsonlite would invent keys for the missing ones).
    fn object_keys(&self, names: RValue) -> Result<Vec<String>, MapError> {
        let mut keys: Vec<String> = Vec::with_capacity(names.len());
        let mut seen = std::collections::HashSet::with_capacity(names.len());
        for i in 0..names.len() {
            let key = match names.string(i) {
                Some(k) if !k.is_empty() => k.into_owned(),
                _ => {
                    return Err(self.error(format!(
                        "element {} of a named list has no name; name every element or none",
                        i + 1
                    )))
                }
            };
            if !seen.insert(key.clone()) {
                return Err(self.error(format!("the name `{key}` is used twice in one list")));
            }
            keys.push(key);
        }
        Ok(keys)
    }

    /// An array of row objects; `NA` cells are kept as `null`.
    fn data_frame(&mut self, x: RValue) -> Result<(), MapError> {
        self.directed_rows(x, &Object::default())
    }

    /// Row `i` of a column that is not a plain atomic vector.
    fn cell(&mut self, col: RValue, i: usize) -> Result<(), MapError> {
        match col.kind() {
            SEXPTYPE::VECSXP if col.inherits("data.frame") => {
                // A nested data frame: its row i as an object.
                let keys = self.object_keys(col.names())?;
                self.out.push('{');
                for (j, key) in keys.iter().enumerate() {
                    if j > 0 {
                        self.out.push(',');
                    }
                    write_str(&mut self.out, key);
                    self.out.push(':');
                    self.cell(element(col, j), i)?;
                }
                self.out.push('}');
                Ok(())
            }
            SEXPTYPE::VECSXP => self.value(element(col, i)),
            _ => {
                // A matrix column: row i of the matrix.
                let atomic = Atomic::new(col);
                let nrow = data_frame_rows_of_matrix(col);
                let ncol = atomic.len().checked_div(nrow).unwrap_or(0);
                self.out.push('[');
                for j in 0..ncol {
                    if j > 0 {
                        self.out.push(',');
                    }
                    atomic.write(i + j * nrow, &mut self.out);
                }
                self.out.push(']');
                Ok(())
            }
        }
    }

    /// POSIXlt holds its fields in a list; each element becomes an ISO string.
    fn posixlt(&mut self, x: RValue) -> Result<(), MapError> {
        let Some(texts) = posixlt_texts(x) else {
            return Err(self.error("a malformed POSIXlt value".into()));
        };
        let boxed = texts.len() != 1 || x.inherits("AsIs");
        if boxed {
            self.out.push('[');
        }
        for (i, text) in texts.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            match text {
                Some(text) => write_str(&mut self.out, text),
                None => self.out.push_str("null"),
            }
        }
        if boxed {
            self.out.push(']');
        }
        Ok(())
    }
}

/// Rows of a data frame written before the room for the rest is reserved.
const SAMPLE_ROWS: usize = 64;

/// The number of rows of a data frame, from its `row.names` (compact or not).
fn data_frame_rows(x: RValue) -> usize {
    // Rf_getAttrib expands compact row names, so the length is the row count.
    x.attr(unsafe { extendr_ffi::R_RowNamesSymbol }).len()
}

fn data_frame_rows_of_matrix(x: RValue) -> usize {
    let dim = x.dim();
    if dim.kind() == SEXPTYPE::INTSXP && !dim.is_null() {
        unsafe { *INTEGER(dim.0) }.max(0) as usize
    } else {
        x.len()
    }
}

enum Column {
    Atomic(Atomic),
    Other(RValue),
}

impl Column {
    fn new(col: RValue) -> Column {
        let atomic_kind = matches!(
            col.kind(),
            SEXPTYPE::LGLSXP
                | SEXPTYPE::INTSXP
                | SEXPTYPE::REALSXP
                | SEXPTYPE::STRSXP
                | SEXPTYPE::CPLXSXP
        );
        if atomic_kind && col.dim().is_null() {
            Column::Atomic(Atomic::new(col))
        } else {
            Column::Other(col)
        }
    }
}

/// What a value that has no JSON form is, for the error: S7 objects (ellmer
/// content among them) by their class, so a stray one is easy to find.
fn describe_object(x: RValue) -> String {
    let class = x.class();
    if x.inherits("S7_object") && class.len() > 0 {
        if let Some(first) = class.string(0) {
            return format!("an S7 object (`{first}`)");
        }
    }
    describe_type(x).to_string()
}
