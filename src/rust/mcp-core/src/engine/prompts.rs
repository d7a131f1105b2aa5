//! Prompts: `prompts/list` and `prompts/get`. Arguments are strings; the
//! required ones are checked before the prompt's R function runs.

use super::handlers::HandlerCall;
use super::job::Output;
use super::job::Purpose;
use super::state::Engine;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::revision::Revision;
use serde_json::{json, Map, Value};
use std::sync::Arc;

impl Engine {
    /// `prompts/get`: checks the name and arguments, then runs the prompt.
    pub(super) fn prompts_get(
        &mut self,
        id: RequestId,
        params: &Value,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        out: &mut Vec<Output>,
    ) {
        let call = match self.prompt_call(params) {
            Ok(call) => call,
            Err(error) => {
                let text = jsonrpc::error_response(Some(&id), &error);
                return self.respond(&id, text, out);
            }
        };
        self.start_handler(id, params, rev, client_info, call, out);
    }

    /// The handler run a `prompts/get` asks for, or its -32602.
    fn prompt_call(&self, params: &Value) -> Result<HandlerCall, Value> {
        let invalid = |message: String, data: Value| {
            jsonrpc::error_object(jsonrpc::INVALID_PARAMS, &message, Some(&data))
        };
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(invalid(
                "Invalid params: `name` must be a string".into(),
                json!({}),
            ));
        };
        let Some(prompt) = self.registry.catalog().prompt(name) else {
            return Err(invalid(
                format!("Unknown prompt: {name}"),
                json!({ "prompt": name }),
            ));
        };
        let given = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => {
                return Err(invalid(
                    "Invalid params: `arguments` must be an object of strings".into(),
                    json!({ "prompt": name }),
                ))
            }
        };
        if let Some((key, _)) = given.iter().find(|(_, v)| !v.is_string()) {
            return Err(invalid(
                format!("Invalid params: prompt arguments are strings, and `{key}` is not"),
                json!({ "prompt": name, "argument": key }),
            ));
        }
        let missing: Vec<&str> = prompt
            .arguments
            .iter()
            .filter(|a| a.required && !given.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(invalid(
                format!(
                    "Invalid params: prompt \"{name}\" needs the argument(s) {}",
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                json!({ "prompt": name, "missing": missing }),
            ));
        }
        // Arguments the prompt does not declare are left out: its R
        // function could not take them.
        let arguments = given
            .into_iter()
            .filter(|(k, _)| prompt.arguments.iter().any(|a| &a.name == k))
            .collect();
        Ok(HandlerCall {
            handler: prompt.handler,
            arguments,
            purpose: Purpose::Prompt {
                description: prompt.display.description.clone(),
            },
            may_ask: true,
        })
    }
}
