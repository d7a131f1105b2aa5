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
