//! A tool call's arguments: kept as the text the client sent until they are
//! read and checked, once. Small ones are read as the job is made, so that
//! R's thread does not spend its time on them; large ones by the thread
//! that runs the tool, so that neither the reader thread nor the engine's
//! lock waits for them. No tree is built (or copied) for the params around
//! them.

use super::job::Job;
use crate::engine::registry::{Registry, Tool};
use crate::engine::result::ToolResult;
use crate::protocol::validation::Problems;
use crate::util::shared_text::SharedText;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What a request keeps of its params as the client wrote them.
#[derive(Default)]
pub(super) struct Verbatim {
    /// `_meta` of a `tools/call`, for its progress token's exact spelling.
    pub(super) meta: Option<Box<RawValue>>,
    /// The `arguments` object of a `tools/call`, read and checked later: a
    /// slice of the line it came in.
    pub(super) arguments: Option<SharedText>,
}

/// A request's params, parsed. A `tools/call` keeps its arguments object
/// as text (see [`Verbatim`]), so no tree is built for it here.
pub(super) fn read_params(
    method: &str,
    raw: Option<&SharedText>,
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
                verbatim.arguments = Some(raw.slice(value.get()));
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

/// Arguments up to this size are read as the job is made, on the thread
/// that read the request, so that R's thread (the one that runs tools, and
/// the bottleneck of pipelined calls) does not spend its time on them.
/// Larger ones wait for the tool's thread: reading them under the engine's
/// lock would hold up the answers to other requests.
pub const EARLY_ARGUMENTS_MAX: usize = 8 * 1024;

impl Job {
    /// Reads the arguments the client sent into [`Job::arguments`] and checks
    /// them against the tool's input schema; a `null` for an optional
    /// argument means "not given" and leaves it out. The thread that runs
    /// the tool calls this, off the engine's lock, so a large message delays
    /// nothing else; small arguments were read already (see
    /// [`EARLY_ARGUMENTS_MAX`]) and this gives what that reading found.
    /// On failure: the tool error the call is answered with.
    pub fn read_arguments(&mut self, registry: &Registry) -> Result<(), ToolResult> {
        match self.read_early.take() {
            Some(outcome) => outcome,
            None => self.read_sent_arguments(registry),
        }
    }

    /// Checks the arguments the client sent, as [`Job::read_arguments`]
    /// does, but leaves large ones as text: they stay in
    /// [`Job::sent_arguments`], checked, and no tree is built for them
    /// (small ones were read already and are in [`Job::arguments`]). For
    /// an embedder that reads the text straight into its own values.
    pub fn check_arguments(&mut self, registry: &Registry) -> Result<(), ToolResult> {
        if let Some(outcome) = self.read_early.take() {
            return outcome;
        }
        let Some(sent) = &self.sent_arguments else {
            return self.read_sent_arguments(registry);
        };
        let tool = registry.tool(self.tool);
        tool.input_validator
            .check(sent, true)
            .map_err(|problems| invalid_arguments(&tool.def.name, &problems))
    }

    /// Reads small arguments now (see [`EARLY_ARGUMENTS_MAX`]), keeping what
    /// was found for [`Job::read_arguments`].
    pub(super) fn read_small_arguments(&mut self, registry: &Registry) {
        let small = self
            .sent_arguments
            .as_ref()
            .is_none_or(|sent| sent.len() <= EARLY_ARGUMENTS_MAX);
        if small {
            self.read_early = Some(self.read_sent_arguments(registry));
        }
    }

    fn read_sent_arguments(&mut self, registry: &Registry) -> Result<(), ToolResult> {
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
            Err(problems) => Err(invalid_arguments(&tool.def.name, &problems)),
        }
    }
}

fn invalid_arguments(tool: &str, problems: &Problems) -> ToolResult {
    ToolResult::error(format!(
        "Invalid arguments for tool \"{tool}\": {}",
        problems.summary()
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_a_slice_of_the_params_not_a_copy() {
        let params = SharedText::from(
            r#"{"name":"t","arguments":{"x":[0,0,0]},"_meta":{"progressToken":7}}"#,
        );
        let (read, verbatim) = read_params("tools/call", Some(&params)).unwrap();
        let arguments = verbatim.arguments.expect("arguments kept as text");
        assert_eq!(&*arguments, r#"{"x":[0,0,0]}"#);
        let base = params.as_ptr() as usize;
        let at = arguments.as_ptr() as usize;
        assert!(at > base && at + arguments.len() < base + params.len());
        // The other members are read as values; arguments are left out.
        assert_eq!(
            read,
            serde_json::json!({"name": "t", "_meta": {"progressToken": 7}})
        );
    }
}
