# Helpers for tests that run a real server process and talk to it over its
# stdin and stdout, as a client would.

# Writes a server script that loads the package under test.
server_script <- function(code, env = parent.frame()) {
  dir <- withr::local_tempdir(.local_envir = env)
  path <- file.path(dir, "server.R")
  writeLines(c("library(mcpserver)", code), path)
  path
}

fixture <- function(name) test_path("fixtures", name)

# Starts `Rscript script`; returns a client object with send/receive.
start_server <- function(script, env = parent.frame(), extra_env = character()) {
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  proc <- processx::process$new(
    file.path(R.home("bin"), "Rscript"), script,
    stdin = "|", stdout = "|", stderr = "|",
    env = c("current", R_LIBS = lib, extra_env)
  )
  client <- new_client(proc)
  withr::defer(if (proc$is_alive()) proc$kill(), envir = env)
  client
}

new_client <- function(proc) {
  self <- new.env()
  self$proc <- proc
  self$pending <- character()
  self$log <- list()
  self$rev <- "2025-11-25"
  self
}

send_line <- function(client, line) {
  client$proc$write_input(paste0(line, "\n"))
}

send <- function(client, msg) {
  send_line(client, jsonlite::toJSON(msg, auto_unbox = TRUE, null = "null", digits = NA))
}

# The next message the server writes (parsed), or an error after `timeout`.
receive <- function(client, timeout = 10) {
  deadline <- Sys.time() + timeout
  while (length(client$pending) == 0) {
    left <- as.numeric(difftime(deadline, Sys.time(), units = "secs"))
    if (left <= 0) stop("no message from the server within ", timeout, " seconds")
    client$proc$poll_io(as.integer(min(left, 1) * 1000))
    lines <- client$proc$read_output_lines()
    client$pending <- c(client$pending, lines)
    if (length(lines) == 0 && !client$proc$is_alive()) {
      rest <- client$proc$read_all_output_lines()
      client$pending <- c(client$pending, rest)
      if (length(client$pending) == 0) stop("the server exited: ", client$proc$read_all_error())
    }
  }
  line <- client$pending[[1]]
  client$pending <- client$pending[-1]
  msg <- jsonlite::fromJSON(line, simplifyVector = FALSE)
  client$log[[length(client$log) + 1]] <- list(line = line, rev = client$rev)
  msg
}

# Nothing arrives for `seconds`.
quiet_for <- function(client, seconds) {
  client$proc$poll_io(as.integer(seconds * 1000))
  lines <- client$proc$read_output_lines()
  client$pending <- c(client$pending, lines)
  length(client$pending) == 0
}

request <- function(client, id, method, params = NULL) {
  msg <- list(jsonrpc = "2.0", id = id, method = method)
  if (!is.null(params)) msg$params <- params
  send(client, msg)
  receive(client)
}

initialize <- function(client, version = "2025-11-25") {
  client$rev <- version
  response <- request(client, 0, "initialize", list(
    protocolVersion = version, capabilities = setNames(list(), character()),
    clientInfo = list(name = "testthat", version = "1")
  ))
  send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
  response
}

call_tool <- function(client, id, name, arguments = setNames(list(), character())) {
  request(client, id, "tools/call", list(name = name, arguments = arguments))
}

# Whether the server's stdout has data within `timeout` seconds, read or
# not (its stderr is drained meanwhile, so the server never blocks on it).
output_ready <- function(client, timeout = 60) {
  deadline <- Sys.time() + timeout
  while (client$proc$poll_io(1000)[["output"]] != "ready" && Sys.time() < deadline) {
    client$proc$read_error()
  }
  client$proc$poll_io(0)[["output"]] == "ready"
}

# Closes stdin of a server whose writer is stuck on an unread answer and
# expects it to exit within its drain bound (5 s), well under 10 s.
expect_exit_unread <- function(client) {
  close(client$proc$get_input_connection())
  closed <- Sys.time()
  client$proc$wait(30000)
  waited <- as.numeric(difftime(Sys.time(), closed, units = "secs"))
  expect_false(client$proc$is_alive())
  expect_lt(waited, 10)
}

# Closes stdin and waits for the process to end; returns its exit status.
finish <- function(client, timeout = 10) {
  close(client$proc$get_input_connection())
  client$proc$wait(timeout * 1000)
  if (client$proc$is_alive()) stop("the server did not exit after stdin closed")
  client$pending <- c(client$pending, client$proc$read_all_output_lines())
  client$proc$get_exit_status()
}

# The official wire schemas, in tests/testthat/schemas (see its README), so
# that they are in the source tarball and R CMD check has them. Missing
# schemas are an error: a server test never passes without its wire checks.
schema_revisions <- c("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

schema_dir <- function() {
  dir <- test_path("schemas")
  files <- file.path(dir, schema_revisions, "schema.json")
  if (!all(file.exists(files))) {
    stop("wire schemas missing: ", paste(files[!file.exists(files)], collapse = ", "), call. = FALSE)
  }
  normalizePath(dir)
}

schema_texts <- new.env()

definition_schema <- function(rev, name) {
  key <- paste(rev, name)
  if (is.null(schema_texts[[key]])) {
    doc <- jsonlite::fromJSON(file.path(schema_dir(), rev, "schema.json"), simplifyVector = FALSE)
    defs <- if (!is.null(doc[["$defs"]])) "$defs" else "definitions"
    root <- list(`$ref` = paste0("#/", defs, "/", name))
    root[[defs]] <- doc[[defs]]
    if (!is.null(doc[["$schema"]])) root[["$schema"]] <- doc[["$schema"]]
    schema_texts[[key]] <- as.character(jsonlite::toJSON(root, auto_unbox = TRUE, null = "null", digits = NA))
  }
  schema_texts[[key]]
}

# Checks one message the server wrote against the schema of its revision.
expect_wire_valid <- function(line, rev, result_type = NULL) {
  msg <- jsonlite::fromJSON(line, simplifyVector = FALSE)
  modern_errors <- rev >= "2025-11-25"
  check <- function(name, json) {
    problems <- mcpserver:::json_schema_problems_(definition_schema(rev, name), json)
    expect(length(problems) == 0, sprintf("%s %s rejects %s:\n%s", rev, name, substr(json, 1, 300), paste(problems, collapse = "\n")))
  }
  if (!is.null(msg$error)) {
    if (is.null(msg$id) && !modern_errors) return(invisible(TRUE))
    if (is.null(msg$id)) {
      msg$id <- NULL
      line <- as.character(jsonlite::toJSON(msg, auto_unbox = TRUE, null = "null", digits = NA))
    }
    check(if (modern_errors) "JSONRPCErrorResponse" else "JSONRPCError", line)
  } else if (!is.null(msg$result)) {
    check(if (modern_errors) "JSONRPCResultResponse" else "JSONRPCResponse", line)
    if (!is.null(result_type)) {
      check(result_type, as.character(jsonlite::toJSON(msg$result, auto_unbox = TRUE, null = "null", digits = NA)))
    }
  } else if (!is.null(msg$id)) {
    # A request of the server's own, for input.
    check("JSONRPCRequest", line)
    check(switch(msg$method,
      `sampling/createMessage` = "CreateMessageRequest",
      `roots/list` = "ListRootsRequest",
      "ElicitRequest"
    ), line)
  } else {
    check("JSONRPCNotification", line)
  }
  invisible(TRUE)
}

# Checks every message a client received against its revision's schema.
expect_log_valid <- function(client) {
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
}
