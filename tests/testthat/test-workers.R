# Concurrent tools on future workers, over real stdio (fixtures/workers.R).
skip_on_cran()
skip_if_not_installed("future", minimum_version = "1.31.0")
skip_if_not_installed("parallelly")

start_workers <- function(env = parent.frame(), workers = 2, queue = 100) {
  client <- start_server(fixture("workers.R"), env = env, extra_env = c(
    TEST_WORKERS = workers, TEST_WORKER_QUEUE = queue
  ))
  initialize(client)
  client
}

send_call <- function(client, id, name, arguments = setNames(list(), character()), meta = NULL) {
  params <- list(name = name, arguments = arguments)
  if (!is.null(meta)) params$`_meta` <- meta
  send(client, list(jsonrpc = "2.0", id = id, method = "tools/call", params = params))
}

# The answers to `ids`, by id, whatever order they come in (notifications
# are kept in `client$notes`).
answers_to <- function(client, ids, timeout = 60) {
  got <- list()
  while (!all(as.character(ids) %in% names(got))) {
    msg <- receive(client, timeout)
    if (is.null(msg$id)) {
      client$notes[[length(client$notes) + 1]] <- msg
    } else {
      got[[as.character(msg$id)]] <- msg
    }
  }
  got
}

process_alive <- function(pid) isTRUE(tools::pskill(pid, 0L))

# A liveness check, not a timing criterion: the process must end at all.
expect_process_ends <- function(pid, within = 20) {
  deadline <- Sys.time() + within
  while (process_alive(pid) && Sys.time() < deadline) Sys.sleep(0.1)
  expect_false(process_alive(pid), label = paste("process", pid, "still alive"))
}

wait_for_pid <- function(file, within = 30) {
  deadline <- Sys.time() + within
  while (!(file.exists(file) && length(readLines(file, warn = FALSE)) == 1) && Sys.time() < deadline) {
    Sys.sleep(0.05)
  }
  as.integer(readLines(file, warn = FALSE))
}

# Two 1-s calls at once, then two more: all four succeed on two workers.
expect_workers_serve <- function(client, first_id) {
  ids <- first_id + 0:1
  for (id in ids) send_call(client, id, "nap", list(seconds = 0.5))
  got <- answers_to(client, ids)
  for (id in ids) expect_false(isTRUE(got[[as.character(id)]]$result$isError), label = paste("call", id))
}

test_that("concurrent calls overlap on separate workers while the main thread serves", {
  client <- start_workers()
  main_pid <- call_tool(client, 1, "here")$result$content[[1]]$text
  send_call(client, 2, "nap", list(seconds = 2))
  send_call(client, 3, "nap", list(seconds = 2))
  # A main-thread call sent after them is answered before either ends.
  send_call(client, 4, "here")
  first <- receive(client, 60)
  expect_equal(first$id, 4L)
  expect_equal(first$result$content[[1]]$text, main_pid)
  expect_equal(request(client, 5, "ping")$id, 5L)
  got <- answers_to(client, 2:3)
  a <- got[["2"]]$result$structuredContent
  b <- got[["3"]]$result$structuredContent
  # The two intervals overlap: each started before the other ended.
  expect_lt(a$start, b$end)
  expect_lt(b$start, a$end)
  expect_false(identical(a$pid, b$pid))
  expect_false(as.character(a$pid) %in% main_pid)
  expect_equal(finish(client), 0)
})

test_that("a tool error in a worker is an error result with its message", {
  client <- start_workers()
  answer <- call_tool(client, 1, "fails")
  expect_true(answer$result$isError)
  expect_equal(answer$result$content[[1]]$text, "no luck in the worker")
  expect_equal(finish(client), 0)
})

test_that("cancelling a running worker call stops its worker, which is replaced", {
  client <- start_workers()
  pid_file <- withr::local_tempfile()
  send_call(client, "slow", "linger", list(file = pid_file))
  pid <- wait_for_pid(pid_file)
  expect_true(process_alive(pid))
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "slow")))
  expect_process_ends(pid)
  # No answer for the cancelled call; the next request is answered first.
  expect_equal(request(client, "next", "ping")$id, "next")
  expect_workers_serve(client, 10)
  expect_equal(finish(client), 0)
  expect_false(any(vapply(client$log, function(e) grepl('"id":"slow"', e$line, fixed = TRUE), logical(1))))
})

test_that("a worker call past its limit is answered as timed out and its worker stopped", {
  client <- start_workers()
  pid_file <- withr::local_tempfile()
  send_call(client, 1, "short_fuse", list(file = pid_file))
  answer <- answers_to(client, 1)[["1"]]
  expect_true(answer$result$isError)
  expect_match(answer$result$content[[1]]$text, "timed out")
  expect_process_ends(wait_for_pid(pid_file))
  expect_workers_serve(client, 10)
  expect_equal(finish(client), 0)
})

test_that("a worker that quits or crashes fails only its own call and is replaced", {
  client <- start_workers()
  for (how in c("quit", "segfault")) {
    send_call(client, paste0("busy-", how), "nap", list(seconds = 1))
    send_call(client, how, "crash", list(how = how))
    got <- answers_to(client, paste0(c("busy-", ""), how))
    crashed <- got[[how]]$result
    expect_true(crashed$isError)
    expect_match(crashed$content[[1]]$text, "worker running this call stopped unexpectedly", fixed = TRUE)
    expect_false(isTRUE(got[[paste0("busy-", how)]]$result$isError), label = paste("the call beside", how))
  }
  expect_workers_serve(client, 10)
  expect_equal(finish(client), 0)
})

test_that("progress, logs, messages and warnings from a worker reach the client in order", {
  client <- start_workers()
  expect_equal(request(client, 1, "logging/setLevel", list(level = "info"))$id, 1L)
  client$notes <- list()
  send_call(client, 2, "chatty", list(n = 3), meta = list(progressToken = "w"))
  answer <- answers_to(client, 2)[["2"]]
  expect_equal(answer$result$content[[1]]$text, "done by chatty")
  is_progress <- vapply(client$notes, function(m) identical(m$method, "notifications/progress"), logical(1))
  logs <- vapply(client$notes[!is_progress], function(m) paste(m$params$level, m$params$data), character(1))
  expect_equal(logs, c(
    "info message 1", "notice log 1", "info message 2", "notice log 2",
    "info message 3", "notice log 3", "warning careful"
  ))
  # Progress is thinned as on the main thread (the latest value wins), so
  # the values increase and the last one always arrives.
  progress <- vapply(client$notes[is_progress], function(m) m$params$progress, numeric(1))
  expect_true(all(diff(progress) > 0))
  expect_equal(progress[[length(progress)]], 3)
  expect_equal(client$notes[is_progress][[1]]$params$progressToken, "w")
  expect_equal(finish(client), 0)
  # What the worker printed went to stderr, never into the protocol stream.
  expect_match(client$proc$read_all_error(), "printed by the worker", fixed = TRUE)
})

test_that("with every worker busy and the queue full, a call is refused at once", {
  client <- start_workers(workers = 1, queue = 1)
  send_call(client, 1, "nap", list(seconds = 2))
  send_call(client, 2, "nap", list(seconds = 0.1))
  send_call(client, 3, "nap", list(seconds = 0.1))
  first <- receive(client, 60)
  expect_equal(first$id, 3L)
  expect_true(first$result$isError)
  expect_match(first$result$content[[1]]$text, "The server is busy: all 1 workers", fixed = TRUE)
  got <- answers_to(client, 1:2)
  expect_false(isTRUE(got[["1"]]$result$isError))
  expect_false(isTRUE(got[["2"]]$result$isError))
  # The queued call started only after the first ended.
  expect_gte(got[["2"]]$result$structuredContent$start, got[["1"]]$result$structuredContent$end)
  expect_equal(finish(client), 0)
})

test_that("concurrent options are checked", {
  expect_error(tool(function() 1, "x", name = "x", concurrent = "yes"), "`concurrent` must be TRUE or FALSE")
  expect_error(mcp_server(list(), workers = 0), "`workers` must be NULL or a whole number")
  expect_error(mcp_server(list(), worker_queue = -1), "`worker_queue` must be a whole number")
  expect_true(mcpserver:::tool_spec(tool(function() 1, "x", name = "x", concurrent = TRUE))$concurrent)
})

test_that("a task runs on a worker: created at once, other calls answered while it runs", {
  client <- start_workers()
  created <- request(client, 1, "tools/call", list(
    name = "nap_task", arguments = list(seconds = 3), task = list(ttl = 60000)
  ))
  id <- created$result$task$taskId
  expect_type(id, "character")
  # While the task sleeps on a worker, the main thread and the other worker serve.
  expect_match(call_tool(client, 2, "here")$result$content[[1]]$text, "^[0-9]+$")
  send_call(client, 3, "nap", list(seconds = 0.1))
  quick <- answers_to(client, 3)[["3"]]$result$structuredContent
  status <- request(client, 4, "tasks/get", list(taskId = id))$result
  expect_equal(status$status, "working")
  send(client, list(jsonrpc = "2.0", id = 5, method = "tasks/result", params = list(taskId = id)))
  result <- answers_to(client, 5)[["5"]]$result
  expect_false(isTRUE(result$isError))
  span <- as.numeric(regmatches(result$content[[1]]$text, gregexpr("[0-9.]+", result$content[[1]]$text))[[1]])
  # The quick call ran inside the task's span.
  expect_gt(quick$start, span[[1]])
  expect_lt(quick$end, span[[2]])
  expect_equal(finish(client), 0)
})

test_that("a call cancelled while it waits for a worker never starts", {
  client <- start_workers(workers = 1)
  pid_file <- withr::local_tempfile()
  send_call(client, "busy", "linger", list(file = pid_file, seconds = 3))
  wait_for_pid(pid_file)
  queued_file <- withr::local_tempfile()
  send_call(client, "queued", "linger", list(file = queued_file, seconds = 0))
  expect_equal(request(client, "sync", "ping")$id, "sync")
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "queued")))
  send_call(client, "after", "nap", list(seconds = 0.1))
  got <- answers_to(client, c("busy", "after"))
  expect_equal(got$busy$result$content[[1]]$text, "finished")
  # The one worker ran "busy", then "after"; the cancelled call never ran.
  expect_false(isTRUE(got$after$result$isError))
  expect_false(file.exists(queued_file))
  expect_equal(finish(client), 0)
  expect_false(any(vapply(client$log, function(e) grepl('"id":"queued"', e$line, fixed = TRUE), logical(1))))
})
