#' Serve tools from your R session while you keep working
#'
#' `mcp_server(tools, transport = "http", background = TRUE)` starts an HTTP
#' server and returns at once with a handle, of class `mcp_background`. The
#' tools run in your session, on R's main thread, between your commands:
#' whenever the console waits for input, queued tool calls run, so the tools
#' see your global environment, your loaded packages and data, and what you
#' change in them. An assistant can then work with the data you are working
#' on (point it at the URL, or, for clients that only start commands, at
#' [mcp_bridge()]; [mcp_client_config()] writes either).
#'
#' While R is busy with a command of yours, calls wait (the server keeps
#' answering `ping`, `tools/list` and the like, and takes new calls); they
#' run once the console is idle again. A running call is cancelled or timed
#' out as in the foreground server (R's interrupt); Ctrl-C while a tool runs
#' ends that call with an error and serving goes on. Progress, logs,
#' [mcp_elicit()] and the other helpers work as usual.
#'
#' Background serving relies on R's event loop, which runs when an
#' interactive session waits for input (the R console, RStudio, Positron, a
#' terminal), and on Unix-like systems only. A script run with `Rscript`
#' never waits at a console, so there (and in any session that is not
#' interactive) `background = TRUE` is an error: serve it in the foreground
#' instead. Only one server serves in the background per session.
#'
#' Tools marked `concurrent = TRUE` run in worker processes as in the
#' foreground (see `vignette("concurrency")`), so they neither see your
#' session's data nor wait for the console: their calls are handed over,
#' and their results collected, whenever the console waits for input
#' (every 50 ms while any runs). Without a [future::plan()] of your own,
#' the server sets one with its pool of workers for as long as it serves,
#' which futures you create meanwhile use too; `$stop()` restores yours.
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
background_service <- function() {
  state <- the$background
  if (is.null(state)) return(invisible())
  server <- state$server
  previous <- the$server
  the$server <- server
  on.exit(the$server <- previous)
  repeat {
    job <- tryCatch(server$poll(0L), interrupt = function(e) NULL)
    if (is.null(job) || identical(job, "interrupted")) break
    if (is.character(job)) {
      # Serving ended (a failure inside the server): say so, and let go.
      if (identical(job[1], "failed")) message("mcpserver: the background server stopped: ", job[2])
      background_stop(state)
      break
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
