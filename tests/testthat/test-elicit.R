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
  # 3 s: long enough that tasks/get still finds it working on a loaded machine.
  created <- request(client, 2, "tools/call", list(name = "slow_job", arguments = list(seconds = 3), task = list(ttl = 60000)))
  task <- created$result$task
  expect_equal(task$status, "working")
  expect_wire_valid(client$log[[length(client$log)]]$line, "2025-11-25", "CreateTaskResult")
  got <- request(client, 3, "tasks/get", list(taskId = task$taskId))
  expect_equal(got$result$status, "working")
  result <- request(client, 4, "tasks/result", list(taskId = task$taskId))
  expect_equal(result$result$structuredContent, list(waited = 3L))
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
  expect_error(mcp_elicit("Name?", list(name = type_string())), "can only be asked for while a tool call runs")
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

# --- Forms of every field kind, sampling, roots, several keys per round ---

legacy_client <- function(version, caps, env = parent.frame()) {
  client <- start_server(fixture("asking.R"), env = env)
  client$rev <- version
  request(client, 0, "initialize", list(protocolVersion = version,
    capabilities = caps, clientInfo = list(name = "t", version = "1")))
  client
}

# Calls `name` and answers the server's one request with `answer`; returns
# the request and the call's result.
answered_call <- function(client, id, name, answer) {
  send(client, list(jsonrpc = "2.0", id = id, method = "tools/call", params = list(name = name, arguments = empty)))
  ask <- receive(client)
  send(client, list(jsonrpc = "2.0", id = ask$id, result = answer))
  list(ask = ask, result = receive(client)$result)
}

sampled <- function(text) {
  list(role = "assistant", content = list(type = "text", text = text), model = "test-model", stopReason = "endTurn")
}

test_that("forms carry defaults, titled and several choices, and answers become R values", {
  client <- legacy_client("2025-11-25", list(elicitation = empty))
  got <- answered_call(client, 1, "form_defaults", list(action = "accept", content = list(
    name = "Ada", age = 36, score = 99.5, status = "pending", verified = FALSE
  )))
  fields <- got$ask$params$requestedSchema$properties
  expect_equal(fields$name, list(type = "string", default = "John Doe"))
  expect_equal(fields$age, list(type = "integer", default = 30L))
  expect_equal(fields$score, list(type = "number", default = 95.5))
  expect_equal(fields$status, list(type = "string", enum = list("active", "inactive", "pending"), default = "active"))
  expect_equal(fields$verified, list(type = "boolean", default = TRUE))
  expect_equal(got$ask$params$mode, "form")
  expect_equal(got$result$content[[1]]$text,
    "name=Ada<character> age=36<integer> score=99.5<numeric> status=pending<character> verified=FALSE<logical>")

  got <- answered_call(client, 2, "form_choices", list(action = "accept", content = list(
    untitled = "b", titled = "v1", legacy = "y", several = list("q", "r"), several_titled = list("s2")
  )))
  fields <- got$ask$params$requestedSchema$properties
  expect_equal(fields$titled$oneOf, list(list(const = "v1", title = "First"), list(const = "v2", title = "Second")))
  expect_equal(fields$titled$default, "v2")
  expect_equal(fields$legacy$enumNames, list("Ex", "Why"))
  expect_equal(fields$several, list(type = "array", items = list(type = "string", enum = list("p", "q", "r")), default = list("p", "q")))
  expect_equal(fields$several_titled$items, list(anyOf = list(list(const = "s1", title = "One"), list(const = "s2", title = "Two"))))
  expect_equal(unlist(got$ask$params$requestedSchema$required), c("untitled", "titled", "legacy", "several"))
  # Several choices arrive as a character vector, even of one.
  expect_equal(got$result$content[[1]]$text,
    "untitled=b<character> titled=v1<character> legacy=y<character> several=q+r<character> several_titled=s2<character>")

  # An answer that does not fit the form never reaches the tool as such.
  got <- answered_call(client, 4, "form_defaults", list(action = "accept", content = list(
    name = "Ada", age = "old", score = 1, status = "gone", verified = TRUE
  )))
  expect_true(got$result$isError)
  expect_match(got$result$content[[1]]$text, 'age: expected an integer, got "old"', fixed = TRUE)
  expect_match(got$result$content[[1]]$text, "status: expected one of", fixed = TRUE)

  # A field outside the protocol's subset is a tool error naming it.
  r <- call_tool(client, 3, "bad_form")
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "field `email`: `format` must be one of")
  finish(client)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
})

test_that("2025-06-18 gets legacy titles and no defaults, and cannot be asked for several choices", {
  client <- legacy_client("2025-06-18", list(elicitation = empty))
  got <- answered_call(client, 1, "form_defaults", list(action = "decline"))
  fields <- got$ask$params$requestedSchema$properties
  expect_null(fields$name$default)
  expect_equal(fields$verified$default, TRUE)
  expect_null(got$ask$params$mode)
  r <- call_tool(client, 2, "form_choices")
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "field `several` lets the user pick several choices")
  finish(client)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
})

test_that("sampling and roots are requests to a handshake-era client", {
  for (version in c("2024-11-05", "2025-06-18", "2025-11-25")) {
    client <- legacy_client(version, list(sampling = empty, roots = list(listChanged = TRUE)))
    got <- answered_call(client, 1, "capital", sampled("Paris."))
    expect_equal(got$ask$method, "sampling/createMessage")
    params <- got$ask$params
    expect_equal(params$messages, list(list(role = "user", content = list(type = "text", text = "What is the capital of France?"))))
    expect_equal(params$maxTokens, 100L)
    expect_equal(params$systemPrompt, "Be brief")
    expect_equal(params$modelPreferences, list(hints = list(list(name = "claude")), speedPriority = 0.5))
    expect_equal(got$result$content[[1]]$text, "LLM response: Paris. (test-model, endTurn)")
    got <- answered_call(client, 2, "roots", list(roots = list(
      list(uri = "file:///test/root", name = "Test Root"), list(uri = "file:///other")
    )))
    expect_equal(got$ask$method, "roots/list")
    expect_equal(got$result$content[[1]]$text, "2 roots: file:///test/root Test Root; file:///other NA")
    # An answer of the wrong kind, or an error, is a tool error.
    got <- answered_call(client, 3, "roots", list(action = "accept"))
    expect_true(got$result$isError)
    expect_match(got$result$content[[1]]$text, "roots result")
    send(client, list(jsonrpc = "2.0", id = 4, method = "tools/call", params = list(name = "capital", arguments = empty)))
    ask <- receive(client)
    send(client, list(jsonrpc = "2.0", id = ask$id, error = list(code = -1L, message = "User rejected sampling")))
    r <- receive(client)
    expect_true(r$result$isError)
    expect_match(r$result$content[[1]]$text, "User rejected sampling")
    finish(client)
    for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
  }
  # Without the capability, the tool learns it and says so.
  client <- legacy_client("2025-11-25", empty)
  r <- call_tool(client, 1, "capital")
  expect_match(r$result$content[[1]]$text, "did not declare the sampling capability")
  r <- call_tool(client, 2, "roots")
  expect_match(r$result$content[[1]]$text, "did not declare the roots capability")
  finish(client)
})

test_that("2026-07-28: several named requests in one round, then a complete result", {
  client <- start_server(fixture("asking.R"))
  client$rev <- "2026-07-28"
  caps <- list(elicitation = empty, sampling = empty, roots = list(listChanged = TRUE))
  r <- modern_call(client, 1, "multiple", caps)
  expect_equal(r$result$resultType, "input_required")
  requests <- r$result$inputRequests
  expect_equal(names(requests), c("user_name", "greeting", "client_roots"))
  expect_equal(requests$user_name$method, "elicitation/create")
  expect_equal(requests$greeting$params$maxTokens, 50L)
  expect_equal(requests$client_roots, list(method = "roots/list", params = empty))
  expect_wire_valid(client$log[[1]]$line, "2026-07-28", "InputRequiredResult")
  responses <- list(
    user_name = list(action = "accept", content = list(name = "Ada")),
    greeting = sampled("Hello"),
    client_roots = list(roots = list(list(uri = "file:///test/root", name = "Test Root")))
  )
  first_state <- r$result$requestState
  # Answered in part: the next round asks only what is missing, and the
  # answer given is carried in the state.
  r <- modern_call(client, 2, "multiple", caps, list(inputResponses = responses["user_name"], requestState = first_state))
  expect_equal(r$result$resultType, "input_required")
  expect_equal(names(r$result$inputRequests), c("greeting", "client_roots"))
  r <- modern_call(client, 21, "multiple", caps, list(inputResponses = responses[-1], requestState = r$result$requestState))
  expect_equal(r$result$resultType, "complete")
  expect_equal(r$result$content[[1]]$text, "Hello Ada - roots: 1")

  # Single sampling and roots rounds.
  r <- modern_call(client, 3, "capital", caps)
  expect_equal(names(r$result$inputRequests), "input-1")
  r <- modern_call(client, 4, "capital", caps, list(
    inputResponses = list(`input-1` = sampled("The capital of France is Paris.")), requestState = r$result$requestState
  ))
  expect_match(r$result$content[[1]]$text, "The capital of France is Paris.")
  # An answer of another kind under a key is a tool error, not a crash.
  r <- modern_call(client, 5, "roots", caps)
  r <- modern_call(client, 6, "roots", caps, list(
    inputResponses = list(`input-1` = sampled("not roots")), requestState = r$result$requestState
  ))
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "not an answer to `roots/list`")

  # Without some capabilities: -32021 naming each; a tool that checks asks
  # only what the request can answer.
  r <- modern_call(client, 7, "multiple", list(sampling = empty))
  expect_equal(r$error$code, -32021L)
  expect_setequal(names(r$error$data$requiredCapabilities), c("elicitation", "roots"))
  r <- modern_call(client, 8, "by_capability", list(sampling = empty))
  expect_equal(r$result$resultType, "input_required")
  expect_equal(r$result$inputRequests$`input-1`$method, "sampling/createMessage")
  r <- modern_call(client, 9, "same_key_twice", caps)
  expect_equal(names(r$result$inputRequests), "a")
  r <- modern_call(client, 10, "same_key_twice", caps, list(
    inputResponses = list(a = list(roots = list())), requestState = r$result$requestState
  ))
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "key `a` was already asked")
  finish(client)
  for (entry in client$log) expect_wire_valid(entry$line, entry$rev)
})

test_that("field helpers check their defaults and titles", {
  expect_error(type_string(default = 1), "`default` must be a single string")
  expect_error(type_integer(default = 2.5), "whole number")
  expect_error(type_boolean(default = NA), "TRUE or FALSE")
  expect_error(type_enum(c("a", "b"), default = "z"), "one of `values`")
  expect_error(type_enum(c("a", "b"), titles = "A"), "one title for each")
  expect_error(type_array(type_enum(c("a", "b")), default = c("a", "z")), "values of `items`")
  expect_equal(
    unclass(mcpserver:::type_schema_(type_enum(c("a", "b"), titles = c("A", "B"), default = "a"), FALSE)),
    '{"type":"string","oneOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}],"default":"a"}'
  )
  expect_equal(unclass(mcpserver:::type_schema_(type_array(type_string(), default = "x"), FALSE)),
    '{"type":"array","items":{"type":"string"},"default":["x"]}')
  # mcplite's fields are unchanged when no default is given.
  expect_null(type_string()$default)
  expect_error(ask_model("hi", max_tokens = 0), "positive whole number")
  expect_error(ask_model(list(list(role = "system", content = "x"))), "role")
  expect_error(mcp_ask(list()), "ask_user")
  expect_error(mcp_sample("hi"), "while a tool call runs")
})

test_that("a form cannot ask for a nullable field, and says what to use instead", {
  ask <- tool(function() mcp_elicit("Age?", list(age = type_integer(nullable = TRUE)))$content$age,
    "Asks", name = "ask")
  client <- mcp_client(ask, elicit = function(message, schema) list(action = "accept", content = list(age = 3L)))
  withr::defer(mcp_close(client))
  r <- mcp_call(client, "ask")
  expect_true(r$is_error)
  expect_match(r$text, "field `age` cannot be nullable in a form", fixed = TRUE)
  expect_match(r$text, "required = FALSE", fixed = TRUE)
})
