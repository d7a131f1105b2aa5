# Helpers for tests that run `mcp_server(transport = "http")` in a real
# process and talk to it with the curl command-line tool.

# Starts a server script serving HTTP on a free port; returns its URL once
# the server has said where it listens (on stderr).
start_http_server <- function(code, env = parent.frame(), timeout = 20, vars = character()) {
  script <- server_script(code, env = env)
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  proc <- processx::process$new(
    file.path(R.home("bin"), "Rscript"), script,
    stdout = "|", stderr = "|", env = c("current", R_LIBS = lib, vars)
  )
  withr::defer(if (proc$is_alive()) proc$kill(), envir = env)
  deadline <- Sys.time() + timeout
  said <- character()
  repeat {
    said <- c(said, proc$read_error_lines())
    url <- regmatches(said, regexpr("http://[^ ]+", said))
    if (length(url) > 0) break
    if (!proc$is_alive()) stop("the server exited: ", paste(c(said, proc$read_all_error_lines()), collapse = "\n"))
    if (Sys.time() > deadline) stop("the server did not say where it listens: ", paste(said, collapse = "\n"))
    proc$poll_io(200)
  }
  list(url = url[[1]], proc = proc, said = said)
}

# One HTTP request with curl: status, headers (names lower-cased) and body.
curl_request <- function(url, body = NULL, headers = character(), method = if (is.null(body)) "GET" else "POST",
                         timeout = 10) {
  args <- c("-s", "-i", "-N", "--max-time", timeout, "-X", method)
  if (!is.null(body)) {
    if (!is.character(body)) body <- jsonlite::toJSON(body, auto_unbox = TRUE, null = "null", digits = NA)
    args <- c(args, "--data-binary", body)
    headers <- c("Content-Type" = "application/json", headers)
  }
  if (!"Accept" %in% names(headers)) headers <- c(headers, Accept = "application/json, text/event-stream")
  for (name in names(headers)) args <- c(args, "-H", paste0(name, ": ", headers[[name]]))
  out <- processx::run("curl", c(args, url), error_on_status = FALSE)
  parse_http_reply(out$stdout)
}

parse_http_reply <- function(text) {
  parts <- regmatches(text, regexpr("\r\n\r\n", text), invert = TRUE)[[1]]
  head <- strsplit(parts[[1]], "\r\n", fixed = TRUE)[[1]]
  status <- as.integer(strsplit(head[[1]], " ", fixed = TRUE)[[1]][[2]])
  fields <- head[-1]
  names <- tolower(sub(":.*$", "", fields))
  values <- trimws(sub("^[^:]*:", "", fields))
  list(status = status, headers = stats::setNames(as.list(values), names), body = if (length(parts) > 1) parts[[2]] else "")
}

# The messages of a reply: its JSON body, or the data lines of its events.
http_messages <- function(reply) {
  type <- if (is.null(reply$headers[["content-type"]])) "" else reply$headers[["content-type"]]
  if (startsWith(type, "text/event-stream")) {
    lines <- strsplit(reply$body, "\n", fixed = TRUE)[[1]]
    data <- sub("^data: ", "", lines[startsWith(lines, "data: ")])
    lapply(data, jsonlite::fromJSON, simplifyVector = FALSE)
  } else {
    list(jsonlite::fromJSON(reply$body, simplifyVector = FALSE))
  }
}

http_initialize <- function(url, capabilities = setNames(list(), character())) {
  reply <- curl_request(url, list(
    jsonrpc = "2.0", id = 0, method = "initialize",
    params = list(protocolVersion = "2025-11-25", capabilities = capabilities, clientInfo = list(name = "testthat", version = "1"))
  ))
  session <- reply$headers[["mcp-session-id"]]
  curl_request(url, list(jsonrpc = "2.0", method = "notifications/initialized"), headers = c("Mcp-Session-Id" = session))
  list(session = session, reply = reply)
}

modern_meta <- function() {
  list(
    "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities" = setNames(list(), character())
  )
}

modern_headers <- function(method, name = NULL) {
  h <- c("MCP-Protocol-Version" = "2026-07-28", "Mcp-Method" = method)
  if (!is.null(name)) h <- c(h, "Mcp-Name" = name)
  h
}
