# Tasks over real stdio: their time to live, and what a client may ask of them.
skip_on_cran()

empty <- setNames(list(), character())

test_that("a tasks/result waiting on a task whose ttl runs out is answered, even after stdin closed", {
  client <- start_server(fixture("input.R"))
  initialize(client, "2025-11-25")
  created <- request(client, 1, "tools/call", list(
    name = "slow_job", arguments = list(seconds = 60), task = list(ttl = 1500)
  ))
  id <- created$result$task$taskId
  send(client, list(jsonrpc = "2.0", id = 2, method = "tasks/result", params = list(taskId = id)))
  # The job would run a minute: the expiry answers the request and stops it,
  # so the server exits well before.
  expect_equal(finish(client, timeout = 30), 0)
  answer <- receive(client)
  expect_equal(answer$id, 2L)
  expect_equal(answer$error$code, -32602L)
  expect_match(answer$error$message, "expired")
  expect_log_valid(client)
})

test_that("2026-07-28 task methods need the tasks extension on the request", {
  client <- start_server(fixture("input.R"))
  client$rev <- "2026-07-28"
  meta <- function(caps) list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = caps
  )
  with_ext <- list(extensions = list(`io.modelcontextprotocol/tasks` = empty))
  created <- request(client, 1, "tools/call", list(
    name = "slow_job", arguments = list(seconds = 0), `_meta` = meta(with_ext)
  ))
  id <- created$result$taskId
  expect_type(id, "character")
  for (method in c("tasks/get", "tasks/update", "tasks/cancel")) {
    r <- request(client, 2, method, list(taskId = id, inputResponses = empty, `_meta` = meta(empty)))
    expect_equal(r$error$code, -32021L)
    expect_named(r$error$data$requiredCapabilities$extensions, "io.modelcontextprotocol/tasks")
  }
  r <- request(client, 3, "tasks/get", list(taskId = id, `_meta` = meta(with_ext)))
  expect_equal(r$result$taskId, id)
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

tasks_meta <- function() list(
  `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
  `io.modelcontextprotocol/clientCapabilities` = list(
    elicitation = empty, extensions = list(`io.modelcontextprotocol/tasks` = empty)
  )
)
accept <- function(name) list(action = "accept", content = list(name = name))

# Polls tasks/get until the task has `status`; the last result.
task_status <- function(client, id, task, status, tries = 100) {
  for (i in seq_len(tries)) {
    got <- request(client, id, "tasks/get", list(taskId = task, `_meta` = tasks_meta()))$result
    if (identical(got$status, status)) return(got)
    Sys.sleep(0.05)
  }
  stop("task ", task, " never became ", status, "; last: ", got$status)
}

test_that("a 2026-07-28 task asks two questions at once and takes the answers in two updates", {
  client <- start_server(fixture("input.R"))
  client$rev <- "2026-07-28"
  created <- request(client, 1, "tools/call", list(name = "task_pair", arguments = empty, `_meta` = tasks_meta()))
  task <- created$result$taskId
  expect_equal(created$result$resultType, "task")
  waiting <- task_status(client, 2, task, "input_required")
  expect_setequal(names(waiting$inputRequests), c("first", "last"))
  expect_equal(waiting$inputRequests$first$params$message, "First name?")
  update <- function(id, responses) {
    request(client, id, "tasks/update", list(taskId = task, inputResponses = responses, `_meta` = tasks_meta()))
  }
  ack <- update(3, list(first = accept("Ada")))
  expect_equal(ack$result$resultType, "complete")
  still <- task_status(client, 4, task, "input_required")
  expect_named(still$inputRequests, "last")
  # A bad answer is refused, and the question stays.
  bad <- update(5, list(last = list(action = "perhaps")))
  expect_equal(bad$error$code, -32602L)
  expect_named(task_status(client, 6, task, "input_required")$inputRequests, "last")
  update(7, list(last = accept("Lovelace"), first = accept("Eve")))
  done <- task_status(client, 8, task, "completed")
  expect_equal(done$result$content[[1]]$text, "Hello, Ada Lovelace")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a 2025-11-25 task sends both questions at once and resumes when both are answered", {
  client <- start_server(fixture("input.R"))
  client$rev <- "2025-11-25"
  request(client, 0, "initialize", list(
    protocolVersion = "2025-11-25", capabilities = list(elicitation = empty),
    clientInfo = list(name = "testthat", version = "1")
  ))
  send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
  created <- request(client, 1, "tools/call", list(name = "task_pair", arguments = empty, task = empty))
  task <- created$result$task$taskId
  asked <- list(receive(client), receive(client))
  expect_equal(vapply(asked, function(m) m$method, ""), rep("elicitation/create", 2))
  expect_setequal(vapply(asked, function(m) m$params$message, ""), c("First name?", "Last name?"))
  expect_equal(request(client, 2, "tasks/get", list(taskId = task))$result$status, "input_required")
  # Answered in the other order: each answer goes to its question.
  name_for <- function(m) if (m$params$message == "First name?") "Ada" else "Lovelace"
  send(client, list(jsonrpc = "2.0", id = asked[[2]]$id, result = accept(name_for(asked[[2]]))))
  send(client, list(jsonrpc = "2.0", id = asked[[1]]$id, result = accept(name_for(asked[[1]]))))
  result <- request(client, 3, "tasks/result", list(taskId = task))
  expect_equal(result$result$content[[1]]$text, "Hello, Ada Lovelace")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a deferred tool asks by input_required rounds, then mcp_task() makes the call a task", {
  expect_null(mcp_task())
  client <- start_server(fixture("input.R"))
  client$rev <- "2026-07-28"
  ask <- function(id, meta, extra = list()) {
    request(client, id, "tools/call", c(list(name = "book", arguments = empty, `_meta` = meta), extra))$result
  }
  for (with_tasks in c(TRUE, FALSE)) {
    meta <- tasks_meta()
    if (!with_tasks) meta[["io.modelcontextprotocol/clientCapabilities"]]$extensions <- NULL
    first <- ask(1, meta)
    expect_equal(first$resultType, "input_required")
    expect_null(first$taskId)
    answer <- list(list(action = "accept", content = list(city = "Lisbon")))
    names(answer) <- names(first$inputRequests)
    second <- ask(2, meta, list(requestState = first$requestState, inputResponses = answer))
    if (with_tasks) {
      expect_equal(second$resultType, "task")
      expect_null(second$requestState)
      done <- task_status(client, 3, second$taskId, "completed")
      expect_equal(done$result$content[[1]]$text, "Booked Lisbon in a task")
    } else {
      expect_equal(second$resultType, "complete")
      expect_equal(second$content[[1]]$text, "Booked Lisbon directly")
    }
  }
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})
