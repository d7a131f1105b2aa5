//! Changes to what the server offers while it serves: tools, resources
//! and prompts added or removed (see [`crate::engine::registry::Live`]).
//!
//! Clients hear of a change once per list and change burst:
//! handshake-era sessions (after `notifications/initialized`) for the
//! lists they were told about in `initialize`; 2026-07-28 clients only on
//! `subscriptions/listen` streams that asked for that list. Lists that
//! have changed since start carry a short caching hint from then on, so a
//! client that does not listen does not keep a stale list for long.

use super::job::Output;

use super::state::Engine;

use super::wire::META_SUBSCRIPTION;
use crate::engine::registry::Kinds;
use crate::protocol::jsonrpc::{self, RequestId};
use serde_json::{json, Value};

/// The `ttlMs` of a list that has changed while the server served
/// (2026-07-28): it may change again, so clients should not trust a copy
/// for long.
pub const CHANGED_LIST_TTL_MS: u64 = 10_000;

/// The notification of each list in `kinds`.
fn notifications(kinds: Kinds) -> impl Iterator<Item = &'static str> {
    [
        (kinds.tools, "notifications/tools/list_changed"),
        (kinds.resources, "notifications/resources/list_changed"),
        (kinds.prompts, "notifications/prompts/list_changed"),
    ]
    .into_iter()
    .filter_map(|(wanted, method)| wanted.then_some(method))
}

impl Engine {
    /// The lists a `subscriptions/listen` request asks to hear changes of
    /// that this server has (it always has tools).
    pub(super) fn listen_lists(&self, params: &Value) -> Kinds {
        let asked = |flag: &str| params["notifications"][flag].as_bool() == Some(true);
        let offers = self.registry.offers();
        Kinds {
            tools: asked("toolsListChanged"),
            resources: asked("resourcesListChanged") && offers.resources,
            prompts: asked("promptsListChanged") && offers.prompts,
        }
    }

    /// The caching hint of a list, shortened once it has changed.
    pub(super) fn list_ttl_ms(&self, changed: bool) -> u64 {
        if changed {
            self.config.list_ttl_ms.min(CHANGED_LIST_TTL_MS)
        } else {
            self.config.list_ttl_ms
        }
    }

    /// `server/discover`'s hint: its capabilities change when a kind of
    /// entry is offered for the first time, so it is as short as any list's.
    pub(super) fn discover_ttl_ms(&self) -> u64 {
        let changed = self.live.current().changed();
        self.list_ttl_ms(!changed.is_empty())
    }

    /// The lists in `kinds` changed: tell the clients of this engine that
    /// want to know. The snapshot is refreshed first, so a client that
    /// asks again sees the change.
    pub fn on_lists_changed(&mut self, kinds: Kinds, out: &mut Vec<Output>) {
        self.registry = self.live.current();
        if let Some(session) = self.session.as_ref().filter(|s| s.initialized) {
            for method in notifications(kinds.and(session.told)) {
                out.push(Output::Write(jsonrpc::notification_without_params(method)));
            }
        }
        let mut listeners: Vec<(&RequestId, &Kinds)> = self.listens.iter().collect();
        listeners.sort_by(|a, b| a.0.as_json().cmp(b.0.as_json()));
        for (id, asked) in listeners {
            for method in notifications(kinds.and(*asked)) {
                let params =
                    json!({ "_meta": { META_SUBSCRIPTION: super::wire::raw_json(id.as_json()) } });
                out.push(Output::ToListener(
                    id.clone(),
                    jsonrpc::notification(method, &params.to_string()),
                ));
            }
        }
    }
}
