# The catalog: resources, templates and prompts as the Rust side reads them
# (src/rust/mcp-core/src/catalog.rs). Each entry's R function runs as a
# hidden tool (a "handler") placed after the user's tools, so reads, prompts
# and completions share the tool calls' loop, limits and interrupts.

collect_entries <- function(x, class, what) {
  if (is.null(x)) return(list())
  if (inherits(x, class)) return(list(x))
  ok <- is.list(x) && !is.object(x) && all(vapply(x, function(e) inherits(e, class), logical(1)))
  if (!ok) abort(sprintf("`%s` must be one definition or a list of them, made with %s.", what, paste(class, collapse = " or ")))
  unname(x)
}

# `tools` are the user's tools, `resources` and `prompts` lists of
# definitions; `serves` says which kinds the server offers even while it
# has none (`list(resources =, prompts =)`). Returns list(tools = tools +
# handlers, catalog = JSON text), or NULL when there is nothing but tools.
# `token_check` is the hidden tool that checks bearer tokens (HTTP), or
# NULL; it comes last, and its registry index is returned as `token_handler`.
# With `middleware`, a list handler is added and named in the catalog
# (`listHandler`), so the engine runs list methods through R.
build_catalog <- function(tools, resources, prompts, serves = NULL, token_check = NULL,
                          middleware = FALSE) {
  resources <- collect_entries(resources, c("mcpserver_resource", "mcpserver_resource_template"), "resources")
  # Tools with an MCP App: their documents are resources, and what the
  # server runs for them adds the view to their results (R/app.R).
  resources <- c(resources, app_resources(tools))
  tools <- lapply(tools, app_handler)
  prompts <- collect_entries(prompts, "mcpserver_prompt", "prompts")
  declared <- Filter(isTRUE, serves)
  if (length(resources) == 0 && length(prompts) == 0 && length(declared) == 0 && is.null(token_check) && !middleware) return(NULL)
  handlers <- list()
  # 0-based registry index of the handler added.
  # `route` says which request the handler serves, for middleware
  # (R/middleware.R).
  add <- function(fun, arguments, name, timeout, route = NULL) {
    handler <- tool(fun, paste("Handler of", name),
      arguments = arguments, name = sprintf("handler-%d", length(handlers) + 1L),
      timeout = timeout
    )
    attr(handler, "mcpserver_route") <- route
    handlers[[length(handlers) + 1L]] <<- handler
    length(tools) + length(handlers) - 1L
  }
  string_args <- function(names, required) {
    stats::setNames(lapply(names, function(n) type_string(required = required)), names)
  }
  completers <- function(complete, owner) {
    if (length(complete) == 0) return(NULL)
    lapply(stats::setNames(names(complete), names(complete)), function(argument) {
      add(completion_handler(complete[[argument]]), list(
        value = type_string(),
        context = type_from_schema('{"type":"object","additionalProperties":{"type":"string"}}')
      ), owner, NULL, list(method = "completion/complete", ref = owner, argument = argument))
    })
  }
  entries <- list(handlersFrom = length(tools), resources = list(), templates = list(), prompts = list())
  if (length(declared) > 0) entries$serves <- declared
  for (r in resources) {
    if (inherits(r, "mcpserver_resource")) {
      handler <- add(resource_handler(r), list(.uri = type_string()), r$uri, r$timeout,
                     list(method = "resources/read"))
      entries$resources[[length(entries$resources) + 1L]] <- drop_null(c(
        list(uri = r$uri, size = r$size, handler = handler, listed = r$listed), wire_fields(r)
      ))
    } else {
      handler <- add(
        resource_handler(r), c(list(.uri = type_string()), string_args(r$variables, TRUE)),
        r$uri_template, r$timeout, list(method = "resources/read")
      )
      entries$templates[[length(entries$templates) + 1L]] <- drop_null(c(
        list(uriTemplate = r$uri_template, handler = handler,
             completions = completers(r$complete, r$uri_template)),
        wire_fields(r)
      ))
    }
  }
  for (p in prompts) {
    handler <- add(prompt_handler(p), string_args(names(p$arguments), FALSE), p$name, p$timeout,
                   list(method = "prompts/get", name = p$name))
    arguments <- lapply(names(p$arguments), function(n) {
      a <- p$arguments[[n]]
      drop_null(list(name = n, title = a$title, description = a$description, required = a$required))
    })
    entries$prompts[[length(entries$prompts) + 1L]] <- drop_null(c(
      list(handler = handler, arguments = arguments, completions = completers(p$complete, p$name)),
      wire_fields(p)
    ))
  }
  if (middleware) {
    entries$listHandler <- add(list_handler, list(method = type_string(), items = type_string()),
                               "lists", NULL, list(method = "list"))
  }
  token_handler <- NULL
  if (!is.null(token_check)) {
    handlers[[length(handlers) + 1L]] <- token_check
    token_handler <- length(tools) + length(handlers) - 1L
  }
  list(tools = c(tools, handlers), catalog = rust(json_encode_(entries, FALSE)), token_handler = token_handler)
}

# The display fields in wire form (camelCase, `_meta`); annotations and
# icons go through the same checks as content blocks' and tools'.
wire_fields <- function(x) {
  annotations <- if (length(x$annotations) > 0) {
    content_annotations(x$annotations)
  }
  list(
    name = x$name, title = x$title, description = x$description, mimeType = x$mime_type,
    annotations = annotations, icons = wire_icons(x$icons), `_meta` = x$meta
  )
}

# Annotations in wire form (checked by `common_entry()` with the content
# blocks' rules): `last_modified` becomes `lastModified`, `audience` an array.
content_annotations <- function(annotations) {
  names(annotations)[names(annotations) == "last_modified"] <- "lastModified"
  if (!is.null(annotations$audience)) annotations$audience <- I(as.character(annotations$audience))
  annotations
}

wire_icons <- function(icons) {
  if (is.null(icons)) return(NULL)
  if (!is.list(icons) || length(icons) == 0) abort("`icons` must be NULL or a list of icons.")
  lapply(icons, function(icon) {
    if (!is.list(icon) || !is_string(icon$src)) abort("Each icon must be a list with a `src` string.")
    drop_null(list(src = icon$src, mimeType = icon$mime_type, sizes = if (!is.null(icon$sizes)) I(icon$sizes), theme = icon$theme))
  })
}

drop_null <- function(x) x[!vapply(x, is.null, logical(1))]
