# The requests of the test client made by mcp_client() (R/mcp_client.R):
# listing and calling tools, reading resources, getting prompts,
# completions, closing, and the classes and print methods of what they
# return.

#' @rdname mcp_client
#' @param client A client made by `mcp_client()`.
#' @export
mcp_tools <- function(client) {
  check_client(client)
  tools <- client_request(client, "tools/list")$tools
  structure(stats::setNames(tools, vapply(tools, `[[`, "", "name")), class = "mcpserver_tool_list")
}

#' @rdname mcp_client
#' @param name The tool to call.
#' @param ... The tool's arguments, by name.
#' @param arguments The tool's arguments as a named list (instead of `...`).
#'   Given in `...`, arguments whose names are or abbreviate `client` and
#'   `name` (`n = 3`) are the tool's, when the client and the tool's name
#'   are given by position (as in `mcp_call(client, "fit", n = 3)`); a tool
#'   argument called `arguments` or `progress` goes in this list.
#' @param progress If `TRUE`, the call asks for progress reports (it sends
#'   a progress token, as clients that show progress do), so the tool's
#'   [mcp_progress()] reports arrive in the result's `progress`. Without
#'   it, the server sends none.
#' @export
mcp_call <- function(client, name, ..., arguments = list(...), progress = FALSE) {
  exact <- rebind_leading(sys.call(), parent.frame(), c("client", "name"), c("arguments", "progress"))
  if (!is.null(exact)) return(do.call(mcp_call, exact))
  check_client(client)
  if (!is_string(name)) abort("`name` must be a single string.")
  if (!is_flag(progress)) abort("`progress` must be TRUE or FALSE (give a tool argument named `progress` in `arguments`).")
  if (length(arguments) > 0 && (is.null(names(arguments)) || any(!nzchar(names(arguments))))) {
    abort("Tool arguments must be named.")
  }
  if (length(arguments) == 0) arguments <- stats::setNames(list(), character())
  client$notifications <- list()
  params <- list(name = name, arguments = arguments)
  if (progress) {
    client$progress_tokens <- (client$progress_tokens %||% 0L) + 1L
    params$`_meta` <- list(progressToken = paste0("mcp-call-", client$progress_tokens))
  }
  result <- client_request_rounds(client, "tools/call", params)
  call_result(result, client$notifications)
}

# R binds an argument name that abbreviates one before `...` to it, so the
# tool argument in mcp_call(client, "fit", n = 3) would become `name`; and a
# tool argument called `name`, in mcp_call(client, "notebook", name = "x"),
# takes the tool's name's place. When a call does either, returns its
# arguments bound as meant: `leading` (client, name) by exact name or by
# position (the first unnamed values, when there are as many as them),
# `options` (after `...`) by exact name, the rest as the tool's arguments.
# NULL for a call R binds as meant.
rebind_leading <- function(call, env, leading, options) {
  args <- as.list(call)[-1]
  typed <- names(args) %||% rep("", length(args))
  unnamed <- which(!nzchar(typed))
  abbreviates <- function(t) nzchar(t) && !t %in% leading && any(startsWith(leading, t))
  abbreviated <- any(vapply(typed, abbreviates, logical(1)))
  by_position <- length(unnamed) >= length(leading)
  if (!abbreviated && !(by_position && any(leading %in% typed))) return(NULL)
  values <- lapply(args, eval, envir = env)
  bound <- list()
  if (by_position) {
    for (i in seq_along(leading)) bound[leading[[i]]] <- list(values[[unnamed[[i]]]])
    used <- unnamed[seq_along(leading)]
  } else {
    used <- integer()
    for (formal in leading) {
      if (formal %in% typed) {
        bound[formal] <- list(values[[match(formal, typed)]])
        used <- c(used, match(formal, typed))
      } else if (length(setdiff(unnamed, used)) > 0) {
        position <- setdiff(unnamed, used)[[1]]
        bound[formal] <- list(values[[position]])
        used <- c(used, position)
      }
    }
  }
  for (option in options) {
    if (option %in% typed) {
      bound[option] <- list(values[[match(option, typed)]])
      used <- c(used, match(option, typed))
    }
  }
  rest <- setdiff(seq_along(values), used)
  bound$arguments <- c(values[rest], bound$arguments)
  bound
}

call_result <- function(result, notifications) {
  blocks <- result$content %||% list()
  texts <- vapply(Filter(function(b) identical(b$type, "text"), blocks), `[[`, "", "text")
  structure(
    list(
      text = paste(texts, collapse = "\n"),
      structured = result$structuredContent,
      is_error = isTRUE(result$isError),
      content = blocks,
      meta = result$`_meta`,
      result_type = result$resultType %||% "complete",
      notifications = notifications,
      progress = progress_table(notifications),
      logs = log_table(notifications)
    ),
    class = "mcpserver_call_result"
  )
}

# The progress notifications of a call, one row each.
progress_table <- function(notifications) {
  params <- lapply(Filter(function(n) identical(n$method, "notifications/progress"), notifications), `[[`, "params")
  number <- function(p, key) if (is.numeric(p[[key]])) as.numeric(p[[key]]) else NA_real_
  data.frame(
    progress = vapply(params, number, 0, "progress"),
    total = vapply(params, number, 0, "total"),
    message = vapply(params, function(p) if (is_string(p$message)) p$message else NA_character_, ""),
    stringsAsFactors = FALSE
  )
}

# The log messages of a call, one row each: `message` is the data as
# text (JSON for data that is not a string).
log_table <- function(notifications) {
  params <- lapply(Filter(function(n) identical(n$method, "notifications/message"), notifications), `[[`, "params")
  data.frame(
    level = vapply(params, function(p) p$level %||% NA_character_, ""),
    logger = vapply(params, function(p) if (is_string(p$logger)) p$logger else NA_character_, ""),
    message = vapply(params, function(p) {
      if (is_string(p$data)) p$data else rust(json_encode_(p$data, FALSE))
    }, ""),
    stringsAsFactors = FALSE
  )
}

#' Resources, prompts and completions of a server, from R
#'
#' With a client made by [mcp_client()], these list and read a server's
#' resources, list and get its prompts, and ask for completions of their
#' arguments, as an MCP client would: for testthat tests of the
#' [resource()], [resource_template()] and [prompt_template()] definitions a server
#' serves. A prompt or read that asks for input on 2026-07-28 is answered
#' with the client's `elicit`, `sample` and `roots` functions, as
#' [mcp_call()] does. Protocol errors (an unknown URI or prompt, a missing
#' argument) are raised as R errors of class `mcpserver_protocol_error`
#' with the JSON-RPC `code` and `data`.
#'
#' @param client A client made by [mcp_client()].
#' @return `mcp_resources()`, `mcp_resource_templates()`, `mcp_prompts()`:
#'   the definitions as parsed from the list (every page of it), named by
#'   URI, URI template and name.
#'   `mcp_read_resource()`: a list of class `mcpserver_read_result` with
#'   `text` (the text contents, joined by newlines), `contents` (every
#'   content as parsed: `uri`, `mimeType` and `text` or base64 `blob`),
#'   `result_type` and `meta`.
#'   `mcp_get_prompt()`: a list of class `mcpserver_prompt_result` with
#'   `text` (the text blocks of every message, joined by newlines),
#'   `messages` (as parsed: `role` and `content`), `roles`, `description`,
#'   `result_type` and `meta`.
#'   `mcp_complete()`: the suggested values, a character vector (so
#'   `expect_equal(mcp_complete(...), c("June", "July"))` works); with
#'   `details = TRUE`, a list with `values`, `total` (how many there are in
#'   all, or `NA` when the server did not say) and `has_more` (`NA` when it
#'   did not say).
#' @seealso `vignette("resources-and-prompts")`.
#' @examples
#' \donttest{
#' path <- tempfile(fileext = ".R")
#' writeLines(c(
#'   "library(mcpserver)",
#'   "mcp_server(resources = resource('text://hello', 'Hello!'),",
#'   "  prompts = prompt_template(function(topic) paste('Tell me about', topic),",
#'   "    name = 'about', description = 'Ask about a topic',",
#'   "    complete = list(topic = function(value) grep(value, month.name, value = TRUE))))"
#' ), path)
#' client <- mcp_client(path)
#' names(mcp_resources(client))
#' mcp_read_resource(client, "text://hello")$text
#' mcp_get_prompt(client, "about", topic = "R")$text
#' mcp_complete(client, "topic", "Ju", prompt = "about")
#' mcp_close(client)
#' }
#' @export
mcp_resources <- function(client) {
  check_client(client)
  named_list(client_list(client, "resources/list", "resources"), "uri", "mcpserver_resource_list")
}

#' @rdname mcp_resources
#' @export
mcp_resource_templates <- function(client) {
  check_client(client)
  templates <- client_list(client, "resources/templates/list", "resourceTemplates")
  named_list(templates, "uriTemplate", "mcpserver_resource_list")
}

#' @rdname mcp_resources
#' @param uri The URI of the resource to read.
#' @export
mcp_read_resource <- function(client, uri) {
  check_client(client)
  if (!is_string(uri)) abort("`uri` must be a single string.")
  result <- client_request_rounds(client, "resources/read", list(uri = uri))
  contents <- result$contents %||% list()
  texts <- unlist(lapply(contents, function(c) if (is_string(c$text)) c$text))
  structure(
    list(
      text = paste(texts, collapse = "\n"), contents = contents,
      result_type = result$resultType %||% "complete", meta = result$`_meta`
    ),
    class = "mcpserver_read_result"
  )
}

#' @rdname mcp_resources
#' @export
mcp_prompts <- function(client) {
  check_client(client)
  named_list(client_list(client, "prompts/list", "prompts"), "name", "mcpserver_prompt_list")
}

#' @rdname mcp_resources
#' @param name The prompt's name.
#' @param ... The prompt's arguments, by name (strings).
#' @param arguments The prompt's arguments as a named list (instead of `...`).
#' @export
mcp_get_prompt <- function(client, name, ..., arguments = list(...)) {
  exact <- rebind_leading(sys.call(), parent.frame(), c("client", "name"), "arguments")
  if (!is.null(exact)) return(do.call(mcp_get_prompt, exact))
  check_client(client)
  if (!is_string(name)) abort("`name` must be a single string.")
  params <- list(name = name)
  if (length(arguments) > 0) params$arguments <- string_arguments(arguments, "Prompt arguments")
  result <- client_request_rounds(client, "prompts/get", params)
  messages <- result$messages %||% list()
  texts <- unlist(lapply(messages, function(m) if (identical(m$content$type, "text")) m$content$text))
  structure(
    list(
      text = paste(texts, collapse = "\n"), messages = messages,
      roles = vapply(messages, function(m) m$role %||% NA_character_, character(1)),
      description = result$description, result_type = result$resultType %||% "complete",
      meta = result$`_meta`
    ),
    class = "mcpserver_prompt_result"
  )
}

#' @rdname mcp_resources
#' @param argument The name of the argument (or template variable) to complete.
#' @param value What the user has typed so far.
#' @param prompt,template What the argument belongs to: a prompt's name, or a
#'   resource template's URI template (give one).
#' @param context The other arguments already filled in, as a named list of
#'   strings, or `NULL`.
#' @param details `FALSE` for the values only, `TRUE` for a list that also
#'   says how many there are in all.
#' @export
mcp_complete <- function(client, argument, value = "", prompt = NULL, template = NULL, context = NULL,
                         details = FALSE) {
  check_client(client)
  if (!is_flag(details)) abort("`details` must be TRUE or FALSE.")
  if (!is_string(argument)) abort("`argument` must be a single string.")
  if (!is_string(value)) abort("`value` must be a single string.")
  if (is.null(prompt) == is.null(template)) abort("Give one of `prompt` (a prompt's name) and `template` (a resource template).")
  ref <- if (!is.null(prompt)) {
    if (!is_string(prompt)) abort("`prompt` must be a single string.")
    list(type = "ref/prompt", name = prompt)
  } else {
    if (!is_string(template)) abort("`template` must be a single string.")
    list(type = "ref/resource", uri = template)
  }
  params <- list(ref = ref, argument = list(name = argument, value = value))
  if (length(context) > 0) params$context <- list(arguments = string_arguments(context, "`context`"))
  completion <- client_request(client, "completion/complete", params)$completion
  values <- as.character(unlist(completion$values))
  if (!details) return(values)
  list(
    values = values,
    total = if (is.numeric(completion$total)) as.integer(completion$total) else NA_integer_,
    has_more = if (is_flag(completion$hasMore)) completion$hasMore else NA
  )
}

# Every page of a list (following `nextCursor`, at most 100 pages).
client_list <- function(client, method, field) {
  items <- list()
  cursor <- NULL
  for (page in seq_len(100)) {
    result <- client_request(client, method, if (!is.null(cursor)) list(cursor = cursor))
    items <- c(items, result[[field]])
    cursor <- result$nextCursor
    if (is.null(cursor)) break
  }
  items
}

named_list <- function(items, key, class) {
  structure(stats::setNames(items, vapply(items, function(x) x[[key]] %||% "", "")), class = class)
}

# Arguments the protocol carries as strings: a named list of single strings
# (numbers and logicals are turned into text).
string_arguments <- function(arguments, what) {
  if (!is.list(arguments) || is.null(names(arguments)) || any(!nzchar(names(arguments)))) {
    abort(paste0(what, " must be named."))
  }
  lapply(arguments, function(a) {
    if (!(is.character(a) || is.numeric(a) || is.logical(a)) || length(a) != 1 || is.na(a)) {
      abort(paste0(what, " must be single strings."))
    }
    as.character(a)
  })
}

#' @rdname mcp_client
#' @export
mcp_close <- function(client) {
  check_client(client)
  status <- client$process$close(5000)
  if (!is.null(client$url)) return(invisible(NULL))
  invisible(status)
}

check_client <- function(client) {
  if (!inherits(client, "mcpserver_client")) abort("`client` must be made by `mcp_client()`.")
}

#' @export
print.mcpserver_client <- function(x, ...) {
  state <- if (isTRUE(x$process$alive())) "running" else "stopped"
  info <- x$initialized$serverInfo
  who <- if (!is.null(info)) paste(info$name, info$version) else "server"
  where <- if (is.null(x$url)) "" else paste0(" at ", x$url)
  cat(sprintf("<mcpserver_client> %s%s, protocol %s (%s)\n", who, where, x$version, state))
  invisible(x)
}

#' @export
print.mcpserver_tool_list <- function(x, ...) {
  cat(sprintf("<%d tool%s>\n", length(x), if (length(x) == 1) "" else "s"))
  for (t in x) cat(sprintf("  %s: %s\n", t$name, t$description %||% ""))
  invisible(x)
}

#' @export
print.mcpserver_resource_list <- function(x, ...) {
  templates <- length(x) > 0 && !is.null(x[[1]]$uriTemplate)
  noun <- if (templates) "resource template" else "resource"
  cat(sprintf("<%d %s%s>\n", length(x), noun, if (length(x) == 1) "" else "s"))
  for (r in x) cat(sprintf("  %s: %s\n", r$uri %||% r$uriTemplate, r$description %||% r$name %||% ""))
  invisible(x)
}

#' @export
print.mcpserver_prompt_list <- function(x, ...) {
  cat(sprintf("<%d prompt%s>\n", length(x), if (length(x) == 1) "" else "s"))
  for (p in x) cat(sprintf("  %s: %s\n", p$name, p$description %||% ""))
  invisible(x)
}

#' @export
print.mcpserver_read_result <- function(x, ...) {
  cat(sprintf("<mcpserver_read_result> %d content%s\n", length(x$contents), if (length(x$contents) == 1) "" else "s"))
  if (nzchar(x$text)) cat(x$text, "\n", sep = "")
  invisible(x)
}

#' @export
print.mcpserver_prompt_result <- function(x, ...) {
  cat(sprintf("<mcpserver_prompt_result> %d message%s\n", length(x$messages), if (length(x$messages) == 1) "" else "s"))
  if (nzchar(x$text)) cat(x$text, "\n", sep = "")
  invisible(x)
}

#' @export
print.mcpserver_call_result <- function(x, ...) {
  cat(sprintf("<mcpserver_call_result>%s\n", if (x$is_error) " (error)" else ""))
  if (nzchar(x$text)) cat(x$text, "\n", sep = "")
  invisible(x)
}
