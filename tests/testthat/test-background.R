# mcp_server(background = TRUE): an interactive R session that serves tools
# between its user's commands. The session here is a real interactive R
# (`R --interactive`) reading its commands from a pipe, as a console would.
skip_on_cran()
skip_on_os("windows")

start_background_server <- function(session, tools_code) {
  r_command(session, "library(mcpserver)")
  r_command(session, tools_code)
  r_command(session, "srv <- mcp_server(tools, transport = 'http', port = 0L, background = TRUE)")
  r_wait(session, "on (http://[^ ]+) in the background", "err")
}

test_that("tools run in the live session and see its global environment", {
  session <- start_interactive_r()
  url <- start_background_server(session, paste(
    "x <- 41;",
    "plus_one <- function() x + 1;",
    "tools <- list(tool(plus_one, 'x plus one'))"
  ))
  client <- mcp_client(url)
  withr::defer(mcp_close(client))
  expect_equal(mcp_call(client, "plus_one")$text, "42")
  # The session goes on taking commands, and the tool sees what they do.
  r_command(session, "x <- 99; cat('x is', x, '\\n')")
  r_wait(session, "x is 99")
  expect_equal(mcp_call(client, "plus_one")$text, "100")
  r_command(session, "print(srv)")
  printed <- r_wait(session, "<mcp_background> 1 tool\\(s\\) on ([^ ]+) \\(running\\)")
  expect_equal(printed, url)
  r_command(session, "srv$stop(); print(srv)")
  r_wait(session, "\\(stopped\\)")
  err <- tryCatch(mcp_call(client, "plus_one"), error = identity)
  expect_s3_class(err, "mcpserver_protocol_error")
  # Stopped, the port is free and another server may serve in the background.
  r_command(session, "srv2 <- mcp_server(tools, transport = 'http', port = 0L, background = TRUE)")
  url2 <- r_wait(session, "on (http://[^ ]+) in the background", "err")
  client2 <- mcp_client(url2)
  withr::defer(mcp_close(client2))
  expect_equal(mcp_call(client2, "plus_one")$text, "100")
})

test_that("calls wait while the session is busy, and run once it is idle", {
  session <- start_interactive_r()
  go <- tempfile()
  url <- start_background_server(session, paste(
    "calls <- 0;",
    "count <- function() { calls <<- calls + 1; calls };",
    "tools <- list(tool(count, 'Count calls'))"
  ))
  client <- mcp_client(url)
  withr::defer(mcp_close(client))
  # A command that keeps R busy (no event loop) until the test says go.
  r_command(session, sprintf(
    "cat('busy\\n'); while (!file.exists('%s')) NULL; cat('calls during the command:', calls, '\\n')", go
  ))
  r_wait(session, "busy")
  mcpserver:::client_send(client, list(
    jsonrpc = "2.0", id = 99L, method = "tools/call",
    params = list(name = "count", arguments = setNames(list(), character()))
  ))
  # The server has the call (it answers ping meanwhile) but R is busy.
  expect_equal(mcpserver:::client_request(client, "ping"), setNames(list(), character()))
  file.create(go)
  expect_equal(r_wait(session, "calls during the command: ([0-9]+)"), "0")
  answer <- mcpserver:::client_receive(client, "tools/call")
  expect_equal(answer$id, 99L)
  expect_equal(answer$result$content[[1]]$text, "1")
})

test_that("calls wait for the prompt while a command pumps R's event loop", {
  session <- start_interactive_r()
  url <- start_background_server(session, paste(
    "flag <- 'start';",
    "get_flag <- function() flag;",
    "tools <- list(tool(get_flag, 'The flag'))"
  ))
  client <- mcp_client(url)
  withr::defer(mcp_close(client))
  # Sys.sleep() runs R's event loop (input handlers included) as it waits.
  r_command(session, "flag <- 'mid-command'; cat('sleeping\\n'); Sys.sleep(3); flag <- 'idle'")
  r_wait(session, "sleeping")
  started <- Sys.time()
  expect_equal(mcp_call(client, "get_flag")$text, "idle")
  expect_gt(as.numeric(difftime(Sys.time(), started, units = "secs")), 1.5)
  # So does readline(), waiting for the user's answer at the console.
  r_command(session, "flag <- 'mid-readline'; answer <- readline('Your answer? '); flag <- paste('idle', answer)")
  r_wait(session, "Your answer\\?")
  mcpserver:::client_send(client, list(
    jsonrpc = "2.0", id = 99L, method = "tools/call",
    params = list(name = "get_flag", arguments = setNames(list(), character()))
  ))
  # The call has arrived (the server answers ping meanwhile) and waits.
  expect_equal(mcpserver:::client_request(client, "ping"), setNames(list(), character()))
  Sys.sleep(1)
  r_command(session, "yes")
  answer <- mcpserver:::client_receive(client, "tools/call")
  expect_equal(answer$id, 99L)
  expect_equal(answer$result$content[[1]]$text, "idle yes")
})

test_that("a tool that pumps the event loop never starts another call inside its own", {
  session <- start_interactive_r()
  url <- start_background_server(session, paste(
    "running <- 0; overlapped <- FALSE;",
    "nap <- function() { running <<- running + 1; if (running > 1) overlapped <<- TRUE; Sys.sleep(0.5); running <<- running - 1; overlapped };",
    "tools <- list(tool(nap, 'Naps'))"
  ))
  clients <- lapply(1:2, function(i) mcp_client(url))
  withr::defer(lapply(clients, mcp_close))
  for (i in 1:2) {
    mcpserver:::client_send(clients[[i]], list(
      jsonrpc = "2.0", id = 10L + i, method = "tools/call",
      params = list(name = "nap", arguments = setNames(list(), character()))
    ))
  }
  for (i in 1:2) {
    answer <- mcpserver:::client_receive(clients[[i]], "tools/call")
    expect_equal(answer$result$content[[1]]$text, "false")
  }
})

test_that("mcp_client() in the session that serves gets its answers at once", {
  session <- start_interactive_r()
  start_background_server(session, paste(
    "x <- 41;",
    "plus_one <- function() x + 1;",
    "ask <- function() paste('Hello,', mcp_elicit('Name?', list(name = type_string()))$content$name);",
    "tools <- list(tool(plus_one, 'x plus one'), tool(ask, 'Asks'))"
  ))
  r_command(session, paste(
    "client <- mcp_client(srv$url, timeout = 20); started <- Sys.time();",
    "r <- mcp_call(client, 'plus_one');",
    "cat('answer', r$text, 'in', round(as.numeric(difftime(Sys.time(), started, units = 'secs'))), 's\\n')"
  ))
  expect_equal(r_wait(session, "answer 42 in ([0-9]+) s"), "0")
  # A call that asks its client a question while it waits cannot be
  # answered by a client that is itself waiting: it fails at once, saying so.
  r_command(session, paste(
    "answers <- function(message, schema) list(action = 'accept', content = list(name = 'Ada'));",
    "asking <- mcp_client(srv$url, elicit = answers, timeout = 20);",
    "r <- mcp_call(asking, 'ask'); cat('asked:', r$is_error, '|', r$text, '\\n')"
  ))
  # (Waited for first: testthat 3.1's expect_match() evaluates its object twice.)
  asked <- r_wait(session, "asked: (.*)\n")
  expect_match(asked, "TRUE | Cannot ask the user for input: the call came from mcp_client() in the R session", fixed = TRUE)
  # 2026-07-28 asks by input_required rounds, which the client answers.
  r_command(session, paste(
    "modern <- mcp_client(srv$url, elicit = answers, protocol_version = '2026-07-28', timeout = 20);",
    "cat('modern:', mcp_call(modern, 'ask')$text, '\\n')"
  ))
  expect_equal(r_wait(session, "modern: ([^\n]*) \n"), "Hello, Ada")
  r_command(session, "mcp_close(client); mcp_close(asking); srv$stop(); cat('stopped\\n')")
  r_wait(session, "stopped")
})

test_that("errors, time limits and input stay inside the call; the session goes on", {
  session <- start_interactive_r()
  url <- start_background_server(session, paste(
    "fail <- function() stop('boom');",
    "spin <- function() repeat NULL;",
    "ask <- function() paste('Hello,', mcp_elicit('Name?', list(name = type_string()))$content$name);",
    "tools <- list(tool(fail, 'Fails'), tool(spin, 'Spins', timeout = 0.5), tool(ask, 'Asks'))"
  ))
  answers <- function(message, schema) list(action = "accept", content = list(name = "Ada"))
  client <- mcp_client(url, elicit = answers)
  withr::defer(mcp_close(client))
  r <- mcp_call(client, "fail")
  expect_true(r$is_error)
  expect_equal(r$text, "boom")
  r <- mcp_call(client, "spin")
  expect_true(r$is_error)
  expect_match(r$text, "time limit|timed out")
  expect_equal(mcp_call(client, "ask")$text, "Hello, Ada")
  r_command(session, "cat('still here', 1 + 1, '\\n')")
  r_wait(session, "still here 2")
  r_command(session, "srv$stop()")
})

test_that("Ctrl-C stays the console's; SIGTERM ends the session once the server has answered, status 0", {
  if (!nzchar(Sys.which("curl"))) skip("the curl command is not installed")
  session <- start_interactive_r()
  url <- start_background_server(session, paste(
    "nap <- function() { Sys.sleep(30); 'rested' };",
    "hello <- function() 'hi';",
    "tools <- list(tool(nap, 'Sleeps'), tool(hello, 'Says hi'))"
  ))
  init <- http_initialize(url)
  h <- c("Mcp-Session-Id" = init$session)
  hello <- list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "hello"))
  # Ctrl-C interrupts the user's command; the server serves on.
  r_command(session, "Sys.sleep(20)")
  Sys.sleep(1)
  session$proc$interrupt()
  r_command(session, "cat(toupper('back'), '\\n')")
  r_wait(session, "BACK")
  answer <- http_messages(curl_request(url, hello, headers = h))
  expect_equal(answer[[length(answer)]]$result$content[[1]]$text, "hi")
  # SIGTERM while a tool runs: its caller gets an error, and R quits.
  nap <- list(jsonrpc = "2.0", id = 2, method = "tools/call", params = list(name = "nap"))
  running <- curl_start(url, nap, headers = h)
  Sys.sleep(1.5)
  session$proc$signal(tools::SIGTERM)
  session$proc$wait(15000)
  expect_false(session$proc$is_alive())
  expect_equal(session$proc$get_exit_status(), 0L)
  reply <- curl_finished(running)
  expect_equal(reply$exit, 0L)
  messages <- http_messages(reply)
  last <- messages[[length(messages)]]
  expect_equal(last$id, 2)
  expect_equal(last$error$code, -32000)
})

test_that("background = TRUE is checked", {
  add <- function(x, y) x + y
  tools <- list(tool(add, "Add", arguments = list(x = type_number(), y = type_number())))
  expect_error(mcp_server(tools, background = TRUE), "needs `transport = \"http\"`", fixed = TRUE)
  expect_error(mcp_server(tools, transport = "http", background = NA), "`background` must be TRUE or FALSE")
})

test_that("background = TRUE under Rscript is refused before anything is served", {
  # Before, it said "serving in the background", answered `initialize` and
  # ended with the script.
  script <- server_script(c(
    "add <- function(x, y) x + y",
    "srv <- mcp_server(tool(add, 'Add', arguments = list(x = type_number(), y = type_number())),",
    "  transport = 'http', port = 0L, background = TRUE)",
    "cat('the script went on\\n')"
  ))
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  out <- processx::run(file.path(R.home("bin"), "Rscript"), script,
    env = c("current", R_LIBS = lib), error_on_status = FALSE, timeout = 60
  )
  expect_false(out$status == 0)
  expect_match(out$stderr, "`background = TRUE` serves between the commands of an interactive R session", fixed = TRUE)
  expect_match(out$stderr, "drop `background = TRUE`", fixed = TRUE)
  expect_no_match(out$stderr, "in the background; stop with")
  expect_no_match(out$stdout, "the script went on")
})

test_that("the console adds and removes tools of the background server", {
  session <- start_interactive_r()
  url <- start_background_server(session, paste(
    "hello <- function() 'hi';",
    "tools <- list(tool(hello, 'Says hi'))"
  ))
  client <- mcp_client(url)
  withr::defer(mcp_close(client))
  names_now <- function() unname(vapply(mcp_tools(client), function(t) t$name, character(1)))
  expect_equal(names_now(), "hello")
  # Upper-cased, the markers waited for are not in the echo of the command.
  r_command(session, "srv$add(tool(function() nrow(mtcars), 'Counts cars', name = 'cars')); cat(toupper('added'), '\\n')")
  r_wait(session, "ADDED")
  expect_equal(names_now(), c("hello", "cars"))
  expect_equal(mcp_call(client, "cars")$text, "32")
  # mcp_remove() at the console finds the background server by itself.
  r_command(session, "mcp_remove('hello'); cat(toupper('removed'), '\\n')")
  r_wait(session, "REMOVED")
  expect_equal(names_now(), "cars")
  r_command(session, "srv$stop()")
})

test_that("concurrent tools run on workers while the session serves in the background", {
  skip_if_not_installed("future", minimum_version = "1.31.0")
  skip_if_not_installed("parallelly")
  session <- start_interactive_r()
  r_command(session, "library(mcpserver)")
  r_command(session, paste(
    "x <- 20;",
    "twice <- tool(function(n) { Sys.sleep(0.3); n * 2 }, 'Doubles, on a worker', name = 'twice',",
    "  arguments = list(n = type_number()), concurrent = TRUE);",
    "late <- tool(function() { Sys.sleep(30); 'late' }, 'Too slow', name = 'late', concurrent = TRUE, timeout = 1);",
    "plus_one <- function() x + 1;",
    "tools <- list(twice, late, tool(plus_one, 'x plus one'))"
  ))
  r_command(session, "srv <- mcp_server(tools, transport = 'http', port = 0L, background = TRUE, workers = 1)")
  url <- r_wait(session, "on (http://[^ ]+) in the background", "err")
  client <- mcp_client(url)
  withr::defer(mcp_close(client))
  expect_equal(mcp_call(client, "twice", arguments = list(n = 21))$text, "42")
  # The worker's time limit is kept from the session's event loop too.
  slow <- mcp_call(client, "late")
  expect_true(slow$is_error)
  expect_match(slow$text, "timed out")
  # Ordinary tools still run in the session, which still takes commands.
  expect_equal(mcp_call(client, "plus_one")$text, "21")
  r_command(session, "x <- 1; cat('x is', x, '\\n')")
  r_wait(session, "x is 1")
  expect_equal(mcp_call(client, "twice", arguments = list(n = 2))$text, "4")
  # Stopping ends the pool; the user's plan was never changed.
  r_command(session, "srv$stop(); cat('sequential again:', inherits(future::plan(), 'sequential'), '\\n')")
  expect_equal(r_wait(session, "sequential again: ([A-Z]+)"), "TRUE")
  # Stopping again changes nothing: a plan the user set since is kept.
  r_command(session, "future::plan(future::multicore, workers = 2); srv$stop(); cat('still mine:', inherits(future::plan(), 'multicore'), '\\n')")
  expect_equal(r_wait(session, "still mine: ([A-Z]+)"), "TRUE")
})
