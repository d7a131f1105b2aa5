# Asking the user for input, and tasks, over real stdio in both eras.
skip_on_cran()

modern <- function(caps = setNames(list(), character()), ...) {
  c(list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = caps
  ), list(...))
}
empty <- setNames(list(), character())

modern_call <- function(client, id, name, caps, extra = list()) {
  params <- c(list(name = name, arguments = empty, `_meta` = modern(caps)), extra)
  send(client, list(jsonrpc = "2.0", id = id, method = "tools/call", params = params))
  receive(client)
}

test_that("a handshake-era client is asked while the tool waits", {
  client <- start_server(fixture("input.R"))
  initialize(client, "2025-06-18") # without the elicitation capability
  r <- call_tool(client, 1, "greet")
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "did not declare the elicitation capability")
  finish(client)

  client <- start_server(fixture("input.R"))
  client$rev <- "2025-11-25"
  request(client, 0, "initialize", list(protocolVersion = "2025-11-25",
    capabilities = list(elicitation = empty), clientInfo = list(name = "t", version = "1")))
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "greet", arguments = empty)))
  ask <- receive(client)
  expect_equal(ask$method, "elicitation/create")
  expect_equal(ask$params$message, "What is your name?")
  expect_equal(ask$params$requestedSchema$properties$name$type, "string")
  # ping still works while the tool waits for the user.
  expect_equal(request(client, "p", "ping")$id, "p")
  send(client, list(jsonrpc = "2.0", id = ask$id, result = list(action = "accept", content = list(name = "Ada"))))
  r <- receive(client)
  expect_equal(r$result$content[[1]]$text, "Hello, Ada! (run 1)")
  send(client, list(jsonrpc = "2.0", id = 2, method = "tools/call", params = list(name = "greet", arguments = empty)))
  ask <- receive(client)
  send(client, list(jsonrpc = "2.0", id = ask$id, result = list(action = "decline")))
  expect_equal(receive(client)$result$content[[1]]$text, "No name given: decline")
  # Cancelled while waiting: no answer, and the next call works.
  send(client, list(jsonrpc = "2.0", id = 3, method = "tools/call", params = list(name = "greet", arguments = empty)))
  receive(client)
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = 3)))
  send(client, list(jsonrpc = "2.0", id = 4, method = "tools/call", params = list(name = "slow_job", arguments = list(seconds = 0))))
  expect_equal(receive(client)$id, 4L)
  finish(client)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
})

test_that("a 2026-07-28 client gets input_required rounds with signed state", {
  client <- start_server(fixture("input.R"))
  client$rev <- "2026-07-28"
  caps <- list(elicitation = empty)
  r <- modern_call(client, 1, "two_questions", caps)
  expect_equal(r$result$resultType, "input_required")
  expect_equal(names(r$result$inputRequests), "input-1")
  expect_equal(r$result$inputRequests$`input-1`$params$requestedSchema$properties$colour$enum, list("red", "blue"))
  expect_wire_valid(client$log[[1]]$line, "2026-07-28", "InputRequiredResult")
  state1 <- r$result$requestState
  r <- modern_call(client, 2, "two_questions", caps, list(
    inputResponses = list(`input-1` = list(action = "accept", content = list(colour = "blue"))),
    requestState = state1
  ))
  expect_equal(names(r$result$inputRequests), "input-2")
  r <- modern_call(client, 3, "two_questions", caps, list(
    inputResponses = list(`input-2` = list(action = "accept", content = list(n = 3, sure = TRUE))),
    requestState = r$result$requestState
  ))
  expect_equal(r$result$content[[1]]$text, "blue 3 TRUE")
  expect_equal(r$result$resultType, "complete")
  # The state cannot be reused, altered, or moved to another tool.
  r <- modern_call(client, 4, "two_questions", caps, list(requestState = state1))
  expect_equal(r$error$code, -32602L)
  expect_equal(r$error$data$reason, "invalid_request_state")
  r <- modern_call(client, 5, "greet", caps, list(requestState = state1))
  expect_equal(r$error$data$reason, "invalid_request_state")
  r <- modern_call(client, 6, "greet", caps)
  altered <- sub("^.", if (substr(r$result$requestState, 1, 1) == "e") "f" else "e", r$result$requestState)
  r <- modern_call(client, 7, "greet", caps, list(requestState = altered))
  expect_equal(r$error$data$reason, "invalid_request_state")
  finish(client)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
})

test_that("a 2026-07-28 request without elicitation gets -32021 naming it", {
  client <- start_server(fixture("input.R"))
  client$rev <- "2026-07-28"
  r <- modern_call(client, 8, "greet", empty)
  expect_equal(r$id, 8L)
  expect_null(r$result)
  expect_equal(r$error$code, -32021L)
  expect_match(r$error$message, "elicitation")
  expect_equal(names(r$error$data$requiredCapabilities), "elicitation")
  expect_length(r$error$data$requiredCapabilities$elicitation, 0)
  if (!is.null(schema_dir())) {
    problems <- mcpserver:::json_schema_problems_(
      definition_schema("2026-07-28", "MissingRequiredClientCapabilityError"),
      client$log[[length(client$log)]]$line
    )
    expect_equal(problems, character())
  }
  # The server goes on serving; declared, the same tool asks.
  r <- modern_call(client, 9, "greet", list(elicitation = empty))
  expect_equal(r$result$resultType, "input_required")
  # A task of the extension that needs input fails with the same error.
  caps <- list(extensions = list(`io.modelcontextprotocol/tasks` = empty))
  created <- modern_call(client, 10, "task_greet", caps)
  expect_equal(created$result$resultType, "task")
  deadline <- Sys.time() + 10
  repeat {
    status <- request(client, 11, "tasks/get", list(taskId = created$result$taskId, `_meta` = modern(caps)))$result
    if (status$status != "working" || Sys.time() > deadline) break
    Sys.sleep(0.05)
  }
  expect_equal(status$status, "failed")
  expect_equal(status$error$code, -32021L)
  expect_equal(names(status$error$data$requiredCapabilities), "elicitation")
  finish(client)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
})

test_that("2025-11-25 tasks: created at once, result fetched later", {
  client <- start_server(fixture("input.R"))
  initialize(client, "2025-11-25")
  listed <- request(client, 1, "tools/list")
  exec <- lapply(listed$result$tools, function(t) t$execution$taskSupport)
  expect_equal(exec[[3]], "optional")
  expect_equal(exec[[4]], "required")
  created <- request(client, 2, "tools/call", list(name = "slow_job", arguments = list(seconds = 1), task = list(ttl = 60000)))
  task <- created$result$task
  expect_equal(task$status, "working")
  expect_wire_valid(client$log[[length(client$log)]]$line, "2025-11-25", "CreateTaskResult")
  got <- request(client, 3, "tasks/get", list(taskId = task$taskId))
  expect_equal(got$result$status, "working")
  result <- request(client, 4, "tasks/result", list(taskId = task$taskId))
  expect_equal(result$result$structuredContent, list(waited = 1L))
  expect_equal(result$result$`_meta`$`io.modelcontextprotocol/related-task`$taskId, task$taskId)
  r <- request(client, 5, "tools/call", list(name = "needs_task", arguments = empty))
  expect_equal(r$error$code, -32601L)
  created <- request(client, 6, "tools/call", list(name = "slow_job", arguments = list(seconds = 30), task = empty))
  Sys.sleep(0.3)
  cancelled <- request(client, 7, "tasks/cancel", list(taskId = created$result$task$taskId))
  expect_equal(cancelled$result$status, "cancelled")
  expect_equal(call_tool(client, 8, "slow_job", list(seconds = 0))$id, 8L)
  finish(client)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
})

test_that("2026-07-28 task extension: the server decides, the client polls", {
  client <- start_server(fixture("input.R"))
  client$rev <- "2026-07-28"
  caps <- list(elicitation = empty, extensions = list(`io.modelcontextprotocol/tasks` = empty))
  discover <- request(client, 1, "server/discover", list(`_meta` = modern()))
  expect_true("io.modelcontextprotocol/tasks" %in% names(discover$result$capabilities$extensions))
  created <- modern_call(client, 2, "task_greet", caps)
  expect_equal(created$result$resultType, "task")
  id <- created$result$taskId
  poll <- function(n) request(client, n, "tasks/get", list(taskId = id, `_meta` = modern(caps)))$result
  status <- poll(3)
  deadline <- Sys.time() + 10
  while (status$status == "working" && Sys.time() < deadline) status <- poll(4)
  expect_equal(status$status, "input_required")
  expect_equal(status$inputRequests$`input-1`$params$message, "Name for the task?")
  ack <- request(client, 5, "tasks/update", list(taskId = id, `_meta` = modern(caps),
    inputResponses = list(`input-1` = list(action = "accept", content = list(name = "Grace")))))
  expect_equal(ack$result$resultType, "complete")
  deadline <- Sys.time() + 10
  repeat {
    status <- poll(6)
    if (status$status == "completed" || Sys.time() > deadline) break
    Sys.sleep(0.05)
  }
  expect_equal(status$result$content[[1]]$text, "Task says hello to Grace")
  r <- modern_call(client, 7, "needs_task", empty)
  expect_equal(r$error$code, -32021L)
  r <- modern_call(client, 8, "slow_job", empty, list(arguments = list(seconds = 0)))
  expect_equal(r$result$resultType, "complete")
  finish(client)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
})

test_that("mcp_elicit() outside a tool call, and bad schemas", {
  expect_error(mcp_elicit("Name?", list(name = type_string())), "can only be used while a tool call runs")
  expect_error(mcp_elicit(1), "`message` must be a single string.", fixed = TRUE)
  expect_error(mcp_elicit("x", list(type_string())), "named list")
  expect_error(tool(function() 1, "d", name = "t", task = "sometimes"), "`task` must be one of")
})

test_that("stdin ending while a tool waits for the user ends the call as cancelled, and the server exits", {
  client <- start_server(fixture("input.R"))
  client$rev <- "2025-11-25"
  request(client, 0, "initialize", list(protocolVersion = "2025-11-25",
    capabilities = list(elicitation = empty), clientInfo = list(name = "t", version = "1")))
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "greet", arguments = empty)))
  expect_equal(receive(client)$method, "elicitation/create")
  expect_equal(finish(client), 0)
  expect_length(client$pending, 0) # nothing more for the cancelled call
})

test_that("a tool that signals it needs input without asking still gets an answer", {
  # The condition mcp_elicit() raises to end a 2026-07-28 round, raised by
  # the tool's own code with no input request behind it: the call ends with
  # a tool error instead of staying unanswered (which kept the server from
  # exiting at end of input).
  script <- server_script(c(
    "fake <- function() stop(structure(class = c('mcpserver_input_required', 'condition'),",
    "  list(message = 'needs input', call = NULL)))",
    "mcp_server(tool(fake, 'Signals without asking'))"
  ))
  client <- start_server(script)
  initialize(client)
  r <- call_tool(client, 1, "fake")
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "mcp_elicit")
  expect_equal(finish(client), 0L)
  expect_log_valid(client)
})
