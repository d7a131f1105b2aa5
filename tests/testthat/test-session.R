# mcp_session(): serving the user's own R session, its registry of
# sessions, and the bridge that finds one. Sessions here are real
# interactive R processes reading commands from a pipe.
skip_on_cran()
skip_on_os("windows")

registry <- function(env = parent.frame()) {
  dir <- file.path(withr::local_tempdir(.local_envir = env), "sessions")
  dir
}

start_session <- function(dir, wd, code = "srv <- mcp_session()", env = parent.frame()) {
  session <- start_interactive_r(env, extra_env = c(MCPSERVER_SESSION_DIR = dir), wd = wd)
  r_command(session, "library(mcpserver)")
  r_command(session, code)
  session$url <- r_wait(session, "on (http://[^ ]+) in the background", "err")
  # Registered once the handle is back at the prompt.
  r_command(session, "cat('registered', srv$entry, '\\n')")
  session$entry <- r_wait(session, "registered ([^ ]+) \n")
  session
}

test_that("a session registers itself, closed to other users, and unregisters when it stops or exits", {
  dir <- registry()
  wd <- normalizePath(withr::local_tempdir())
  session <- start_session(dir, wd)
  expect_true(file.exists(session$entry))
  expect_equal(format(file.info(dir)$mode), "700")
  expect_equal(format(file.info(session$entry)$mode), "600")
  fields <- as.list(as.data.frame(read.dcf(session$entry)))
  expect_equal(fields$url, session$url)
  expect_equal(fields$wd, wd)
  expect_equal(as.integer(fields$pid), session$proc$get_pid())
  expect_equal(fields$r_version, as.character(getRversion()))
  expect_match(fields$token, "^[0-9a-f]{64}$")
  listed <- mcp_sessions(dir)
  expect_equal(listed$pid, session$proc$get_pid())
  expect_null(listed$token)
  # (Patterns never match the echo of the command R prints as it reads it.)
  r_command(session, "srv$stop(); cat(paste0('stop', 'ped'), '\\n')")
  r_wait(session, "stopped")
  expect_false(file.exists(session$entry))
  expect_equal(nrow(mcp_sessions(dir)), 0)
  # Started again, then R quits without stop(): the exit removes the entry.
  r_command(session, "srv <- mcp_session(); cat('again', srv$entry, '\\n')")
  entry <- r_wait(session, "again ([^ ]+) \n")
  expect_true(file.exists(entry))
  r_command(session, "q('no')")
  session$proc$wait(10000)
  expect_false(session$proc$is_alive())
  expect_false(file.exists(entry))
})

test_that("an entry whose process died is ignored and removed", {
  dir <- registry()
  dead <- processx::process$new(file.path(R.home("bin"), "Rscript"), c("-e", "invisible()"))
  dead$wait(10000)
  dir.create(dir, mode = "0700")
  stale <- file.path(dir, sprintf("session-%d.dcf", dead$get_pid()))
  write.dcf(data.frame(
    url = "http://127.0.0.1:1/mcp", token = "x", pid = dead$get_pid(), wd = "/",
    r_version = "4.2.2", started = "2026-01-01T00:00:00.000+0000"
  ), stale)
  expect_equal(nrow(mcp_sessions(dir)), 0)
  expect_false(file.exists(stale))
})

test_that("a registry open to other users, or theirs, is refused", {
  dir <- registry()
  dir.create(dir, mode = "0755")
  Sys.chmod(dir, "0755", use_umask = FALSE)
  expect_error(mcp_sessions(dir), "open to other users")
  withr::local_options(mcpserver.session_dir = dir)
  expect_error(mcp_session(), "open to other users")
  expect_error(mcpserver:::session_dir_check("/"), "belongs to root|open to other users|not to you")
})

test_that("the session's server refuses a client without its secret", {
  dir <- registry()
  session <- start_session(dir, withr::local_tempdir(), "x <- 1; srv <- mcp_session()")
  err <- tryCatch(mcp_client(session$url), error = identity)
  expect_s3_class(err, "error")
  expect_match(conditionMessage(err), "Unauthorized: a valid bearer token is required")
  err <- tryCatch(mcp_client(session$url, token = strrep("0", 64)), error = identity)
  expect_match(conditionMessage(err), "Unauthorized: a valid bearer token is required")
  token <- as.data.frame(read.dcf(session$entry))$token
  client <- mcp_client(session$url, token = token)
  withr::defer(mcp_close(client))
  expect_match(mcp_call(client, "list_objects")$text, "x +numeric")
})

test_that("the bridge finds the session of its working directory, else the newest", {
  dir <- registry()
  root <- normalizePath(withr::local_tempdir())
  a <- file.path(root, "a")
  b <- file.path(root, "b")
  dir.create(file.path(a, "deep"), recursive = TRUE)
  dir.create(b)
  first <- start_session(dir, a, "who <- 'A'; srv <- mcp_session()")
  Sys.sleep(0.1)
  second <- start_session(dir, b, "who <- 'B'; srv <- mcp_session()")
  entries <- mcpserver:::session_entries(dir)
  expect_equal(entries$pid, c(second$proc$get_pid(), first$proc$get_pid()))
  expect_equal(mcpserver:::session_choose(entries, file.path(a, "deep"))$pid, first$proc$get_pid())
  expect_equal(mcpserver:::session_choose(entries, b)$pid, second$proc$get_pid())
  expect_equal(mcpserver:::session_choose(entries, root)$pid, second$proc$get_pid())
  # The command a client starts, in the folder it starts it in.
  script <- file.path(root, "bridge.R")
  writeLines("mcpserver::mcp_bridge()", script)
  withr::local_envvar(MCPSERVER_SESSION_DIR = dir)
  withr::with_dir(file.path(a, "deep"), {
    client <- mcp_client(script)
  })
  withr::defer(mcp_close(client))
  expect_match(mcp_call(client, "describe_object", arguments = list(name = "who"))$text, "\"A\"")
  expect_match(mcp_call(client, "list_r_sessions")$text, "2 R session\\(s\\)")
})

test_that("the bridge lists the sessions and switches to another, telling the model", {
  dir <- registry()
  root <- normalizePath(withr::local_tempdir())
  a <- file.path(root, "a")
  b <- file.path(root, "b")
  dir.create(a)
  dir.create(b)
  first <- start_session(dir, a, "who <- 'A'; srv <- mcp_session()")
  second <- start_session(dir, b, paste(
    "who <- 'B'; hello <- tool(function() 'hi from B', 'Say hi', name = 'hello')",
    "srv <- mcp_session(tools = c(session_tools(), list(hello)))", sep = "; "
  ))
  script <- file.path(root, "bridge.R")
  writeLines("mcpserver::mcp_bridge()", script)
  withr::local_envvar(MCPSERVER_SESSION_DIR = dir)
  client <- withr::with_dir(a, mcp_client(script))
  withr::defer(mcp_close(client))
  expect_match(client$initialized$instructions, "select_r_session switches", fixed = TRUE)
  expect_true(client$initialized$capabilities$tools$listChanged)
  names_a <- names(mcp_tools(client))
  expect_true(all(c("list_r_sessions", "select_r_session", "describe_object") %in% names_a))
  expect_false("hello" %in% names_a)
  expect_equal(sum(names_a == "list_r_sessions"), 1L)
  listed <- mcp_call(client, "list_r_sessions")$text
  expect_match(listed, sprintf("process %d in %s .*<- connected", first$proc$get_pid(), a))
  expect_no_match(listed, sprintf("process %d in [^\n]*<- connected", second$proc$get_pid()))
  expect_match(mcp_call(client, "describe_object", arguments = list(name = "who"))$text, "\"A\"")

  # To B: the result says where the tools work now, and the tool list changed.
  switched <- mcp_call(client, "select_r_session", pid = second$proc$get_pid())
  expect_false(switched$is_error)
  expect_match(switched$text, sprintf("now work in the R session of process %d in %s", second$proc$get_pid(), b))
  expect_match(switched$text, "tool list changed")
  methods <- vapply(switched$notifications, function(n) n$method %||% "", "")
  expect_true("notifications/tools/list_changed" %in% methods)
  expect_match(mcp_call(client, "describe_object", arguments = list(name = "who"))$text, "\"B\"")
  expect_true(all(c("hello", "select_r_session") %in% names(mcp_tools(client))))
  expect_equal(mcp_call(client, "hello")$text, "hi from B")
  expect_match(r_wait(second, "(\\[mcp\\] describe_object\\(name = \"who\"\\))", "err"), "describe_object")
  expect_match(mcp_call(client, "list_r_sessions")$text, sprintf("process %d in %s [^\n]*<- connected", second$proc$get_pid(), b))

  # A session that is not there, or the one connected: nothing changes.
  missing <- mcp_call(client, "select_r_session", pid = 1L)
  expect_true(missing$is_error)
  expect_match(missing$text, sprintf("No R session of process 1 .*Still connected to process %d", second$proc$get_pid()))
  again <- mcp_call(client, "select_r_session", pid = second$proc$get_pid())
  expect_match(again$text, "^Already connected")
  expect_equal(mcp_call(client, "hello")$text, "hi from B")

  # A session that died since it was listed: refused, the client stays.
  third <- start_session(dir, root, "srv <- mcp_session()")
  third_pid <- third$proc$get_pid()
  third$proc$kill()
  third$proc$wait(5000)
  gone <- mcp_call(client, "select_r_session", pid = third_pid)
  expect_true(gone$is_error)
  expect_equal(mcp_call(client, "hello")$text, "hi from B")

  # And back to A.
  back <- mcp_call(client, "select_r_session", pid = first$proc$get_pid())
  expect_match(back$text, sprintf("now work in the R session of process %d", first$proc$get_pid()))
  expect_match(mcp_call(client, "describe_object", arguments = list(name = "who"))$text, "\"A\"")
  expect_false("hello" %in% names(mcp_tools(client)))
})

test_that("with no session running, the bridge serves the session tools itself and says so", {
  dir <- registry()
  script <- file.path(withr::local_tempdir(), "bridge.R")
  writeLines("mcpserver::mcp_bridge()", script)
  withr::local_envvar(MCPSERVER_SESSION_DIR = dir)
  client <- mcp_client(script)
  withr::defer(mcp_close(client))
  expect_match(mcp_call(client, "list_r_sessions")$text, "No R session serves")
  expect_match(mcp_call(client, "list_objects")$text, "empty")
})

test_that("each call prints a line at the console, and a busy console answers calls as not run", {
  dir <- registry()
  session <- start_session(dir, withr::local_tempdir(),
    "df <- data.frame(a = 1:3); srv <- mcp_session(queue_timeout = 1)")
  token <- as.data.frame(read.dcf(session$entry))$token
  client <- mcp_client(session$url, token = token)
  withr::defer(mcp_close(client))
  expect_match(mcp_call(client, "describe_object", arguments = list(name = "df"))$text, "3 rows")
  line <- r_wait(session, "(\\[mcp\\] describe_object\\(name = \"df\"\\) [0-9.]+ s)", "err")
  expect_match(line, "describe_object")
  # The console runs a long command: the call is answered, not run, in about
  # the queue limit, and nothing runs once the console is free again.
  r_command(session, "Sys.sleep(4); cat(paste0('sl', 'ept'), '\\n')")
  Sys.sleep(0.5)
  t0 <- Sys.time()
  busy <- mcp_call(client, "list_objects")
  waited <- as.numeric(Sys.time() - t0, units = "secs")
  expect_true(busy$is_error)
  expect_match(busy$text, "^Not run: R was busy")
  expect_lt(waited, 3.5)
  r_wait(session, "slept")
  expect_match(mcp_call(client, "list_objects")$text, "df")
})

test_that("log = FALSE prints nothing per call", {
  expect_match(mcpserver:::session_log_line("help_page", list(topic = "lm"), 0.013), "^\\[mcp\\] help_page\\(topic = \"lm\"\\) 0.01 s$")
  long <- mcpserver:::session_log_line("run_r_code", list(code = strrep("x", 100)), 1)
  expect_match(long, "\\.\\.\\.\\) 1.00 s$")
  expect_lt(nchar(long), 80)
  dir <- registry()
  session <- start_session(dir, withr::local_tempdir(), "srv <- mcp_session(log = FALSE)")
  token <- as.data.frame(read.dcf(session$entry))$token
  client <- mcp_client(session$url, token = token)
  withr::defer(mcp_close(client))
  mcp_call(client, "list_objects")
  r_command(session, "message(paste('after', 'the call'))")
  before <- r_wait(session, "([^\a]*)after the call", "err")
  expect_no_match(before, "[mcp]", fixed = TRUE)
})

test_that("mcp_client_config(session = TRUE) writes the bridge without a URL", {
  config <- mcp_client_config(client = "claude-code", session = TRUE)
  expect_equal(config$name, "r-session")
  expect_equal(config$args, c("-e", "mcpserver::mcp_bridge()"))
  expect_error(mcp_client_config("x.R", session = TRUE), "takes no `script`")
})

test_that("a session's secret comes from the system quietly, 64 hex digits, and leaves R's seed alone", {
  seed <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  expect_silent(a <- mcpserver:::session_secret())
  b <- mcpserver:::session_secret()
  expect_match(a, "^[0-9a-f]{64}$")
  expect_false(identical(a, b))
  expect_identical(if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv()), seed)
})

# run_r_code with run_code = "ask": the code writes a file, so whether it ran
# is seen from outside the session.
ask_code <- function(marker) sprintf("writeLines('ran', '%s'); 'the code ran'", marker)

session_client <- function(session, ...) {
  token <- as.data.frame(read.dcf(session$entry))$token
  mcp_client(session$url, token = token, ...)
}

test_that("'ask' asks through the client's elicitation: accepted runs, declined runs nothing", {
  dir <- registry()
  session <- start_session(dir, withr::local_tempdir(), "srv <- mcp_session(run_code = 'ask')")
  asked <- character()
  answer <- "accept"
  client <- session_client(session, elicit = function(message, schema) {
    asked <<- c(asked, message)
    list(action = answer)
  })
  withr::defer(mcp_close(client))
  marker <- file.path(withr::local_tempdir(), "ran.txt")
  accepted <- mcp_call(client, "run_r_code", code = ask_code(marker))
  expect_false(accepted$is_error)
  expect_match(accepted$text, "the code ran")
  expect_true(file.exists(marker))
  expect_length(asked, 1L)
  expect_match(asked, ask_code(marker), fixed = TRUE)
  unlink(marker)
  for (answer in c("decline", "cancel")) {
    refused <- mcp_call(client, "run_r_code", code = ask_code(marker))
    expect_true(refused$is_error)
    expect_match(refused$text, "The user declined: the code was not run.", fixed = TRUE)
    expect_false(file.exists(marker))
  }
  expect_length(asked, 3L)
})

test_that("'ask' without elicitation asks at the session's console: yes runs, no runs nothing", {
  dir <- registry()
  session <- start_session(dir, withr::local_tempdir(), "srv <- mcp_session(run_code = 'ask')")
  token <- as.data.frame(read.dcf(session$entry))$token
  marker <- file.path(withr::local_tempdir(), "ran.txt")
  # The call is made from another process, as the test answers the console
  # while the call waits.
  call_in_background <- function() {
    code <- sprintf(
      "c <- mcpserver::mcp_client('%s', token = '%s'); r <- mcpserver::mcp_call(c, 'run_r_code', code = %s); cat('RESULT', r$is_error, r$text, '\\n')",
      session$url, token, deparse(ask_code(marker))
    )
    proc <- processx::process$new(file.path(R.home("bin"), "Rscript"), c("-e", code),
      stdout = "|", stderr = "|", env = c("current", R_LIBS = paste(.libPaths(), collapse = ":")))
    withr::defer(if (proc$is_alive()) proc$kill(), envir = parent.frame(2))
    proc
  }
  caller_result <- function(proc) {
    proc$wait(30000)
    proc$read_all_output()
  }
  caller <- call_in_background()
  r_wait(session, "wants to run this R code")
  r_wait(session, "Run it\\?")
  expect_false(file.exists(marker))
  r_command(session, "yes")
  expect_match(caller_result(caller), "RESULT FALSE .*the code ran")
  expect_true(file.exists(marker))
  unlink(marker)
  caller <- call_in_background()
  r_wait(session, "Run it\\?")
  r_command(session, "no")
  expect_match(caller_result(caller), "RESULT TRUE The user declined: the code was not run.", fixed = TRUE)
  expect_false(file.exists(marker))
  # The console is the user's again.
  r_command(session, "cat(paste0('still', 'here'), '\\n')")
  r_wait(session, "stillhere")
})

# An ellmer ToolDef as ellmer's documented S7 class stores it (properties as
# attributes): btw's tools are such objects. Built by hand, as neither
# ellmer nor btw is installable here (CRAN only).
ellmer_tool_code <- paste0(
  "weather <- structure(function(city) paste('Sunny in', city), ",
  "class = c('ellmer::ToolDef', 'S7_object', 'function'), name = 'weather', description = 'Weather for a city', ",
  "arguments = structure(list(), class = c('ellmer::TypeObject', 'ellmer::Type', 'S7_object'), ",
  "properties = list(city = structure(list(), class = c('ellmer::TypeBasic', 'ellmer::Type', 'S7_object'), ",
  "type = 'string', required = TRUE)), additional_properties = FALSE, required = TRUE), ",
  "annotations = list(read_only_hint = TRUE))"
)

test_that("a session serves ellmer tools (as btw's are) next to the session tools, each call at the console", {
  dir <- registry()
  session <- start_session(dir, withr::local_tempdir(),
    paste0(ellmer_tool_code, "; srv <- mcp_session(tools = c(session_tools(), list(weather)))"))
  client <- session_client(session)
  withr::defer(mcp_close(client))
  tools <- mcp_tools(client)
  expect_true(all(c("weather", "describe_object") %in% names(tools)))
  expect_equal(tools$weather$inputSchema$required, list("city"))
  expect_equal(mcp_call(client, "weather", city = "Oslo")$text, "Sunny in Oslo")
  line <- r_wait(session, "(\\[mcp\\] weather\\(city = \"Oslo\"\\) [0-9.]+ s)", "err")
  expect_match(line, "weather")
})

test_that("a session serves btw's own tools", {
  skip_if_not_installed("btw") # only on CRAN, not reachable from this machine's builds
  dir <- registry()
  session <- start_session(dir, withr::local_tempdir(),
    "srv <- mcp_session(tools = c(session_tools(), btw::btw_tools('docs')))")
  client <- session_client(session)
  withr::defer(mcp_close(client))
  tools <- names(mcp_tools(client))
  expect_true("btw_tool_docs_help_page" %in% tools)
  expect_match(mcp_call(client, "btw_tool_docs_help_page", topic = "lm", package_name = "stats")$text, "Fitting Linear Models")
})

test_that("another OS user can neither read the registry nor reach the session", {
  skip_if_not(identical(Sys.info()[["effective_user"]], "root"), "adding a throwaway OS user needs root")
  runuser <- Sys.which("runuser")
  skip_if(!nzchar(runuser) || !nzchar(Sys.which("useradd")) || !nzchar(Sys.which("curl")),
    "needs runuser, useradd and curl")
  user <- sprintf("mcptest%d", Sys.getpid())
  expect_equal(system2("useradd", c("--no-create-home", "--shell", "/bin/sh", user)), 0L)
  withr::defer(system2("userdel", user))
  as_user <- function(...) {
    out <- suppressWarnings(system2(runuser, shQuote(c("-u", user, "--", ...)), stdout = TRUE, stderr = TRUE))
    list(status = attr(out, "status") %||% 0L, output = paste(out, collapse = "\n"))
  }
  # The registry's parent is open to all, so only the registry's own modes
  # keep the other user out (a parent under R's 0700 tempdir would too).
  parent <- tempfile("registry-", tmpdir = "/tmp")
  dir.create(parent, mode = "0755")
  Sys.chmod(parent, "0755", use_umask = FALSE)
  withr::defer(unlink(parent, recursive = TRUE))
  dir <- file.path(parent, "sessions")
  session <- start_session(dir, withr::local_tempdir(), "srv <- mcp_session()")
  expect_equal(as_user("test", "-x", parent)$status, 0L)
  listed <- as_user("ls", dir)
  expect_false(listed$status == 0L)
  expect_match(listed$output, "Permission denied")
  read <- as_user("cat", session$entry)
  expect_false(read$status == 0L)
  expect_match(read$output, "Permission denied")
  # The session's port is open to every local user; without the secret
  # (or with a guess) the server refuses them.
  initialize <- '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}'
  post <- function(...) as_user("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", session$url,
    "-H", "content-type: application/json", "-H", "accept: application/json, text/event-stream", ..., "-d", initialize)
  expect_equal(post()$output, "401")
  expect_equal(post("-H", paste("authorization: Bearer", strrep("0", 64)))$output, "401")
  # The same request with the secret is served (the refusal is the secret's doing).
  token <- as.data.frame(read.dcf(session$entry))$token
  expect_equal(post("-H", paste("authorization: Bearer", token))$output, "200")
})

test_that("the official Python SDK client works in a session through the bridge, and switches", {
  python <- python_sdk()
  dir <- registry()
  root <- normalizePath(withr::local_tempdir())
  dir.create(file.path(root, "a"))
  dir.create(file.path(root, "b"))
  first <- start_session(dir, file.path(root, "a"), "who <- 'A'; srv <- mcp_session()")
  second <- start_session(dir, file.path(root, "b"), paste(
    "who <- 'B'; hello <- tool(function() 'hi', 'Say hi', name = 'hello')",
    "srv <- mcp_session(tools = c(session_tools(), list(hello)))", sep = "; "
  ))
  for (mode in c("legacy", "auto")) {
    out <- processx::run(python, c(normalizePath(test_path("session_sdk_client.py")), mode,
      second$proc$get_pid(), file.path(R.home("bin"), "Rscript")),
      wd = file.path(root, "a"), error_on_status = FALSE, timeout = 90,
      env = c("current", LD_LIBRARY_PATH = "", MCPSERVER_SESSION_DIR = dir, R_LIBS = paste(.libPaths(), collapse = ":")))
    expect_equal(out$status, 0, info = out$stderr)
    seen <- jsonlite::fromJSON(out$stdout)
    expect_match(seen$who_before, "\"A\"", info = mode)
    expect_true(all(c("select_r_session", "list_r_sessions") %in% seen$tools_before), info = mode)
    expect_false(seen$switched_error, info = mode)
    expect_match(seen$switched, sprintf("now work in the R session of process %d", second$proc$get_pid()), info = mode)
    expect_match(seen$who_after, "\"B\"", info = mode)
    expect_true("hello" %in% seen$tools_after, info = mode)
    expect_true("notifications/tools/list_changed" %in% seen$notifications, info = mode)
  }
})
