# A real server process, driven over its stdin and stdout.
skip_on_cran()

test_that("the official wire schemas are there to check every message against", {
  # In tests/testthat/schemas, in the tarball too; their absence is a failure.
  dir <- schema_dir()
  expect_true(all(file.exists(file.path(dir, schema_revisions, "schema.json"))))
  # And each accepts a good result and rejects a bad one.
  for (rev in schema_revisions) {
    result_type <- if (rev >= "2026-07-28") ',"resultType":"complete"' else ""
    result <- function(type) sprintf('{"content":[{"type":"%s","text":"x"}]%s}', type, result_type)
    problems <- function(json) mcpserver:::json_schema_problems_(definition_schema(rev, "CallToolResult"), json)
    expect_length(problems(result("text")), 0)
    expect_gt(length(problems(result("txet"))), 0)
  }
})

test_that("a full session: handshake, list, calls, and a clean exit at EOF", {
  client <- start_server(fixture("everything.R"))
  init <- initialize(client, "2025-11-25")
  expect_equal(init$result$protocolVersion, "2025-11-25")
  expect_equal(init$result$serverInfo, list(name = "everything", version = "9.9.9"))
  expect_equal(init$result$instructions, "A test server.")
  expect_wire_valid(client$log[[1]]$line, "2025-11-25", "InitializeResult")

  listed <- request(client, 1, "tools/list")
  names <- vapply(listed$result$tools, `[[`, "", "name")
  expect_equal(names, c("add", "shout", "read_stdin", "fail", "sleepy", "stats", "broken_stats", "everything", "echo_args"))
  expect_null(listed$result$nextCursor)
  expect_wire_valid(client$log[[2]]$line, "2025-11-25", "ListToolsResult")

  r <- call_tool(client, 2, "add", list(x = 1.5, y = 2))
  expect_equal(r$result$content[[1]]$text, "3.5")
  expect_false(r$result$isError)
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("nothing printed while serving reaches the protocol stream", {
  client <- start_server(fixture("everything.R"))
  initialize(client)
  r <- call_tool(client, 1, "shout", list(text = "hi"))
  expect_equal(r$result$content[[1]]$text, "HI")
  r <- call_tool(client, 2, "read_stdin")
  expect_equal(r$result$content[[1]]$text, "child read 0 lines")
  expect_equal(finish(client), 0)
  stderr <- client$proc$read_all_error()
  expect_match(stderr, "printed by R to stdout", fixed = TRUE)
  expect_match(stderr, "printed by a child process", fixed = TRUE)
  expect_log_valid(client)
})

test_that("errors become tool results, and the server goes on", {
  client <- start_server(fixture("everything.R"))
  initialize(client)
  r <- call_tool(client, 1, "fail")
  expect_true(r$result$isError)
  expect_equal(r$result$content[[1]]$text, "it broke")
  r <- call_tool(client, 2, "fail", list(kind = "tricky"))
  expect_equal(r$result$content[[1]]$text, "100% sure: %s %d %n \"quoted\"\nsecond line, \u00fcn\u00efc\u00f6de")
  r <- call_tool(client, 3, "fail", list(kind = "warning"))
  expect_false(r$result$isError)
  expect_equal(r$result$content[[1]]$text, "finished despite a warning")
  r <- call_tool(client, 4, "add", list(x = "three", y = 2))
  expect_true(r$result$isError)
  expect_equal(r$result$content[[1]]$text, "Invalid arguments for tool \"add\": x: expected a number, got \"three\"")
  r <- call_tool(client, 5, "add", list(x = 1, val = 2))
  expect_match(r$result$content[[1]]$text, 'unexpected argument "val"', fixed = TRUE)
  r <- call_tool(client, 6, "nope")
  expect_equal(r$error$code, -32602)
  r <- call_tool(client, 7, "add", list(x = 1, y = 2))
  expect_equal(r$result$content[[1]]$text, "3")
  expect_equal(finish(client), 0)
  expect_match(client$proc$read_all_error(), "just a warning", fixed = TRUE)
  expect_log_valid(client)
})

test_that("structured output is sent, and enforced", {
  client <- start_server(fixture("everything.R"))
  initialize(client, "2025-06-18")
  r <- call_tool(client, 1, "stats", list(values = list(1, 2, 3, 4)))
  expect_equal(r$result$structuredContent, list(mean = 2.5, n = 4L))
  expect_equal(r$result$content[[1]]$text, '{"mean":2.5,"n":4}')
  expect_wire_valid(client$log[[length(client$log)]]$line, "2025-06-18", "CallToolResult")
  r <- call_tool(client, 2, "broken_stats")
  expect_equal(r$error$code, -32603)
  expect_equal(r$error$data$tool, "broken_stats")
  r <- call_tool(client, 3, "everything")
  expect_equal(vapply(r$result$content, `[[`, "", "type"), c("text", "image", "audio", "resource_link", "resource"))
  expect_wire_valid(client$log[[length(client$log)]]$line, "2025-06-18", "CallToolResult")
  finish(client)
  expect_log_valid(client)
})

test_that("arguments arrive typed by their declared types", {
  client <- start_server(fixture("everything.R"))
  initialize(client)
  r <- call_tool(client, 1, "echo_args", list(
    numbers = list(1, 2, 3.5), flag = TRUE, count = 3, tags = list("a", "b"), raw = list(1, 2)
  ))
  got <- jsonlite::fromJSON(r$result$content[[1]]$text)
  expect_equal(got$numbers_class, "numeric")
  expect_equal(got$numbers_sum, 6.5)
  expect_equal(got$flag_class, "logical")
  expect_equal(got$count_class, "integer")
  expect_equal(got$tags, c("a", "b"))
  expect_equal(got$raw_class, "list")
  r <- call_tool(client, 2, "echo_args", list(numbers = list(), raw = list(), count = NULL))
  got <- jsonlite::fromJSON(r$result$content[[1]]$text)
  expect_equal(got$numbers_class, "numeric")
  expect_equal(got$count_class, "NULL")
  r <- call_tool(client, 3, "echo_args", list(raw = list(), count = 3000000000))
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "does not fit in an R integer")
  finish(client)
})

test_that("ping and tools/list are answered while a tool runs", {
  client <- start_server(fixture("everything.R"))
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = "long", method = "tools/call", params = list(name = "sleepy", arguments = list(seconds = 10))))
  Sys.sleep(0.5)
  t0 <- Sys.time()
  pong <- request(client, "p", "ping")
  expect_equal(pong$id, "p")
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 1)
  listed <- request(client, "l", "tools/list")
  expect_length(listed$result$tools, 9)
  discover <- request(client, "d", "server/discover", list(`_meta` = list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = setNames(list(), character())
  )))
  expect_equal(discover$result$supportedVersions, list("2026-07-28"))
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 3)
  done <- receive(client, timeout = 20)
  expect_equal(done$id, "long")
  expect_equal(done$result$content[[1]]$text, "awake")
  finish(client)
})

test_that("pipelined requests are all answered before the process exits", {
  client <- start_server(fixture("everything.R"))
  lines <- c(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    vapply(1:40, function(i) sprintf('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"x":%d,"y":1}}}', i, i), "")
  )
  send_line(client, paste(lines, collapse = "\n"))
  expect_equal(finish(client, timeout = 30), 0)
  got <- lapply(client$pending, jsonlite::fromJSON, simplifyVector = FALSE)
  calls <- Filter(function(m) m$id != 0, got)
  expect_length(calls, 40)
  expect_equal(vapply(calls, function(m) m$result$content[[1]]$text, ""), as.character(2:41))
})

test_that("malformed input gets errors and never stops the server", {
  client <- start_server(fixture("everything.R"))
  send_line(client, "{not json")
  r <- receive(client)
  expect_equal(r$error$code, -32700)
  expect_null(r$id)
  send_line(client, "")
  send_line(client, "   ")
  send_line(client, "null")
  expect_equal(receive(client)$error$code, -32600)
  send_line(client, '{"jsonrpc":"2.0","id":[1],"method":"ping"}')
  expect_equal(receive(client)$error$code, -32600)
  client$proc$write_input(as.raw(c(0x7b, 0xff, 0xfe, 0x7d, 0x0a)))
  expect_equal(receive(client)$error$code, -32700)
  send_line(client, paste0('{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"', strrep("x", 10000), '"}}'))
  r <- receive(client)
  expect_equal(r$id, "big")
  expect_equal(r$error$code, -32600)
  expect_match(r$error$message, "exceeds the limit of 4096 bytes")
  send_line(client, paste0(strrep("[", 5000), strrep("]", 5000)))
  expect_equal(receive(client)$error$code, -32600)
  send_line(client, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
  expect_equal(receive(client)$error$message, "Server not initialized")
  client$proc$write_input('{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n')
  expect_equal(receive(client)$result, setNames(list(), character()))
  send_line(client, '{"jsonrpc":"2.0","id":3,"method":"no/such"}')
  expect_equal(receive(client)$error$code, -32600)
  initialize(client)
  send_line(client, '{"jsonrpc":"2.0","id":4,"method":"no/such"}')
  expect_equal(receive(client)$error$code, -32601)
  send_line(client, '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":[1,2]}}')
  expect_equal(receive(client)$error$code, -32602)
  expect_equal(call_tool(client, 6, "add", list(x = 1, y = 1))$result$content[[1]]$text, "2")
  expect_equal(finish(client), 0)
})

test_that("a vanished client or SIGTERM ends the server promptly", {
  client <- start_server(fixture("everything.R"))
  initialize(client)
  t0 <- Sys.time()
  client$proc$signal(tools::SIGTERM)
  client$proc$wait(5000)
  expect_false(client$proc$is_alive())
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 5)

  client <- start_server(fixture("everything.R"))
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "sleepy", arguments = list(seconds = 30))))
  Sys.sleep(0.3)
  close(client$proc$get_output_connection())
  close(client$proc$get_input_connection())
  client$proc$wait(10000)
  expect_false(client$proc$is_alive())
})

test_that("MCPSERVER_TRACE=1 logs every message to stderr", {
  client <- start_server(fixture("everything.R"), extra_env = c(MCPSERVER_TRACE = "1"))
  initialize(client)
  request(client, 1, "ping")
  finish(client)
  err <- client$proc$read_all_error()
  expect_match(err, '<- {"jsonrpc":"2.0","id":1,"method":"ping"}', fixed = TRUE)
  expect_match(err, '-> {"jsonrpc":"2.0","id":1,"result":{}}', fixed = TRUE)
  expect_match(err, "[mcpserver", fixed = TRUE)
})

test_that("Ctrl-C in an interactive session stops serving and returns to the prompt", {
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  proc <- processx::process$new(
    file.path(R.home("bin"), "R"), c("--no-save", "--no-restore", "--quiet", "--interactive"),
    stdin = "|", stdout = "|", stderr = "|", env = c("current", R_LIBS = lib)
  )
  withr::defer(if (proc$is_alive()) proc$kill())
  client <- new_client(proc)
  proc$write_input(paste0(
    "library(mcpserver); add <- function(x, y) x + y; ",
    "mcp_server(tool(add, 'Add', arguments = list(x = type_number(), y = type_number()))); ",
    "cat('BACK AT THE PROMPT', isatty(stdin()), '\\n')\n"
  ))
  # The server announces itself on stderr once it is serving.
  deadline <- Sys.time() + 20
  err <- ""
  while (!grepl("Serving 1 tool", err) && Sys.time() < deadline) {
    proc$poll_io(200)
    err <- paste0(err, proc$read_error())
  }
  expect_match(err, "Serving 1 tool")
  send_line(client, '{"jsonrpc":"2.0","id":1,"method":"ping"}')
  # The console's prompt shares stdout, so look for the response in the text.
  deadline <- Sys.time() + 10
  out <- ""
  pong <- '{"jsonrpc":"2.0","id":1,"result":{}}'
  while (!grepl(pong, out, fixed = TRUE) && Sys.time() < deadline) {
    proc$poll_io(200)
    out <- paste0(out, proc$read_output())
  }
  expect_match(out, pong, fixed = TRUE)
  proc$signal(tools::SIGINT)
  deadline <- Sys.time() + 10
  out <- ""
  while (!grepl("BACK AT THE PROMPT", out) && Sys.time() < deadline) {
    proc$poll_io(200)
    out <- paste0(out, proc$read_output())
  }
  expect_match(out, "BACK AT THE PROMPT")
  expect_true(proc$is_alive())
  proc$write_input("q('no')\n")
  proc$wait(5000)
})

test_that("a client that closes the server's stdout ends it at once, queued calls unrun", {
  client <- start_server(fixture("everything.R"))
  initialize(client)
  for (i in 1:20) {
    send(client, list(jsonrpc = "2.0", id = i, method = "tools/call",
      params = list(name = "sleepy", arguments = list(seconds = 1))))
  }
  # Answered once every call before it is queued.
  expect_equal(request(client, "sync", "ping")$id, "sync")
  close(client$proc$get_output_connection())
  # Running the 20 calls would take 20 seconds.
  client$proc$wait(10000)
  expect_false(client$proc$is_alive())
})

test_that("a client that closes stdin and never reads a large answer lets the server exit", {
  script <- server_script(c(
    "rows <- function(n) data.frame(id = seq_len(n), x = seq_len(n) / 7, name = sprintf('row%06d', seq_len(n)))",
    "mcp_server(list(tool(rows, 'A large table', arguments = list(n = type_integer()))))"
  ))
  client <- start_server(script)
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = "rows", arguments = list(n = 300000L))))
  # The answer (about 16 MB) is being written once stdout has data: the
  # tool is done. Nothing reads it, so the server's writer blocks.
  expect_true(output_ready(client))
  expect_exit_unread(client)
})

# Whether the client sees the end of the server's stdout within `timeout`.
stdout_ends <- function(client, timeout = 10) {
  deadline <- Sys.time() + timeout
  while (client$proc$is_incomplete_output() && Sys.time() < deadline) {
    client$proc$poll_io(200)
    client$proc$read_output_lines()
  }
  !client$proc$is_incomplete_output()
}

test_that("a forked child never keeps the client's stdout open after the server is killed", {
  script <- server_script(c(
    "fork_sleeper <- function() {",
    "  child <- parallel::mcparallel(Sys.sleep(60))",
    "  child$pid",
    "}",
    "mcp_server(tool(fork_sleeper, 'Fork a child that sleeps'))"
  ))
  client <- start_server(script)
  initialize(client)
  pid <- as.integer(call_tool(client, 1, "fork_sleeper")$result$content[[1]]$text)
  withr::defer(tools::pskill(pid, tools::SIGKILL))
  # SIGTERM ends R at once, without the clean-up that stops its children
  # at a normal exit: the child lives on.
  client$proc$signal(tools::SIGTERM)
  client$proc$wait(5000)
  expect_false(client$proc$is_alive())
  expect_true(stdout_ends(client))
  expect_true(isTRUE(tools::pskill(pid, 0)), label = "the child still lives")
})

test_that("a condition without a usable message never stops the server", {
  # R lets a condition carry any message (NULL, several strings, NA, a
  # number): each becomes a tool error the model can read, and serving goes on.
  script <- server_script(c(
    "odd_error <- function(kind) {",
    "  message <- switch(kind, none = NULL, two = c('first line', 'second line'),",
    "    na = NA_character_, number = 42)",
    "  stop(structure(class = c('error', 'condition'), list(message = message, call = NULL)))",
    "}",
    "odd_warning <- function() {",
    "  warning(structure(class = c('warning', 'condition'), list(message = NULL, call = NULL)))",
    "  'warned'",
    "}",
    "odd_message <- function() {",
    "  message(structure(class = c('message', 'condition'), list(message = c('a', 'b'), call = NULL)))",
    "  'told'",
    "}",
    "mcp_server(list(",
    "  tool(odd_error, 'Fails oddly', arguments = list(kind = type_string())),",
    "  tool(odd_warning, 'Warns oddly'), tool(odd_message, 'Tells oddly')",
    "))"
  ))
  client <- start_server(script)
  initialize(client)
  texts <- c(none = "", two = "first line\nsecond line", na = "NA", number = "42")
  for (kind in names(texts)) {
    r <- call_tool(client, kind, "odd_error", list(kind = kind))
    expect_true(isTRUE(r$result$isError), label = kind)
    expect_equal(r$result$content[[1]]$text, texts[[kind]], label = kind)
  }
  expect_equal(call_tool(client, "w", "odd_warning")$result$content[[1]]$text, "warned")
  expect_equal(call_tool(client, "m", "odd_message")$result$content[[1]]$text, "told")
  expect_equal(finish(client), 0L)
  expect_log_valid(client)
})

test_that("a warning signalled without a way to muffle it runs on as in plain R", {
  # signalCondition() offers no "muffleWarning" restart: R carries on after
  # it, and so must the tool, rather than fail on the server's own handler.
  script <- server_script(c(
    "signals <- function() {",
    "  signalCondition(simpleWarning('only signalled'))",
    "  warning('a real warning')",
    "  'carried on'",
    "}",
    "mcp_server(tool(signals, 'Signals a warning'))"
  ))
  client <- start_server(script)
  initialize(client)
  r <- call_tool(client, 1, "signals")
  expect_false(isTRUE(r$result$isError))
  expect_equal(r$result$content[[1]]$text, "carried on")
  expect_equal(finish(client), 0L)
  expect_log_valid(client)
})

test_that("text from R that is not valid UTF-8 never reaches the wire as such", {
  # A tool's error, log or progress message may hold bytes that are not
  # UTF-8 (read from a file, say): a line that is not UTF-8 breaks the
  # client's JSON reader, so they arrive replaced.
  script <- server_script(c(
    "bad <- rawToChar(as.raw(c(0x61, 0xff, 0x62)))",
    "odd_bytes <- function(how) {",
    "  switch(how,",
    "    error = stop(bad),",
    "    log = { message(bad); 'logged' },",
    "    progress = { mcp_progress(1, total = 2, message = bad); 'reported' }",
    "  )",
    "}",
    "mcp_server(tool(odd_bytes, 'Odd bytes', arguments = list(how = type_string())))"
  ))
  client <- start_server(script)
  initialize(client)
  expect_equal(request(client, "level", "logging/setLevel", list(level = "debug"))$id, "level")
  send(client, list(jsonrpc = "2.0", id = "error", method = "tools/call",
    params = list(name = "odd_bytes", arguments = list(how = "error"))))
  send(client, list(jsonrpc = "2.0", id = "log", method = "tools/call",
    params = list(name = "odd_bytes", arguments = list(how = "log"))))
  send(client, list(jsonrpc = "2.0", id = "progress", method = "tools/call",
    params = list(name = "odd_bytes", arguments = list(how = "progress"), `_meta` = list(progressToken = "t"))))
  messages <- lapply(1:5, function(i) receive(client))
  lines <- vapply(tail(client$log, 5), function(entry) entry$line, "")
  expect_true(all(validUTF8(lines)))
  ids <- vapply(messages, function(m) if (is.null(m$id)) m$method else m$id, "")
  expect_setequal(ids, c("error", "log", "progress", "notifications/message", "notifications/progress"))
  by_id <- setNames(messages, ids)
  expect_true(by_id$error$result$isError)
  expect_equal(by_id$error$result$content[[1]]$text, "a\ufffdb")
  # (R's own sub() on a message() shows the byte as "<ff>", which is fine.)
  expect_true(by_id[["notifications/message"]]$params$data %in% c("a\ufffdb", "a<ff>b"))
  expect_equal(by_id[["notifications/progress"]]$params$message, "a\ufffdb")
  expect_equal(finish(client), 0L)
  expect_log_valid(client)
})

test_that("a forked child's copy of the server never waits for the client", {
  # The child has the server's memory but none of its threads: asking the
  # user from there would wait for ever (and could block on a lock a server
  # thread held at the fork). It fails at once instead; progress and logs
  # from the child are dropped.
  script <- server_script(c(
    "forked_ask <- function() {",
    "  child <- parallel::mcparallel({",
    "    mcp_progress(1, total = 2)",
    "    message('a message from the child')",
    "    tryCatch(mcp_elicit('Name?', list(name = type_string()))$action,",
    "      error = function(e) conditionMessage(e))",
    "  })",
    "  answer <- parallel::mccollect(child, wait = FALSE, timeout = 20)",
    "  if (is.null(answer)) {",
    "    tools::pskill(child$pid, tools::SIGKILL)",
    "    return('the child was still waiting after 20 seconds')",
    "  }",
    "  answer[[1]]",
    "}",
    "mcp_server(tool(forked_ask, 'Ask from a forked child'))"
  ))
  client <- start_server(script)
  client$rev <- "2025-11-25"
  empty <- setNames(list(), character())
  request(client, 0, "initialize", list(protocolVersion = "2025-11-25",
    capabilities = list(elicitation = empty), clientInfo = list(name = "t", version = "1")))
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call",
    params = list(name = "forked_ask", arguments = empty)))
  answer <- receive(client, timeout = 40)
  expect_equal(answer$id, 1L)
  expect_match(answer$result$content[[1]]$text, "forked from the server cannot talk to the client")
  # The server itself is unharmed.
  expect_equal(request(client, "p", "ping")$id, "p")
  expect_equal(finish(client), 0L)
  expect_log_valid(client)
})

test_that("a misspelt option is named, with the nearest valid one", {
  add <- tool(function(x) x, "Identity", name = "id", arguments = list(x = type_number()))
  # Before: "Options of `mcp_server()` must be named: ...", for a named option.
  expect_error(mcp_server(list(add), timeot = 5),
    "`mcp_server()` has no option `timeot`; did you mean `timeout`?", fixed = TRUE)
  expect_error(mcp_server(list(add), work = 2),
    "`mcp_server()` has no option `work`; did you mean `workers`?", fixed = TRUE)
  expect_error(mcp_server(list(add), colour = "red"), "`mcp_server()` has no option `colour`", fixed = TRUE)
  # Nothing is evaluated to say so.
  expect_error(mcp_server(list(add), timeot = stop("evaluated")), "did you mean `timeout`")
  # Unnamed extras are refused, listing the options.
  expect_error(mcp_server(list(add), NULL, 5), "Options of `mcp_server()` must be named: `name`, `version`", fixed = TRUE)
  expect_error(resource("data://x", "x", timout = 1),
    "`resource()` has no option `timout`; did you mean `timeout`?", fixed = TRUE)
  expect_error(prompt_template(function() "x", name = "p", descripton = "d"),
    "`prompt_template()` has no option `descripton`; did you mean `description`?", fixed = TRUE)
})

test_that("a tool that calls quit() gets its call answered, and says so on stderr", {
  script <- server_script(c(
    "bye <- function() { quit(save = 'no', status = 0); 'not reached' }",
    "mcp_server(list(tool(bye, 'Ends R')))"
  ))
  client <- start_server(script)
  initialize(client)
  r <- call_tool(client, 1, "bye")
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "The tool \"bye\" ended the R process", fixed = TRUE)
  expect_match(r$result$content[[1]]$text, "quit()", fixed = TRUE)
  client$proc$wait(10000)
  expect_false(client$proc$is_alive())
  expect_match(client$proc$read_all_error(), "the tool \"bye\" ended the R process (it called quit() or q())", fixed = TRUE)
})

# The serving loop sets up its condition handlers once for many calls
# (serve_calls() in R/server.R): a condition that ends one call must not
# change how the next ones are handled, and a call through middleware,
# which has handlers of its own, must not have its messages logged twice.
test_that("each call's conditions are handled alike, whatever ended the calls before it", {
  for (middleware in c("NULL", "list(function(request, call_next) call_next(request))")) {
    script <- server_script(c(
      "chatty <- function() { message('a message'); warning('a warning'); 'said' }",
      "fail <- function() stop('it broke')",
      "add <- function(x, y) x + y",
      "mcp_server(list(",
      "  tool(chatty, 'Talks'), tool(fail, 'Fails'),",
      "  tool(add, 'Adds', arguments = list(x = type_number(), y = type_number()))",
      paste0("), middleware = ", middleware, ")")
    ))
    client <- start_server(script)
    initialize(client)
    request(client, 1, "logging/setLevel", list(level = "info"))
    calls <- list(list("chatty"), list("fail"), list("chatty"), list("add", list(x = 1, y = 2)),
                  list("fail"), list("fail"), list("chatty"))
    for (i in seq_along(calls)) {
      arguments <- if (length(calls[[i]]) > 1) calls[[i]][[2]] else setNames(list(), character())
      send(client, list(jsonrpc = "2.0", id = 10 + i, method = "tools/call",
                        params = list(name = calls[[i]][[1]], arguments = arguments)))
      got <- list()
      repeat {
        msg <- receive(client)
        got[[length(got) + 1]] <- msg
        if (!is.null(msg$id)) break
      }
      answer <- got[[length(got)]]
      logs <- vapply(Filter(function(m) identical(m$method, "notifications/message"), got),
                     function(m) paste(m$params$level, m$params$data), "")
      switch(calls[[i]][[1]],
        chatty = {
          expect_equal(answer$result$content[[1]]$text, "said")
          expect_equal(logs, c("info a message", "warning a warning"), info = middleware)
        },
        fail = {
          expect_true(answer$result$isError)
          expect_equal(answer$result$content[[1]]$text, "it broke")
          expect_length(logs, 0)
        },
        add = expect_equal(answer$result$content[[1]]$text, "3")
      )
    }
    expect_equal(finish(client), 0)
    expect_log_valid(client)
  }
})
