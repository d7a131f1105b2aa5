//! List requests when the server has R middleware (`mcp_server(middleware
//! =)`): `tools/list`, `resources/list`, `resources/templates/list` and
//! `prompts/list` then run as a job of the catalog's list handler, so the
//! middleware sees the caller and may filter or reorder the list. The R side
//! answers with the identities of the entries to keep (`{"keep": [...]}`);
//! the entries sent are always the server's own wire forms, so a list can
//! never carry an entry the server does not serve. Without middleware the
//! catalog has no list handler and lists are answered at once, as before.

use super::catalog::ListKind;
use super::handlers::{failure, HandlerCall};
use super::job::{Output, Purpose};
use super::state::Engine;
use super::wire::{invalid_params, single_page};
use crate::engine::result::ToolResult;
use crate::protocol::app;
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::revision::Revision;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// The list methods middleware may see.
pub(super) const LIST_METHODS: &[&str] = &[
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// What a list result holds: its key, the field naming an entry, the
/// entries as JSON array text, and whether the list changed while serving.
struct ListParts {
    key: &'static str,
    identity: &'static str,
    items: String,
    changed: bool,
}

impl Engine {
    /// Answers a list method: at once, or through the list handler (R
    /// middleware) when the catalog has one. Returns `false` when no
    /// handler is served, so the caller answers as it always has.
    pub(super) fn list_through_middleware(
        &mut self,
        id: &RequestId,
        method: &str,
        params: &Value,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        out: &mut Vec<Output>,
    ) -> bool {
        let Some(handler) = self.registry.catalog().list_handler else {
            return false;
        };
        let what = if method == "tools/list" {
            "every tool"
        } else {
            "everything"
        };
        if let Err(reason) = single_page(params, what) {
            let text = invalid_params(id, &reason);
            self.respond(id, text, out);
            return true;
        }
        let parts = self.list_parts(method, params, rev);
        let mut arguments = Map::new();
        arguments.insert("method".into(), Value::from(method));
        arguments.insert("items".into(), Value::from(parts.items.as_str()));
        let call = HandlerCall {
            handler,
            arguments,
            purpose: Purpose::List {
                key: parts.key.into(),
                identity: parts.identity.into(),
                items: Arc::from(parts.items),
                ttl_ms: self.list_ttl_ms(parts.changed),
            },
            may_ask: false,
        };
        self.start_handler(id.clone(), params, rev, client_info, call, out);
        true
    }

    /// A method of the catalog's: its lists through middleware when the
    /// server has some, everything else as [`Engine::catalog_method`] does.
    pub(super) fn serve_catalog(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        out: &mut Vec<Output>,
    ) {
        let listed = LIST_METHODS.contains(&method)
            && self.list_through_middleware(&id, method, params, rev, client_info.clone(), out);
        if !listed {
            self.catalog_method(id, method, params, rev, client_info, out);
        }
    }

    fn list_parts(&self, method: &str, params: &Value, rev: Revision) -> ListParts {
        let changed = self.registry.changed();
        let catalog = |kind, key, identity, changed| ListParts {
            key,
            identity,
            items: self.registry.catalog().list_json(kind, rev).to_string(),
            changed,
        };
        match method {
            "tools/list" => {
                let meta = params.get("_meta").and_then(Value::as_object);
                let apps = app::declared(&self.client_capabilities(meta, rev));
                ListParts {
                    key: "tools",
                    identity: "name",
                    items: self.registry.list_json_for(rev, apps).to_string(),
                    changed: changed.tools,
                }
            }
            "resources/templates/list" => catalog(
                ListKind::Templates,
                "resourceTemplates",
                "uriTemplate",
                changed.resources,
            ),
            "prompts/list" => catalog(ListKind::Prompts, "prompts", "name", changed.prompts),
            _ => catalog(ListKind::Resources, "resources", "uri", changed.resources),
        }
    }
}

/// The list result the middleware's answer makes: the server's entries
/// whose identity R kept, in R's order, each once. A list a middleware may
/// have filtered per caller is cached privately (2026-07-28).
pub(super) fn list_body(
    purpose: &Purpose,
    result: &ToolResult,
    rev: Revision,
    extra_meta: Option<&Map<String, Value>>,
) -> Result<String, Value> {
    let Purpose::List {
        key,
        identity,
        items,
        ttl_ms,
    } = purpose
    else {
        unreachable!("only list jobs are settled here")
    };
    if result.is_error {
        return Err(failure(purpose, "the middleware answered with an error"));
    }
    let keep = kept(result).ok_or_else(|| {
        failure(
            purpose,
            "the middleware's list result could not be read (it must keep the list's shape)",
        )
    })?;
    let entries: Vec<Value> = serde_json::from_str(items).unwrap_or_default();
    let mut seen = HashSet::new();
    let chosen: Vec<Value> = keep
        .iter()
        .filter(|name| seen.insert(name.as_str()))
        .filter_map(|name| {
            entries
                .iter()
                .find(|e| e[identity.as_str()].as_str() == Some(name.as_str()))
                .cloned()
        })
        .collect();
    let mut body = Map::new();
    body.insert(key.clone(), Value::Array(chosen));
    if rev.is_modern() {
        body.insert("ttlMs".into(), Value::from(*ttl_ms));
        body.insert("cacheScope".into(), Value::from("private"));
        body.insert("resultType".into(), Value::from("complete"));
        if let Some(meta) = extra_meta {
            body.insert("_meta".into(), Value::Object(meta.clone()));
        }
    }
    Ok(Value::Object(body).to_string())
}

/// The identities R kept, from the structured content `{"keep": [...]}`.
fn kept(result: &ToolResult) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(result.structured.as_ref()?.get()).ok()?;
    let keep = match &value["keep"] {
        Value::Array(keep) => keep,
        _ => return None,
    };
    Some(
        keep.iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
    )
}
