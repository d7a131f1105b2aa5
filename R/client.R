#' Test an MCP server from R
#'
#' `mcp_client()` starts a server as a client would (`Rscript server.R`,
#' talking the protocol over the process's stdin and stdout), or connects to
#' one that is already serving over Streamable HTTP (give its URL), and lets
#' you list its tools and call them from R, for example in testthat tests of
#' a package that ships an MCP server. Protocol errors are raised as R errors
#' of class `mcpserver_protocol_error` (with the JSON-RPC `code` and `data`);
#' a tool error is an ordinary result with `is_error = TRUE`.
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
#' the details, which the two share.
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
                       timeout = 60, elicit = NULL, token = NULL, headers = NULL) {
  versions <- c("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
  if (!is_string(protocol_version) || !protocol_version %in% versions) {
    abort(paste0("`protocol_version` must be one of ", paste0('"', versions, '"', collapse = ", "), "."))
  }
  env <- cfg_env(env)
  if (!is_positive_number(timeout)) abort("`timeout` must be a positive number of seconds.")
  if (!is.null(elicit) && !is.function(elicit)) abort("`elicit` must be NULL or a function.")
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
  if (!is.null(client$elicit)) caps$elicitation <- stats::setNames(list(), character())
  caps
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
  line <- client$process$receive(client$timeout * 1000)
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

# Notifications are kept for the caller; elicitation requests are answered.
client_server_message <- function(client, msg) {
  if (is.null(msg$id)) {
    client$notifications[[length(client$notifications) + 1L]] <- msg
    return(invisible())
  }
  answer <- if (identical(msg$method, "elicitation/create") && !is.null(client$elicit)) {
    list(jsonrpc = "2.0", id = msg$id, result = client$elicit(msg$params$message, msg$params$requestedSchema))
  } else {
    list(jsonrpc = "2.0", id = msg$id, error = list(code = -32601L, message = "Method not found"))
  }
  client_send(client, answer)
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
  result <- client_request(client, "tools/call", params)
  # 2026-07-28: answer input-required rounds with the elicitation handler.
  rounds <- 0L
  while (identical(result$resultType, "input_required") && !is.null(client$elicit) && rounds < 10L) {
    rounds <- rounds + 1L
    responses <- lapply(result$inputRequests, function(r) client$elicit(r$params$message, r$params$requestedSchema))
    result <- client_request(client, "tools/call", c(params, list(
      inputResponses = responses, requestState = result$requestState
    )))
  }
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
print.mcpserver_call_result <- function(x, ...) {
  cat(sprintf("<mcpserver_call_result>%s\n", if (x$is_error) " (error)" else ""))
  if (nzchar(x$text)) cat(x$text, "\n", sep = "")
  invisible(x)
}
