//! `completion/complete`: suggestions for a prompt argument or a resource
//! template variable, from the R function given for it. Arguments without
//! one get an empty list; unknown prompts, templates and arguments -32602.

use super::handlers::{completion_of, HandlerCall};
use super::job::Output;
use super::job::Purpose;
use super::state::Engine;
use crate::protocol::jsonrpc::{self, RequestId};
use crate::protocol::revision::Revision;
use serde_json::{json, Map, Value};
use std::sync::Arc;

impl Engine {
    pub(super) fn complete(
        &mut self,
        id: RequestId,
        params: &Value,
        rev: Revision,
        client_info: Option<Arc<Value>>,
        out: &mut Vec<Output>,
    ) {
        match self.completer_for(params) {
            Err(error) => {
                let text = jsonrpc::error_response(Some(&id), &error);
                self.respond(&id, text, out)
            }
            Ok(None) => {
                let mut body = completion_of(Vec::new());
                if rev.is_modern() {
                    body.insert("resultType".into(), Value::from("complete"));
                    body.insert("_meta".into(), Value::Object(self.server_meta.clone()));
                }
                let text = jsonrpc::success(&id, &Value::Object(body).to_string());
                self.respond(&id, text, out)
            }
            Ok(Some(call)) => self.start_handler(id, params, rev, client_info, call, out),
        }
    }

    /// The completer run a request asks for, `None` for an argument that
    /// has no completer, or the -32602 naming what is unknown.
    fn completer_for(&self, params: &Value) -> Result<Option<HandlerCall>, Value> {
        let invalid = |message: &str, data: Value| {
            jsonrpc::error_object(
                jsonrpc::INVALID_PARAMS,
                &format!("Invalid params: {message}"),
                Some(&data),
            )
        };
        let reference = &params["ref"];
        let (Some(argument), Some(value)) = (
            params["argument"]["name"].as_str(),
            params["argument"]["value"].as_str(),
        ) else {
            return Err(invalid(
                "`argument` must be an object with string `name` and `value`",
                json!({}),
            ));
        };
        let catalog = self.registry.catalog();
        let completers =
            match (reference["type"].as_str(), reference) {
                (Some("ref/prompt"), r) => {
                    let name = r["name"].as_str().unwrap_or_default();
                    let Some(prompt) = catalog.prompt(name) else {
                        return Err(invalid(
                            &format!("unknown prompt \"{name}\""),
                            json!({ "prompt": name }),
                        ));
                    };
                    if !prompt.arguments.iter().any(|a| a.name == argument) {
                        return Err(invalid(
                            &format!("prompt \"{name}\" has no argument `{argument}`"),
                            json!({ "prompt": name, "argument": argument }),
                        ));
                    }
                    &prompt.completers
                }
                (Some("ref/resource"), r) => {
                    let uri = r["uri"].as_str().unwrap_or_default();
                    let Some(template) = catalog.template(uri) else {
                        return Err(invalid(
                            &format!("no resource template \"{uri}\""),
                            json!({ "uri": uri }),
                        ));
                    };
                    if !template.template.variables().contains(&argument) {
                        return Err(invalid(
                            &format!("resource template \"{uri}\" has no variable `{argument}`"),
                            json!({ "uri": uri, "argument": argument }),
                        ));
                    }
                    &template.completers
                }
                _ => return Err(invalid(
                    "`ref` must be {type: \"ref/prompt\", name} or {type: \"ref/resource\", uri}",
                    json!({}),
                )),
            };
        let Some(&handler) = completers.get(argument) else {
            return Ok(None);
        };
        let context = match &params["context"]["arguments"] {
            Value::Object(map) => map
                .iter()
                .filter(|(_, v)| v.is_string())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            _ => Map::new(),
        };
        let mut arguments = Map::new();
        arguments.insert("value".into(), Value::from(value));
        arguments.insert("context".into(), Value::Object(context));
        Ok(Some(HandlerCall {
            handler,
            arguments,
            purpose: Purpose::Complete,
            may_ask: false,
        }))
    }
}
