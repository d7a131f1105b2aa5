# Long-running tools over real stdio, in both protocol eras.
skip_on_cran()

modern_meta <- function(...) {
  c(list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = setNames(list(), character()),
    `io.modelcontextprotocol/clientInfo` = list(name = "modern-test", version = "1")
  ), list(...))
}

# Sends a tools/call in either era; returns nothing (read the answers yourself).
send_call <- function(client, id, name, arguments = setNames(list(), character()), era = "legacy", meta = list()) {
  params <- list(name = name, arguments = arguments)
  if (era == "modern") meta <- c(modern_meta(), meta)
  if (length(meta)) params$`_meta` <- meta
  send(client, list(jsonrpc = "2.0", id = id, method = "tools/call", params = params))
}

start_long <- function(era, env = parent.frame()) {
  client <- start_server(fixture("long.R"), env = env)
  if (era == "legacy") {
    initialize(client)
  } else {
    # Wait until it serves, as the handshake does for the legacy era, so
    # that a test's pauses start with the server up, not with R's start-up.
    client$rev <- "2026-07-28"
    request(client, "up", "server/discover", list(`_meta` = modern_meta()))
  }
  client
}

eras <- c("legacy", "modern")

test_that("progress reaches the client, increasing, before the result", {
  for (era in eras) {
    client <- start_long(era)
    send_call(client, 1, "steps", list(n = 10), era, meta = list(progressToken = "tok-1"))
    got <- list()
    repeat {
      msg <- receive(client)
      got[[length(got) + 1]] <- msg
      if (!is.null(msg$id)) break
    }
    notes <- Filter(function(m) identical(m$method, "notifications/progress"), got)
    expect_length(notes, 10)
    expect_true(all(vapply(notes, function(n) n$params$progressToken, "") == "tok-1"))
    values <- vapply(notes, function(n) n$params$progress, numeric(1))
    expect_equal(values, 1:10)
    expect_equal(notes[[10]]$params$message, "step 10")
    expect_equal(notes[[1]]$params$total, 10)
    expect_equal(got[[length(got)]]$result$content[[1]]$text, "all steps done")
    for (entry in client$log) {
      msg <- jsonlite::fromJSON(entry$line, simplifyVector = FALSE)
      type <- if (!is.null(msg$method)) "ProgressNotification" else if (identical(msg$id, 1L)) "CallToolResult"
      expect_wire_valid(entry$line, entry$rev, type)
    }
    finish(client)
  }
})

test_that("a flood of progress is thinned, and nothing is sent without a token", {
  client <- start_long("legacy")
  send_call(client, 1, "flood", list(n = 100000), meta = list(progressToken = 5))
  got <- list()
  repeat {
    msg <- receive(client, timeout = 30)
    got[[length(got) + 1]] <- msg
    if (!is.null(msg$id)) break
  }
  notes <- Filter(function(m) identical(m$method, "notifications/progress"), got)
  expect_gt(length(notes), 0)
  expect_lt(length(notes), 1000)
  values <- vapply(notes, function(n) n$params$progress, numeric(1))
  expect_false(is.unsorted(values, strictly = TRUE))
  expect_equal(tail(values, 1), 100000)
  send_call(client, 2, "steps", list(n = 3, delay = 0))
  expect_equal(receive(client)$id, 2L)
  finish(client)
})

test_that("logs go only to clients that asked, at the right level", {
  # Legacy: nothing before logging/setLevel.
  client <- start_long("legacy")
  send_call(client, 1, "chatty")
  expect_equal(receive(client)$id, 1L)
  expect_equal(request(client, 2, "logging/setLevel", list(level = "info"))$result, setNames(list(), character()))
  send_call(client, 3, "chatty")
  got <- list()
  repeat {
    msg <- receive(client)
    got[[length(got) + 1]] <- msg
    if (!is.null(msg$id)) break
  }
  logs <- Filter(function(m) identical(m$method, "notifications/message"), got)
  levels <- vapply(logs, function(m) m$params$level, "")
  data <- vapply(logs, function(m) m$params$data, "")
  expect_equal(levels, c("error", "info", "warning"))
  expect_equal(data, c("an error line", "a message", "a warning"))
  expect_equal(logs[[1]]$params$logger, "chatty")
  for (entry in client$log) {
    if (grepl("notifications/message", entry$line)) expect_wire_valid(entry$line, entry$rev, "LoggingMessageNotification")
  }
  finish(client)
  err <- client$proc$read_all_error()
  expect_match(err, "[error] an error line", fixed = TRUE)
  expect_match(err, "a message", fixed = TRUE)

  # Modern: only for the request that carries a log level.
  client <- start_long("modern")
  send_call(client, 1, "chatty", era = "modern")
  expect_equal(receive(client)$id, 1L)
  send_call(client, 2, "chatty", era = "modern", meta = list(`io.modelcontextprotocol/logLevel` = "warning"))
  first <- receive(client)
  second <- receive(client)
  third <- receive(client)
  expect_equal(first$params$data, "an error line")
  expect_equal(second$params$data, "a warning")
  expect_equal(third$id, 2L)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
  finish(client)
})

test_that("cancelling stops Sys.sleep() and busy loops at once, and the next call works", {
  for (era in eras) {
    for (tool in c("sleeper", "spinner")) {
      client <- start_long(era)
      marker <- withr::local_tempfile()
      args <- if (tool == "sleeper") list(seconds = 30, marker = marker) else list(marker = marker)
      send_call(client, "slow", tool, args, era)
      Sys.sleep(0.5)
      t0 <- Sys.time()
      send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "slow", reason = "test")))
      deadline <- Sys.time() + 5
      while (!file.exists(marker) && Sys.time() < deadline) Sys.sleep(0.02)
      expect_true(file.exists(marker), label = paste(era, tool, "on.exit ran"))
      expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 1)
      send_call(client, "next", "touch", list(marker = withr::local_tempfile()), era)
      answer <- receive(client)
      expect_equal(answer$id, "next", label = paste(era, tool, "no answer for the cancelled call"))
      expect_true(quiet_for(client, 0.3))
      finish(client)
    }
  }
})

test_that("a call cancelled while queued never runs", {
  client <- start_long("legacy")
  blocker <- withr::local_tempfile()
  queued <- withr::local_tempfile()
  send_call(client, "first", "sleeper", list(seconds = 1, marker = blocker))
  send_call(client, "second", "touch", list(marker = queued))
  Sys.sleep(0.2)
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "second")))
  expect_equal(receive(client, timeout = 5)$id, "first")
  expect_true(quiet_for(client, 0.5))
  expect_false(file.exists(queued))
  send_call(client, "third", "touch", list(marker = queued))
  expect_equal(receive(client)$id, "third")
  expect_equal(readLines(queued, warn = FALSE), "ran")
  finish(client)
})

test_that("a handler can see that it was cancelled", {
  client <- start_long("legacy")
  marker <- withr::local_tempfile()
  send_call(client, "c", "cooperative", list(marker = marker))
  Sys.sleep(0.3)
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "c")))
  deadline <- Sys.time() + 5
  while (!file.exists(marker) && Sys.time() < deadline) Sys.sleep(0.02)
  expect_equal(readLines(marker, warn = FALSE), "saw the cancel")
  finish(client)
})

test_that("a tool past its timeout is stopped and answered", {
  for (era in eras) {
    for (tool in c("sleeper_limited", "spinner_limited")) {
      client <- start_long(era)
      marker <- withr::local_tempfile()
      args <- if (tool == "sleeper_limited") list(seconds = 30, marker = marker) else list(marker = marker)
      t0 <- Sys.time()
      send_call(client, 7, tool, args, era)
      answer <- receive(client, timeout = 10)
      waited <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
      expect_lt(waited, 2.5)
      expect_gte(waited, 0.9)
      expect_true(answer$result$isError)
      expect_match(answer$result$content[[1]]$text, "timed out after 1 second", fixed = TRUE)
      expect_true(file.exists(marker), label = paste(era, tool, "on.exit ran"))
      expect_wire_valid(client$log[[length(client$log)]]$line, client$rev, "CallToolResult")
      finish(client)
    }
  }
})

test_that("mcp_request() describes the call; outside a call the helpers are inert", {
  for (era in eras) {
    client <- start_long(era)
    send_call(client, 42, "context", era = era, meta = list(traceparent = "00-abc-def-01"))
    got <- jsonlite::fromJSON(receive(client)$result$content[[1]]$text)
    expect_equal(got$tool, "context")
    expect_equal(got$request_id, 42)
    expect_equal(got$traceparent, "00-abc-def-01")
    if (era == "legacy") {
      expect_equal(got$protocol_version, "2025-11-25")
      expect_equal(got$client, "testthat")
    } else {
      expect_equal(got$protocol_version, "2026-07-28")
      expect_equal(got$client, "modern-test")
    }
    finish(client)
  }
  expect_false(mcp_progress(1))
  expect_false(mcp_cancelled())
  expect_null(mcp_request())
  expect_message(expect_false(mcp_log("info", "x")), NA)
  expect_error(mcp_progress("a"), "`progress` must be a single finite number.", fixed = TRUE)
  expect_error(mcp_log("loud", "x"), "`level` must be one of")
})

test_that("a default timeout from mcp_server() applies", {
  script <- server_script(c(
    "nap <- function() { Sys.sleep(30); 'late' }",
    "mcp_server(tool(nap, 'Naps'), timeout = 0.5)"
  ))
  client <- start_server(script)
  initialize(client)
  answer <- call_tool(client, 1, "nap")
  expect_true(answer$result$isError)
  expect_match(answer$result$content[[1]]$text, "timed out after 0.5 seconds", fixed = TRUE)
  finish(client)
})
