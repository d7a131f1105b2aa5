//! The MCP Apps extension, `io.modelcontextprotocol/ui` (SEP-1865, the
//! ext-apps specification of 2026-01-26): which clients declared it, and
//! the tool definitions each kind of client is sent.
//!
//! A tool shows its results in an app when its `_meta.ui.resourceUri`
//! names a `ui://` resource (an HTML document of MIME type
//! [`MIME_TYPE`]), and `_meta.ui.visibility` says whether the model, the
//! app or both may call it. The extension owns `_meta.ui` and its
//! deprecated flat form `_meta["ui/resourceUri"]`: a client that did not
//! declare the extension is sent each tool without those keys, and not the
//! tools only an app may call (it shows no apps), so it sees the plain
//! tools it would see from a server without apps.
//!
//! The extension needs `_meta` on tools and on resource contents, which the
//! protocol has from 2025-06-18 on: on earlier revisions it is not offered.

use crate::protocol::revision::Revision;
use crate::protocol::tool::ToolDef;
use serde_json::{Map, Value};

/// The extension's identifier in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an app's HTML document (`resources/read`).
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The tool `_meta` key the extension owns.
const UI_KEY: &str = "ui";
/// Its deprecated flat form of `_meta.ui.resourceUri`.
const FLAT_URI_KEY: &str = "ui/resourceUri";

/// Whether these client capabilities declare the extension with the app
/// MIME type among its `mimeTypes` (the extension's required setting).
pub fn declared(caps: &Value) -> bool {
    caps.get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .and_then(|settings| settings.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}

/// Whether the extension can be offered to a client speaking `rev`.
pub fn offered_on(rev: Revision) -> bool {
    rev.has_structured_output()
}

/// The tool's `_meta.ui`, if it has one.
pub fn tool_ui(def: &ToolDef) -> Option<&Map<String, Value>> {
    def.meta.as_ref()?.get(UI_KEY)?.as_object()
}

/// Whether the tool takes part in the extension: it has a `_meta.ui`.
pub fn has_ui(def: &ToolDef) -> bool {
    tool_ui(def).is_some()
}

/// Whether only an app may call the tool: its visibility leaves out the
/// model (the default, when none is given, is both).
pub fn app_only(def: &ToolDef) -> bool {
    tool_ui(def)
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array)
        .is_some_and(|v| !v.iter().any(|x| x.as_str() == Some("model")))
}

/// The tool as a client that declared the extension sees it on `rev`
/// (`None`: not listed).
pub fn with_ui(def: &ToolDef, rev: Revision) -> Option<Value> {
    if offered_on(rev) {
        Some(def.to_wire(rev))
    } else {
        without_ui(def, rev)
    }
}

/// The tool as a client without the extension sees it: `None` when only an
/// app may call it, else its definition without the extension's keys.
pub fn without_ui(def: &ToolDef, rev: Revision) -> Option<Value> {
    if app_only(def) {
        return None;
    }
    let mut tool = def.to_wire(rev);
    if let Some(map) = tool.as_object_mut() {
        let emptied = map
            .get_mut("_meta")
            .and_then(Value::as_object_mut)
            .map(|meta| {
                meta.shift_remove(UI_KEY);
                meta.shift_remove(FLAT_URI_KEY);
                meta.is_empty()
            });
        if emptied == Some(true) {
            map.shift_remove("_meta");
        }
    }
    Some(tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(meta: Value) -> ToolDef {
        ToolDef {
            name: "chart".into(),
            input_schema: json!({"type": "object"}),
            meta: meta.as_object().cloned(),
            ..ToolDef::default()
        }
    }

    #[test]
    fn the_extension_is_declared_with_the_app_mime_type_only() {
        let with = |settings: Value| json!({"extensions": {EXTENSION: settings}});
        assert!(declared(&with(json!({"mimeTypes": [MIME_TYPE]}))));
        assert!(declared(&with(
            json!({"mimeTypes": ["text/plain", MIME_TYPE]})
        )));
        assert!(!declared(&with(json!({}))));
        assert!(!declared(&with(json!({"mimeTypes": ["text/html"]}))));
        assert!(!declared(&with(json!({"mimeTypes": MIME_TYPE}))));
        assert!(!declared(&json!({"extensions": {}})));
        assert!(!declared(
            &json!({"experimental": {EXTENSION: {"mimeTypes": [MIME_TYPE]}}})
        ));
        assert!(!declared(&Value::Null));
    }

    #[test]
    fn clients_without_the_extension_get_the_plain_tool() {
        let def = tool(json!({
            "ui": {"resourceUri": "ui://chart/app.html"},
            "ui/resourceUri": "ui://chart/app.html",
            "owner": "me"
        }));
        let rev = Revision::V2025_11_25;
        let plain = without_ui(&def, rev).unwrap();
        assert_eq!(plain["_meta"], json!({"owner": "me"}));
        assert_eq!(
            with_ui(&def, rev).unwrap()["_meta"]["ui"]["resourceUri"],
            "ui://chart/app.html"
        );
        let only_ui = tool(json!({"ui": {"resourceUri": "ui://chart/app.html"}}));
        assert!(without_ui(&only_ui, rev).unwrap().get("_meta").is_none());
        let no_meta = ToolDef {
            meta: None,
            ..only_ui.clone()
        };
        assert_eq!(without_ui(&only_ui, rev).unwrap(), no_meta.to_wire(rev));
    }

    #[test]
    fn app_only_tools_are_left_out_for_clients_without_the_extension() {
        let rev = Revision::V2026_07_28;
        let app = tool(json!({"ui": {"visibility": ["app"]}}));
        assert!(app_only(&app) && without_ui(&app, rev).is_none());
        assert_eq!(
            with_ui(&app, rev).unwrap()["_meta"]["ui"]["visibility"],
            json!(["app"])
        );
        for shown in [
            json!({"ui": {"visibility": ["model"]}}),
            json!({"ui": {"visibility": ["app", "model"]}}),
            json!({"ui": {}}),
        ] {
            assert!(!app_only(&tool(shown.clone())), "{shown}");
        }
    }

    #[test]
    fn revisions_without_meta_are_not_offered_the_extension() {
        let def = tool(json!({"ui": {"resourceUri": "ui://chart/app.html"}}));
        for rev in [Revision::V2024_11_05, Revision::V2025_03_26] {
            assert!(!offered_on(rev));
            assert_eq!(with_ui(&def, rev), without_ui(&def, rev));
        }
        for rev in [
            Revision::V2025_06_18,
            Revision::V2025_11_25,
            Revision::V2026_07_28,
        ] {
            assert!(offered_on(rev));
        }
    }
}
