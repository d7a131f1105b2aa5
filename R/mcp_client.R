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
#' Servers send progress reports only for calls that ask for them, and log
#' messages only to clients that set a level, as the protocol says. To test
#' a tool's [mcp_progress()] and [mcp_log()] calls, make the client with a
#' `log_level` and call with `progress = TRUE`: the result's `progress` and
#' `logs` then hold what the tool reported, in order (see the examples).
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
#' @param log_level The lowest level of log messages the client asks for
#'   (`"debug"`, `"info"`, ... `"emergency"`; see [mcp_log()]), or `NULL` to
#'   ask for none, as clients that never set a level get none. Set with
#'   `logging/setLevel` after `initialize`, or on each 2026-07-28 request.
#'   The messages of a call are in its result's `logs`.
#' @param rscript_args For a script: options for `Rscript` itself, before
#'   the script, such as `"--no-init-file"` (start R without your
#'   `.Rprofile`; see "Troubleshooting" in the README), or `NULL`.
#' @return `mcp_client()`: a client (an environment of class
#'   `mcpserver_client`); close it with `mcp_close()`.
#'   `mcp_tools()`: the tool definitions, as parsed from `tools/list`.
#'   `mcp_call()`: a list of class `mcpserver_call_result` with `text` (the
#'   text blocks, joined by newlines), `structured` (the structured content,
#'   or `NULL`), `is_error`, `content` (every block), `meta`, `result_type`
#'   (the 2026-07-28 `resultType`, `"complete"` otherwise),
#'   `notifications` (every notification received during the call, as
#'   parsed), `progress` (a data frame of the call's progress reports, with
#'   columns `progress`, `total` and `message`; empty unless `progress =
#'   TRUE`) and `logs` (a data frame of its log messages, with `level`,
#'   `logger` and `message`, the message's data as text; empty unless the
#'   client has a `log_level`).
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
#'
#' # Progress and log messages, as a testthat test would check them:
#' fit <- function(n = 3) {
#'   for (i in seq_len(n)) {
#'     mcp_progress(i, total = n)
#'     mcp_log("info", "fitted model ", i)
#'   }
#'   "done"
#' }
#' fit <- tool(fit, "Fit models", arguments = list(n = type_integer(required = FALSE)))
#' client <- mcp_client(fit, log_level = "info")
#' result <- mcp_call(client, "fit", n = 2, progress = TRUE)
#' result$progress
#' result$logs
#' mcp_close(client)
#' }
#' @export
mcp_client <- function(server, protocol_version = "2025-11-25", env = NULL,
                       timeout = 60, elicit = NULL, token = NULL, headers = NULL,
                       sample = NULL, roots = NULL, log_level = NULL, rscript_args = NULL) {
  versions <- c("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
  if (!is_string(protocol_version) || !protocol_version %in% versions) {
    abort(paste0("`protocol_version` must be one of ", paste0('"', versions, '"', collapse = ", "), "."))
  }
  env <- cfg_env(env)
  if (!is_positive_number(timeout)) abort("`timeout` must be a positive number of seconds.")
  if (!is.null(elicit) && !is.function(elicit)) abort("`elicit` must be NULL or a function.")
  if (!is.null(sample) && !is.function(sample)) abort("`sample` must be NULL or a function.")
  if (!is.null(roots) && !is.function(roots)) roots_result(roots)
  if (!is.null(log_level) && !(is_string(log_level) && log_level %in% log_levels)) {
    abort(paste0("`log_level` must be NULL or one of ", paste0('"', log_levels, '"', collapse = ", "), "."))
  }
  rscript_args <- cfg_rscript_args(rscript_args)
  client <- new.env(parent = emptyenv())
  if (is_url(server)) {
    http <- check_http_options(server, token, headers)
    client$process <- rust(client_connect_(
      http$url, http$token, http$header_names, http$header_values, 32 * 1024^2
    ))
    client$url <- http$url
  } else {
    if (!is.null(token) || !is.null(headers)) abort("`token` and `headers` are for a server given by its URL.")
    client$rscript_args <- rscript_args
    script <- client_script(server)
    # The server finds this package where this session found it.
    env <- c(env, R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep))
    rscript <- cfg_rscript(NULL, .Platform$OS.type)
    client$process <- rust(client_start_(rscript, c(rscript_args, script), names(env), unname(env)))
  }
  client$version <- protocol_version
  client$timeout <- timeout
  client$elicit <- elicit
  client$sample <- sample
  client$roots <- roots
  client$log_level <- log_level
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
    # 2026-07-28 requests carry the level each time (see client_request()).
    if (!is.null(log_level)) client_request(client, "logging/setLevel", list(level = log_level))
  }
  client
}

# The levels of `mcp_log()`, least severe first.
log_levels <- c("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

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
    if (!is.null(client$log_level)) params$`_meta`$`io.modelcontextprotocol/logLevel` <- client$log_level
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
  if (inherits(msg, "mcpserver_rust_error") || !is.list(msg)) abort(stray_line_message(client, line))
  msg
}

# A line on the server's stdout that no server wrote: something printed
# before mcp_server() started, which a real client would choke on too.
stray_line_message <- function(client, line) {
  text <- paste0("The server wrote a line that is not a JSON-RPC message: ", substr(line, 1, 200))
  if (!is.null(client$url)) return(text)
  paste(
    text,
    "Something printed to stdout before mcp_server() started: an .Rprofile or Rprofile.site, an renv",
    "message, a package that prints when attached, or print()/cat() at the top of the script.",
    "Clients fail on it too. See \"Troubleshooting\" in mcpserver's README: start R without the",
    "profile (`mcp_client(..., rscript_args = \"--no-init-file\")`, and",
    "`mcp_client_config(..., rscript_args = \"--no-init-file\")` for the client's entry), or",
    "silence the call that prints."
  )
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
