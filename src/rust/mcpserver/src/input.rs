//! Input requests a tool sends through the client (`mcp_elicit()`,
//! `mcp_sample()`, `mcp_roots()`, `mcp_ask()`): read from their R form, and
//! their answers turned into R values.

use crate::from_json::{self, Shape};
use crate::rvalue::{field, RValue};
use crate::to_json;
use extendr_api::prelude::*;
use mcp_core::engine::{is_answer_to, INPUT_METHODS};
use serde_json::{json, Value};

/// One request for input, ready for the engine.
pub struct InputRequest {
    pub method: String,
    /// `{method, params}`, as the engine sends or lists it.
    pub request: Value,
    /// How the answer becomes an R value.
    shape: Shape,
}

/// Reads `list(method, params, form)` as the R side builds it: `params` a
/// named list (or `NULL`), `form` the type helper of an elicitation's form.
pub fn read_request(spec: RValue) -> Result<InputRequest, String> {
    let method = field(spec, "method")
        .as_single_string()
        .map(|m| m.into_owned())
        .filter(|m| INPUT_METHODS.contains(&m.as_str()))
        .ok_or_else(|| {
            format!(
                "an input request's method must be one of {}",
                INPUT_METHODS.join(", ")
            )
        })?;
    let params = field(spec, "params");
    let mut params = if params.is_null() {
        json!({})
    } else {
        let text = to_json::to_json(params).map_err(|e| e.to_string())?;
        serde_json::from_str(&text).map_err(|e| e.to_string())?
    };
    if !params.is_object() {
        return Err("an input request's params must be a named list".into());
    }
    let shape = if method == "elicitation/create" {
        let (form, content) = crate::types::elicitation_form(field(spec, "form"))?;
        params["requestedSchema"] = form;
        Shape::Object(vec![
            ("action".into(), Shape::String),
            ("content".into(), content),
        ])
    } else {
        Shape::Raw
    };
    Ok(InputRequest {
        request: json!({ "method": method, "params": params }),
        method,
        shape,
    })
}

/// The answer as an R value, or why it cannot be one (an answer of another
/// method's kind, or text R cannot hold).
pub fn answer_value(request: &InputRequest, answer: &Value) -> Result<Robj, String> {
    if !is_answer_to(&request.method, answer) {
        return Err(format!("it is not an answer to `{}`", request.method));
    }
    let accepted = answer.get("action").and_then(Value::as_str) == Some("accept");
    if let (true, true, Some(content)) = (
        request.method == "elicitation/create",
        accepted,
        answer.get("content").filter(|c| !c.is_null()),
    ) {
        let form = &request.request["params"]["requestedSchema"];
        mcp_core::protocol::elicitation::check_content(form, content)?;
    }
    let mut path = "answer".to_string();
    from_json::check(answer, &request.shape, &mut path)?;
    // SAFETY: R's main thread; checked above; protected by Robj at once.
    Ok(unsafe { Robj::from_sexp(from_json::build(answer, &request.shape)) })
}
