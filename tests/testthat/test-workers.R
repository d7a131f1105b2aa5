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

test_that("cancelling a worker call that ignores the interrupt kills its worker, which is replaced", {
  client <- start_workers()
  pid_file <- withr::local_tempfile()
  send_call(client, "slow", "stubborn", list(file = pid_file))
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

test_that("a worker call past its limit is answered as timed out, its worker interrupted and kept", {
  client <- start_workers(workers = 1)
  pid_file <- withr::local_tempfile()
  send_call(client, 1, "short_fuse", list(file = pid_file))
  answer <- answers_to(client, 1)[["1"]]
  expect_true(answer$result$isError)
  expect_match(answer$result$content[[1]]$text, "timed out")
  pid <- wait_for_pid(pid_file)
  # The one worker takes the next call: the same process, interrupted, not killed.
  send_call(client, 2, "nap", list(seconds = 0))
  expect_equal(answers_to(client, 2)[["2"]]$result$structuredContent$pid, pid)
  expect_equal(finish(client), 0)
})

test_that("workers keep the globals of the start: a global changed while serving is not seen there", {
  client <- start_workers()
  expect_equal(call_tool(client, 1, "greet_global")$result$content[[1]]$text, "hello")
  expect_equal(call_tool(client, 2, "set_greeting", list(text = "bye"))$result$content[[1]]$text, "bye")
  # Every worker answers with the snapshot taken at start (see vignette("concurrency")).
  ids <- 3:6
  for (id in ids) send_call(client, id, "greet_global")
  got <- answers_to(client, ids)
  for (id in ids) expect_equal(got[[as.character(id)]]$result$content[[1]]$text, "hello")
  expect_equal(finish(client), 0)
})

test_that("calls sent at start, before the pool could be up, run on it together once it is", {
  client <- start_server(fixture("workers.R"), extra_env = c(TEST_WORKERS = 2))
  # Everything at once, before the server could have started its workers.
  send(client, list(jsonrpc = "2.0", id = 0, method = "initialize", params = list(
    protocolVersion = "2025-11-25", capabilities = setNames(list(), character()),
    clientInfo = list(name = "testthat", version = "1")
  )))
  send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
  send_call(client, 1, "nap", list(seconds = 1))
  send_call(client, 2, "nap", list(seconds = 1))
  send(client, list(jsonrpc = "2.0", id = "p", method = "ping"))
  got <- answers_to(client, list(0, "p", 1, 2))
  a <- got[["1"]]$result$structuredContent
  b <- got[["2"]]$result$structuredContent
  # Both ran, on the two workers, at the same time.
  expect_false(identical(a$pid, b$pid))
  expect_lt(a$start, b$end)
  expect_lt(b$start, a$end)
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
    # What is known of the worker (its process id) goes to the server's
    # log, not to the client.
    expect_false(grepl("PID|pid|global|localhost", crashed$content[[1]]$text), label = crashed$content[[1]]$text)
    expect_false(isTRUE(got[[paste0("busy-", how)]]$result$isError), label = paste("the call beside", how))
  }
  said <- paste(client$proc$read_error_lines(), collapse = "\n")
  expect_match(said, "the R worker running job [0-9]+ stopped unexpectedly: the connection to worker [0-9]+ \\(process [0-9]+\\) ended")
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

# ---- Asking the user from a worker -----------------------------------------

empty <- setNames(list(), character())

start_asking <- function(env = parent.frame(), workers = 1, version = "2025-11-25",
                         capabilities = list(elicitation = empty), grace = 1, plan = "") {
  client <- start_server(fixture("workers.R"), env = env, extra_env = c(
    TEST_WORKERS = workers, TEST_WORKER_GRACE = grace, TEST_PLAN = plan
  ))
  client$rev <- version
  request(client, 0, "initialize", list(
    protocolVersion = version, capabilities = capabilities,
    clientInfo = list(name = "testthat", version = "1")
  ))
  send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
  client
}

# The next request the server sends (answers and notifications that come
# first are kept in `client$notes`).
next_server_request <- function(client, timeout = 60) {
  repeat {
    msg <- receive(client, timeout)
    if (!is.null(msg$method) && !is.null(msg$id)) return(msg)
    client$notes[[length(client$notes) + 1]] <- msg
  }
}

modern_meta <- function(caps = empty) {
  list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = caps
  )
}

test_that("mcp_elicit() in a worker asks a handshake-era client, and the call holds no worker while the user thinks", {
  client <- start_asking(workers = 1)
  runs <- withr::local_tempfile()
  send_call(client, 1, "ask", list(file = runs))
  ask <- next_server_request(client)
  expect_equal(ask$method, "elicitation/create")
  expect_equal(ask$params$message, "What is your name?")
  expect_equal(ask$params$requestedSchema$properties$name$description, "Your name")
  # The only worker is free: another concurrent call runs and is answered
  # while the question waits, and so are the main thread and the control plane.
  send_call(client, 2, "nap", list(seconds = 0.1))
  expect_false(isTRUE(answers_to(client, 2)[["2"]]$result$isError))
  expect_match(call_tool(client, 3, "here")$result$content[[1]]$text, "^[0-9]+$")
  expect_equal(request(client, 4, "ping")$id, 4L)
  send(client, list(jsonrpc = "2.0", id = ask$id, result = list(action = "accept", content = list(name = "Ada"))))
  answer <- answers_to(client, 1)[["1"]]
  expect_equal(answer$result$content[[1]]$text, "Hello, Ada!")
  # The tool ran again from the start with the answer (see vignette("concurrency")).
  expect_length(readLines(runs), 2)
  # A declined question, and two questions in a row.
  send_call(client, 5, "ask")
  ask <- next_server_request(client)
  send(client, list(jsonrpc = "2.0", id = ask$id, result = list(action = "decline")))
  expect_equal(answers_to(client, 5)[["5"]]$result$content[[1]]$text, "No name given: decline")
  send_call(client, 6, "ask_twice")
  first <- next_server_request(client)
  expect_equal(first$params$message, "Pick a colour")
  send(client, list(jsonrpc = "2.0", id = first$id, result = list(action = "accept", content = list(colour = "blue"))))
  second <- next_server_request(client)
  expect_equal(second$params$message, "How many?")
  send(client, list(jsonrpc = "2.0", id = second$id, result = list(action = "accept", content = list(n = 3, sure = TRUE))))
  expect_equal(answers_to(client, 6)[["6"]]$result$content[[1]]$text, "blue 3 TRUE")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("several worker calls wait for answers at once, each gets its own", {
  client <- start_asking(workers = 1)
  send_call(client, "a", "ask")
  send_call(client, "b", "ask")
  asks <- list(next_server_request(client), next_server_request(client))
  # Answered in the opposite order.
  names <- c("Grace", "Ada")
  for (i in 2:1) {
    send(client, list(jsonrpc = "2.0", id = asks[[i]]$id, result = list(action = "accept", content = list(name = names[[i]]))))
  }
  got <- answers_to(client, c("a", "b"))
  texts <- c(got$a$result$content[[1]]$text, got$b$result$content[[1]]$text)
  expect_setequal(texts, c("Hello, Grace!", "Hello, Ada!"))
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a task waiting for input while other calls are answered (2025-11-25 task on a worker)", {
  client <- start_asking(workers = 1)
  created <- request(client, 1, "tools/call", list(name = "ask_task", arguments = empty, task = list(ttl = 60000)))
  id <- created$result$task$taskId
  expect_type(id, "character")
  ask <- next_server_request(client)
  expect_equal(ask$method, "elicitation/create")
  expect_equal(ask$params$`_meta`$`io.modelcontextprotocol/related-task`$taskId, id)
  status <- request(client, 2, "tasks/get", list(taskId = id))$result
  expect_equal(status$status, "input_required")
  # The task holds neither the one worker nor the main thread.
  for (n in 3:4) {
    send_call(client, n, "nap", list(seconds = 0.1))
    expect_false(isTRUE(answers_to(client, n)[[as.character(n)]]$result$isError))
  }
  expect_match(call_tool(client, 5, "here")$result$content[[1]]$text, "^[0-9]+$")
  send(client, list(jsonrpc = "2.0", id = ask$id, result = list(action = "accept", content = list(name = "Grace"))))
  send(client, list(jsonrpc = "2.0", id = 6, method = "tasks/result", params = list(taskId = id)))
  result <- answers_to(client, 6)[["6"]]$result
  expect_equal(result$content[[1]]$text, "Hello, Grace!")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a 2026-07-28 task on a worker lists its question until tasks/update answers it", {
  client <- start_asking(workers = 1)
  client$rev <- "2026-07-28"
  caps <- list(elicitation = empty, extensions = list(`io.modelcontextprotocol/tasks` = empty))
  created <- request(client, 1, "tools/call", list(name = "ask_task", arguments = empty, `_meta` = modern_meta(caps)))
  expect_equal(created$result$resultType, "task")
  id <- created$result$taskId
  poll <- function(n) request(client, n, "tasks/get", list(taskId = id, `_meta` = modern_meta(caps)))$result
  deadline <- Sys.time() + 60
  repeat {
    status <- poll(2)
    if (status$status != "working" || Sys.time() > deadline) break
    Sys.sleep(0.05)
  }
  expect_equal(status$status, "input_required")
  expect_equal(status$inputRequests$`input-1`$params$message, "What is your name?")
  # Meanwhile another call runs on the one worker.
  send(client, list(jsonrpc = "2.0", id = 3, method = "tools/call", params = list(
    name = "nap", arguments = list(seconds = 0.1), `_meta` = modern_meta(caps)
  )))
  expect_equal(answers_to(client, 3)[["3"]]$result$resultType, "complete")
  ack <- request(client, 4, "tasks/update", list(taskId = id, `_meta` = modern_meta(caps),
    inputResponses = list(`input-1` = list(action = "accept", content = list(name = "Grace")))))
  expect_equal(ack$result$resultType, "complete")
  deadline <- Sys.time() + 60
  repeat {
    status <- poll(5)
    if (status$status == "completed" || Sys.time() > deadline) break
    Sys.sleep(0.05)
  }
  expect_equal(status$result$content[[1]]$text, "Hello, Grace!")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a 2026-07-28 call on a worker gets input_required rounds, or -32021 without the capability", {
  client <- start_asking(workers = 1)
  client$rev <- "2026-07-28"
  caps <- list(elicitation = empty)
  modern_call <- function(id, extra = list(), caps = list(elicitation = empty)) {
    params <- c(list(name = "ask_twice", arguments = empty, `_meta` = modern_meta(caps)), extra)
    send(client, list(jsonrpc = "2.0", id = id, method = "tools/call", params = params))
    answers_to(client, id)[[as.character(id)]]
  }
  r <- modern_call(1)
  expect_equal(r$result$resultType, "input_required")
  expect_equal(names(r$result$inputRequests), "input-1")
  r <- modern_call(2, list(
    inputResponses = list(`input-1` = list(action = "accept", content = list(colour = "red"))),
    requestState = r$result$requestState
  ))
  expect_equal(names(r$result$inputRequests), "input-2")
  r <- modern_call(3, list(
    inputResponses = list(`input-2` = list(action = "accept", content = list(n = 2, sure = FALSE))),
    requestState = r$result$requestState
  ))
  expect_equal(r$result$resultType, "complete")
  expect_equal(r$result$content[[1]]$text, "red 2 FALSE")
  r <- modern_call(4, caps = empty)
  expect_equal(r$error$code, -32021L)
  expect_equal(names(r$error$data$requiredCapabilities), "elicitation")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a worker's mcp_elicit() fails at once, catchably, when the client cannot answer", {
  client <- start_asking(capabilities = empty)
  r <- call_tool(client, 1, "ask_politely")
  expect_equal(r$result$content[[1]]$text,
    "could not ask: Cannot ask the user for input: the client did not declare the elicitation capability.")
  r <- call_tool(client, 2, "ask")
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "did not declare the elicitation capability", fixed = TRUE)
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a worker's mcp_elicit() with a form the protocol cannot carry fails with the reason", {
  client <- start_asking()
  r <- call_tool(client, 1, "ask_badly")
  expect_true(r$result$isError)
  expect_match(r$result$content[[1]]$text, "`schema`: field `picks`: `items.enum` must be a non-empty array of strings", fixed = TRUE)
  # The server goes on: the next question is asked.
  send_call(client, 2, "ask")
  expect_equal(next_server_request(client)$method, "elicitation/create")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a worker call cancelled while the user thinks is dropped; stdin ending then lets the server exit", {
  client <- start_asking(workers = 1)
  send_call(client, "q", "ask")
  next_server_request(client)
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "q")))
  send_call(client, "after", "nap", list(seconds = 0.1))
  expect_false(isTRUE(answers_to(client, "after")$after$result$isError))
  send_call(client, "left", "ask")
  expect_equal(next_server_request(client)$method, "elicitation/create")
  expect_equal(finish(client), 0)
  expect_false(any(vapply(client$log, function(e) grepl('"id":"q"', e$line, fixed = TRUE), logical(1))))
  expect_log_valid(client)
})

test_that("a worker call past its limit while the user thinks is answered as timed out", {
  client <- start_server(server_script(c(
    "ask <- tool(function() mcp_elicit('Name?', list(name = type_string()))$content$name,",
    "  'Ask', name = 'ask', concurrent = TRUE, timeout = 1)",
    "mcp_server(list(ask), workers = 1)"
  )))
  client$rev <- "2025-11-25"
  request(client, 0, "initialize", list(protocolVersion = "2025-11-25",
    capabilities = list(elicitation = empty), clientInfo = list(name = "t", version = "1")))
  send_call(client, 1, "ask")
  next_server_request(client)
  answer <- answers_to(client, 1)[["1"]]
  expect_true(answer$result$isError)
  expect_match(answer$result$content[[1]]$text, "timed out")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

# ---- Cooperative cancellation ------------------------------------------------

test_that("a cancelled worker call sees mcp_cancelled() and may return within the grace period", {
  client <- start_asking(grace = 120)
  file <- withr::local_tempfile()
  send_call(client, "t", "tidy", list(file = file))
  pid <- wait_for_pid(file)
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "t")))
  deadline <- Sys.time() + 60
  while (length(readLines(file, warn = FALSE)) < 2 && Sys.time() < deadline) Sys.sleep(0.05)
  expect_equal(readLines(file), c(as.character(pid), "saw the cancel"))
  # The worker returned on its own, so it was not killed and serves again.
  expect_true(process_alive(pid))
  send_call(client, "again", "nap", list(seconds = 0))
  expect_equal(answers_to(client, "again")$again$result$structuredContent$pid, pid)
  expect_equal(finish(client), 0)
  expect_false(any(vapply(client$log, function(e) grepl('"id":"t"', e$line, fixed = TRUE), logical(1))))
})

test_that("a worker that ignores the interrupt is killed after the grace period", {
  client <- start_asking(grace = 0.5)
  file <- withr::local_tempfile()
  send_call(client, "slow", "stubborn", list(file = file))
  pid <- wait_for_pid(file)
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "slow")))
  expect_process_ends(pid)
  # It was interrupted first, and went on.
  expect_equal(readLines(file, warn = FALSE)[[2]], "ignored")
  expect_workers_serve(client, 10)
  expect_equal(finish(client), 0)
})

test_that("an interrupt that reaches a worker after its tool returned breaks neither the worker nor its next call", {
  # One worker and a long grace: the next call must be answered by the same
  # process, because the late interrupt was absorbed, not because the worker
  # was killed and replaced.
  client <- start_asking(workers = 1, grace = 120)
  file <- withr::local_tempfile()
  send_call(client, "late", "late", list(file = file))
  pid <- wait_for_pid(file)
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "late")))
  send_call(client, "next", "nap", list(seconds = 0))
  got <- answers_to(client, "next", timeout = 30)$`next`$result
  expect_false(isTRUE(got$isError))
  expect_equal(got$structuredContent$pid, pid)
  send_call(client, "again", "nap", list(seconds = 0))
  expect_equal(answers_to(client, "again", timeout = 30)$again$result$structuredContent$pid, pid)
  expect_equal(finish(client), 0)
  expect_false(any(vapply(client$log, function(e) grepl('"id":"late"', e$line, fixed = TRUE), logical(1))))
})

# The answer to `id`, reading the server's stderr meanwhile (a chatty
# worker's lines would otherwise fill the pipe and stop the server); the
# stderr text read.
answer_reading_stderr <- function(client, id, timeout = 60) {
  said <- character()
  deadline <- Sys.time() + timeout
  repeat {
    client$proc$poll_io(200)
    said <- c(said, client$proc$read_error())
    lines <- client$proc$read_output_lines()
    client$pending <- c(client$pending, lines)
    done <- vapply(client$pending, function(l) grepl(sprintf('"id":"%s"', id), l, fixed = TRUE), logical(1))
    if (any(done)) break
    if (Sys.time() > deadline) stop("no answer to ", id)
  }
  answer <- jsonlite::fromJSON(client$pending[which(done)[[1]]], simplifyVector = FALSE)
  client$pending <- character()
  list(answer = answer, said = paste(said, collapse = ""))
}

test_that("a cancel that lands while a worker sends a long log message keeps its connection and the worker", {
  # A long grace: the worker must come back on its own connection, not be
  # killed and replaced. When sends were not shielded from interrupts, the
  # cancel cut a message short, the server could not read the rest, and it
  # replaced the worker ("the connection to worker 1 ... ended").
  for (round in 1:3) {
    client <- start_asking(workers = 1, grace = 120)
    file <- withr::local_tempfile()
    send_call(client, "loud", "shout", list(file = file))
    pid <- wait_for_pid(file)
    send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "loud")))
    send_call(client, "next", "nap", list(seconds = 0))
    got <- answer_reading_stderr(client, "next")
    label <- paste("round", round)
    expect_false(isTRUE(got$answer$result$isError), label = label)
    expect_equal(got$answer$result$structuredContent$pid, pid, label = paste("the worker's pid,", label))
    expect_no_match(got$said, "stopped unexpectedly|connection to worker", label = paste("the server's log,", label))
    expect_equal(finish(client), 0)
  }
})

test_that("as a pool starts, /dev/shm loses the directories of servers that are gone, and keeps all others", {
  skip_if_not(dir.exists("/dev/shm") && file.access("/dev/shm", 2) == 0 && dir.exists("/proc/self"))
  namespace <- mcpserver:::pid_namespace()
  skip_if(namespace == "0", "the pid namespace cannot be told")
  # A process that has ended, and one that runs.
  gone <- processx::process$new(file.path(R.home("bin"), "Rscript"), c("-e", "NULL"))
  gone$wait(20000)
  dead <- gone$get_pid()
  skip_if(dir.exists(file.path("/proc", dead)), "the ended process's id is in use again")
  alive <- processx::process$new("sleep", "60")
  withr::defer(alive$kill())
  name <- function(ns, pid, tail) sprintf("mcpserver-calls-%s-%s-%s", ns, pid, tail)
  paths <- file.path("/dev/shm", c(
    stale = name(namespace, dead, "5ca1ed"),
    running = name(namespace, alive$get_pid(), "5ca1ee"),
    own = name(namespace, Sys.getpid(), "5ca1ef"),
    other_namespace = name(if (namespace == "1") "2" else "1", dead, "5ca1f0"),
    old_scheme = "mcpserver-calls-5ca1f1"
  ))
  names(paths) <- c("stale", "running", "own", "other_namespace", "old_scheme")
  withr::defer(unlink(paths, recursive = TRUE))
  for (path in paths) {
    dir.create(path)
    # A cancel flag and a run directory, as a call leaves them.
    file.create(file.path(path, "1"))
    dir.create(file.path(path, "1-run-1", "end"), recursive = TRUE)
  }
  # A plain file with a stale server's name is not the server's.
  file <- file.path("/dev/shm", name(namespace, dead, "5ca1f2"))
  file.create(file)
  withr::defer(unlink(file))
  removed <- mcpserver:::remove_stale_flags("/dev/shm")
  expect_true(paths[["stale"]] %in% removed)
  expect_false(dir.exists(paths[["stale"]]))
  for (kept in names(paths)[-1]) expect_true(dir.exists(paths[[kept]]), label = kept)
  expect_true(file.exists(file))
  # Elsewhere (tempdir(), where the session's own directory is removed by R) nothing is looked at.
  expect_length(mcpserver:::remove_stale_flags(tempdir()), 0)
  # A pool's own directory is named by the scheme.
  expect_match(basename(tempfile(mcpserver:::flags_dir_name())), sprintf("^mcpserver-calls-%s-%d-[0-9a-f]+$", namespace, Sys.getpid()))
})

test_that("worker_grace is checked", {
  expect_error(mcp_server(list(), worker_grace = -1), "`worker_grace` must be a number of seconds")
  expect_error(mcp_server(list(), worker_grace = NA), "`worker_grace` must be a number of seconds")
})

test_that("workers without a concurrent tool are never a silent no-op", {
  script <- server_script(c(
    "nap <- function() { Sys.sleep(0.1); 'rested' }",
    "mcp_server(list(tool(nap, 'Naps')), workers = 4)"
  ))
  client <- mcp_client(script)
  withr::defer(mcp_close(client))
  # Said at start, on stderr (at once: not when the server ends).
  expect_equal(mcp_call(client, "nap")$text, "rested")
  said <- client$process$stderr()
  expect_match(said, "`workers = 4` has no effect: no tool is marked `concurrent = TRUE`", fixed = TRUE)
  expect_match(said, "tool(..., concurrent = TRUE)", fixed = TRUE)
  expect_warning(mcpserver:::workers_check(list(tool(function() 1, "x", name = "x")), 2), "has no effect")
  expect_silent(mcpserver:::workers_check(list(tool(function() 1, "x", name = "x")), NULL))
})

test_that("concurrent tools without the globals package are refused before the server answers anything", {
  # A library path with mcpserver alone: no future (so the server's own
  # pool) and no globals (which that pool needs to ship the tools).
  lib <- dirname(find.package("mcpserver"))
  skip_if(file.exists(file.path(lib, "globals")), "globals is installed next to mcpserver")
  empty <- withr::local_tempdir()
  # The trace says whether the server started serving at all (before, it
  # started, and a fast client had `initialize` answered).
  script <- server_script(c(
    "invisible(trace('server_start_', quote(cat('SERVING STARTED\\n', file = stderr())), where = asNamespace('mcpserver'), print = FALSE))",
    "mcp_server(list(tool(function() 1, 'One', name = 'one', concurrent = TRUE)))"
  ))
  proc <- processx::process$new(
    file.path(R.home("bin"), "Rscript"), script,
    stdin = "|", stdout = "|", stderr = "|",
    env = c("current", R_LIBS = lib, R_LIBS_SITE = empty, R_LIBS_USER = empty)
  )
  withr::defer(if (proc$is_alive()) proc$kill())
  proc$write_input(paste0(jsonlite::toJSON(list(
    jsonrpc = "2.0", id = 0, method = "initialize",
    params = list(protocolVersion = "2025-11-25", capabilities = setNames(list(), character()),
      clientInfo = list(name = "testthat", version = "1"))
  ), auto_unbox = TRUE), "\n"))
  proc$wait(30000)
  expect_false(proc$is_alive())
  expect_false(proc$get_exit_status() == 0)
  # Before, `initialize` was answered first and only then did it exit.
  expect_equal(proc$read_all_output(), "")
  said <- proc$read_all_error()
  expect_match(said, "need the globals package", fixed = TRUE)
  expect_no_match(said, "SERVING STARTED")
})

# A long grace: the worker must return because it was interrupted, not be killed.
expect_cancel_interrupts <- function(client, one_worker = TRUE, kept = TRUE) {
  file <- withr::local_tempfile()
  send_call(client, "i", "interruptible", list(file = file))
  pid <- wait_for_pid(file)
  send(client, list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = "i")))
  deadline <- Sys.time() + 30
  while (length(readLines(file, warn = FALSE)) < 2 && Sys.time() < deadline) Sys.sleep(0.05)
  expect_equal(readLines(file), c(as.character(pid), "cleaned up"))
  # A forked (multicore) worker ends with its call, whichever way it ends.
  if (kept) expect_true(process_alive(pid))
  send_call(client, "again", "nap", list(seconds = 0))
  again <- answers_to(client, "again")$again$result
  expect_false(isTRUE(again$isError))
  if (one_worker) expect_equal(again$structuredContent$pid, pid)
  expect_equal(finish(client), 0)
  expect_false(any(vapply(client$log, function(e) grepl('"id":"i"', e$line, fixed = TRUE), logical(1))))
}

test_that("a cancel interrupts the worker's R code: on.exit() runs and the worker is kept", {
  expect_cancel_interrupts(start_asking(workers = 1, grace = 120))
})

test_that("on a multisession plan too, a cancel interrupts the worker's R code and keeps the worker", {
  # Two workers: future runs a one-worker multisession plan sequentially.
  expect_cancel_interrupts(start_asking(workers = 2, grace = 120, plan = "multisession"), one_worker = FALSE)
})

test_that("on a multicore plan, a cancel interrupts the forked worker's R code", {
  skip_on_os("windows")
  expect_cancel_interrupts(start_asking(workers = 2, grace = 120, plan = "multicore"), one_worker = FALSE, kept = FALSE)
})

test_that("a worker says which it is, in mcp_request() and in the server's log", {
  script <- server_script(c(
    "who <- function() {",
    "  message('hello from a worker')",
    "  cat('printed by a worker\\n')",
    "  w <- mcp_request()$worker",
    "  list(number = w$number, pid = w$pid, own = Sys.getpid(), host = w$host)",
    "}",
    "mcp_server(list(tool(who, 'Says which worker runs it', name = 'who', concurrent = TRUE)), workers = 2)"
  ))
  client <- mcp_client(script)
  withr::defer(mcp_close(client))
  got <- jsonlite::fromJSON(mcp_call(client, "who")$text)
  expect_false(is.null(got$pid))
  expect_true(got$number %in% 1:2)
  expect_equal(got$pid, got$own)
  expect_equal(got$host, Sys.info()[["nodename"]])
  deadline <- Sys.time() + 10
  label <- sprintf("[worker %d, pid %d]", got$number, got$pid)
  repeat {
    said <- client$process$stderr()
    if (grepl("printed by a worker", said, fixed = TRUE) || Sys.time() > deadline) break
    Sys.sleep(0.05)
  }
  expect_match(said, paste(label, "[info] hello from a worker"), fixed = TRUE)
  expect_match(said, paste(label, "printed by a worker"), fixed = TRUE)
})

test_that("what a worker prints reaches the server's log per call, a last line without newline and after a sink left open too", {
  script <- server_script(c(
    "partial <- function() { cat('no newline'); 'partial' }",
    "leaves_sink <- function() { sink(tempfile()); cat('into its own sink\\n'); 'left' }",
    "prints <- function(text) { cat(text, '\\n', sep = ''); Sys.getpid() }",
    "mcp_server(list(",
    "  tool(partial, 'Prints without a newline', name = 'partial', concurrent = TRUE),",
    "  tool(leaves_sink, 'Leaves a sink open', name = 'leaves_sink', concurrent = TRUE),",
    "  tool(prints, 'Prints', arguments = list(text = type_string()), name = 'prints', concurrent = TRUE)",
    "), workers = 1)"
  ))
  client <- mcp_client(script)
  withr::defer(mcp_close(client))
  expect_equal(mcp_call(client, "partial")$text, "partial")
  pid <- mcp_call(client, "prints", text = "first call after")$text
  expect_equal(mcp_call(client, "leaves_sink")$text, "left")
  expect_equal(mcp_call(client, "prints", text = "after the sink")$text, pid)
  label <- sprintf("[worker 1, pid %s]", pid)
  deadline <- Sys.time() + 10
  repeat {
    said <- client$process$stderr()
    if (grepl("after the sink", said, fixed = TRUE) || Sys.time() > deadline) break
    Sys.sleep(0.05)
  }
  lines <- strsplit(said, "\n", fixed = TRUE)[[1]]
  expect_true(paste(label, "no newline") %in% lines)
  expect_true(paste(label, "first call after") %in% lines)
  expect_true(paste(label, "after the sink") %in% lines)
  expect_no_match(said, "into its own sink", fixed = TRUE)
})
