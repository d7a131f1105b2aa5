//! The tools a server offers: checked, compiled and pre-rendered once at
//! start-up, so `tools/list` is a copy and `tools/call` a lookup.

use crate::catalog::Catalog;
use crate::revision::Revision;
use crate::tool::{self, ToolDef};
use crate::validation::Checker;
use serde_json::Value;
use std::collections::HashMap;

/// A tool with its compiled schemas.
pub struct Tool {
    pub def: ToolDef,
    pub input_validator: Checker,
    pub output_validator: Option<Checker>,
}

pub struct Registry {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
    /// The JSON array of tool definitions, one per revision (index = position
    /// in `Revision::ALL`).
    lists: Vec<String>,
    /// Resources, templates and prompts; their handlers follow the tools
    /// (from `catalog.handlers_from` on), never listed nor callable by name.
    catalog: Catalog,
}

impl Registry {
    /// Checks names and schemas and compiles every tool. Errors read as R
    /// errors for the user who wrote the definitions.
    pub fn new(defs: Vec<ToolDef>) -> Result<Registry, String> {
        check_unique(&defs)?;
        let mut tools = Vec::with_capacity(defs.len());
        for def in defs {
            tools.push(compile_tool(def)?);
        }
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.def.name.clone(), i))
            .collect();
        let lists = Revision::ALL
            .iter()
            .map(|&rev| {
                Value::Array(tools.iter().map(|t| t.def.to_wire(rev)).collect()).to_string()
            })
            .collect();
        Ok(Registry {
            tools,
            by_name,
            lists,
            catalog: Catalog::default(),
        })
    }

    /// A registry whose entries from `catalog.handlers_from` on are the
    /// handlers of the catalog's resources, prompts and completions: they
    /// run like tools but are neither listed nor found by name, and their
    /// names need not be unique among the tools.
    pub fn with_catalog(defs: Vec<ToolDef>, catalog_json: &str) -> Result<Registry, String> {
        let catalog = Catalog::from_json(catalog_json, defs.len())?;
        let mut defs = defs;
        let handler_defs = defs.split_off(catalog.handlers_from.min(defs.len()));
        let mut registry = Registry::new(defs)?;
        for def in handler_defs {
            let input_validator = Checker::compile(&def.input_schema)
                .map_err(|e| format!("handler \"{}\": invalid input schema: {e}", def.name))?;
            registry.tools.push(Tool {
                def,
                input_validator,
                output_validator: None,
            });
        }
        registry.catalog = catalog;
        Ok(registry)
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// How many tools (handlers not counted).
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    pub fn tool(&self, index: usize) -> &Tool {
        &self.tools[index]
    }

    /// Whether any tool may run as a task.
    pub fn offers_tasks(&self) -> bool {
        self.tools
            .iter()
            .any(|t| t.def.task_support != crate::tool::TaskSupport::Forbidden)
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The `tools` array of a `tools/list` result for `rev`, as JSON text.
    pub fn list_json(&self, rev: Revision) -> &str {
        let index = Revision::ALL.iter().position(|&r| r == rev).unwrap_or(0);
        &self.lists[index]
    }
}

fn check_unique(defs: &[ToolDef]) -> Result<(), String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut duplicated: Vec<&str> = Vec::new();
    for def in defs {
        let count = seen.entry(def.name.as_str()).or_insert(0);
        *count += 1;
        if *count == 2 {
            duplicated.push(def.name.as_str());
        }
    }
    if duplicated.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "Tool names must be unique. Duplicated names: {}",
            duplicated.join(", ")
        ))
    }
}

fn compile_tool(def: ToolDef) -> Result<Tool, String> {
    // The error quotes the name itself.
    tool::check_name(&def.name)?;
    if !tool::has_object_root(&def.input_schema) {
        return Err(format!(
            "Tool \"{}\": the input schema must have an object root",
            def.name
        ));
    }
    let input_validator = Checker::compile(&def.input_schema)
        .map_err(|e| format!("Tool \"{}\": invalid input schema: {e}", def.name))?;
    let output_validator = match &def.output_schema {
        Some(s) => Some(
            Checker::compile(s)
                .map_err(|e| format!("Tool \"{}\": invalid output schema: {e}", def.name))?,
        ),
        None => None,
    };
    Ok(Tool {
        def,
        input_validator,
        output_validator,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: Some(format!("the {name} tool")),
            input_schema: json!({"type":"object","properties":{},"additionalProperties":false}),
            ..ToolDef::default()
        }
    }

    #[test]
    fn tools_keep_their_order_and_are_found_by_exact_name() {
        let reg = Registry::new(vec![def("b"), def("a"), def("c")]).unwrap();
        let list: Value = serde_json::from_str(reg.list_json(Revision::V2025_11_25)).unwrap();
        let names: Vec<&str> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["b", "a", "c"]);
        assert_eq!(reg.find("a"), Some(1));
        assert_eq!(reg.find("A"), None);
        assert_eq!(reg.find(""), None);
        assert_eq!(reg.len(), 3);
    }

    #[test]
    fn duplicates_are_listed_once_each() {
        let err = Registry::new(vec![
            def("a"),
            def("b"),
            def("a"),
            def("b"),
            def("a"),
            def("c"),
        ])
        .err()
        .unwrap();
        assert_eq!(err, "Tool names must be unique. Duplicated names: a, b");
    }

    #[test]
    fn an_empty_registry_is_fine() {
        let reg = Registry::new(vec![]).unwrap();
        assert!(reg.is_empty());
        assert_eq!(reg.list_json(Revision::V2026_07_28), "[]");
    }

    #[test]
    fn bad_definitions_are_refused() {
        let mut bad = def("x");
        bad.input_schema = json!({"type":"string"});
        assert!(Registry::new(vec![bad])
            .err()
            .unwrap()
            .contains("object root"));
        assert!(Registry::new(vec![def("a b")]).is_err());
        let mut bad = def("y");
        bad.output_schema = Some(json!({"$ref":"#/nowhere"}));
        assert!(Registry::new(vec![bad])
            .err()
            .unwrap()
            .contains("invalid output schema"));
    }
}
