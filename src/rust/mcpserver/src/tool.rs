//! Tool definitions: the checks `tool()` runs, and the definition a client
//! receives for each protocol revision.

use crate::check;
use crate::content::{json_value, read_meta};
use crate::from_json::Shape;
use crate::rvalue::{
    element, field, flag_value, is_flag, is_list, is_named_list, is_single_string, single_number,
    RValue,
};
use crate::types::{self, object_schema, TypeNode, TypeSpec};
use extendr_api::prelude::*;
use extendr_ffi::SEXPTYPE;
use mcp_core::protocol::revision::Revision;
use mcp_core::protocol::tool::{check_name, OutputHints, TaskSupport, ToolDef, SAFE_NAME_LEN};
use serde_json::{Map, Value};

const ANNOTATION_HINTS: [(&str, &str); 4] = [
    ("read_only_hint", "readOnlyHint"),
    ("destructive_hint", "destructiveHint"),
    ("idempotent_hint", "idempotentHint"),
    ("open_world_hint", "openWorldHint"),
];

/// Checks `tool()`'s arguments in mcplite's order, then the new ones.
/// Returns `list(keep, annotations, warning)`: which `arguments` entries to
/// keep (`type_ignore()` ones are dropped), the annotations in wire form,
/// and a warning to give, or the error.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn check_tool_(
    fun: Robj,
    description: Robj,
    n_dots: i32,
    name: Robj,
    arguments: Robj,
    annotations: Robj,
    output_schema: Robj,
    title: Robj,
    icons: Robj,
    meta: Robj,
    timeout: Robj,
    convert: Robj,
    task: Robj,
    formals: Robj,
) -> Robj {
    let args = ToolArgs {
        fun: RValue::of(&fun),
        description: RValue::of(&description),
        n_dots,
        name: RValue::of(&name),
        arguments: RValue::of(&arguments),
        annotations: RValue::of(&annotations),
        output_schema: RValue::of(&output_schema),
        title: RValue::of(&title),
        icons: RValue::of(&icons),
        meta: RValue::of(&meta),
        timeout: RValue::of(&timeout),
        convert: RValue::of(&convert),
        task: RValue::of(&task),
        formals: RValue::of(&formals),
    };
    match args.check() {
        Err(e) => check::fail(e),
        Ok(checked) => {
            let warning: Robj = match checked.warning {
                Some(w) => w.into_robj(),
                None => ().into_robj(),
            };
            List::from_pairs(vec![
                ("keep", Robj::from(checked.keep)),
                ("annotations", checked.annotations),
                ("warning", warning),
            ])
            .into_robj()
        }
    }
}

struct ToolArgs {
    fun: RValue,
    description: RValue,
    n_dots: i32,
    name: RValue,
    arguments: RValue,
    annotations: RValue,
    output_schema: RValue,
    title: RValue,
    icons: RValue,
    meta: RValue,
    timeout: RValue,
    convert: RValue,
    task: RValue,
    formals: RValue,
}

struct Checked {
    keep: Vec<bool>,
    annotations: Robj,
    warning: Option<String>,
}

fn require(ok: bool, message: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(message.into())
    }
}

impl ToolArgs {
    fn check(&self) -> Result<Checked, String> {
        let is_function = matches!(
            self.fun.kind(),
            SEXPTYPE::CLOSXP | SEXPTYPE::BUILTINSXP | SEXPTYPE::SPECIALSXP
        );
        require(is_function, "`fun` must be a function.")?;
        require(
            is_single_string(self.description),
            "`description` must be a single string.",
        )?;
        require(
            self.n_dots == 0,
            "`...` is not supported; supply argument schemas with `arguments`.",
        )?;
        require(
            !self.name.is_null(),
            "`name` is required when `fun` is anonymous.",
        )?;
        let name = self
            .name
            .as_single_string()
            .ok_or("`name` must be a single string.")?;
        let long = check_name(&name)?;
        require(
            is_named_list(self.arguments),
            "`arguments` must be a named list of type helpers.",
        )?;
        require(
            is_named_list(self.annotations),
            "`annotations` must be a named list.",
        )?;
        check_output_schema(self.output_schema)?;
        let mut keep = Vec::with_capacity(self.arguments.len());
        for i in 0..self.arguments.len() {
            let arg = element(self.arguments, i);
            require(
                types::is_type(arg),
                "Each entry in `arguments` must be a mcpserver or compatible ellmer type helper.",
            )?;
            keep.push(field(arg, "kind").as_single_string().as_deref() != Some("ignore"));
        }
        self.check_formals(&keep)?;
        let annotations = tool_annotations(self.annotations)?;
        require(
            self.title.is_null() || is_single_string(self.title),
            "`title` must be NULL or a single string.",
        )?;
        read_icons(self.icons)?;
        if !self.meta.is_null() {
            read_meta(self.meta)?;
        }
        let timeout_ok =
            self.timeout.is_null() || single_number(self.timeout).is_some_and(|t| t > 0.0);
        require(
            timeout_ok,
            "`timeout` must be NULL or a positive number of seconds.",
        )?;
        require(is_flag(self.convert), "`convert` must be TRUE or FALSE.")?;
        let task_ok = self
            .task
            .as_single_string()
            .is_some_and(|t| TaskSupport::parse(&t).is_some());
        require(
            task_ok,
            "`task` must be one of \"forbidden\", \"optional\", \"required\" or \"deferred\".",
        )?;
        let warning = long.then(|| {
            format!(
                "Tool name \"{name}\" is longer than {SAFE_NAME_LEN} characters; \
                 some clients truncate or reject such names."
            )
        });
        Ok(Checked {
            keep,
            annotations,
            warning,
        })
    }

    /// Declared arguments must be arguments of `fun`, and must not reach
    /// one by R's partial matching (`val` binding to `value`).
    fn check_formals(&self, keep: &[bool]) -> Result<(), String> {
        let formals: Vec<String> = (0..self.formals.len())
            .filter_map(|i| self.formals.string(i).map(|s| s.into_owned()))
            .collect();
        let dots = formals.iter().position(|f| f == "...");
        let names = self.arguments.names();
        for (i, &kept) in keep.iter().enumerate() {
            if !kept {
                continue;
            }
            let arg = names.string(i).unwrap_or_default().into_owned();
            if formals.contains(&arg) {
                continue;
            }
            let before_dots = &formals[..dots.unwrap_or(formals.len())];
            if let Some(target) = before_dots.iter().find(|f| f.starts_with(&arg)) {
                return Err(format!(
                    "Argument `{arg}` would be matched to `{target}` of `fun` by R's partial matching; \
                     name the argument exactly as in the function."
                ));
            }
            if dots.is_none() {
                return Err(format!(
                    "`arguments` declares `{arg}`, which is not an argument of `fun`."
                ));
            }
        }
        Ok(())
    }
}

fn check_output_schema(x: RValue) -> Result<(), String> {
    if x.is_null() {
        return Ok(());
    }
    let ok = types::is_type(x) && field(x, "kind").as_single_string().as_deref() != Some("ignore");
    require(
        ok,
        "`output_schema` must be a mcpserver or compatible ellmer type helper.",
    )
}

/// Tool annotations in wire form: known hints in camelCase (the ellmer
/// snake_case names are accepted too) and type-checked, other keys kept.
fn tool_annotations(x: RValue) -> Result<Robj, String> {
    let names = x.names();
    let mut pairs: Vec<(String, Robj)> = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        let key = names.string(i).unwrap_or_default().into_owned();
        let value = element(x, i);
        let wire = ANNOTATION_HINTS
            .iter()
            .find(|(snake, _)| *snake == key)
            .map_or(key.clone(), |(_, camel)| camel.to_string());
        if ANNOTATION_HINTS.iter().any(|(_, camel)| *camel == wire) {
            require(
                is_flag(value),
                &format!("`annotations${wire}` must be TRUE or FALSE."),
            )?;
        }
        if wire == "title" {
            require(
                is_single_string(value),
                "`annotations$title` must be a single string.",
            )?;
        }
        json_value(value, "annotations")?;
        if pairs.iter().any(|(k, _)| *k == wire) {
            return Err(format!("`annotations` gives `{wire}` twice."));
        }
        // SAFETY: value is an element of an argument R keeps alive.
        pairs.push((wire, unsafe { Robj::from_sexp(value.0) }));
    }
    if pairs.is_empty() {
        return Ok(List::new(0).into_robj());
    }
    Ok(List::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.clone()))).into_robj())
}

/// Icons: `NULL`, or a list of icons, each a named list with `src` and
/// optionally `mime_type`, `sizes` and `theme`. Returned in wire form.
pub fn read_icons(x: RValue) -> Result<Option<Value>, String> {
    if x.is_null() {
        return Ok(None);
    }
    const ICON: &str =
        "`icons` must be a list of icons, each a list with a `src` string and optional \
                        `mime_type`, `sizes` and `theme` (\"light\" or \"dark\").";
    require(is_list(x) && x.len() > 0 && !x.has_class(), ICON)?;
    let mut icons = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        let icon = element(x, i);
        require(is_named_list(icon) && icon.len() > 0, ICON)?;
        let mut wire = Map::new();
        let names = icon.names();
        for j in 0..icon.len() {
            let key = names.string(j).unwrap_or_default().into_owned();
            let value = element(icon, j);
            match key.as_str() {
                "src" => {
                    let src = value
                        .as_single_string()
                        .filter(|s| !s.is_empty())
                        .ok_or(ICON)?;
                    wire.insert("src".into(), Value::from(src.as_ref()));
                }
                "mime_type" | "mimeType" => {
                    let m = value
                        .as_single_string()
                        .filter(|s| !s.is_empty())
                        .ok_or(ICON)?;
                    wire.insert("mimeType".into(), Value::from(m.as_ref()));
                }
                "sizes" => {
                    require(value.kind() == SEXPTYPE::STRSXP, ICON)?;
                    let sizes = (0..value.len())
                        .map(|k| Value::from(value.string(k).unwrap_or_default().as_ref()));
                    wire.insert("sizes".into(), Value::Array(sizes.collect()));
                }
                "theme" => {
                    let t = value
                        .as_single_string()
                        .filter(|t| t == "light" || t == "dark")
                        .ok_or(ICON)?;
                    wire.insert("theme".into(), Value::from(t.as_ref()));
                }
                _ => return Err(ICON.into()),
            }
        }
        require(wire.contains_key("src"), ICON)?;
        icons.push(Value::Object(wire));
    }
    Ok(Some(Value::Array(icons)))
}

/// A tool as the server will hold it: its definition, the plan for its
/// arguments, and, if it has an output schema, the plan for its
/// structured results.
pub struct ToolPlan {
    pub def: ToolDef,
    pub arguments: Vec<(String, Shape)>,
    pub output: Option<crate::output::Node>,
}

/// Reads the definition `tool()` stored on a function.
pub fn plan(spec: RValue) -> Result<ToolPlan, String> {
    let name = field(spec, "name")
        .as_single_string()
        .ok_or("a tool without a name")?
        .into_owned();
    let arguments = field(spec, "arguments");
    let arg_names = arguments.names();
    let mut nodes: Vec<(String, TypeNode)> = Vec::with_capacity(arguments.len());
    for i in 0..arguments.len() {
        let node =
            types::parse(element(arguments, i)).map_err(|e| format!("Tool \"{name}\": {e}"))?;
        if !matches!(node.spec, TypeSpec::Ignore) {
            nodes.push((arg_names.string(i).unwrap_or_default().into_owned(), node));
        }
    }
    let convert = flag_value(field(spec, "convert")) || field(spec, "convert").is_null();
    let mut shapes: Vec<(String, Shape)> = nodes
        .iter()
        .map(|(n, t)| (n.clone(), if convert { t.shape() } else { Shape::Raw }))
        .collect();
    // `arguments = type_from_schema(...)`: the complete schema, as given.
    let whole = field(spec, "input_schema");
    let whole_schema = if whole.is_null() {
        None
    } else {
        let TypeSpec::Schema(schema) = types::parse(whole)
            .map_err(|e| format!("Tool \"{name}\": {e}"))?
            .spec
        else {
            return Err(format!(
                "Tool \"{name}\": `arguments` is not a type_from_schema()"
            ));
        };
        if let (true, Shape::Object(properties)) = (convert, types::shape_from_schema(&schema)) {
            shapes = properties;
        }
        Some(schema)
    };
    let output = field(spec, "output_schema");
    let output_schema = if output.is_null() {
        None
    } else {
        Some(
            types::parse(output)
                .map_err(|e| format!("Tool \"{name}\": {e}"))?
                .schema(),
        )
    };
    let annotations = match json_value(field(spec, "annotations"), "annotations")? {
        Value::Object(map) if !map.is_empty() => Some(map),
        _ => None,
    };
    let meta = field(spec, "meta");
    let timeout = single_number(field(spec, "timeout")).map(check::seconds);
    let def = ToolDef {
        name,
        title: field(spec, "title")
            .as_single_string()
            .map(|s| s.into_owned()),
        description: field(spec, "description")
            .as_single_string()
            .map(|s| s.into_owned()),
        input_schema: whole_schema.unwrap_or_else(|| object_schema(&nodes, false, None)),
        output_schema,
        annotations,
        icons: read_icons(field(spec, "icons"))?,
        meta: if meta.is_null() {
            None
        } else {
            read_meta(meta)?
        },
        task_support: field(spec, "task")
            .as_single_string()
            .and_then(|t| TaskSupport::parse(&t))
            .unwrap_or_default(),
        timeout,
        output_hints: r_output_hints(),
    };
    Ok(ToolPlan {
        output: def.output_schema.as_ref().map(crate::output::plan),
        def,
        arguments: shapes,
    })
}

/// How R values become the JSON an output schema may refuse, for the
/// error that says it did.
fn r_output_hints() -> OutputHints {
    OutputHints {
        not_an_array: Some(
            "In R, a vector of length 1 is sent as a single value where the schema does not make \
             the field an array: wrap it in I() to send an array"
                .into(),
        ),
        null: Some(
            "In R, NA, NaN, Inf and NULL are sent as null: declare such a field nullable \
             (type_number(nullable = TRUE), or \"null\" among its types in type_from_schema()), \
             or optional (required = FALSE) to leave it out"
                .into(),
        ),
    }
}

/// Tool annotations checked and in wire form (for `tool_annotations()`).
/// @noRd
#[extendr]
fn normalize_annotations_(annotations: Robj) -> Robj {
    let x = RValue::of(&annotations);
    if !is_named_list(x) {
        return check::fail("`annotations` must be a named list.");
    }
    tool_annotations(x).unwrap_or_else(check::fail)
}

/// The JSON definition a client speaking `revision` receives for this tool.
/// @noRd
#[extendr]
fn tool_definition_(spec: Robj, revision: &str, pretty: bool, apps: bool) -> Robj {
    let Some(rev) = Revision::parse(revision) else {
        let known: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
        return check::fail(format!(
            "`protocol_version` must be one of {}.",
            known
                .iter()
                .map(|k| format!("\"{k}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let plan = match plan(RValue::of(&spec)) {
        Ok(plan) => plan,
        Err(e) => return check::fail(e),
    };
    // As `tools/list` sends it to a host with or without MCP Apps.
    let wire = if apps {
        mcp_core::protocol::app::with_ui(&plan.def, rev)
    } else {
        mcp_core::protocol::app::without_ui(&plan.def, rev)
    };
    match wire {
        Some(tool) => crate::json::render(&tool, pretty).into_robj(),
        None => check::fail(format!(
            "Tool \"{}\" is only for apps (`visibility = \"app\"`): a client {} is not sent it.",
            plan.def.name,
            if apps {
                format!("speaking {rev} (before 2025-06-18, no MCP Apps)")
            } else {
                "without the MCP Apps extension".to_string()
            }
        )),
    }
}

extendr_module! {
    mod tool;
    fn check_tool_;
    fn normalize_annotations_;
    fn tool_definition_;
}
