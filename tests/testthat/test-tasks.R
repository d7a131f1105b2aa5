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
