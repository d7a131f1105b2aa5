//! A tool call's arguments: kept as the text the client sent until the
//! thread that runs the tool reads and checks them, so that neither the
//! reader thread nor the engine's lock waits for a large one, and no tree
//! is built (or copied) for arguments that will be refused.

use super::Job;
use crate::registry::{Registry, Tool};
use crate::result::ToolResult;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a request keeps of its params as the client wrote them.
#[derive(Default)]
pub(super) struct Verbatim {
    /// `_meta` of a `tools/call`, for its progress token's exact spelling.
    pub(super) meta: Option<Box<RawValue>>,
    /// The `arguments` object of a `tools/call`, read and checked later.
    pub(super) arguments: Option<Arc<str>>,
}

/// A request's params, parsed. A `tools/call` keeps its arguments object
/// as text (see [`Verbatim`]), so no tree is built for it here.
pub(super) fn read_params(
    method: &str,
    raw: Option<&RawValue>,
) -> serde_json::Result<(Value, Verbatim)> {
    let Some(raw) = raw else {
        return Ok((Value::Null, Verbatim::default()));
    };
    let members = match method {
        "tools/call" => serde_json::from_str::<Members>(raw.get()).ok(),
        _ => None,
    };
    let Some(Members(members)) = members else {
        return Ok((serde_json::from_str(raw.get())?, Verbatim::default()));
    };
    let mut params = Map::new();
    let mut verbatim = Verbatim::default();
    for (name, value) in members {
        // A later duplicate replaces an earlier one, as when parsed whole.
        params.remove(&name);
        match name.as_str() {
            "arguments" if value.get().starts_with('{') => {
                verbatim.arguments = Some(Arc::from(value.get()));
                continue;
            }
            // Not an object: left in the params, which refuse it.
            "arguments" => verbatim.arguments = None,
            "_meta" => verbatim.meta = Some(value.to_owned()),
            _ => {}
        }
        params.insert(name, serde_json::from_str(value.get())?);
    }
    Ok((Value::Object(params), verbatim))
}

/// An object's members in order, their values unread.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> serde::de::Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(MembersVisitor)
    }
}

impl Job {
    /// Reads the arguments the client sent into [`Job::arguments`] and checks
    /// them against the tool's input schema; a `null` for an optional
    /// argument means "not given" and leaves it out. The thread that runs
    /// the tool calls this, off the engine's lock, so a large message delays
    /// nothing else. On failure: the tool error the call is answered with.
    pub fn read_arguments(&mut self, registry: &Registry) -> Result<(), ToolResult> {
        let sent = self.sent_arguments.take();
        let tool = registry.tool(self.tool);
        match tool
            .input_validator
            .read(sent.as_deref().unwrap_or("{}"), true)
        {
            Ok(Value::Object(arguments)) => {
                self.arguments = arguments;
                Ok(())
            }
            Ok(_) => Err(ToolResult::error(format!(
                "Invalid arguments for tool \"{}\": not an object",
                tool.def.name
            ))),
            Err(problems) => Err(ToolResult::error(format!(
                "Invalid arguments for tool \"{}\": {}",
                tool.def.name,
                problems.summary()
            ))),
        }
    }
}

/// The arguments a `requestState` is bound to: the object as sent,
/// without optional `null`s, unchecked. Read only when a state is
/// issued or verified, so other calls never parse them here.
pub(super) fn arguments_for_state(tool: &Tool, sent: Option<&str>) -> Map<String, Value> {
    let Some(Ok(Value::Object(mut arguments))) = sent.map(serde_json::from_str) else {
        return Map::new();
    };
    let schema = &tool.def.input_schema;
    let required = |name: &str| {
        schema["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|n| n == name))
    };
    arguments.retain(|name, value| !value.is_null() || required(name));
    arguments
}
