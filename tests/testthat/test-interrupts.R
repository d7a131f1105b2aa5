# An interrupt the server sends for one call (a cancel, a time limit) must
# reach that call only: never the next call, never the server's own loop.
skip_on_cran()

call_msg <- function(id, name, arguments = setNames(list(), character())) {
  jsonlite::toJSON(
    list(jsonrpc = "2.0", id = id, method = "tools/call", params = list(name = name, arguments = arguments)),
    auto_unbox = TRUE
  )
}

cancel_msg <- function(id) {
  jsonlite::toJSON(
    list(jsonrpc = "2.0", method = "notifications/cancelled", params = list(requestId = id)),
    auto_unbox = TRUE
  )
}

# Reads until the answer to `id` arrives, skipping (unparsed: they may be
# large) the answers to other calls; NULL if the server fell silent or exited.
answer_to <- function(client, id, timeout = 5) {
  deadline <- Sys.time() + timeout
  prefix <- sprintf('{"jsonrpc":"2.0","id":"%s",', id)
  repeat {
    for (line in client$pending) {
      client$pending <- client$pending[-1]
      if (startsWith(line, prefix)) return(jsonlite::fromJSON(line, simplifyVector = FALSE))
    }
    left <- as.numeric(difftime(deadline, Sys.time(), units = "secs"))
    if (left <= 0 || !client$proc$is_alive()) return(NULL)
    client$proc$poll_io(as.integer(min(left, 1) * 1000))
    client$pending <- client$proc$read_output_lines()
  }
}

expect_slept <- function(answer, label) {
  expect_false(is.null(answer), label = paste(label, "was answered"))
  if (is.null(answer)) return(FALSE)
  expect_null(answer$error, label = paste(label, "error"))
  expect_false(isTRUE(answer$result$isError), label = paste(label, "isError"))
  expect_equal(answer$result$content[[1]]$text, "slept", label = paste(label, "text"))
  !isTRUE(answer$result$isError) && is.null(answer$error)
}

test_that("a cancel landing as a call finishes never hits the next call", {
  client <- start_server(fixture("interrupts.R"))
  initialize(client)
  for (delay in seq(0, 120, by = 5)) {
    table_id <- paste0("table-", delay)
    slow_id <- paste0("slow-", delay)
    send_line(client, call_msg(table_id, "table", list(n = 100000)))
    Sys.sleep(delay / 1000)
    # The cancel and the next call in one write, so they arrive together.
    send_line(client, paste0(cancel_msg(table_id), "\n", call_msg(slow_id, "slow", list(seconds = 0.3))))
    if (!expect_slept(answer_to(client, slow_id), paste("after a cancel at", delay, "ms"))) break
  }
  expect_equal(finish(client), 0L)
})

test_that("a time limit that runs out as a large value is sent never hits the next call", {
  client <- start_server(fixture("interrupts.R"))
  initialize(client)
  for (round in 1:10) {
    big_id <- paste0("big-", round)
    slow_id <- paste0("slow-", round)
    send_line(client, paste0(call_msg(big_id, "big"), "\n", call_msg(slow_id, "slow", list(seconds = 0.3))))
    if (!expect_slept(answer_to(client, slow_id), paste("round", round))) break
  }
  expect_equal(finish(client), 0L)
})

# Waits (generously) until a `nap` call has started.
wait_for_start <- function(marker) {
  deadline <- Sys.time() + 10
  while (!file.exists(marker) && Sys.time() < deadline) Sys.sleep(0.02)
  expect_true(file.exists(marker), label = "the call started")
}

test_that("a person's Ctrl-C during a call still stops serving, after the server's own interrupts", {
  client <- start_server(fixture("interrupts.R"))
  initialize(client)
  first <- withr::local_tempfile()
  send_line(client, call_msg("first", "nap", list(marker = first)))
  wait_for_start(first)
  send_line(client, cancel_msg("first"))
  send_line(client, call_msg("after", "slow", list(seconds = 0)))
  expect_slept(answer_to(client, "after"), "the call after a cancel")
  second <- withr::local_tempfile()
  send_line(client, call_msg("second", "nap", list(marker = second)))
  wait_for_start(second)
  client$proc$signal(tools::SIGINT)
  answer <- answer_to(client, "second")
  expect_match(answer$result$content[[1]]$text, "interrupted at the server, which is shutting down", fixed = TRUE)
  client$proc$wait(10000)
  expect_false(client$proc$is_alive())
  expect_match(client$proc$read_all_error(), "stopped by an interrupt", fixed = TRUE)
})
