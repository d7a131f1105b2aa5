#' Add or remove tools, resources and prompts while serving
#'
#' `mcp_add()` adds tools, resources, resource templates and prompts to the
#' server that is running; `mcp_remove()` takes them away. Call them from
#' a tool, resource or prompt function while [mcp_server()] serves, or from
#' the console while a server serves in the background (see
#' [mcp_background]; its handle has `add()` and `remove()` too).
#'
#' A definition is checked as [mcp_server()] checks it at start: a bad one
#' (or a removal of something not served) is an R error, and then nothing
#' changes. Adding a tool or prompt whose name is served already, or a
#' resource or template whose URI is, replaces it in place. A change is
#' whole: a client's request sees the set before it or the set after it,
#' never part of each; calls already accepted finish with the definitions
#' they started with, even if their tool is removed meanwhile.
#'
#' Clients are told which lists changed (`notifications/tools/list_changed`,
#' `notifications/resources/list_changed`, `notifications/prompts/list_changed`)
#' once per list for all the changes one call makes, after its response;
#' changes made from the console are gathered for a moment the same way.
#' Handshake-era clients hear of them on stdio or their HTTP session's
#' stream, for the kinds of entry the server offered when they connected;
#' 2026-07-28 clients hear of them on the `subscriptions/listen` streams that
#' asked. Once a list has changed, its 2026-07-28 caching hint drops from 5
#' minutes to 10 seconds, so clients that do not listen see changes soon.
#'
#' Clients learn at connection which kinds of entry a server offers: to
#' add the first resources or prompts later, give [mcp_server()]
#' `resources = list()` or `prompts = list()` at start, so that clients
#' know to look. Tools made with `tool(concurrent = TRUE)` can only be given
#' to [mcp_server()] at start.
#'
#' Outside a running server (for example when a tool is called directly in
#' R), both check their definitions and do nothing else.
#'
#' @param x What to add: one definition made with [tool()], [resource()],
#'   [resource_template()] or [prompt_template()] (or an `ellmer` tool), or a list
#'   of them. For `mcp_remove()`, definitions or a character vector of
#'   tool names, prompt names, resource URIs and URI templates.
#' @param server `NULL` for the server that is running (the one serving the
#'   call, or the one serving in the background), or the handle
#'   `mcp_server(background = TRUE)` returned.
#' @return `TRUE` (invisibly) once the server serves the new set; `FALSE`
#'   when no server is running.
#' @seealso [mcp_resource_updated()] to tell clients that a resource's
#'   contents changed; `vignette("resources-and-prompts")`.
#' @examples
#' notes <- character()
#' add_note <- tool(function(text) {
#'   notes <<- c(notes, text)
#'   # Each note becomes a resource of its own.
#'   mcp_add(resource(sprintf("notes://%d", length(notes)), text,
#'     description = "A note the user took"
#'   ))
#'   "Noted."
#' }, "Take a note", name = "add_note", arguments = list(text = type_string()))
#' add_note("buy milk") # outside a server: no resource is added
#' @export
mcp_add <- function(x, server = NULL) {
  added <- split_definitions(x, "x")
  server <- change_target(server)
  if (is.null(server)) return(invisible(FALSE))
  served <- server$served
  concurrent <- vapply(added$tools, function(t) isTRUE(tool_spec(t)$concurrent), logical(1))
  if (any(concurrent)) {
    abort("Tools with `concurrent = TRUE` can only be given to mcp_server() when it starts.")
  }
  next_set <- list(
    tools = served$tools, tool_keys = served$tool_keys,
    resources = served$resources, prompts = served$prompts
  )
  for (t in added$tools) {
    at <- match(tool_spec(t)$name, tool_names(next_set$tools))
    if (is.na(at)) at <- length(next_set$tools) + 1L
    next_set$tools[[at]] <- t
    # A new definition: a new key, so calls of the old one keep theirs.
    next_set$tool_keys[at] <- NA_integer_
  }
  for (r in added$resources) next_set$resources <- put_entry(next_set$resources, r, entry_id(r))
  for (p in added$prompts) next_set$prompts <- put_entry(next_set$prompts, p, entry_id(p))
  served_change(server, next_set)
  invisible(TRUE)
}

#' @rdname mcp_add
#' @export
mcp_remove <- function(x, server = NULL) {
  targets <- removal_targets(x)
  server <- change_target(server)
  if (is.null(server)) return(invisible(FALSE))
  served <- server$served
  served_ids <- list(
    tool = tool_names(served$tools),
    resource = vapply(served$resources, entry_id, character(1)),
    prompt = vapply(served$prompts, entry_id, character(1))
  )
  drop <- list(tool = character(), resource = character(), prompt = character())
  for (i in seq_len(nrow(targets))) {
    id <- targets$id[i]
    kinds <- if (is.na(targets$kind[i])) names(served_ids) else targets$kind[i]
    found <- kinds[vapply(kinds, function(k) id %in% served_ids[[k]], logical(1))]
    if (length(found) == 0) abort(sprintf("Nothing is served as \"%s\": it cannot be removed.", id))
    if (length(found) > 1) {
      abort(sprintf(
        "\"%s\" names both a %s and a %s: give the definition to remove instead.",
        id, found[1], found[2]
      ))
    }
    drop[[found]] <- c(drop[[found]], id)
  }
  keep_tools <- !served_ids$tool %in% drop$tool
  next_set <- list(
    tools = served$tools[keep_tools], tool_keys = served$tool_keys[keep_tools],
    resources = served$resources[!served_ids$resource %in% drop$resource],
    prompts = served$prompts[!served_ids$prompt %in% drop$prompt]
  )
  served_change(server, next_set)
  invisible(TRUE)
}

# --- internals --------------------------------------------------------------

# What a running server serves, as the R side keeps it: the definitions,
# and `runnable`, the functions the server runs, at the position of their
# key (the Rust side's name for each entry, 1-based here; see
# src/rust/mcp-core/src/registry.rs). Tools come first, then the handlers
# of resources, prompts and completions (see `build_catalog()`), and last
# the HTTP token check, if any, whose key never changes (the HTTP front
# calls it by key).
served_start <- function(tools, resources, prompts, token_check = NULL, middleware = NULL) {
  served <- new.env(parent = emptyenv())
  served$resources <- collect_entries(resources, c("mcpserver_resource", "mcpserver_resource_template"), "resources")
  served$prompts <- collect_entries(prompts, "mcpserver_prompt", "prompts")
  # An empty list given means: clients are to be told these are served.
  served$serves <- list(resources = !is.null(resources), prompts = !is.null(prompts))
  served$middleware <- middleware
  built <- build_catalog(tools, served$resources, served$prompts, served$serves, token_check,
                         !is.null(middleware))
  served$token_check <- token_check
  # 0-based, as the Rust side counts: at start an entry's key is its index.
  served$token_handler <- built$token_handler
  served$tools <- tools
  served$runnable <- if (is.null(built)) tools else built$tools
  served$catalog <- built$catalog
  served$tool_keys <- seq_along(tools)
  served$concurrent_keys <- which(vapply(tools, function(t) isTRUE(tool_spec(t)$concurrent), logical(1)))
  served
}

# Makes the server serve `next_set` (tools with their keys, NA for new
# ones; resources; prompts). The Rust side checks everything first: if it
# refuses, the R error says why and nothing has changed.
served_change <- function(server, next_set) {
  served <- server$served
  built <- build_catalog(next_set$tools, next_set$resources, next_set$prompts, served$serves,
                         served$token_check, !is.null(served$middleware))
  runnable <- if (is.null(built)) next_set$tools else built$tools
  keys <- c(next_set$tool_keys, rep(NA_integer_, length(runnable) - length(next_set$tools)))
  if (!is.null(served$token_handler)) keys[length(keys)] <- served$token_handler + 1L
  fresh <- is.na(keys)
  keys[fresh] <- free_keys(served, server$live_keys(), keys[!fresh], sum(fresh))
  during_call <- !is.null(the$job)
  result <- rust(server$change(lapply(runnable, tool_spec), keys, built$catalog, during_call))
  served$runnable[keys] <- runnable
  served$tools <- next_set$tools
  served$tool_keys <- keys[seq_along(next_set$tools)]
  served$resources <- next_set$resources
  served$prompts <- next_set$prompts
  # Functions no call can reach any more are let go of.
  unused <- setdiff(seq_along(served$runnable), c(result$live, served$concurrent_keys))
  served$runnable[unused] <- list(NULL)
  invisible(result$changed)
}

# `n` keys for new entries: ones no entry served or held by a call uses
# (`live`), nor the kept ones, nor a concurrent tool's (the worker pool
# knows those by key).
free_keys <- function(served, live, kept, n) {
  taken <- unique(c(live, kept, served$concurrent_keys))
  candidates <- setdiff(seq_len(length(served$runnable) + length(taken) + n), taken)
  candidates[seq_len(n)]
}

# The server a change goes to, or NULL when none runs.
change_target <- function(server) {
  if (!is.null(server)) {
    if (!inherits(server, "mcp_background")) {
      abort("`server` must be NULL or the handle mcp_server(background = TRUE) returned.")
    }
    if (!server$running()) abort("This background server has stopped.")
    return(the$background$server)
  }
  if (in_worker()) {
    abort("mcp_add() and mcp_remove() cannot change the server from a worker process (a tool made with `concurrent = TRUE`).")
  }
  the$server %||% the$background$server
}

# Definitions split by kind: list(tools, resources, prompts), each checked.
split_definitions <- function(x, what) {
  one <- function(d) is_tool(d) || is_ellmer_tool(d) || is_catalog_entry(d)
  if (one(x)) x <- list(x)
  if (!is.list(x) || is.object(x) || length(x) == 0 || !all(vapply(x, one, logical(1)))) {
    abort(sprintf(
      "`%s` must be a definition made with tool(), resource(), resource_template() or prompt_template(), or a list of them.",
      what
    ))
  }
  x <- unname(x)
  is_tool_like <- vapply(x, function(d) is_tool(d) || is_ellmer_tool(d), logical(1))
  tools <- collect_tools(x[is_tool_like])
  resources <- Filter(function(d) inherits(d, c("mcpserver_resource", "mcpserver_resource_template")), x)
  prompts <- Filter(function(d) inherits(d, "mcpserver_prompt"), x)
  for (group in list(
    list(tool_names(tools), "tool"),
    list(vapply(resources, entry_id, character(1)), "resource"),
    list(vapply(prompts, entry_id, character(1)), "prompt")
  )) {
    twice <- unique(group[[1]][duplicated(group[[1]])])
    if (length(twice) > 0) abort(sprintf("`%s` gives the %s \"%s\" twice.", what, group[[2]], twice[1]))
  }
  list(tools = tools, resources = resources, prompts = prompts)
}

is_catalog_entry <- function(x) {
  inherits(x, c("mcpserver_resource", "mcpserver_resource_template", "mcpserver_prompt"))
}

# What to remove: a data frame of `kind` (NA when only a name was given)
# and `id`.
removal_targets <- function(x) {
  if (is.character(x) && length(x) > 0 && !anyNA(x) && all(nzchar(x))) {
    return(data.frame(kind = NA_character_, id = unique(x), stringsAsFactors = FALSE))
  }
  defs <- tryCatch(split_definitions(x, "x"), mcpserver_error = function(e) {
    abort("`x` must be definitions made with tool(), resource(), resource_template() or prompt_template(), or a character vector of their names and URIs.")
  })
  data.frame(
    kind = c(rep("tool", length(defs$tools)), rep("resource", length(defs$resources)), rep("prompt", length(defs$prompts))),
    id = c(tool_names(defs$tools), vapply(defs$resources, entry_id, character(1)), vapply(defs$prompts, entry_id, character(1))),
    stringsAsFactors = FALSE
  )
}

tool_names <- function(tools) vapply(tools, function(t) tool_spec(t)$name, character(1))

# What a resource, template or prompt is known by among its kind.
entry_id <- function(x) {
  if (inherits(x, "mcpserver_resource")) return(x$uri)
  if (inherits(x, "mcpserver_resource_template")) return(x$uri_template)
  x$name
}

# `entries` with `x` in place of the entry known as `id`, or at the end.
put_entry <- function(entries, x, id) {
  at <- match(id, vapply(entries, entry_id, character(1)))
  if (is.na(at)) at <- length(entries) + 1L
  entries[[at]] <- x
  entries
}
