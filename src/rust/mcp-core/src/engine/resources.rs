//! Resources: `resources/list`, `resources/templates/list`,
//! `resources/read`, the handshake era's `resources/subscribe` and
//! `resources/unsubscribe`, and `notifications/resources/updated` (to
//! subscribed sessions, and on 2026-07-28 `subscriptions/listen` streams
//! that asked for the URI).

use super::handlers::HandlerCall;
use super::job::Output;
use super::job::Purpose;
use super::state::Engine;
use super::wire::{invalid_params, raw_json, META_SUBSCRIPTION};
use crate::engine::catalog::ListKind;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::revision::Revision;
use crate::protocol::uri_template::MatchError;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// 2024-11-05 .. 2025-11-25: "Resource not found" (the spec's SHOULD).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// The most URIs one session, or one listen stream, may subscribe to.
pub const MAX_RESOURCE_SUBSCRIPTIONS: usize = 1024;

/// The argument that hands a resource handler the URI it reads; template
/// variables cannot be named so.
pub const URI_ARGUMENT: &str = ".uri";

impl Engine {
    /// `resources/list`, `resources/templates/list` or `prompts/list`.
    pub(super) fn resources_list(
        &self,
        id: &RequestId,
        params: &Value,
        rev: Revision,
        kind: ListKind,
    ) -> String {
        let key = match kind {
            ListKind::Templates => "resourceTemplates",
            ListKind::Prompts => "prompts",
            ListKind::Resources => "resources",
        };
        let list = self.registry.catalog().list_json(kind, rev);
        let changed = self.registry.changed();
        let changed = match kind {
            ListKind::Prompts => changed.prompts,
            ListKind::Resources | ListKind::Templates => changed.resources,
        };
        self.list_result(id, params, rev, (key, list), "everything", changed)
    }

    /// `resources/read`: a static resource, else the first template that
    /// matches, runs its handler; anything else is not found.
    pub(super) fn resources_read(
        &mut self,
        id: RequestId,
        params: &Value,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        out: &mut Vec<Output>,
    ) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            let text = invalid_params(&id, "`uri` must be a string");
            return self.respond(&id, text, out);
        };
        let (handler, mime_type, variables) = match self.resolve(uri) {
            Ok(found) => found,
            Err(error) => {
                let text = jsonrpc::error_response(Some(&id), &error(rev));
                return self.respond(&id, text, out);
            }
        };
        let mut arguments = Map::new();
        arguments.insert(URI_ARGUMENT.into(), Value::from(uri));
        for (name, value) in variables {
            arguments.insert(name, Value::from(value));
        }
        let retry = ["inputResponses", "requestState"]
            .iter()
            .any(|k| params.get(*k).is_some_and(|v| !v.is_null()));
        let call = HandlerCall {
            handler,
            arguments,
            purpose: Purpose::Read {
                uri: uri.to_string(),
                mime_type,
                cache: !retry,
            },
            may_ask: true,
        };
        self.start_handler(id, params, rev, client_info, call, out);
    }

    /// The handler, MIME type and template variables serving `uri`, or the
    /// error (per revision) for a URI nothing serves.
    #[allow(clippy::type_complexity)]
    fn resolve(
        &self,
        uri: &str,
    ) -> Result<(usize, Option<String>, Vec<(String, String)>), Box<dyn Fn(Revision) -> Value>>
    {
        let catalog = self.registry.catalog();
        if let Some(resource) = catalog.resource(uri) {
            return Ok((resource.handler, resource.mime_type.clone(), Vec::new()));
        }
        for template in &catalog.templates {
            match template.template.match_uri(uri) {
                Ok(variables) => {
                    return Ok((template.handler, template.mime_type.clone(), variables))
                }
                Err(MatchError::NoMatch) => continue,
                Err(MatchError::Unsafe { variable, reason }) => {
                    let message = format!(
                        "Invalid params: the URI's `{variable}` is refused because {reason}"
                    );
                    let data = json!({ "uri": uri, "variable": variable });
                    return Err(Box::new(move |_| {
                        jsonrpc::error_object(jsonrpc::INVALID_PARAMS, &message, Some(&data))
                    }));
                }
            }
        }
        let uri = uri.to_string();
        Err(Box::new(move |rev| not_found(&uri, rev)))
    }

    /// `resources/subscribe` and `resources/unsubscribe` (handshake era).
    pub(super) fn resources_subscription(
        &mut self,
        id: &RequestId,
        params: &Value,
        rev: Revision,
        subscribe: bool,
    ) -> String {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return invalid_params(id, "`uri` must be a string");
        };
        if !subscribe {
            self.resource_subscriptions.remove(uri);
            return jsonrpc::success(id, "{}");
        }
        if let Err(error) = self.resolve(uri) {
            return jsonrpc::error_response(Some(id), &error(rev));
        }
        if self.resource_subscriptions.len() >= MAX_RESOURCE_SUBSCRIPTIONS
            && !self.resource_subscriptions.contains(uri)
        {
            let limit = MAX_RESOURCE_SUBSCRIPTIONS;
            return jsonrpc::error(
                Some(id),
                jsonrpc::INTERNAL_ERROR,
                &format!("Too many resource subscriptions: at most {limit}; unsubscribe first"),
                Some(&json!({ "limit": limit })),
            );
        }
        self.resource_subscriptions.insert(uri.to_string());
        jsonrpc::success(id, "{}")
    }

    /// The URIs a `subscriptions/listen` request asks to follow that this
    /// server honours (every URI when it serves resources; at most
    /// [`MAX_RESOURCE_SUBSCRIPTIONS`]), or `None` when it asked for none.
    pub(super) fn listen_resources(&self, params: &Value) -> Option<Vec<String>> {
        let asked = params
            .get("notifications")
            .and_then(|n| n.get("resourceSubscriptions"))
            .and_then(Value::as_array)?;
        if !self.registry.offers().resources {
            return None;
        }
        let mut seen = HashSet::new();
        Some(
            asked
                .iter()
                .filter_map(Value::as_str)
                .filter(|uri| seen.insert(*uri))
                .take(MAX_RESOURCE_SUBSCRIPTIONS)
                .map(str::to_string)
                .collect(),
        )
    }

    /// A resource changed (the R side said so): subscribers learn it.
    pub fn on_resource_updated(&mut self, uri: &str, out: &mut Vec<Output>) {
        if self.session.is_some() && self.resource_subscriptions.contains(uri) {
            out.push(Output::Write(jsonrpc::notification(
                "notifications/resources/updated",
                &json!({ "uri": uri }).to_string(),
            )));
        }
        let mut streams: Vec<&RequestId> = self
            .listen_uris
            .iter()
            .filter(|(_, uris)| uris.contains(uri))
            .map(|(id, _)| id)
            .collect();
        streams.sort_by(|a, b| a.as_json().cmp(b.as_json()));
        for id in streams {
            let params = json!({
                "uri": uri,
                "_meta": { META_SUBSCRIPTION: raw_json(id.as_json()) }
            });
            out.push(Output::ToListener(
                id.clone(),
                jsonrpc::notification("notifications/resources/updated", &params.to_string()),
            ));
        }
    }
}

/// The error for a URI no resource or template serves: -32002 up to
/// 2025-11-25, -32602 on 2026-07-28 (which forbids -32002), with the URI.
pub fn not_found(uri: &str, rev: Revision) -> Value {
    let code = if rev.is_modern() {
        jsonrpc::INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND
    };
    jsonrpc::error_object(
        code,
        &format!("Resource not found: {uri}"),
        Some(&json!({ "uri": uri })),
    )
}
