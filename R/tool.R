#' Define an MCP tool from an R function
#'
#' `tool()` marks an R function as a tool that [mcp_server()] serves. It has
#' the signature of mcplite's `tool()`, so mcplite server scripts run
#' unchanged, plus a few arguments of its own after `output_schema`.
#' Everything is checked here, when the tool is defined: a bad definition is
#' an error now, never a broken `tools/list` later.
#'
#' @param fun The function to call. Its arguments receive the tool's
#'   arguments by exact name (R's partial matching never applies).
#' @param description What the tool does, for the model. Required.
#' @param ... Not used; an error if supplied (argument schemas go in
#'   `arguments`).
#' @param arguments A named list of [type helpers][tool-types], one per
#'   argument of `fun` the client may supply. Each name must be an argument
#'   of `fun` (unless `fun` takes `...`), and every argument of `fun`
#'   without a default must be declared (no client could give it otherwise,
#'   so it is an error now rather than at every call). [type_ignore()]
#'   entries are left out of the schema. Or one helper for all of them: a [type_object()],
#'   or a [type_from_schema()] of a complete JSON Schema (2020-12) object
#'   schema, sent to clients as it is (`$schema`, `$defs` and `$ref`,
#'   `allOf`/`anyOf`/`oneOf`, `if`/`then`/`else`, ...) and checked in full
#'   against each call's arguments. Its properties are converted to R values
#'   as far as the schema makes their type certain (following `$ref`s and
#'   `allOf`, and `anyOf`/`oneOf` whose branches agree; see
#'   [mcpserver-values]); the rest arrive in mcplite's raw shapes.
#' @param name The tool's name: 1 to 128 characters of letters, digits, `_`,
#'   `.` and `-`. Defaults to the name of the variable passed as `fun`. Names
#'   longer than 64 characters draw a warning: clients prefix tool names and
#'   some reject the result.
#' @param annotations Hints for clients about the tool's behaviour, from
#'   [tool_annotations()] or a named list in the protocol's camelCase form
#'   (`list(readOnlyHint = TRUE)`).
#' @param output_schema A [type helper][tool-types] describing structured
#'   results, or `NULL`. A tool with an output schema that returns a plain R
#'   value (a named list, or a data frame for an array schema) sends it as
#'   structured content plus a JSON text copy. The schema directs how the
#'   value becomes JSON (a length-1 vector where it says array is an array,
#'   `NA` where it allows null is `null`; see [mcpserver-values]), and
#'   results are checked against it before they are sent.
#' @param title A human-readable title for clients to display, or `NULL`.
#' @param icons Icons for clients to display: a list of lists with `src`
#'   (a URL or data URI) and optionally `mime_type`, `sizes` and `theme`.
#' @param meta A named list sent as the tool's `_meta`, or `NULL`.
#' @param timeout A limit in seconds for one call of this tool, or `NULL`
#'   for the server's default (see [mcp_server()]). A call that runs longer is
#'   interrupted and answered with a tool error.
#' @param convert If `TRUE` (the default) arguments are converted by their
#'   declared types (arrays of numbers become numeric vectors, and so on).
#'   If `FALSE` they keep mcplite's raw shapes (every array a list).
#' @param task Whether the tool runs as a *task*: a call answered at once
#'   with a handle, whose result the client fetches later (clients poll, so
#'   no timeout applies to waiting). `"forbidden"` (the default) never,
#'   `"optional"` when the client supports tasks, `"required"` always (a
#'   client without task support gets an error, except on revisions before
#'   2025-11-25, which know no tasks and run the call directly).
#'   `"deferred"`: a 2026-07-28 call starts as a plain call, which may first
#'   ask the client questions, and becomes a task when the tool calls
#'   [mcp_task()]; a 2025-11-25 client sees an optional task tool.
#' @param concurrent If `TRUE`, calls of this tool run in R worker
#'   processes (see [mcp_server()]'s `workers`), several at once, while the
#'   server goes on taking calls. On the server's own pool the function and
#'   the globals it uses are shipped to each worker once, at start; on a
#'   [future::plan()] of yours, by future with each call. Progress,
#'   logs, [mcp_cancelled()] and [mcp_elicit()] work there too (a tool that
#'   asks the user runs again from the start with the answer; see
#'   `vignette("concurrency")`). `FALSE` (the default) runs calls on the
#'   server's own R thread, one at a time, in the order they arrive.
#' @param app An app made with [mcp_app()] that shows the tool's results in
#'   the chat (the MCP Apps extension), or `NULL`. Hosts that show apps get
#'   the tool with `_meta.ui.resourceUri` naming it; others get the plain
#'   tool. The tool may then return an htmlwidget or an [app_result()].
#' @param visibility Who may call the tool, in hosts that show apps:
#'   `"model"`, `"app"` (an app's own tool, say the next page of a table:
#'   not offered to the model, nor listed for hosts without apps), or
#'   `NULL` (the default) for both. Sent as `_meta.ui.visibility`; the host
#'   enforces it.
#' @return `fun`, still an ordinary callable function, with classes
#'   `mcpserver_tool` and `mcplite_tool` and its definition in the attribute
#'   `mcpserver_tool`.
#' @seealso [tool_definition()] to see what clients receive.
#' @examples
#' add <- function(x, y) x + y
#' add_tool <- tool(add, "Add two numbers",
#'   arguments = list(x = type_number(), y = type_number()),
#'   annotations = tool_annotations(read_only_hint = TRUE)
#' )
#' add_tool(1, 2)
#' add_tool
#' @export
tool <- function(fun, description, ..., arguments = list(), name = NULL,
                 annotations = list(), output_schema = NULL, title = NULL,
                 icons = NULL, meta = NULL, timeout = NULL, convert = TRUE,
                 task = c("forbidden", "optional", "required", "deferred"), concurrent = FALSE,
                 app = NULL, visibility = NULL) {
  if (identical(task, c("forbidden", "optional", "required", "deferred"))) task <- "forbidden"
  if (!is_flag(concurrent)) abort("`concurrent` must be TRUE or FALSE.")
  check_tool_dots(match.call(expand.dots = FALSE)$...)
  if (is.null(name)) {
    fun_expr <- substitute(fun)
    if (is.symbol(fun_expr)) name <- as.character(fun_expr)
  }
  input_schema <- NULL
  if (inherits(arguments, "mcpserver_type")) {
    # One helper for all arguments: a type_object() lists them; a
    # type_from_schema() is sent as it is, whatever 2020-12 keywords it uses.
    if (identical(arguments$kind, "object")) {
      arguments <- arguments$properties
    } else if (identical(arguments$kind, "from_schema")) {
      input_schema <- arguments
      arguments <- list()
      schema_names <- check_schema_arguments(input_schema, fun)
    } else {
      abort("`arguments` must be a named list of type helpers, a type_object() or a type_from_schema() object schema.")
    }
  }
  if (is.list(arguments)) arguments <- lapply(arguments, as_mcp_type)
  output_schema <- as_mcp_type(output_schema)
  if (is_string(name)) meta <- with_ui_meta(meta, tool_ui_meta(app, visibility, name))
  formals_of_fun <- if (is.function(fun)) names(formals(args(fun) %||% fun)) else NULL
  checked <- rust(check_tool_(
    fun, description, ...length(), name, arguments, annotations,
    output_schema, title, icons, meta, timeout, convert, task,
    as.character(formals_of_fun)
  ))
  # A type_from_schema() whose properties are not certain is not checked.
  declared <- if (is.null(input_schema)) as.character(names(arguments)) else schema_names
  if (!is.null(declared)) check_required_declared(fun, declared)
  if (!is.null(checked$warning)) warning(checked$warning, call. = FALSE)
  spec <- list(
    name = name,
    description = description,
    arguments = arguments[checked$keep],
    annotations = checked$annotations,
    output_schema = output_schema,
    title = title,
    icons = icons,
    meta = meta,
    timeout = timeout,
    convert = convert,
    task = task,
    concurrent = concurrent
  )
  spec$input_schema <- input_schema
  spec$app <- app
  attr(fun, "mcpserver_tool") <- spec
  # mcplite's class name too, so scripts that test for it still work.
  tool_classes <- c("mcpserver_tool", "mcplite_tool")
  class(fun) <- unique(c(tool_classes, setdiff(class(fun), tool_classes)))
  fun
}

# A name in `...` close to an option of tool() is a misspelt option. Other
# entries get the Rust check's message: argument schemas go in `arguments`
# (ellmer's old `tool(fun, "...", x = type_number())` form lands here).
check_tool_dots <- function(dots) {
  given <- names(dots) %||% rep("", length(dots))
  near <- vapply(given, function(g) nzchar(g) && !is.null(nearest_name(g, option_names(tool))), logical(1))
  if (any(near)) check_options(dots[near], tool, "tool()")
}

is_tool <- function(x) is.function(x) && inherits(x, "mcpserver_tool")

tool_spec <- function(x) attr(x, "mcpserver_tool", exact = TRUE)

#' Tool annotations
#'
#' Hints that tell clients how a tool behaves, with the argument names
#' ellmer uses. The protocol treats them as hints from an untrusted server:
#' clients may show them or use them to ask before running a tool.
#'
#' @param title A human-readable title for the tool.
#' @param read_only_hint `TRUE` if the tool does not change its environment.
#' @param destructive_hint `TRUE` if the tool may destroy or overwrite data
#'   (meaningful when it is not read-only).
#' @param idempotent_hint `TRUE` if calling it again with the same arguments
#'   has no further effect.
#' @param open_world_hint `TRUE` if it reaches outside systems (the web, a
#'   database) rather than a closed set of data.
#' @param ... Further annotations, named as they should appear on the wire.
#' @return A named list in the protocol's form (`readOnlyHint`, ...), for
#'   [tool()]'s `annotations`.
#' @examples
#' tool_annotations(title = "Read a file", read_only_hint = TRUE)
#' @export
tool_annotations <- function(title = NULL, read_only_hint = NULL,
                             destructive_hint = NULL, idempotent_hint = NULL,
                             open_world_hint = NULL, ...) {
  given <- list(
    title = title, read_only_hint = read_only_hint,
    destructive_hint = destructive_hint, idempotent_hint = idempotent_hint,
    open_world_hint = open_world_hint
  )
  given <- c(given[!vapply(given, is.null, logical(1))], list(...))
  rust(normalize_annotations_(given))
}

#' The definition a client receives for a tool
#'
#' Shows the exact JSON object that `tools/list` sends for `x` to a client
#' speaking `protocol_version`. Fields a revision does not know are left out
#' (for example `title` and `outputSchema` before 2025-06-18).
#'
#' @param x A tool made with [tool()].
#' @param protocol_version One of the protocol revisions the server speaks:
#'   `"2024-11-05"`, `"2025-03-26"`, `"2025-06-18"`, `"2025-11-25"` or
#'   `"2026-07-28"`.
#' @param pretty Indent the JSON for reading.
#' @param apps `TRUE` for what a host that declared the MCP Apps extension
#'   receives (with `_meta.ui`, see [mcp_app()]), `FALSE` for other clients.
#' @return The JSON text, with class `mcpserver_json` (it prints as is).
#' @examples
#' add <- function(x, y) x + y
#' add <- tool(add, "Add two numbers",
#'   arguments = list(x = type_number(), y = type_number())
#' )
#' tool_definition(add)
#' tool_definition(add, "2024-11-05", pretty = FALSE)
#' @export
tool_definition <- function(x, protocol_version = "2026-07-28", pretty = TRUE, apps = FALSE) {
  x <- as_tool(x)
  if (!is_flag(apps)) abort("`apps` must be TRUE or FALSE.")
  new_json(rust(tool_definition_(tool_spec(x), protocol_version, pretty, apps)))
}

# The top-level properties of a complete argument schema must be arguments
# of `fun` (unless it takes `...`), as with a list of helpers. Returns the
# properties' names, or NULL when the schema does not make them certain.
check_schema_arguments <- function(schema, fun) {
  names <- rust(input_schema_properties_(schema$schema))
  formals <- if (is.function(fun)) names(formals(args(fun) %||% fun))
  if (length(names) == 0) names <- NULL
  if (is.null(formals) || "..." %in% formals) return(names)
  unknown <- setdiff(names, formals)
  if (length(unknown) > 0) {
    abort(sprintf(
      "The schema's properties %s are not arguments of the function.",
      paste0("`", unknown, "`", collapse = ", ")
    ))
  }
  names
}

# An argument of `fun` without a default that `arguments` does not declare
# could never be given by a client: every call would fail with "argument
# is missing".
check_required_declared <- function(fun, declared) {
  needed <- setdiff(required_formals(fun), declared)
  if (length(needed) == 0) return(invisible())
  one <- length(needed) == 1
  them <- if (one) "it" else "them"
  abort(sprintf(paste(
    "`fun` has %s %s without a default, which `arguments` does not declare: no client could give %s,",
    "so every call would fail with `argument \"%s\" is missing`. Declare %s (e.g.",
    "`arguments = list(%s = type_number())`, with %s type) or give %s a default."
  ),
    if (one) "argument" else "arguments", paste0("`", needed, "`", collapse = ", "), them,
    needed[[1]], them, needed[[1]], if (one) "its" else "their", them
  ))
}

as_tool <- function(x) {
  if (is_tool(x)) return(x)
  if (is_ellmer_tool(x)) return(tool_from_ellmer(x))
  abort("`x` must be a tool made with `tool()`.")
}

#' @export
format.mcpserver_tool <- function(x, ...) {
  spec <- tool_spec(x)
  args <- names(spec$arguments)
  if (!is.null(spec$input_schema)) args <- names(spec$input_schema$schema$properties)
  c(
    sprintf("<mcpserver_tool> %s(%s)", spec$name, paste(args, collapse = ", ")),
    paste0("  ", spec$description)
  )
}

#' @export
print.mcpserver_tool <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}
