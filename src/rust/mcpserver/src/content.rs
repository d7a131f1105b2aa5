//! Content blocks (`content_text()`, `content_image()`, ...): the checks
//! their constructors run, and their wire form.
//!
//! A block is checked when it is built and again when a tool returns it, so
//! one that was forged or edited afterwards becomes a tool error, not a bad
//! message.

use crate::check;
use crate::rvalue::{
    element, field, is_json_object, is_non_empty_string, is_single_string, single_number, RValue,
};
use crate::to_json;
use extendr_api::prelude::*;
use extendr_ffi::SEXPTYPE;
use mcp_core::engine::result::{Block, Content, ResourceBody};
use serde_json::{Map, Value};

const INVALID_FIELDS: &str = "A `content_*()` block has invalid canonical fields.";

/// The fields each block type holds, in order.
fn canonical_fields(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "text" => &["type", "text", "annotations", "meta"],
        "image" | "audio" => &["type", "data", "mime_type", "annotations", "meta"],
        "resource_link" => &[
            "type",
            "uri",
            "name",
            "title",
            "description",
            "mime_type",
            "size",
            "annotations",
            "meta",
        ],
        "resource" => &[
            "type",
            "uri",
            "text",
            "blob",
            "mime_type",
            "annotations",
            "meta",
        ],
        _ => return None,
    })
}

/// Checks a block's fields; `NULL` or the error (R raises it).
/// @noRd
#[extendr]
fn check_content_(block: Robj) -> Robj {
    check::outcome(read_block(RValue::of(&block)).map(|_| ()))
}

fn string_field(x: RValue, name: &str) -> Option<String> {
    field(x, name).as_single_string().map(|s| s.into_owned())
}

/// Validates a block in its R form and returns its wire form.
pub fn read_block(x: RValue) -> Result<Block, String> {
    let kind = string_field(x, "type").ok_or(INVALID_FIELDS)?;
    let fields = canonical_fields(&kind).ok_or(INVALID_FIELDS)?;
    let names = x.names();
    let has_fields = names.len() == fields.len()
        && fields
            .iter()
            .all(|f| (0..names.len()).any(|i| names.string(i).as_deref() == Some(*f)));
    if !has_fields {
        return Err(INVALID_FIELDS.into());
    }
    let content = match kind.as_str() {
        "text" => {
            require(
                is_single_string(field(x, "text")),
                "`text` must be a single string.",
            )?;
            Content::Text {
                text: string_field(x, "text").unwrap_or_default(),
            }
        }
        "image" | "audio" => {
            require(
                is_single_string(field(x, "data")),
                "`data` must be a single string.",
            )?;
            check_mime_type(field(x, "mime_type"), true)?;
            let data = string_field(x, "data").unwrap_or_default();
            let mime_type = string_field(x, "mime_type").unwrap_or_default();
            if kind == "image" {
                Content::Image { data, mime_type }
            } else {
                Content::Audio { data, mime_type }
            }
        }
        "resource_link" => {
            require(
                is_non_empty_string(field(x, "uri")),
                "`uri` must be a non-empty string.",
            )?;
            require(
                is_non_empty_string(field(x, "name")),
                "`name` must be a non-empty string.",
            )?;
            optional_string(field(x, "title"), "`title` must be a single string.")?;
            optional_string(
                field(x, "description"),
                "`description` must be a single string.",
            )?;
            check_mime_type(field(x, "mime_type"), false)?;
            let size = field(x, "size");
            let size = if size.is_null() {
                None
            } else {
                match single_number(size) {
                    Some(s) if s >= 0.0 && s.fract() == 0.0 => Some(s as u64),
                    _ => return Err("`size` must be a non-negative whole number or NULL.".into()),
                }
            };
            Content::ResourceLink {
                uri: string_field(x, "uri").unwrap_or_default(),
                name: string_field(x, "name").unwrap_or_default(),
                title: string_field(x, "title"),
                description: string_field(x, "description"),
                mime_type: string_field(x, "mime_type"),
                size,
            }
        }
        _ => {
            require(
                is_non_empty_string(field(x, "uri")),
                "`uri` must be a non-empty string.",
            )?;
            let (text, blob) = (field(x, "text"), field(x, "blob"));
            require(
                text.is_null() != blob.is_null(),
                "Supply exactly one of `text` or `blob`.",
            )?;
            let body = if !text.is_null() {
                require(is_single_string(text), "`text` must be a single string.")?;
                ResourceBody::Text(string_field(x, "text").unwrap_or_default())
            } else {
                require(is_single_string(blob), "`blob` must be a single string.")?;
                ResourceBody::Blob(string_field(x, "blob").unwrap_or_default())
            };
            check_mime_type(field(x, "mime_type"), false)?;
            Content::Resource {
                uri: string_field(x, "uri").unwrap_or_default(),
                mime_type: string_field(x, "mime_type"),
                body,
            }
        }
    };
    let annotations = read_annotations(field(x, "annotations"))?;
    let meta = read_meta(field(x, "meta"))?;
    Ok(Block {
        content,
        annotations,
        meta,
    })
}

fn require(ok: bool, message: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(message.into())
    }
}

fn optional_string(x: RValue, message: &str) -> Result<(), String> {
    require(x.is_null() || is_single_string(x), message)
}

fn check_mime_type(x: RValue, required: bool) -> Result<(), String> {
    if x.is_null() && !required {
        return Ok(());
    }
    require(is_single_string(x), "`mime_type` must be a single string.")?;
    require(
        is_non_empty_string(x),
        "`mime_type` must be a non-empty string.",
    )
}

/// Block annotations: `audience`, `priority` and `last_modified` checked,
/// other keys kept; returned in wire form (`lastModified` last).
fn read_annotations(x: RValue) -> Result<Option<Map<String, Value>>, String> {
    require(
        is_json_object(x),
        "`annotations` must be a named JSON object.",
    )?;
    let names = x.names();
    let mut wire = Map::new();
    let mut last_modified = None;
    for i in 0..x.len() {
        let key = names.string(i).unwrap_or_default().into_owned();
        let value = element(x, i);
        match key.as_str() {
            "lastModified" => {
                return Err(
                    "Use the R-facing annotation name `last_modified`, not `lastModified`.".into(),
                )
            }
            "audience" => {
                let ok = value.kind() == SEXPTYPE::STRSXP
                    && value.len() > 0
                    && (0..value.len())
                        .all(|j| matches!(value.string(j).as_deref(), Some("user" | "assistant")));
                require(
                    ok,
                    "`annotations$audience` must contain only `user` and `assistant`.",
                )?;
                let roles = (0..value.len())
                    .map(|j| Value::from(value.string(j).unwrap_or_default().as_ref()))
                    .collect();
                wire.insert(key, Value::Array(roles));
            }
            "priority" => {
                let p = single_number(value).filter(|p| (0.0..=1.0).contains(p));
                let p = p.ok_or("`annotations$priority` must be a number from 0 to 1.")?;
                wire.insert(key, Value::from(p));
            }
            "last_modified" => {
                let s = value
                    .as_single_string()
                    .ok_or("`annotations$last_modified` must be a single string.")?;
                last_modified = Some(Value::from(s.as_ref()));
            }
            _ => {
                wire.insert(key, json_value(value, "annotations")?);
            }
        }
    }
    if let Some(lm) = last_modified {
        wire.insert("lastModified".into(), lm);
    }
    Ok((!wire.is_empty()).then_some(wire))
}

/// `meta`: a named JSON object, sent as `_meta`.
pub fn read_meta(x: RValue) -> Result<Option<Map<String, Value>>, String> {
    require(is_json_object(x), "`meta` must be a named JSON object.")?;
    match json_value(x, "meta")? {
        Value::Object(map) if !map.is_empty() => Ok(Some(map)),
        _ => Ok(None),
    }
}

/// A value converted for the wire, or the "must be JSON serializable" error.
pub fn json_value(x: RValue, what: &str) -> Result<Value, String> {
    let text =
        to_json::to_json(x).map_err(|e| format!("`{what}` must be JSON serializable: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("`{what}` must be JSON serializable: {e}"))
}

extendr_module! {
    mod content;
    fn check_content_;
}
