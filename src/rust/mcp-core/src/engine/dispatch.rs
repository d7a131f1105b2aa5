//! Routing a message: batches, requests of each era (legacy sessions and
//! 2026-07-28 requests with their `_meta` envelope), notifications and
//! cancellation, each handed to the method family that answers it.

use super::arguments::{read_params, Verbatim};
use super::job::Output;
use super::lifecycle::{all_versions, modern_versions};
use super::state::{Batch, Engine};
use super::wire::{
    invalid_params, invalid_request, method_not_found, META_CAPABILITIES, META_CLIENT_INFO,
    META_LOG_LEVEL, META_VERSION,
};
use crate::protocol::jsonrpc::{self, Message, RequestId};
use crate::protocol::logging::LogLevel;
use crate::protocol::revision::Revision;
use crate::util::shared_text::SharedText;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;

/// Methods only 2026-07-28 has: a request for one without the modern
/// envelope is refused for what the envelope lacks, not as uninitialised.
pub(super) const ONLY_IN_MODERN: &[&str] =
    &["server/discover", "subscriptions/listen", "tasks/update"];

/// `_meta` keys that exist only in the 2026-07-28 envelope: a request
/// carrying one means to be modern even when it forgot the version.
pub(super) const MODERN_ONLY_META: &[&str] = &[META_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL];

/// Methods 2026-07-28 removed: a modern request for one gets -32601.
pub(super) const REMOVED_IN_MODERN: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "tasks/result",
    "tasks/list",
];

#[derive(Deserialize)]
pub(super) struct CancelledParams<'a> {
    #[serde(rename = "requestId", borrow)]
    pub(super) request_id: &'a RawValue,
}

pub(super) fn cancelled_request_id(params: &str) -> Option<RequestId> {
    let parsed: CancelledParams = serde_json::from_str(params).ok()?;
    RequestId::from_raw(parsed.request_id)
}

/// Whether a request without a version in `_meta` can only be meant as a
/// 2026-07-28 one: its method exists only there, or its `_meta` carries
/// keys only the modern envelope has.
pub(super) fn means_modern(method: &str, params: &Value) -> bool {
    let envelope_keys = params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|meta| MODERN_ONLY_META.iter().any(|k| meta.contains_key(*k)));
    ONLY_IN_MODERN.contains(&method) || envelope_keys
}

/// -32602 naming what a 2026-07-28 request lacks: its `params._meta`, or
/// the required keys missing from it.
pub(super) fn missing_envelope(id: &RequestId, params: &Value) -> String {
    let missing: Vec<String> = match params.get("_meta").and_then(Value::as_object) {
        None => vec!["params._meta".into()],
        Some(meta) => [META_VERSION, META_CAPABILITIES]
            .into_iter()
            .filter(|key| !meta.contains_key(*key))
            .map(|key| format!("params._meta[\"{key}\"]"))
            .collect(),
    };
    jsonrpc::error(
        Some(id),
        jsonrpc::INVALID_PARAMS,
        &format!(
            "Invalid params: missing required {}",
            missing
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        Some(&json!({ "missing": missing })),
    )
}

impl Engine {
    pub(super) fn on_batch(&mut self, messages: Vec<Message>, out: &mut Vec<Output>) {
        let allowed = self
            .session
            .as_ref()
            .is_some_and(|s| s.revision.allows_batches());
        if !allowed || messages.is_empty() {
            let reason = if messages.is_empty() {
                "an empty batch"
            } else {
                "JSON-RPC batches are only part of protocol revision 2025-03-26"
            };
            out.push(Output::Write(invalid_request(None, reason)));
            return;
        }
        let batch = self.next_batch;
        self.next_batch += 1;
        let mut expected = 0;
        // A request id used twice in one batch, or still awaited by an
        // earlier batch: the new use is refused at once, so each id stands
        // for one response in one batch (taking over an earlier batch's id
        // would leave that batch waiting for ever, its other responses unsent).
        let mut seen = HashSet::new();
        let mut duplicate = vec![false; messages.len()];
        for (i, message) in messages.iter().enumerate() {
            if let Message::Request { id, .. } | Message::Invalid { id: Some(id), .. } = message {
                duplicate[i] = !seen.insert(id) || self.batch_of.contains_key(id);
                if !duplicate[i] {
                    self.batch_of.insert(id.clone(), batch);
                }
                expected += 1;
            }
            if let Message::Invalid { id: None, .. } = message {
                expected += 1;
            }
        }
        if expected == 0 {
            for message in messages {
                self.on_message(message, out);
            }
            return;
        }
        self.batches.insert(
            batch,
            Batch {
                pending: expected,
                responses: Vec::new(),
            },
        );
        for (message, duplicate) in messages.into_iter().zip(duplicate) {
            match message {
                Message::Request { id, .. } | Message::Invalid { id: Some(id), .. }
                    if duplicate =>
                {
                    let text = invalid_request(
                        Some(&id),
                        "request id used twice in one batch, or still awaited by an earlier one",
                    );
                    self.push_to_batch(batch, text, out);
                }
                Message::Request { ref method, .. } if method == "initialize" => {
                    let Message::Request { id, .. } = message else {
                        unreachable!()
                    };
                    let text = invalid_request(Some(&id), "initialize must not be part of a batch");
                    self.respond(&id, text, out);
                }
                Message::Invalid { id: None, reason } => {
                    let text = invalid_request(None, &reason);
                    self.push_to_batch(batch, text, out);
                }
                other => self.on_message(other, out),
            }
        }
    }

    /// Sends a response, or holds it back for the batch it belongs to.
    pub(super) fn respond(&mut self, id: &RequestId, text: String, out: &mut Vec<Output>) {
        self.end_span(id, &text);
        match self.batch_of.remove(id) {
            Some(batch) => self.push_to_batch(batch, text, out),
            None => out.push(Output::Write(text)),
        }
    }

    pub(super) fn push_to_batch(&mut self, batch: u64, text: String, out: &mut Vec<Output>) {
        if let Some(b) = self.batches.get_mut(&batch) {
            b.responses.push(text);
            b.pending -= 1;
        }
        self.flush_batch(batch, out);
    }

    /// A batched request that will get no response (a cancelled call).
    pub(super) fn forget_in_batch(&mut self, id: &RequestId, out: &mut Vec<Output>) {
        if let Some(batch) = self.batch_of.remove(id) {
            if let Some(b) = self.batches.get_mut(&batch) {
                b.pending -= 1;
            }
            self.flush_batch(batch, out);
        }
    }

    pub(super) fn flush_batch(&mut self, batch: u64, out: &mut Vec<Output>) {
        if self.batches.get(&batch).is_some_and(|b| b.pending == 0) {
            let b = self.batches.remove(&batch).expect("checked above");
            if !b.responses.is_empty() {
                out.push(Output::Write(format!("[{}]", b.responses.join(","))));
            }
        }
    }

    pub(super) fn on_message(&mut self, message: Message, out: &mut Vec<Output>) {
        match message {
            Message::Request { id, method, params } => self.on_request(id, &method, params, out),
            Message::Notification { method, params } => self.on_notification(&method, params, out),
            // A reply to a request of ours (an elicitation).
            Message::Response { id, result, error } => self.on_response(&id, result, error, out),
            // Our own request's id, but no answer can be read from it: the
            // tool waiting for one learns why, and the client gets no error
            // for a request it never sent.
            Message::Invalid {
                id: Some(id),
                reason,
            } if self.asks.contains_key(&id) => self.on_unreadable_response(&id, &reason, out),
            Message::Invalid { id, reason } => {
                let text = invalid_request(id.as_ref(), &reason);
                match id {
                    Some(id) => self.respond(&id, text, out),
                    None => out.push(Output::Write(text)),
                }
            }
        }
    }

    pub(super) fn on_request(
        &mut self,
        id: RequestId,
        method: &str,
        raw: Option<SharedText>,
        out: &mut Vec<Output>,
    ) {
        let (params, raw) = match read_params(method, raw.as_ref()) {
            Ok(read) => read,
            Err(e) => {
                self.begin_span(&id, method, &Value::Null, None);
                let text = invalid_params(&id, &format!("params could not be read: {e}"));
                return self.respond(&id, text, out);
            }
        };
        self.begin_span(&id, method, &params, raw.arguments.as_deref());
        let modern_version = params
            .get("_meta")
            .and_then(|m| m.get(META_VERSION))
            .cloned();
        // The version in `_meta` decides the era before the method does: an
        // enveloped `initialize` is a modern request for a removed method.
        if let Some(version) = modern_version {
            return self.on_modern_request(id, method, &params, raw, version, out);
        }
        if method == "initialize" {
            let text = self.initialize(&id, &params);
            return self.respond(&id, text, out);
        }
        if means_modern(method, &params) {
            let text = missing_envelope(&id, &params);
            return self.respond(&id, text, out);
        }
        self.on_legacy_request(id, method, &params, raw, out)
    }

    pub(super) fn on_legacy_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        raw: Verbatim,
        out: &mut Vec<Output>,
    ) {
        if method == "ping" {
            return self.respond(&id, jsonrpc::success(&id, "{}"), out);
        }
        let Some(session) = &self.session else {
            let text = jsonrpc::error(
                Some(&id),
                jsonrpc::INVALID_REQUEST,
                "Server not initialized",
                Some(&json!({
                    "reason": "send `initialize` first, or name a protocol version in params._meta",
                    "supported": all_versions(),
                })),
            );
            return self.respond(&id, text, out);
        };
        let rev = session.revision;
        let client_info = session.client_info.clone();
        match method {
            "tools/list" => {
                if !self.list_through_middleware(&id, method, params, rev, client_info, out) {
                    let text = self.tools_list(&id, params, rev);
                    self.respond(&id, text, out)
                }
            }
            "tools/call" => self.tools_call(id, params, raw, rev, client_info, out),
            "logging/setLevel" => {
                let text = self.set_level(&id, params);
                self.respond(&id, text, out)
            }
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel"
                if rev.has_core_tasks() =>
            {
                self.core_task_method(id, method, params, out)
            }
            m if self.serves(m, rev) => self.serve_catalog(id, m, params, rev, client_info, out),
            _ => {
                let text = method_not_found(&id, method);
                self.respond(&id, text, out)
            }
        }
    }

    pub(super) fn set_level(&mut self, id: &RequestId, params: &Value) -> String {
        let Some(level) = params
            .get("level")
            .and_then(Value::as_str)
            .and_then(LogLevel::parse)
        else {
            return invalid_params(id, "`level` must be one of debug, info, notice, warning, error, critical, alert, emergency");
        };
        if let Some(session) = &mut self.session {
            session.log_level = Some(level);
        }
        jsonrpc::success(id, "{}")
    }

    pub(super) fn on_modern_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        raw: Verbatim,
        version: Value,
        out: &mut Vec<Output>,
    ) {
        let meta = params.get("_meta").and_then(Value::as_object);
        let rev = match version.as_str().and_then(Revision::parse) {
            Some(rev) if rev.is_modern() => rev,
            _ => {
                let requested = match &version {
                    Value::String(s) => Value::from(s.as_str()),
                    other => Value::from(other.to_string()),
                };
                let data = json!({ "supported": modern_versions(), "requested": requested });
                let text = jsonrpc::error(
                    Some(&id),
                    jsonrpc::UNSUPPORTED_VERSION,
                    "Unsupported protocol version",
                    Some(&data),
                );
                return self.respond(&id, text, out);
            }
        };
        match meta.and_then(|m| m.get(META_CAPABILITIES)) {
            Some(Value::Object(_)) => {}
            Some(_) => {
                let text = invalid_params(
                    &id,
                    &format!("`_meta[\"{META_CAPABILITIES}\"]` must be an object"),
                );
                return self.respond(&id, text, out);
            }
            None => {
                let text = invalid_params(
                    &id,
                    &format!("missing required `_meta[\"{META_CAPABILITIES}\"]`"),
                );
                return self.respond(&id, text, out);
            }
        }
        if let Some(level) = meta.and_then(|m| m.get(META_LOG_LEVEL)) {
            if level.as_str().and_then(LogLevel::parse).is_none() {
                let text = invalid_params(
                    &id,
                    &format!("`_meta[\"{META_LOG_LEVEL}\"]` is not a log level"),
                );
                return self.respond(&id, text, out);
            }
        }
        let client_info = meta
            .and_then(|m| m.get(META_CLIENT_INFO))
            .map(|info| Arc::new(info.clone()));
        match method {
            "server/discover" => {
                let text = self.discover(&id);
                self.respond(&id, text, out)
            }
            "tools/list" => {
                if !self.list_through_middleware(&id, method, params, rev, client_info, out) {
                    let text = self.tools_list(&id, params, rev);
                    self.respond(&id, text, out)
                }
            }
            "tools/call" => self.tools_call(id, params, raw, rev, client_info, out),
            "subscriptions/listen" => self.listen(id, params, out),
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                self.extension_task_method(id, method, params, out)
            }
            m if self.serves(m, rev) => self.serve_catalog(id, m, params, rev, client_info, out),
            m if REMOVED_IN_MODERN.contains(&m) => {
                let data =
                    json!({ "reason": format!("`{m}` is not part of protocol revision {rev}") });
                let text = jsonrpc::error(
                    Some(&id),
                    jsonrpc::METHOD_NOT_FOUND,
                    "Method not found",
                    Some(&data),
                );
                self.respond(&id, text, out)
            }
            _ => {
                let text = method_not_found(&id, method);
                self.respond(&id, text, out)
            }
        }
    }

    pub(super) fn on_notification(
        &mut self,
        method: &str,
        params: Option<SharedText>,
        out: &mut Vec<Output>,
    ) {
        if method == "notifications/cancelled" {
            if let Some(request) = params.as_deref().and_then(cancelled_request_id) {
                self.cancel(&request, out);
            }
        }
        if method == "notifications/initialized" {
            if let Some(session) = &mut self.session {
                session.initialized = true;
            }
        }
        // Unknown notifications are ignored.
    }

    pub(super) fn cancel(&mut self, request: &RequestId, out: &mut Vec<Output>) {
        if self.listens.remove(request).is_some() {
            self.listen_uris.remove(request);
            self.end_span_unanswered(request, "cancelled");
            out.push(Output::UnwatchTasks(request.clone()));
            return;
        }
        let Some(&job) = self.by_request.get(request) else {
            return;
        };
        if let Some(state) = self.jobs.get_mut(&job) {
            if !state.cancelled {
                state.cancelled = true;
                out.push(Output::Cancel(job));
                let id = state.request_id.clone();
                self.span_event(&id, "cancel requested", Vec::new());
            }
        }
    }
}
