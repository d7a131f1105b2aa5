//! Starting a conversation: `initialize` (legacy) and `server/discover`
//! (2026-07-28), the capabilities and versions a server offers.

use super::config::server_info;
use super::state::{Engine, Session};
use crate::engine::registry::Kinds;
use crate::protocol::app;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::revision::Revision;
use crate::stores::tasks;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Every revision, newest first: what a request sent before `initialize`
/// is told the server speaks.
pub(super) fn all_versions() -> Value {
    let mut all: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
    all.reverse();
    json!(all)
}

/// The versions a request with the 2026-07-28 envelope may name: what
/// `server/discover` advertises and a -32022 lists. Legacy revisions are left
/// out because a retry naming one in `_meta` would only be refused again.
pub(super) fn modern_versions() -> Value {
    let modern: Vec<&str> = Revision::modern().map(Revision::as_str).collect();
    json!(modern)
}

pub(super) fn check_initialize_params(params: &Value) -> Result<(), String> {
    let Value::Object(p) = params else {
        return Err("params must be an object".into());
    };
    if p.get("protocolVersion")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err("`protocolVersion` must be a non-empty string".into());
    }
    if !p.get("capabilities").is_some_and(Value::is_object) {
        return Err("`capabilities` must be an object".into());
    }
    let Some(Value::Object(info)) = p.get("clientInfo") else {
        return Err("`clientInfo` must be an object".into());
    };
    for field in ["name", "version"] {
        if info
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(format!("`clientInfo.{field}` must be a non-empty string"));
        }
    }
    Ok(())
}

impl Engine {
    pub(super) fn initialize(&mut self, id: &RequestId, params: &Value) -> String {
        if let Err(problem) = check_initialize_params(params) {
            return jsonrpc::error(
                Some(id),
                jsonrpc::INVALID_PARAMS,
                "Invalid initialize params",
                Some(&json!({ "reason": problem })),
            );
        }
        let requested = params["protocolVersion"].as_str().unwrap_or_default();
        let revision = Revision::parse(requested)
            .filter(|r| !r.is_modern())
            .unwrap_or(Revision::LATEST_LEGACY);
        let log_level = self.session.as_ref().and_then(|s| s.log_level);
        // A new session starts with no subscriptions.
        self.resource_subscriptions.clear();
        let offers = self.registry.offers();
        self.end_session_span();
        self.session = Some(Session {
            revision,
            started: std::time::Instant::now(),
            client_info: params.get("clientInfo").map(|info| Arc::new(info.clone())),
            capabilities: Arc::new(params["capabilities"].clone()),
            log_level,
            initialized: false,
            told: Kinds {
                tools: true,
                resources: offers.resources,
                prompts: offers.prompts,
            },
        });
        let mut result = Map::new();
        result.insert("protocolVersion".into(), Value::from(revision.as_str()));
        result.insert("capabilities".into(), self.capabilities(revision));
        result.insert(
            "serverInfo".into(),
            server_info(&self.config.info, revision),
        );
        if let Some(instructions) = &self.config.instructions {
            result.insert("instructions".into(), Value::from(instructions.as_str()));
        }
        jsonrpc::success(id, &Value::Object(result).to_string())
    }

    pub(super) fn capabilities(&self, rev: Revision) -> Value {
        let mut caps = json!({ "logging": {}, "tools": { "listChanged": true } });
        self.catalog_capabilities(&mut caps, rev);
        if self.registry.offers_tasks() {
            if rev.has_core_tasks() {
                caps["tasks"] =
                    json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
            } else if rev.is_modern() {
                caps["extensions"][tasks::EXTENSION] = json!({});
            }
        }
        if self.registry.offers().apps && app::offered_on(rev) {
            caps["extensions"][app::EXTENSION] = json!({});
        }
        caps
    }

    pub(super) fn discover(&self, id: &RequestId) -> String {
        let mut result = Map::new();
        result.insert("supportedVersions".into(), modern_versions());
        result.insert("capabilities".into(), self.capabilities(Revision::LATEST));
        if let Some(instructions) = &self.config.instructions {
            result.insert("instructions".into(), Value::from(instructions.as_str()));
        }
        result.insert("ttlMs".into(), Value::from(self.discover_ttl_ms()));
        result.insert("cacheScope".into(), Value::from("public"));
        result.insert("resultType".into(), Value::from("complete"));
        result.insert("_meta".into(), Value::Object(self.server_meta.clone()));
        jsonrpc::success(id, &Value::Object(result).to_string())
    }
}
