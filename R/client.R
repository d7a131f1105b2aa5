#' Test an MCP server from R
#'
#' `mcp_client()` starts a server as a client would (`Rscript server.R`,
#' talking the protocol over the process's stdin and stdout), or connects to
#' one that is already serving over Streamable HTTP (give its URL), and lets
#' you list its tools and call them from R, for example in testthat tests of
#' a package that ships an MCP server. Protocol errors are raised as R errors
#' of class `mcpserver_protocol_error` (with the JSON-RPC `code` and `data`);
#' a tool error is an ordinary result with `is_error = TRUE`. Resources and
#' prompts have their own functions (see [mcp_resources()]).
#'
#' The client declares the `elicitation`, `sampling` and `roots`
#' capabilities only when `elicit`, `sample` or `roots` is given, and
#' answers the server's questions with them: requests the server sends
#' while a tool runs (2024-11-05 to 2025-11-25), or the `input_required`
#' rounds of 2026-07-28, where every request of a round is answered by its
#' key and the call is sent again (at most ten rounds). A round the client
#' cannot answer (a request it has no function for) is returned as it is,
#' with `result_type` `"input_required"`. An R error in one of these
#' functions is raised from the call that was waiting (a server that asked
#' with a request is first told the client failed).
#'
#' `server` may also be a tool or a list of tools: they are then served by a
#' fresh R process from a temporary script. Tools travel there with
#' [saveRDS()], so a tool should not depend on objects in your global
#' environment (the new process does not have them); define what it needs
#' inside the function, or serve a script.
#'
#' A URL such as `"http://127.0.0.1:8000/mcp"` connects to a running server
#' over Streamable HTTP (plain `http://` only). The client then sends what
#' HTTP needs on top of the messages: the session id the server assigns at
#' `initialize` (the session ends with `DELETE` at `mcp_close()`), the
#' negotiated protocol version, the 2026-07-28 routing headers, and `token`
#' as a bearer token. An HTTP failure is raised as a protocol error with
#' code -32000 and the HTTP status in `data$httpStatus` (or with the
#' server's own JSON-RPC error, when it sent one). See [mcp_bridge()] for
#' the details, which the two share. The URL of the server this session
#' serves in the background (`srv$url` of [mcp_server()]`(background =
#' TRUE)`) works too: while the client waits, it runs that server's calls
#' (see [mcp_background]).
#'
#' @param server The path of a server script, or a tool made with [tool()],
#'   or a list of tools, or the URL of a server's Streamable HTTP endpoint.
#' @param protocol_version The protocol revision to speak: one of the
#'   handshake-era revisions (`"2024-11-05"`, `"2025-03-26"`, `"2025-06-18"`,
#'   `"2025-11-25"`) or `"2026-07-28"`.
#' @param env A named character vector of environment variables for the
#'   server process (added to the current ones).
#' @param timeout How long to wait for each answer, in seconds.
#' @param elicit A function `function(message, schema)` that answers the
#'   server's questions (see [mcp_elicit()]) with
#'   `list(action = "accept", content = list(...))`, or `NULL` to declare no
#'   elicitation support.
#' @param sample A function `function(messages, params)` that answers the
#'   server's requests for the model's completion (see [mcp_sample()]), or
#'   `NULL` to declare no sampling support. It gets the request's
#'   `messages` (a list of `list(role, content)`) and all its `params`
#'   (`maxTokens`, `systemPrompt`, ...; a function of one argument gets
#'   the messages only), and returns the answer's text (sent
#'   as an assistant text message from the model `"mcpserver-r-client"`)
#'   or a whole result, `list(role = "assistant", content = list(type =
#'   "text", text = ...), model = ..., stopReason = ...)`.
#' @param roots The client's roots (see [mcp_roots()]), or `NULL` to declare
#'   no roots support: a character vector of `file://` URIs or local paths
#'   (made into `file://` URIs), whose names, if any, are the roots' names;
#'   or a function of no arguments returning one, called at each request.
#' @param token For a URL: a bearer token sent on every request, or `NULL`.
#' @param headers For a URL: more HTTP headers for every request, as a named
#'   character vector, or `NULL`.
#' @return `mcp_client()`: a client (an environment of class
#'   `mcpserver_client`); close it with `mcp_close()`.
#'   `mcp_tools()`: the tool definitions, as parsed from `tools/list`.
#'   `mcp_call()`: a list of class `mcpserver_call_result` with `text` (the
#'   text blocks, joined by newlines), `structured` (the structured content,
#'   or `NULL`), `is_error`, `content` (every block), `meta`, `result_type`
#'   (the 2026-07-28 `resultType`, `"complete"` otherwise) and
#'   `notifications` (progress and log messages received during the call).
#'   `mcp_close()`: the server's exit status, invisibly (`NULL` for a
#'   URL: the session is ended, the server keeps running).
#' @examples
#' add <- function(x, y) x + y
#' add <- tool(add, "Add two numbers",
#'   arguments = list(x = type_number(), y = type_number())
#' )
#' \donttest{
#' client <- mcp_client(add)
#' names(mcp_tools(client))
#' mcp_call(client, "add", x = 1, y = 2)$text
#' mcp_close(client)
#' }
#' @export
mcp_client <- function(server, protocol_version = "2025-11-25", env = NULL,
                       timeout = 60, elicit = NULL, token = NULL, headers = NULL,
                       sample = NULL, roots = NULL) {
  versions <- c("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
  if (!is_string(protocol_version) || !protocol_version %in% versions) {
    abort(paste0("`protocol_version` must be one of ", paste0('"', versions, '"', collapse = ", "), "."))
  }
  env <- cfg_env(env)
  if (!is_positive_number(timeout)) abort("`timeout` must be a positive number of seconds.")
  if (!is.null(elicit) && !is.function(elicit)) abort("`elicit` must be NULL or a function.")
  if (!is.null(sample) && !is.function(sample)) abort("`sample` must be NULL or a function.")
  if (!is.null(roots) && !is.function(roots)) roots_result(roots)
  client <- new.env(parent = emptyenv())
  if (is_url(server)) {
    http <- check_http_options(server, token, headers)
    client$process <- rust(client_connect_(
      http$url, http$token, http$header_names, http$header_values, 32 * 1024^2
    ))
    client$url <- http$url
  } else {
    if (!is.null(token) || !is.null(headers)) abort("`token` and `headers` are for a server given by its URL.")
    script <- client_script(server)
    # The server finds this package where this session found it.
    env <- c(env, R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
    rscript <- cfg_rscript(NULL, .Platform$OS.type)
    client$process <- rust(client_start_(rscript, script, names(env), unname(env)))
  }
  client$version <- protocol_version
  client$timeout <- timeout
  client$elicit <- elicit
  client$sample <- sample
  client$roots <- roots
  client$next_id <- 0L
  client$notifications <- list()
  class(client) <- "mcpserver_client"
  if (protocol_version != "2026-07-28") {
    client$initialized <- client_request(client, "initialize", list(
      protocolVersion = protocol_version,
      capabilities = client_capabilities(client),
      clientInfo = list(name = "mcpserver-r-client", version = as.character(utils::packageVersion("mcpserver")))
    ))
    client_send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
  }
  client
}

is_url <- function(x) is_string(x) && grepl("^[A-Za-z][A-Za-z0-9+.-]*://", x)

# Checks what an HTTP connection needs (shared with mcp_bridge()). An empty
# token counts as none, so `Sys.getenv("TOKEN")` can be passed as is.
check_http_options <- function(url, token, headers) {
  if (!is_string(url) || !grepl("^http://[^/?#]+", url)) {
    abort(if (is_string(url) && startsWith(url, "https://")) {
      "Only plain http:// URLs are supported: reach an https:// server through a local proxy or tunnel, or give clients that speak HTTP the URL directly."
    } else {
      "`url` must be an http:// URL such as \"http://127.0.0.1:8000/mcp\"."
    })
  }
  if (!is.null(token) && !is_string(token)) abort("`token` must be NULL or a single string.")
  if (identical(token, "")) token <- NULL
  if (!is.null(headers)) {
    keys <- names(headers)
    if (!is.character(headers) || anyNA(headers) || is.null(keys) || anyNA(keys) ||
      !all(grepl("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", keys)) || anyDuplicated(tolower(keys))) {
      abort("`headers` must be NULL or a named character vector of HTTP headers, with distinct names.")
    }
  }
  list(
    url = url, token = token,
    header_names = as.character(names(headers)), header_values = as.character(unname(headers))
  )
}

client_script <- function(server) {
  if (is_string(server)) {
    if (!file.exists(server)) abort(paste0("No server script at `", server, "`."))
    return(normalizePath(server))
  }
  if (is_tool(server) || is_ellmer_tool(server)) server <- list(server)
  if (!is.list(server)) abort("`server` must be the path of a server script, a tool, or a list of tools.")
  collect_tools(server)
  rds <- tempfile("mcpserver-tools-", fileext = ".rds")
  saveRDS(server, rds)
  script <- tempfile("mcpserver-server-", fileext = ".R")
  writeLines(c(
    "library(mcpserver)",
    sprintf("mcp_server(readRDS(%s), name = \"r-tools\")", deparse(rds))
  ), script)
  script
}

client_capabilities <- function(client) {
  caps <- stats::setNames(list(), character())
  for (capability in names(input_handlers)) {
    if (!is.null(client[[input_handlers[[capability]]$field]])) caps[[capability]] <- stats::setNames(list(), character())
  }
  caps
}

# Each capability the client may declare: the method it answers and the
# client's field holding what answers it.
input_handlers <- list(
  elicitation = list(method = "elicitation/create", field = "elicit"),
  sampling = list(method = "sampling/createMessage", field = "sample"),
  roots = list(method = "roots/list", field = "roots")
)

# Whether the client can answer a server's request for input of `method`.
can_answer <- function(client, method) {
  for (handler in input_handlers) {
    if (identical(handler$method, method)) return(!is.null(client[[handler$field]]))
  }
  FALSE
}

# The client's answer to a request for input (its JSON-RPC result).
input_result <- function(client, method, params) {
  switch(method,
    `elicitation/create` = client$elicit(params$message, params$requestedSchema),
    `sampling/createMessage` = sample_result(call_sample(client$sample, params)),
    `roots/list` = roots_result(if (is.function(client$roots)) client$roots() else client$roots)
  )
}

# `sample(messages, params)`, or `sample(messages)` for a function of one
# argument.
call_sample <- function(sample, params) {
  takes <- names(formals(args(sample) %||% sample))
  if (length(takes) < 2 && !"..." %in% takes) return(sample(params$messages))
  sample(params$messages, params)
}

sample_result <- function(answer) {
  if (is_string(answer)) {
    return(list(role = "assistant", content = list(type = "text", text = answer), model = "mcpserver-r-client", stopReason = "endTurn"))
  }
  if (!is.list(answer) || !is_string(answer$role) || is.null(answer$content) || !is_string(answer$model)) {
    abort("`sample` must return a string or a list with `role`, `content` and `model`.")
  }
  answer
}

roots_result <- function(roots) {
  if (!is.character(roots) || anyNA(roots) || any(!nzchar(roots))) {
    abort("`roots` must be a character vector of file:// URIs or paths, or a function returning one.")
  }
  uris <- vapply(roots, function(root) {
    if (grepl("^file://", root)) return(root)
    path <- normalizePath(root, winslash = "/", mustWork = FALSE)
    # A Windows path (C:/...) gets the third slash; spaces and the like are
    # percent-encoded, as a URI needs.
    if (!startsWith(path, "/")) path <- paste0("/", path)
    paste0("file://", utils::URLencode(enc2utf8(path)))
  }, "", USE.NAMES = FALSE)
  root_names <- names(roots) %||% rep("", length(roots))
  list(roots = lapply(seq_along(uris), function(i) {
    if (nzchar(root_names[[i]])) list(uri = uris[[i]], name = root_names[[i]]) else list(uri = uris[[i]])
  }))
}

client_send <- function(client, message) {
  rust(client$process$send(rust(json_encode_(message, FALSE))))
}

# Sends a request and waits for its response, answering the server's own
# requests and collecting notifications meanwhile.
client_request <- function(client, method, params = NULL) {
  client$next_id <- client$next_id + 1L
  id <- client$next_id
  if (identical(client$version, "2026-07-28")) {
    params <- params %||% stats::setNames(list(), character())
    params$`_meta` <- c(params$`_meta`, list(
      `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
      `io.modelcontextprotocol/clientCapabilities` = client_capabilities(client),
      `io.modelcontextprotocol/clientInfo` = list(name = "mcpserver-r-client", version = "1")
    ))
  }
  message <- list(jsonrpc = "2.0", id = id, method = method)
  if (!is.null(params)) message$params <- params
  client_send(client, message)
  repeat {
    msg <- client_receive(client, method)
    if (!is.null(msg$method)) {
      client_server_message(client, msg)
      next
    }
    if (!identical(msg$id, id)) next
    if (!is.null(msg$error)) {
      stop(structure(
        class = c("mcpserver_protocol_error", "error", "condition"),
        list(
          message = sprintf("The server answered %s with error %s: %s", method, msg$error$code, msg$error$message),
          call = NULL, code = msg$error$code, data = msg$error$data
        )
      ))
    }
    return(msg$result)
  }
}

client_receive <- function(client, waiting_for) {
  line <- client_wait(client)
  if (is.null(line)) {
    abort(sprintf("No answer to %s within %s seconds.", waiting_for, client$timeout))
  }
  if (is.list(line) && isTRUE(line$interrupted)) {
    stop(structure(class = c("interrupt", "condition"), list(message = "", call = NULL)))
  }
  if (is.list(line)) {
    abort(paste0(
      "The server closed its output while ", waiting_for, " was pending. Its stderr ended with:\n",
      client$process$stderr()
    ))
  }
  msg <- json_decode_(line)
  if (inherits(msg, "mcpserver_rust_error") || !is.list(msg)) {
    abort(paste0("The server wrote a line that is not a JSON-RPC message: ", substr(line, 1, 200)))
  }
  msg
}

# The next line from the server. A client of this session's own background
# server runs that server's calls while it waits: they need R's thread,
# which is busy waiting here, so they would otherwise never run (see
# `background_service()`).
client_wait <- function(client) {
  if (!serves_here(client)) return(client$process$receive(client$timeout * 1000))
  deadline <- Sys.time() + client$timeout
  repeat {
    left <- as.numeric(difftime(deadline, Sys.time(), units = "secs"))
    line <- client$process$receive_serving(max(left, 0) * 1000)
    if (!(is.list(line) && isTRUE(line$serve))) return(line)
    background_service(nested = TRUE)
  }
}

# Whether `client` talks to the server this session serves in the
# background: the same port, on this machine (as far as the URLs tell).
serves_here <- function(client) {
  if (is.null(client$url) || is.null(the$background)) return(FALSE)
  same_endpoint(client$url, the$background$handle$url)
}

same_endpoint <- function(client_url, server_url) {
  a <- url_endpoint(client_url)
  b <- url_endpoint(server_url)
  if (is.null(a) || is.null(b) || a$port != b$port) return(FALSE)
  loopback <- function(host) host %in% c("localhost", "::1") || grepl("^127\\.", host)
  a$host == b$host || (loopback(a$host) && (loopback(b$host) || b$host %in% c("0.0.0.0", "::")))
}

# Host (lower case, without IPv6 brackets) and port of an http:// URL.
url_endpoint <- function(url) {
  parts <- regmatches(url, regexec("^http://(\\[[^]/]*\\]|[^]/:?#]+)(:([0-9]+))?", url, ignore.case = TRUE))[[1]]
  if (length(parts) == 0) return(NULL)
  port <- if (nzchar(parts[[4]])) as.integer(parts[[4]]) else 80L
  list(host = tolower(gsub("^\\[|\\]$", "", parts[[2]])), port = port)
}

# Notifications are kept for the caller; requests for input are answered
# (an R error in the answering function is told to the server, which would
# otherwise wait, then raised).
client_server_message <- function(client, msg) {
  if (is.null(msg$id)) {
    client$notifications[[length(client$notifications) + 1L]] <- msg
    return(invisible())
  }
  if (!can_answer(client, msg$method)) {
    return(client_send(client, list(jsonrpc = "2.0", id = msg$id, error = list(code = -32601L, message = "Method not found"))))
  }
  # The answer is encoded inside the handler too: one that cannot become
  # JSON must still answer the server, whose tool would otherwise wait.
  answer <- tryCatch(
    {
      result <- input_result(client, msg$method, msg$params)
      rust(json_encode_(list(jsonrpc = "2.0", id = msg$id, result = result), FALSE))
    },
    error = function(e) {
      client_send(client, list(jsonrpc = "2.0", id = msg$id, error = list(
        code = -32603L, message = paste0("The R client failed to answer: ", conditionMessage(e))
      )))
      stop(e)
    }
  )
  rust(client$process$send(answer))
}

# A request that may be answered with 2026-07-28 input_required rounds
# (tools/call, prompts/get, resources/read): each round's requests are
# answered by key and the request sent again, with the server's state,
# while the client can answer them all.
client_request_rounds <- function(client, method, params) {
  result <- client_request(client, method, params)
  rounds <- 0L
  while (identical(result$resultType, "input_required") && rounds < 10L) {
    requests <- result$inputRequests %||% list()
    if (!all(vapply(requests, function(r) can_answer(client, r$method %||% ""), logical(1)))) break
    rounds <- rounds + 1L
    responses <- lapply(requests, function(r) input_result(client, r$method, r$params))
    if (length(responses) == 0) responses <- stats::setNames(list(), character())
    result <- client_request(client, method, c(params, drop_null(list(
      inputResponses = responses, requestState = result$requestState
    ))))
  }
  result
}

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
#' @export
mcp_call <- function(client, name, ..., arguments = list(...)) {
  check_client(client)
  if (!is_string(name)) abort("`name` must be a single string.")
  if (length(arguments) > 0 && (is.null(names(arguments)) || any(!nzchar(names(arguments))))) {
    abort("Tool arguments must be named.")
  }
  if (length(arguments) == 0) arguments <- stats::setNames(list(), character())
  client$notifications <- list()
  params <- list(name = name, arguments = arguments)
  result <- client_request_rounds(client, "tools/call", params)
  call_result(result, client$notifications)
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
      notifications = notifications
    ),
    class = "mcpserver_call_result"
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
#'   `mcp_complete()`: the suggested values, a character vector with the
#'   attributes `total` and `has_more` when the server gave them.
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
#' @export
mcp_complete <- function(client, argument, value = "", prompt = NULL, template = NULL, context = NULL) {
  check_client(client)
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
  attr(values, "total") <- completion$total
  attr(values, "has_more") <- completion$hasMore
  values
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
