# A real interactive R (`R --interactive`) reading its commands from a pipe,
# as a console would: for tests of serving from a live session.
start_interactive_r <- function(env = parent.frame(), extra_env = NULL, wd = NULL) {
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  proc <- processx::process$new(
    file.path(R.home("bin"), "R"),
    c("--interactive", "--no-save", "--no-restore", "--quiet", "--no-readline"),
    stdin = "|", stdout = "|", stderr = "|",
    env = c("current", R_LIBS = lib, R_PROFILE_USER = "", R_ENVIRON_USER = "", extra_env),
    wd = wd
  )
  withr::defer(if (proc$is_alive()) proc$kill(), envir = env)
  session <- new.env()
  session$proc <- proc
  session$out <- ""
  session$err <- ""
  session
}

r_command <- function(session, code) session$proc$write_input(paste0(code, "\n"))

# Waits (generously) until the session's stdout or stderr matches `pattern`;
# returns the match's first group, or the match.
r_wait <- function(session, pattern, stream = c("out", "err"), timeout = 60) {
  stream <- match.arg(stream)
  deadline <- Sys.time() + timeout
  repeat {
    session$out <- paste0(session$out, session$proc$read_output())
    session$err <- paste0(session$err, session$proc$read_error())
    text <- session[[stream]]
    found <- regmatches(text, regexec(pattern, text))[[1]]
    if (length(found) > 0) {
      # Consumed: later waits look at what follows.
      session[[stream]] <- substring(text, regexpr(pattern, text) + nchar(found[[1]]))
      return(found[[length(found)]])
    }
    if (!session$proc$is_alive()) stop("R exited: ", session$err)
    if (Sys.time() > deadline) stop("timed out waiting for ", pattern, "\nstdout: ", session$out, "\nstderr: ", session$err)
    session$proc$poll_io(200)
  }
}
