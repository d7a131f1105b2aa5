//! The tools a server offers: checked, compiled and pre-rendered once,
//! so `tools/list` is a copy and `tools/call` a lookup.
//!
//! A registry never changes: a server that adds or removes tools,
//! resources or prompts while it serves builds a new one (reusing what is
//! compiled already) and puts it in its [`Live`] slot in one step, so a
//! request sees the old set or the new one, never half of each. A call
//! keeps the registry it started with until it ends.

use crate::engine::catalog::Catalog;
use crate::protocol::app;
use crate::protocol::revision::Revision;
use crate::protocol::tool::{self, ToolDef};
use crate::protocol::validation::Checker;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock, Weak};

/// A tool (or a catalog entry's handler) with its compiled schemas.
pub struct Tool {
    pub def: ToolDef,
    /// How the embedder (the R side) names this entry's function: stable
    /// while the entry is served, whatever its position.
    pub key: usize,
    pub input_validator: Checker,
    pub output_validator: Option<Checker>,
}

/// Which lists: tools, resources (with templates), prompts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kinds {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
}

impl Kinds {
    pub const ALL: Kinds = Kinds {
        tools: true,
        resources: true,
        prompts: true,
    };

    pub fn is_empty(&self) -> bool {
        !(self.tools || self.resources || self.prompts)
    }

    pub fn or(self, other: Kinds) -> Kinds {
        Kinds {
            tools: self.tools || other.tools,
            resources: self.resources || other.resources,
            prompts: self.prompts || other.prompts,
        }
    }

    pub fn and(self, other: Kinds) -> Kinds {
        Kinds {
            tools: self.tools && other.tools,
            resources: self.resources && other.resources,
            prompts: self.prompts && other.prompts,
        }
    }
}

/// One entry of a registry being built: a definition to compile, or one
/// the previous registry has compiled already (found by its key).
// Built once per entry and change, and consumed at once: not worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Entry {
    New { key: usize, def: ToolDef },
    Kept { key: usize },
}

pub struct Registry {
    tools: Vec<Arc<Tool>>,
    by_name: HashMap<String, usize>,
    by_key: HashMap<usize, usize>,
    /// The JSON array of tool definitions, one per revision (index = position
    /// in `Revision::ALL`), for clients without the MCP Apps extension.
    lists: Vec<String>,
    /// The same for clients that declared the extension, when any tool
    /// takes part in it (see [`crate::protocol::app`]).
    app_lists: Option<Vec<String>>,
    /// Resources, templates and prompts; their handlers follow the tools
    /// (from `catalog.handlers_from` on), never listed nor callable by name.
    catalog: Catalog,
    /// The capabilities beyond tools declared so far. Never withdrawn once
    /// declared: a client was told the server serves them.
    offers: Offers,
    /// Lists that have changed since the server started.
    changed: Kinds,
}

/// Capabilities beyond tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offers {
    pub resources: bool,
    pub prompts: bool,
    pub completions: bool,
    /// The MCP Apps extension: a tool has `_meta.ui`, or a resource is an app.
    pub apps: bool,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Registry({} entries)", self.tools.len())
    }
}

impl Registry {
    /// Checks names and schemas and compiles every tool. Errors read as R
    /// errors for the user who wrote the definitions.
    pub fn new(defs: Vec<ToolDef>) -> Result<Registry, String> {
        Registry::build(numbered(defs), None, None)
    }

    /// A registry whose entries from `catalog.handlers_from` on are the
    /// handlers of the catalog's resources, prompts and completions: they
    /// run like tools but are neither listed nor found by name, and their
    /// names need not be unique among the tools.
    pub fn with_catalog(defs: Vec<ToolDef>, catalog_json: &str) -> Result<Registry, String> {
        Registry::build(numbered(defs), Some(catalog_json), None)
    }

    /// The registry of `entries` (tools, then the catalog's handlers when
    /// there is a catalog), checked as at start-up. `previous` is the
    /// registry it replaces: its compiled entries are reused by key, the
    /// capabilities it declared stay declared, and the lists that differ
    /// from its own are marked changed.
    pub fn build(
        entries: Vec<Entry>,
        catalog_json: Option<&str>,
        previous: Option<&Registry>,
    ) -> Result<Registry, String> {
        let catalog = match catalog_json {
            Some(text) => Catalog::from_json(text, entries.len())?,
            None => Catalog::empty(entries.len()),
        };
        let mut keys = HashSet::new();
        let mut tools: Vec<Arc<Tool>> = Vec::with_capacity(entries.len());
        for (position, entry) in entries.into_iter().enumerate() {
            let handler = position >= catalog.handlers_from;
            let tool = match entry {
                Entry::Kept { key } => previous
                    .and_then(|p| p.by_key(key))
                    .ok_or_else(|| format!("internal: no compiled entry with key {key}"))?,
                Entry::New { key, def } if handler => Arc::new(compile_handler(def, key)?),
                Entry::New { key, def } => Arc::new(compile_tool(def, key)?),
            };
            if !keys.insert(tool.key) {
                return Err(format!("internal: the key {} is given twice", tool.key));
            }
            tools.push(tool);
        }
        let listed = &tools[..catalog.handlers_from.min(tools.len())];
        check_unique(listed.iter().map(|t| &t.def))?;
        let by_name = listed
            .iter()
            .enumerate()
            .map(|(i, t)| (t.def.name.clone(), i))
            .collect();
        let by_key = tools.iter().enumerate().map(|(i, t)| (t.key, i)).collect();
        let render = |tool: &dyn Fn(&ToolDef, Revision) -> Option<Value>| -> Vec<String> {
            Revision::ALL
                .iter()
                .map(|&rev| {
                    let tools = listed.iter().filter_map(|t| tool(&t.def, rev)).collect();
                    Value::Array(tools).to_string()
                })
                .collect()
        };
        let lists = render(&app::without_ui);
        let app_lists = listed
            .iter()
            .any(|t| app::has_ui(&t.def))
            .then(|| render(&app::with_ui));
        let mut registry = Registry {
            tools,
            by_name,
            by_key,
            lists,
            app_lists,
            offers: Offers::default(),
            changed: Kinds::default(),
            catalog,
        };
        registry.offers = registry.catalog_offers();
        if let Some(previous) = previous {
            registry.offers = Offers {
                resources: registry.offers.resources || previous.offers.resources,
                prompts: registry.offers.prompts || previous.offers.prompts,
                completions: registry.offers.completions || previous.offers.completions,
                apps: registry.offers.apps || previous.offers.apps,
            };
            registry.changed = previous.changed.or(registry.changes_from(previous));
        }
        Ok(registry)
    }

    /// What the catalog alone makes the server declare.
    fn catalog_offers(&self) -> Offers {
        let c = &self.catalog;
        Offers {
            resources: c.has_resources() || c.declares_resources,
            prompts: c.has_prompts() || c.declares_prompts,
            completions: c.has_completions() || c.declares_prompts || c.declares_resources,
            apps: self.app_lists.is_some() || c.has_apps(),
        }
    }

    /// The lists that read differently here than in `old` (in any
    /// revision's rendering).
    pub fn changes_from(&self, old: &Registry) -> Kinds {
        use crate::engine::catalog::ListKind;
        let catalog_differs = |kinds: &[ListKind]| {
            Revision::ALL.iter().any(|&rev| {
                kinds.iter().any(|&kind| {
                    self.catalog.list_json(kind, rev) != old.catalog.list_json(kind, rev)
                })
            })
        };
        Kinds {
            tools: self.lists != old.lists || self.app_lists != old.app_lists,
            resources: catalog_differs(&[ListKind::Resources, ListKind::Templates]),
            prompts: catalog_differs(&[ListKind::Prompts]),
        }
    }

    /// The lists that have changed since the server started.
    pub fn changed(&self) -> Kinds {
        self.changed
    }

    /// The capabilities beyond tools this server declares.
    pub fn offers(&self) -> Offers {
        self.offers
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

    /// The entry with this key, if served here.
    pub fn by_key(&self, key: usize) -> Option<Arc<Tool>> {
        self.by_key.get(&key).map(|&i| self.tools[i].clone())
    }

    /// The index of the entry with this key, if served here.
    pub fn index_of_key(&self, key: usize) -> Option<usize> {
        self.by_key.get(&key).copied()
    }

    /// The keys of every entry (tools and handlers).
    pub fn keys(&self) -> impl Iterator<Item = usize> + '_ {
        self.tools.iter().map(|t| t.key)
    }

    /// Whether any tool may run as a task.
    pub fn offers_tasks(&self) -> bool {
        self.tools
            .iter()
            .any(|t| t.def.task_support != crate::protocol::tool::TaskSupport::Forbidden)
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The `tools` array of a `tools/list` result for `rev`, as JSON text.
    pub fn list_json(&self, rev: Revision) -> &str {
        self.list_json_for(rev, false)
    }

    /// The same for a client that declared the MCP Apps extension (`apps`)
    /// or not.
    pub fn list_json_for(&self, rev: Revision, apps: bool) -> &str {
        let index = Revision::ALL.iter().position(|&r| r == rev).unwrap_or(0);
        match (&self.app_lists, apps) {
            (Some(lists), true) => &lists[index],
            _ => &self.lists[index],
        }
    }
}

/// Entries keyed by their position, as a server that never changes has them.
fn numbered(defs: Vec<ToolDef>) -> Vec<Entry> {
    defs.into_iter()
        .enumerate()
        .map(|(key, def)| Entry::New { key, def })
        .collect()
}

/// The registry a server serves now, replaced whole by each change; and
/// the earlier ones calls still hold, so that their entries' keys stay
/// reserved until the last of those calls ends.
pub struct Live {
    current: RwLock<Arc<Registry>>,
    earlier: Mutex<Vec<Weak<Registry>>>,
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

impl Live {
    pub fn new(registry: Arc<Registry>) -> Arc<Live> {
        Arc::new(Live {
            current: RwLock::new(registry),
            earlier: Mutex::new(Vec::new()),
        })
    }

    /// The registry served now.
    pub fn current(&self) -> Arc<Registry> {
        read(&self.current).clone()
    }

    /// Serves `registry` from now on; returns the one it replaces.
    pub fn replace(&self, registry: Arc<Registry>) -> Arc<Registry> {
        let old = std::mem::replace(
            &mut *self.current.write().unwrap_or_else(|p| p.into_inner()),
            registry,
        );
        let mut earlier = self.earlier.lock().unwrap_or_else(|p| p.into_inner());
        // Bounded: only registries some call still holds stay.
        earlier.retain(|r| r.strong_count() > 0);
        earlier.push(Arc::downgrade(&old));
        old
    }

    /// The keys of entries served now or held by a call still running or
    /// queued: a key outside these names no entry any more, and may be
    /// given to a new one.
    pub fn live_keys(&self) -> Vec<usize> {
        let mut keys: HashSet<usize> = self.current().keys().collect();
        let earlier = self.earlier.lock().unwrap_or_else(|p| p.into_inner());
        for registry in earlier.iter().filter_map(Weak::upgrade) {
            keys.extend(registry.keys());
        }
        let mut keys: Vec<usize> = keys.into_iter().collect();
        keys.sort_unstable();
        keys
    }
}

fn check_unique<'a>(defs: impl Iterator<Item = &'a ToolDef>) -> Result<(), String> {
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

fn compile_handler(def: ToolDef, key: usize) -> Result<Tool, String> {
    let input_validator = Checker::compile(&def.input_schema)
        .map_err(|e| format!("handler \"{}\": invalid input schema: {e}", def.name))?;
    Ok(Tool {
        def,
        key,
        input_validator,
        output_validator: None,
    })
}

fn compile_tool(def: ToolDef, key: usize) -> Result<Tool, String> {
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
                .map_err(|e| format!("Tool \"{}\": invalid output schema: {e}", def.name))?
                .naming(crate::protocol::schema::Naming::Fields),
        ),
        None => None,
    };
    Ok(Tool {
        def,
        key,
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
