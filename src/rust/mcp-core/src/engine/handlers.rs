//! Requests other than `tools/call` that run R code: `resources/read`,
//! `prompts/get` and `completion/complete`. Each runs its handler (a hidden
//! registry entry, see [`crate::engine::catalog`]) as a job like a tool call, so
//! ordering, cancellation, time limits, progress and logs work the same;
//! only what the job's result becomes differs, by its [`Purpose`].

use super::job::{InputMode, Purpose};

use super::job::{NewJob, Output};

use super::state::Engine;
use crate::engine::catalog::ListKind;
use crate::engine::result::{Block, Content, ResourceBody, ToolResult};
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::revision::Revision;
use crate::util::shared_text::SharedText;
use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One handler run the engine starts.
pub(super) struct HandlerCall {
    pub handler: usize,
    pub arguments: Map<String, Value>,
    pub purpose: Purpose,
    /// Whether the handler may ask the user for input (`resources/read` and
    /// `prompts/get` may; 2026-07-28 allows `input_required` on no other).
    pub may_ask: bool,
}

impl Engine {
    /// Queues a handler run for R, as `tools_call` queues a tool call.
    pub(super) fn start_handler(
        &mut self,
        id: RequestId,
        params: &Value,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        call: HandlerCall,
        out: &mut Vec<Output>,
    ) {
        if self.direct_calls >= self.config.limits.max_queued_calls {
            let text = self.too_many_calls(&id);
            return self.respond(&id, text, out);
        }
        let arguments = SharedText::from(Value::Object(call.arguments).to_string());
        let meta = params.get("_meta").and_then(Value::as_object).cloned();
        let caps = self.client_capabilities(meta.as_ref(), rev);
        let answers = if call.may_ask {
            match self.retry_answers(call.handler, Some(&arguments), params, rev) {
                Ok(answers) => answers,
                Err(error) => {
                    let text = jsonrpc::error_response(Some(&id), &error);
                    return self.respond(&id, text, out);
                }
            }
        } else {
            Map::new()
        };
        let input = if call.may_ask {
            self.input_mode(rev, &caps, false)
        } else {
            InputMode::Unavailable(format!(
                "{} cannot ask the user for input",
                call.purpose.describe()
            ))
        };
        let progress_token = meta
            .as_ref()
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .map(Value::to_string);
        let new = NewJob {
            job: self.job_ids.fetch_add(1, Ordering::Relaxed),
            request_id: id,
            handler: call.handler,
            rev,
            arguments: Some(arguments),
            meta,
            client_info,
            progress_token,
            capabilities: caps,
            answers,
            input,
            purpose: call.purpose,
            task: None,
            task_later: false,
        };
        self.launch_job(new, out);
    }

    /// Queues the server's bearer-token function (registry entry
    /// `handler`) for R, to check `token`; the verdict answers `id` (see
    /// [`token_body`]). Calls and checks share one queue, and its bound.
    pub fn on_token_check(
        &mut self,
        id: RequestId,
        handler: usize,
        token: &str,
        out: &mut Vec<Output>,
    ) {
        // `handler` is the entry's key, stable while tools, resources and
        // prompts change; its index is this registry's.
        self.registry = self.live.current();
        let Some(index) = self.registry.index_of_key(handler) else {
            let text = jsonrpc::error(
                Some(&id),
                jsonrpc::INTERNAL_ERROR,
                "The bearer token check is not served",
                None,
            );
            return self.respond(&id, text, out);
        };
        let mut arguments = Map::new();
        arguments.insert("token".into(), Value::from(token));
        let call = HandlerCall {
            handler: index,
            arguments,
            purpose: Purpose::Token,
            may_ask: false,
        };
        self.start_handler(id, &Value::Null, Revision::LATEST, None, call, out);
    }
}

/// The result body a handler's result becomes, or the JSON-RPC error.
pub(super) fn settle(
    purpose: &Purpose,
    result: &ToolResult,
    rev: Revision,
    extra_meta: Option<&Map<String, Value>>,
    cache_ttl_ms: u64,
) -> Result<String, Value> {
    let result = &*result.with_mirror();
    if result.is_error {
        return Err(failure(purpose, &first_text(result)));
    }
    let mut body = match purpose {
        Purpose::Tool => unreachable!("tool results are rendered by result::render"),
        Purpose::Read { uri, mime_type, .. } => read_body(uri, mime_type.as_deref(), result, rev)?,
        Purpose::Prompt { description } => prompt_body(description.as_deref(), result, rev)?,
        Purpose::Complete => completion_body(result)?,
        Purpose::Token => return Ok(token_body(result)),
        Purpose::List { .. } => unreachable!("list results are settled by middleware::list_body"),
    };
    if rev.is_modern() {
        if let Purpose::Read { cache: true, .. } = purpose {
            body.insert("ttlMs".into(), Value::from(cache_ttl_ms));
            body.insert("cacheScope".into(), Value::from("private"));
        }
        body.insert("resultType".into(), Value::from("complete"));
        if let Some(meta) = extra_meta {
            body.insert("_meta".into(), Value::Object(meta.clone()));
        }
    }
    Ok(Value::Object(body).to_string())
}

/// -32603 for a handler that failed: its R error, a time limit, ...
pub(super) fn failure(purpose: &Purpose, reason: &str) -> Value {
    let data = match purpose {
        Purpose::Read { uri, .. } => Some(json!({ "uri": uri })),
        _ => None,
    };
    jsonrpc::error_object(
        jsonrpc::INTERNAL_ERROR,
        &format!("{} failed: {reason}", purpose.describe()),
        data.as_ref(),
    )
}

/// The error of a handler that ran past its time limit: a bearer token
/// check's says so in `data`, so the HTTP front can answer 503 (try again)
/// rather than 500.
pub(super) fn timed_out(purpose: &Purpose, reason: &str) -> Value {
    if *purpose != Purpose::Token {
        return failure(purpose, reason);
    }
    jsonrpc::error_object(
        jsonrpc::INTERNAL_ERROR,
        &format!("{} failed: {reason}", purpose.describe()),
        Some(&json!({ "timedOut": true })),
    )
}

/// A token check's verdict, `{allow, identity?}`, as the R side returned
/// it in the structured content (see `token_check_handler()` in R).
fn token_body(result: &ToolResult) -> String {
    let verdict: Value = result
        .structured
        .as_ref()
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Value::Null);
    let mut body = Map::new();
    body.insert(
        "allow".into(),
        Value::from(verdict["allow"].as_bool() == Some(true)),
    );
    if let Some(identity) = verdict.get("identity").filter(|v| v.is_object()) {
        body.insert("identity".into(), identity.clone());
    }
    Value::Object(body).to_string()
}

fn first_text(result: &ToolResult) -> String {
    result
        .content
        .iter()
        .find_map(|b| match &b.content {
            Content::Text { text } => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "no reason given".into())
}

/// `ReadResourceResult`: text blocks become text contents and image or
/// audio blocks blob contents of the requested URI; embedded resources keep
/// their own URI (a read may return several, say a directory's files). A
/// block's `_meta` becomes its content's (from 2025-06-18 on), where an MCP
/// App's document carries its `_meta.ui`.
fn read_body(
    uri: &str,
    mime_type: Option<&str>,
    result: &ToolResult,
    rev: Revision,
) -> Result<Map<String, Value>, Value> {
    let purpose = || Purpose::Read {
        uri: uri.into(),
        mime_type: None,
        cache: false,
    };
    let mut contents = Vec::with_capacity(result.content.len());
    for block in &result.content {
        let mut entry = Map::new();
        match &block.content {
            Content::Text { text } => {
                entry.insert("uri".into(), Value::from(uri));
                if let Some(mime) = mime_type {
                    entry.insert("mimeType".into(), Value::from(mime));
                }
                entry.insert("text".into(), Value::from(text.as_str()));
            }
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                entry.insert("uri".into(), Value::from(uri));
                entry.insert("mimeType".into(), Value::from(mime_type.as_str()));
                entry.insert("blob".into(), Value::from(data.as_str()));
            }
            Content::Resource {
                uri: own,
                mime_type,
                body,
            } => {
                entry.insert("uri".into(), Value::from(own.as_str()));
                if let Some(mime) = mime_type {
                    entry.insert("mimeType".into(), Value::from(mime.as_str()));
                }
                match body {
                    ResourceBody::Text(text) => {
                        entry.insert("text".into(), Value::from(text.as_str()))
                    }
                    ResourceBody::Blob(blob) => {
                        entry.insert("blob".into(), Value::from(blob.as_str()))
                    }
                };
            }
            Content::ResourceLink { .. } => {
                return Err(failure(
                    &purpose(),
                    "a resource link cannot be a resource's content; return text, a raw vector, \
                     a file or content_resource() blocks",
                ))
            }
        }
        if let (Some(meta), true) = (&block.meta, rev.has_structured_output()) {
            entry.insert("_meta".into(), Value::Object(meta.clone()));
        }
        contents.push(Value::Object(entry));
    }
    if contents.is_empty() {
        // An empty `contents` reads as "not found" to 2026-07-28 clients.
        return Err(failure(
            &purpose(),
            "the resource function returned no content",
        ));
    }
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    Ok(body)
}

/// The roles and description the R side sends beside a prompt's blocks.
fn prompt_extras(result: &ToolResult) -> (Vec<String>, Option<String>) {
    let extras: Value = result
        .structured
        .as_ref()
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Value::Null);
    let roles = match &extras["roles"] {
        Value::Array(roles) => roles
            .iter()
            .map(|r| r.as_str().unwrap_or("user").to_string())
            .collect(),
        Value::String(role) => vec![role.clone()],
        _ => Vec::new(),
    };
    (roles, extras["description"].as_str().map(str::to_string))
}

/// `GetPromptResult`: one message per block, with the role the R side gave
/// it. Blocks the revision does not know make the request fail, naming them.
fn prompt_body(
    description: Option<&str>,
    result: &ToolResult,
    rev: Revision,
) -> Result<Map<String, Value>, Value> {
    let purpose = Purpose::Prompt { description: None };
    let (roles, own_description) = prompt_extras(result);
    let unsupported: Vec<&str> = result
        .content
        .iter()
        .filter(|b| !b.supported_in(rev))
        .map(Block::type_name)
        .collect();
    if !unsupported.is_empty() {
        return Err(failure(
            &purpose,
            &format!(
                "protocol revision {rev} does not support prompt content of type {}",
                unsupported.join(", ")
            ),
        ));
    }
    let mut messages = Vec::with_capacity(result.content.len());
    for (i, block) in result.content.iter().enumerate() {
        let role = roles.get(i).map_or("user", String::as_str);
        if role != "user" && role != "assistant" {
            return Err(failure(
                &purpose,
                &format!("a message's role must be \"user\" or \"assistant\", not \"{role}\""),
            ));
        }
        messages.push(json!({ "role": role, "content": block.to_wire(rev) }));
    }
    let mut body = Map::new();
    if let Some(description) = own_description.as_deref().or(description) {
        body.insert("description".into(), Value::from(description));
    }
    body.insert("messages".into(), Value::Array(messages));
    Ok(body)
}

/// Completion values are capped at this many (the spec's limit).
pub(super) const MAX_COMPLETIONS: usize = 100;

/// `CompleteResult`: the strings the completer returned, at most
/// [`MAX_COMPLETIONS`], with the total and whether there are more.
fn completion_body(result: &ToolResult) -> Result<Map<String, Value>, Value> {
    let extras: Value = result
        .structured
        .as_ref()
        .and_then(|raw| serde_json::from_str(raw.get()).ok())
        .unwrap_or(Value::Null);
    let values: Vec<String> = match &extras["values"] {
        Value::Array(values) => values
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Value::String(one) => vec![one.clone()],
        _ => Vec::new(),
    };
    Ok(completion_of(values))
}

/// `{completion: {values, total, hasMore}}` for a full list of candidates.
pub(super) fn completion_of(mut values: Vec<String>) -> Map<String, Value> {
    let total = values.len();
    values.truncate(MAX_COMPLETIONS);
    let mut body = Map::new();
    body.insert(
        "completion".into(),
        json!({ "values": values, "total": total, "hasMore": total > MAX_COMPLETIONS }),
    );
    body
}

impl Engine {
    /// Whether `method` is one of the catalog's and served here: only
    /// methods of a capability the server declares (the others get -32601).
    pub(super) fn serves(&self, method: &str, rev: Revision) -> bool {
        let offers = self.registry.offers();
        match method {
            "resources/list" | "resources/templates/list" | "resources/read" => offers.resources,
            "resources/subscribe" | "resources/unsubscribe" => offers.resources && !rev.is_modern(),
            "prompts/list" | "prompts/get" => offers.prompts,
            "completion/complete" => offers.completions,
            _ => false,
        }
    }

    /// Answers a method [`Engine::serves`] accepted.
    pub(super) fn catalog_method(
        &mut self,
        id: RequestId,
        method: &str,
        params: &Value,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        out: &mut Vec<Output>,
    ) {
        let text = match method {
            "resources/list" => self.resources_list(&id, params, rev, ListKind::Resources),
            "resources/templates/list" => {
                self.resources_list(&id, params, rev, ListKind::Templates)
            }
            "prompts/list" => self.resources_list(&id, params, rev, ListKind::Prompts),
            "resources/subscribe" => self.resources_subscription(&id, params, rev, true),
            "resources/unsubscribe" => self.resources_subscription(&id, params, rev, false),
            "resources/read" => return self.resources_read(id, params, rev, client_info, out),
            "prompts/get" => return self.prompts_get(id, params, rev, client_info, out),
            "completion/complete" => return self.complete(id, params, rev, client_info, out),
            _ => unreachable!("`serves` admits only the methods above"),
        };
        self.respond(&id, text, out)
    }

    /// Adds the catalog's capabilities: each once the server has something
    /// to serve or was told it will (see [`crate::engine::registry::Offers`]).
    /// `completions` is a flag from 2025-03-26 on (2024-11-05 has the
    /// method without one).
    pub(super) fn catalog_capabilities(&self, caps: &mut Value, rev: Revision) {
        let offers = self.registry.offers();
        if offers.resources {
            caps["resources"] = json!({ "subscribe": true, "listChanged": true });
        }
        if offers.prompts {
            caps["prompts"] = json!({ "listChanged": true });
        }
        if offers.completions && rev >= Revision::V2025_03_26 {
            caps["completions"] = json!({});
        }
    }
}
