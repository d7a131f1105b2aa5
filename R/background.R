#' Serve tools from your R session while you keep working
#'
#' `mcp_server(tools, transport = "http", background = TRUE)` starts an HTTP
#' server and returns at once with a handle, of class `mcp_background`. The
#' tools run in your session, on R's main thread, between your commands, so
#' they see your global environment, your loaded packages and data, and what
#' you change in them. An assistant can then work with the data you are
#' working on (point it at the URL, or, for clients that only start
#' commands, at [mcp_bridge()]; [mcp_client_config()] writes either).
#'
#' A call runs only when the console waits at its prompt for your next
#' command, with no command of yours running: within about 50 ms of the
#' prompt appearing, one call after another. While a command runs, calls
#' wait, even when the command itself waits: during `Sys.sleep()`,
#' `readline()`, `menu()`, a `browser()` prompt, a script run by
#' `source()` or a Shiny app, nothing runs (the server keeps answering
#' `ping`, `tools/list` and the like, and takes new calls), so a tool never
#' sees the state of a command half done. Each line you type or paste is a
#' command of its own: calls may run between two lines of a pasted block,
#' but never inside one. A tool that waits in turn (`Sys.sleep()` in the
#' tool) never lets another call start inside it. A running call is
#' cancelled or timed out as in the foreground server (R's interrupt);
#' Ctrl-C while a tool runs ends that call with an error and serving goes
#' on. Progress, logs, [mcp_elicit()] and the other helpers work as usual.
#'
#' [mcp_client()] can test the server from the same session: while it waits
#' for an answer from this session's own background server, it runs the
#' calls that server has queued (from any client) itself, since the console
#' is busy with its command. A tool that asks for input that way
#' ([mcp_elicit()], [mcp_sample()], [mcp_roots()]) fails at once, as the
#' waiting client cannot answer, except with `protocol_version =
#' "2026-07-28"`, whose `input_required` rounds the client answers. To test
#' such tools before that revision, serve them from another R process (see
#' "Testing HTTP servers from R" in `vignette("http")`).
#'
#' Ctrl-C at the console stays yours: it interrupts your command (or the
#' tool running), never the server. SIGTERM, which asks the whole R
#' session to end, ends it gracefully: the server answers every request
#' still waiting with an error saying it is stopping and ends its streams
#' properly, then the session quits (status 0, without saving). While R is
#' busy with a command of yours, it cannot quit at once: it then exits 5
#' seconds after the signal.
#'
#' Background serving relies on R's event loop, which runs when an
#' interactive session waits for input (the R console, RStudio, Positron, a
#' terminal), and on Unix-like systems only. A script run with `Rscript`
#' never waits at a console, so there (and in any session that is not
#' interactive) `background = TRUE` is an error: serve it in the foreground
#' instead. Only one server serves in the background per session.
#'
#' Tools marked `concurrent = TRUE` run in worker processes as in the
#' foreground (see `vignette("concurrency")`), so they do not see your
#' session's data: their calls are handed over, and their results
#' collected, when the console waits at its prompt as above (every 50 ms
#' while any runs). Without a [future::plan()] of your own, the server runs
#' its own pool of workers (your plan and options are left alone), and they
#' keep your globals as they were when the server started; `$stop()` shuts
#' the pool down.
#'
#' @param x A handle returned by `mcp_server(background = TRUE)`.
#' @param ... Not used.
#' @return `mcp_server(background = TRUE)` returns the handle, an
#'   environment with `url` (the endpoint), `stop()` (stops serving and
#'   frees the port; safe to call twice), `running()` (whether it still
#'   serves), and `add(x)` and `remove(x)`, which change what it serves as
#'   [mcp_add()] and [mcp_remove()] do. `print()` shows where it serves.
#' @examples
#' if (FALSE) {
#'   # In an interactive session:
#'   cars <- mtcars
#'   describe <- tool(
#'     function(column) as.list(summary(cars[[column]])), # a list keeps the names (Min., ...)
#'     "Summarise a column of the cars data I am working on",
#'     arguments = list(column = type_string()),
#'     name = "describe"
#'   )
#'   srv <- mcp_server(describe, transport = "http", port = 8000, background = TRUE)
#'   srv
#'   mcp_client_config(srv$url, "claude-code")
#'   # ... work on; the assistant's calls run between your commands ...
#'   srv$stop()
#' }
#' @name mcp_background
NULL

background_check <- function(transport, tools) {
  if (transport != "http") abort("`background = TRUE` needs `transport = \"http\"`: a stdio server belongs to the client that started it.")
  if (.Platform$OS.type != "unix") abort("`background = TRUE` needs R's event loop of Unix-like systems (macOS, Linux).")
  if (!interactive()) {
    # Calls run only while a console waits for input, which never happens
    # here: the server would answer `initialize` and die with the script.
    abort(paste(
      "`background = TRUE` serves between the commands of an interactive R session, and this one",
      "is not interactive (Rscript, R -f, knitr): it would end, and the server with it, when the",
      "script does, and run no call before. Serve in the foreground instead: drop `background = TRUE`."
    ))
  }
  if (background_active_()) abort("A server already serves in the background in this session: stop it first with its `stop()`.")
}

# `served` holds what the server runs (see `served_start()`); `n_tools`
# counts the tools at start; `pool` runs the calls of concurrent tools (see
# R/workers.R), or is NULL.
background_start <- function(raw, server, served, url, n_tools, pool = NULL) {
  handle <- new.env(parent = emptyenv())
  handle$url <- url
  handle$tools <- n_tools
  state <- list(raw = raw, server = server, served = served, handle = handle, pool = pool)
  handle$stop <- function() background_stop(state)
  handle$running <- function() identical(the$background$handle, handle)
  handle$add <- function(x) mcp_add(x, server = handle)
  handle$remove <- function(x) mcp_remove(x, server = handle)
  class(handle) <- "mcp_background"
  the$background <- state
  attached <- background_attach_(raw, as.call(list(background_service)))
  if (inherits(attached, "mcpserver_rust_error")) {
    the$background <- NULL
    server$stop()
    workers_stop(pool)
    abort(attached$message)
  }
  message(sprintf("mcpserver: serving %d tool(s) on %s in the background; stop with `$stop()`.", n_tools, url))
  invisible(handle)
}

background_stop <- function(state) {
  if (identical(the$background$handle, state$handle)) {
    background_detach_(state$raw)
    the$background <- NULL
  }
  state$server$stop()
  workers_stop(state$pool)
  invisible(NULL)
}

# Runs the calls queued for the background server, from R's event loop
# (src/rust/mcpserver/src/background.rs calls it when woken). It never lets
# an interrupt or error escape into the user's session.
#
# R's event loop also runs inside a command of the user's (Sys.sleep(),
# readline(), a menu, a package waiting on a socket): calls run only when
# the console waits at its prompt with no command running, that is, when no
# R function is on the stack but this one. Otherwise it looks again a tick
# later (it is woken only then: a command may pump events for long). A
# `nested` service runs the calls at once: mcp_client() waits for an answer
# from this session's own server (see R/mcp_client.R).
background_service <- function(nested = FALSE) {
  state <- the$background
  if (is.null(state)) return(invisible())
  if (!nested && !at_top_level()) {
    background_wake_after_(background_tick_ms)
    return(invisible())
  }
  server <- state$server
  previous <- the$server
  the$server <- server
  server$serving_nested(nested)
  on.exit({
    server$serving_nested(FALSE)
    the$server <- previous
  })
  repeat {
    job <- tryCatch(server$poll(0L), interrupt = function(e) NULL)
    if (is.null(job) || identical(job, "interrupted")) break
    if (is.character(job)) {
      # Serving ended (a failure inside the server): say so, and let go.
      if (identical(job[1], "failed")) message("mcpserver: the background server stopped: ", job[2])
      background_stop(state)
      # SIGTERM was meant for the session: it ends, now that the server
      # has answered its clients (see `?mcp_background`).
      if (identical(job, "terminated")) quit(save = "no", status = 0)
      break
    }
    if (!is.null(state$served$middleware)) {
      tryCatch(
        serve_through_middleware(server, state$served, state$pool, job),
        interrupt = function(e) server$interrupted()
      )
      next
    }
    if (is_worker_job(state$pool, job)) {
      worker_submit(server, state$pool, job, state$served$runnable[[job$tool]])
      next
    }
    tryCatch(
      run_job(server, job, state$served$runnable[[job$tool]]),
      interrupt = function(e) server$interrupted()
    )
  }
  background_workers(state)
  invisible()
}

# Looks at the workers' calls (results, progress, cancels, limits) and,
# while any runs or waits, asks to be woken again shortly: the server has
# no news to wake R for a worker.
background_workers <- function(state) {
  pool <- state$pool
  if (is.null(pool) || !identical(the$background$handle, state$handle)) return(invisible())
  tryCatch(workers_service(state$server, pool), interrupt = function(e) NULL)
  busy <- length(pool$running) + length(pool$waiting) + length(pool$asking) > 0
  if (busy) background_wake_after_(background_tick_ms)
  invisible()
}

background_tick_ms <- 50

# Whether the caller of this function's caller runs at the top level, from
# the console's prompt: `sys.nframe()` counts every R function on the stack
# (those of any command running below the event loop too), and here sees
# this function and its caller only.
at_top_level <- function() sys.nframe() <= 2L

#' @rdname mcp_background
#' @export
print.mcp_background <- function(x, ...) {
  state <- if (x$running()) "running" else "stopped"
  # As many as it serves now (mcp_add() and mcp_remove() change that).
  tools <- if (x$running()) length(the$background$served$tools) else x$tools
  cat(sprintf("<mcp_background> %d tool(s) on %s (%s)\n", tools, x$url, state))
  if (state == "running") cat("Stop with `$stop()`.\n")
  invisible(x)
}
