//! What a server offers besides tools: resources, resource templates and
//! prompts, each backed by a handler (a hidden entry of the registry that
//! the R side runs like a tool), and the completers of their arguments.
//!
//! The R side describes the catalog as one JSON object (see
//! [`Catalog::from_json`]); it is checked once at start-up, and each list
//! is rendered per revision then, so listing is a copy.

use crate::protocol::revision::Revision;
use crate::protocol::uri_template::UriTemplate;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Fields a resource, template or prompt shares with what clients display.
#[derive(Debug, Clone, Default)]
pub struct Display {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub icons: Option<Value>,
    pub meta: Option<Map<String, Value>>,
}

#[derive(Debug, Clone)]
pub struct ResourceDef {
    pub uri: String,
    pub display: Display,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
    pub annotations: Option<Map<String, Value>>,
    /// Registry index of the handler that reads it.
    pub handler: usize,
    /// Whether `resources/list` shows it: an app's document (see
    /// [`crate::protocol::app`]) is found through its tools, and may be left out.
    pub listed: bool,
}

#[derive(Debug, Clone)]
pub struct TemplateDef {
    pub template: UriTemplate,
    pub display: Display,
    pub mime_type: Option<String>,
    pub annotations: Option<Map<String, Value>>,
    pub handler: usize,
    /// Registry index of the completer of each variable that has one.
    pub completers: HashMap<String, usize>,
}

#[derive(Debug, Clone)]
pub struct PromptArgument {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

#[derive(Debug, Clone)]
pub struct PromptDef {
    pub display: Display,
    pub arguments: Vec<PromptArgument>,
    pub handler: usize,
    pub completers: HashMap<String, usize>,
}

/// Everything but tools, in the order the user gave.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub resources: Vec<ResourceDef>,
    pub templates: Vec<TemplateDef>,
    pub prompts: Vec<PromptDef>,
    /// Registry indices from here on are handlers, not tools.
    pub handlers_from: usize,
    /// The server was told to serve resources (or prompts) even while it
    /// has none: it declares the capability, for entries added later.
    pub declares_resources: bool,
    pub declares_prompts: bool,
    /// The handler list methods run as when the server has R middleware
    /// (see [`crate::engine::middleware`]); `None` answers them at once.
    pub list_handler: Option<usize>,
    /// `resources/list`, `resources/templates/list` and `prompts/list`
    /// arrays per revision (index = position in `Revision::ALL`).
    lists: Vec<[String; 3]>,
}

/// Which list of [`Catalog::list_json`].
#[derive(Debug, Clone, Copy)]
pub enum ListKind {
    Resources = 0,
    Templates = 1,
    Prompts = 2,
}

impl Catalog {
    /// Reads the catalog the R side wrote. `handlers` is the registry's
    /// size: every handler index must point into it, at or after
    /// `handlersFrom`. Errors read as R errors for the user.
    pub fn from_json(text: &str, handlers: usize) -> Result<Catalog, String> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("invalid catalog: {e}"))?;
        let handlers_from = value["handlersFrom"]
            .as_u64()
            .ok_or("invalid catalog: no handlersFrom")? as usize;
        let reader = Reader {
            first: handlers_from,
            end: handlers,
        };
        let mut catalog = Catalog {
            handlers_from,
            declares_resources: value["serves"]["resources"].as_bool() == Some(true),
            declares_prompts: value["serves"]["prompts"].as_bool() == Some(true),
            ..Catalog::default()
        };
        if !value["listHandler"].is_null() {
            catalog.list_handler = Some(reader.handler(&value, "listHandler")?);
        }
        for item in array(&value, "resources") {
            catalog.resources.push(reader.resource(item)?);
        }
        for item in array(&value, "templates") {
            catalog.templates.push(reader.template(item)?);
        }
        for item in array(&value, "prompts") {
            catalog.prompts.push(reader.prompt(item)?);
        }
        catalog.check_unique()?;
        catalog.lists = Revision::ALL
            .iter()
            .map(|&rev| catalog.render_lists(rev))
            .collect();
        Ok(catalog)
    }

    /// A catalog with nothing in it, for a registry of `tools` tools.
    pub fn empty(tools: usize) -> Catalog {
        Catalog {
            handlers_from: tools,
            ..Catalog::default()
        }
    }

    pub fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// Whether a resource is an MCP App's document.
    pub fn has_apps(&self) -> bool {
        self.resources
            .iter()
            .any(|r| r.mime_type.as_deref() == Some(crate::protocol::app::MIME_TYPE))
    }

    pub fn has_prompts(&self) -> bool {
        !self.prompts.is_empty()
    }

    /// Whether `completion/complete` is served: there is something to complete.
    pub fn has_completions(&self) -> bool {
        !self.prompts.is_empty() || !self.templates.is_empty()
    }

    /// One list for `rev`, as JSON array text.
    pub fn list_json(&self, kind: ListKind, rev: Revision) -> &str {
        let index = Revision::ALL.iter().position(|&r| r == rev).unwrap_or(0);
        match self.lists.get(index) {
            Some(lists) => &lists[kind as usize],
            None => "[]",
        }
    }

    pub fn resource(&self, uri: &str) -> Option<&ResourceDef> {
        self.resources.iter().find(|r| r.uri == uri)
    }

    pub fn template(&self, uri_template: &str) -> Option<&TemplateDef> {
        self.templates
            .iter()
            .find(|t| t.template.as_str() == uri_template)
    }

    pub fn prompt(&self, name: &str) -> Option<&PromptDef> {
        self.prompts.iter().find(|p| p.display.name == name)
    }

    fn check_unique(&self) -> Result<(), String> {
        let duplicate = |names: Vec<&str>, what: &str| -> Result<(), String> {
            let mut seen = std::collections::HashSet::new();
            match names.into_iter().find(|n| !seen.insert(*n)) {
                Some(name) => Err(format!("{what} must be unique: \"{name}\" is given twice")),
                None => Ok(()),
            }
        };
        duplicate(
            self.resources.iter().map(|r| r.uri.as_str()).collect(),
            "Resource URIs",
        )?;
        duplicate(
            self.templates.iter().map(|t| t.template.as_str()).collect(),
            "Resource templates",
        )?;
        duplicate(
            self.prompts
                .iter()
                .map(|p| p.display.name.as_str())
                .collect(),
            "Prompt names",
        )
    }

    fn render_lists(&self, rev: Revision) -> [String; 3] {
        let resources: Vec<Value> = self
            .resources
            .iter()
            .filter(|r| r.listed)
            .map(|r| r.to_wire(rev))
            .collect();
        let templates: Vec<Value> = self.templates.iter().map(|t| t.to_wire(rev)).collect();
        let prompts: Vec<Value> = self.prompts.iter().map(|p| p.to_wire(rev)).collect();
        [
            Value::Array(resources).to_string(),
            Value::Array(templates).to_string(),
            Value::Array(prompts).to_string(),
        ]
    }
}

impl ResourceDef {
    fn to_wire(&self, rev: Revision) -> Value {
        let mut map = Map::new();
        map.insert("uri".into(), Value::from(self.uri.as_str()));
        self.display.write_name_title(&mut map, rev);
        put(&mut map, "description", &self.display.description);
        put(&mut map, "mimeType", &self.mime_type);
        if let Some(size) = self.size {
            map.insert("size".into(), Value::from(size));
        }
        write_annotations(&mut map, &self.annotations, rev);
        self.display.write_icons_meta(&mut map, rev);
        Value::Object(map)
    }
}

impl TemplateDef {
    fn to_wire(&self, rev: Revision) -> Value {
        let mut map = Map::new();
        map.insert("uriTemplate".into(), Value::from(self.template.as_str()));
        self.display.write_name_title(&mut map, rev);
        put(&mut map, "description", &self.display.description);
        put(&mut map, "mimeType", &self.mime_type);
        write_annotations(&mut map, &self.annotations, rev);
        self.display.write_icons_meta(&mut map, rev);
        Value::Object(map)
    }
}

impl PromptDef {
    fn to_wire(&self, rev: Revision) -> Value {
        let mut map = Map::new();
        self.display.write_name_title(&mut map, rev);
        put(&mut map, "description", &self.display.description);
        if !self.arguments.is_empty() {
            let arguments = self.arguments.iter().map(|a| a.to_wire(rev)).collect();
            map.insert("arguments".into(), Value::Array(arguments));
        }
        self.display.write_icons_meta(&mut map, rev);
        Value::Object(map)
    }
}

impl PromptArgument {
    fn to_wire(&self, rev: Revision) -> Value {
        let mut map = Map::new();
        map.insert("name".into(), Value::from(self.name.as_str()));
        if rev.has_structured_output() {
            put(&mut map, "title", &self.title);
        }
        put(&mut map, "description", &self.description);
        map.insert("required".into(), Value::from(self.required));
        Value::Object(map)
    }
}

impl Display {
    /// `title` came with 2025-06-18 (as `_meta`).
    fn write_name_title(&self, map: &mut Map<String, Value>, rev: Revision) {
        map.insert("name".into(), Value::from(self.name.as_str()));
        if rev.has_structured_output() {
            put(map, "title", &self.title);
        }
    }

    fn write_icons_meta(&self, map: &mut Map<String, Value>, rev: Revision) {
        if let (Some(icons), true) = (&self.icons, rev.has_icons()) {
            map.insert("icons".into(), icons.clone());
        }
        if let (Some(meta), true) = (&self.meta, rev.has_structured_output()) {
            map.insert("_meta".into(), Value::Object(meta.clone()));
        }
    }
}

fn write_annotations(
    map: &mut Map<String, Value>,
    annotations: &Option<Map<String, Value>>,
    rev: Revision,
) {
    let Some(annotations) = annotations else {
        return;
    };
    let mut annotations = annotations.clone();
    if !rev.has_last_modified() {
        annotations.shift_remove("lastModified");
    }
    if !annotations.is_empty() {
        map.insert("annotations".into(), Value::Object(annotations));
    }
}

fn put(map: &mut Map<String, Value>, key: &str, value: &Option<String>) {
    if let Some(value) = value {
        map.insert(key.into(), Value::from(value.as_str()));
    }
}

fn array<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    value[key].as_array().into_iter().flatten()
}

/// Reads catalog entries, checking handler indices against the registry.
struct Reader {
    first: usize,
    end: usize,
}

impl Reader {
    fn handler(&self, item: &Value, key: &str) -> Result<usize, String> {
        match item[key].as_u64().map(|h| h as usize) {
            Some(h) if h >= self.first && h < self.end => Ok(h),
            _ => Err(format!("invalid catalog: bad handler index in {item}")),
        }
    }

    fn completers(&self, item: &Value) -> Result<HashMap<String, usize>, String> {
        let mut completers = HashMap::new();
        if let Some(map) = item["completions"].as_object() {
            for name in map.keys() {
                completers.insert(name.clone(), self.handler(&item["completions"], name)?);
            }
        }
        Ok(completers)
    }

    fn resource(&self, item: &Value) -> Result<ResourceDef, String> {
        let uri = required_string(item, "uri", "A resource")?;
        if uri.is_empty() || !uri.contains(':') {
            return Err(format!(
                "Resource \"{uri}\": `uri` must be an absolute URI with a scheme, such as \
                 \"data://mtcars\" or \"file:///path\""
            ));
        }
        Ok(ResourceDef {
            display: display(item, &format!("Resource \"{uri}\""))?,
            mime_type: optional_string(item, "mimeType"),
            size: item["size"].as_u64(),
            annotations: item["annotations"]
                .as_object()
                .filter(|a| !a.is_empty())
                .cloned(),
            handler: self.handler(item, "handler")?,
            listed: item["listed"].as_bool() != Some(false),
            uri,
        })
    }

    fn template(&self, item: &Value) -> Result<TemplateDef, String> {
        let text = required_string(item, "uriTemplate", "A resource template")?;
        let template = UriTemplate::parse(&text)?;
        let completers = self.completers(item)?;
        if let Some(name) = completers
            .keys()
            .find(|n| !template.variables().contains(&n.as_str()))
        {
            return Err(format!(
                "Resource template \"{text}\": a completion is given for `{name}`, which is not \
                 one of its variables"
            ));
        }
        Ok(TemplateDef {
            display: display(item, &format!("Resource template \"{text}\""))?,
            mime_type: optional_string(item, "mimeType"),
            annotations: item["annotations"]
                .as_object()
                .filter(|a| !a.is_empty())
                .cloned(),
            handler: self.handler(item, "handler")?,
            completers,
            template,
        })
    }

    fn prompt(&self, item: &Value) -> Result<PromptDef, String> {
        let display = display(item, "A prompt")?;
        let what = format!("Prompt \"{}\"", display.name);
        let mut arguments: Vec<PromptArgument> = Vec::new();
        for arg in array(item, "arguments") {
            let name = required_string(arg, "name", &format!("{what}: an argument"))?;
            if arguments.iter().any(|a| a.name == name) {
                return Err(format!("{what}: the argument `{name}` is given twice"));
            }
            arguments.push(PromptArgument {
                title: optional_string(arg, "title"),
                description: optional_string(arg, "description"),
                required: arg["required"].as_bool().unwrap_or(false),
                name,
            });
        }
        let completers = self.completers(item)?;
        if let Some(name) = completers
            .keys()
            .find(|n| !arguments.iter().any(|a| &a.name == *n))
        {
            return Err(format!(
                "{what}: a completion is given for `{name}`, which is not one of its arguments"
            ));
        }
        Ok(PromptDef {
            handler: self.handler(item, "handler")?,
            display,
            arguments,
            completers,
        })
    }
}

fn display(item: &Value, what: &str) -> Result<Display, String> {
    let name = required_string(item, "name", what)?;
    if name.is_empty() {
        return Err(format!("{what}: `name` must be a non-empty string"));
    }
    Ok(Display {
        name,
        title: optional_string(item, "title"),
        description: optional_string(item, "description"),
        icons: item.get("icons").filter(|i| i.is_array()).cloned(),
        meta: item["_meta"].as_object().filter(|m| !m.is_empty()).cloned(),
    })
}

fn required_string(item: &Value, key: &str, what: &str) -> Result<String, String> {
    item[key]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{what}: `{key}` must be a string"))
}

fn optional_string(item: &Value, key: &str) -> Option<String> {
    item[key].as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog(value: Value) -> Result<Catalog, String> {
        Catalog::from_json(&value.to_string(), 10)
    }

    #[test]
    fn bad_entries_are_refused_with_the_reason() {
        let bad = [
            (
                json!({"handlersFrom": 2, "resources": [{"uri": "nope", "name": "a", "handler": 2}]}),
                "absolute URI",
            ),
            (
                json!({"handlersFrom": 2, "resources": [{"uri": "a://b", "name": "a", "handler": 1}]}),
                "handler",
            ),
            (
                json!({"handlersFrom": 2, "resources": [{"uri": "a://b", "name": "a", "handler": 2},
                                                     {"uri": "a://b", "name": "b", "handler": 3}]}),
                "given twice",
            ),
            (
                json!({"handlersFrom": 2, "templates": [{"uriTemplate": "a://{x}{y}", "name": "t", "handler": 2}]}),
                "separated",
            ),
            (
                json!({"handlersFrom": 2, "templates": [{"uriTemplate": "a://{x}", "name": "t", "handler": 2,
                                                      "completions": {"y": 3}}]}),
                "not one of its variables",
            ),
            (
                json!({"handlersFrom": 2, "prompts": [{"name": "p", "handler": 2,
                                                    "arguments": [{"name": "a"}, {"name": "a"}]}]}),
                "twice",
            ),
            (
                json!({"handlersFrom": 2, "prompts": [{"name": "", "handler": 2}]}),
                "non-empty",
            ),
        ];
        for (value, needle) in bad {
            let err = catalog(value.clone()).err().unwrap_or_default();
            assert!(err.contains(needle), "{value}: {err}");
        }
    }

    #[test]
    fn unlisted_resources_are_read_but_not_listed() {
        let c = catalog(json!({"handlersFrom": 0, "resources": [
            {"uri": "ui://chart/app.html", "name": "chart", "mimeType": crate::protocol::app::MIME_TYPE,
             "listed": false, "handler": 0},
            {"uri": "a://b", "name": "b", "handler": 1}]}))
        .unwrap();
        for rev in Revision::ALL {
            let listed: Value =
                serde_json::from_str(c.list_json(ListKind::Resources, rev)).unwrap();
            assert_eq!(listed, json!([{"uri": "a://b", "name": "b"}]), "{rev}");
        }
        assert_eq!(c.resource("ui://chart/app.html").unwrap().handler, 0);
        assert!(c.has_apps() && c.has_resources());
    }

    #[test]
    fn lists_drop_what_a_revision_does_not_know() {
        let c = catalog(json!({"handlersFrom": 0, "resources": [{
            "uri": "a://b", "name": "b", "title": "B", "icons": [{"src": "https://x/i.png"}],
            "_meta": {"k": 1}, "annotations": {"priority": 0.5, "lastModified": "2025-01-01T00:00:00Z"},
            "handler": 0}]}))
        .unwrap();
        let old: Value =
            serde_json::from_str(c.list_json(ListKind::Resources, Revision::V2024_11_05)).unwrap();
        assert_eq!(
            old,
            json!([{"uri": "a://b", "name": "b", "annotations": {"priority": 0.5}}])
        );
        let new: Value =
            serde_json::from_str(c.list_json(ListKind::Resources, Revision::V2025_11_25)).unwrap();
        assert_eq!(new[0]["title"], "B");
        assert_eq!(new[0]["icons"][0]["src"], "https://x/i.png");
        assert_eq!(
            new[0]["annotations"]["lastModified"],
            "2025-01-01T00:00:00Z"
        );
    }
}
