#' Serve tools to an MCP client over stdin and stdout, or over HTTP
#'
#' Runs a Model Context Protocol server for `tools` on the process's
#' standard input and output until the client closes its end (stdin reaches
#' its end), then returns. Clients start it as a command, typically
#' `Rscript /absolute/path/to/server.R`; it also runs in an interactive
#' session, where Ctrl-C stops it and returns to the prompt.
#'
#' With `transport = "http"` it serves Streamable HTTP on `host` and `port`
#' at `path` instead, to any number of clients at once, until the process
#' is stopped (or Ctrl-C). It says where on stderr, as
#' `mcpserver: serving N tool(s) on http://127.0.0.1:8000/mcp`. By default
#' only the machine itself can reach it; see [http_options()] for serving
#' others, tokens and limits, and `vignette("http")`.
#'
#' An HTTP server stops gracefully on Ctrl-C (SIGINT) and on SIGTERM (what
#' service managers and container runtimes send): it stops accepting
#' connections, answers every request still waiting with a JSON-RPC error
#' saying the server is stopping, ends its event streams properly, and
#' `mcp_server()` returns, so `Rscript server.R` exits with status 0. A
#' running tool is interrupted. If R does not come back from it within 5
#' seconds (compiled code that never checks for interrupts), the process
#' exits then, with status 0 (its clients have had their answers); a
#' second SIGTERM ends it at once. (If something else in the process already
#' handles or ignores SIGTERM, the server leaves it to that.)
#'
#' The server speaks every protocol revision from 2024-11-05 to 2026-07-28
#' on one process: clients that open with `initialize` and clients of the
#' stateless 2026-07-28 revision alike. While a tool runs in R, the server
#' keeps answering `ping`, `tools/list`, `server/discover` and cancellations
#' from its own threads.
#'
#' Tools, resources and prompts can be added and removed while the server
#' runs, with [mcp_add()] and [mcp_remove()]; clients are told.
#'
#' While serving, the protocol uses private copies of stdin and stdout:
#' anything R code, C code or child processes print goes to stderr, and
#' nothing can read the client's messages from stdin. Both are restored when
#' the server stops.
#'
#' What the server holds for a client is bounded. While 4 MB of output wait
#' for the client to read them, or 256 tool calls wait to run, the server
#' stops reading stdin until they drain (a client writing faster than it is
#' answered then waits, as with any pipe; calls run as tasks do not count,
#' as at most 1,000 tasks may be working), and log and progress
#' notifications are dropped while output waits. A tool waiting for the
#' user's answer (see [mcp_elicit()]) keeps the server reading; calls over
#' the bound are then refused with an error, as are more than 64 open
#' `subscriptions/listen` streams.
#'
#' When stdin ends, every request already read is answered and the server
#' returns once the client has read the answers, waiting at most 5 seconds
#' for that (calls still queued behind answers the client does not read are
#' dropped unrun then): a client that closes stdin and never reads its end
#' cannot keep the server alive.
#'
#' If the client closes the server's stdout, calls still queued are dropped
#' unrun, the running one is interrupted and the server returns at once. If
#' stdin ends while a tool waits for the user's answer, `mcp_elicit()` raises
#' an error and the call ends as cancelled. Processes forked by tools (such
#' as `parallel::mcparallel()`) do not inherit the protocol streams, so they
#' never keep a client waiting after the server has exited; in such a child,
#' [mcp_elicit()] fails at once and progress and log messages are dropped.
#'
#' A tool that ends the R process (it calls `quit()` or `q()`) ends the
#' server with it: its call is answered with a tool error saying so, a line
#' on stderr names the tool, and the process then exits as R does.
#'
#' Set the environment variable `MCPSERVER_TRACE=1` to log every message the
#' server reads and writes, with timings, to stderr (bearer tokens never
#' appear: the answers of a token-checking function are left out).
#'
#' @param tools A tool made with [tool()], or a list of them. `ellmer`
#'   tool definitions are accepted too.
#' @param instructions Guidance for the model on using the server, sent to
#'   clients of every revision, or `NULL`.
#' @param ... Not used; named options go after it (a misspelt one is an
#'   error naming the nearest option).
#' @param name The server's name for clients (`serverInfo.name`). Defaults
#'   to the name of the script that calls `mcp_server()` (or of its folder,
#'   for a generic name such as `server.R`).
#' @param version The server's version (`serverInfo.version`).
#' @param title A human-readable name for clients to display, or `NULL`.
#' @param timeout A limit in seconds for each tool call, or `NULL` for none.
#'   A tool's own `timeout` takes precedence.
#' @param queue_timeout A limit in seconds on how long a call may wait for R
#'   to start it, or `NULL` (the default) to wait as long as it takes. A
#'   call still waiting then (R busy with calls ahead of it or, serving in
#'   the background, with a command at the console) is answered with a
#'   tool error saying it was not run, so the client learns at once rather
#'   than waiting in silence; it never runs later. Calls running as tasks
#'   wait as long as it takes.
#' @param max_message_size The longest incoming message accepted, in bytes.
#'   A longer one is answered with an error and skipped; the server goes on.
#' @param request_state_key A secret string that signs the state a
#'   2026-07-28 client carries between the rounds of a call that asks the
#'   user for input (see [mcp_elicit()]), or `NULL` for a random key made
#'   when the server starts. A state is accepted only with the key that
#'   signed it, for the same tool and arguments, within ten minutes, and
#'   once per process. Without a key, that means only by the process that
#'   issued it: never by another process, nor after a restart. Give a key
#'   when several processes serve the same clients and a retry may reach
#'   another one (or should survive a restart); then each process accepts a
#'   state once, so another process sharing the key, or this server after a
#'   restart, may accept it once more within its ten minutes, unless they
#'   share a `request_state_store`.
#' @param request_state_store With a `request_state_key`, a directory that
#'   every process sharing the key can write to (created if needed), or
#'   `NULL`. Each process records there the states it accepts (one empty
#'   file per state, removed once the state has expired), so a state is
#'   accepted once among all of them, restarts included. Without it the
#'   record is kept in memory, per process.
#' @param workers How many calls of tools made with `tool(concurrent =
#'   TRUE)` may run at once, or `NULL` for the default. When no
#'   [future::plan()] is set (or it is sequential), the server starts a pool
#'   of `workers` R processes (base R's PSOCK workers; by default as many as
#'   there are cores, between 2 and 4), sends the concurrent tools and the
#'   globals they use to each once, before it takes the first call, and
#'   shuts the pool down when it stops: workers keep the globals as they
#'   were at start. With a plan of yours, each call is a future on it. See
#'   `vignette("concurrency")`. Tools without `concurrent = TRUE` never run
#'   on workers: `workers` with none of them draws a warning at start.
#' @param worker_queue How many concurrent calls may wait for a free worker.
#'   A call beyond that is answered at once with a tool error saying the
#'   server is busy.
#' @param worker_grace Seconds a worker whose call was cancelled or ran out
#'   of time gets to see it ([mcp_cancelled()] turns `TRUE` there; on the
#'   server's machine its R code is also interrupted, so `on.exit()` code
#'   runs and the worker is kept) and return, before the server kills its
#'   process. The client is answered at once either way. `0` kills at once.
#' @param transport `"stdio"` (the default) or `"http"`.
#' @param host For HTTP, the address to listen on. The default, 127.0.0.1,
#'   accepts connections from this machine only; `"0.0.0.0"` listens on
#'   every interface (and then needs `http_options(allowed_hosts = )`: it
#'   is an error without).
#' @param port For HTTP, the port to listen on; 0 picks a free one (the
#'   line on stderr tells which).
#' @param path For HTTP, the endpoint's path.
#' @param http For HTTP, security settings and limits made with
#'   [http_options()].
#' @param background For HTTP in an interactive session: `TRUE` to return at
#'   once with a handle and serve while the console waits for your input,
#'   running tools in this session (they see your global environment and
#'   loaded data). An error in a session that is not interactive (`Rscript`).
#'   See [mcp_background()].
#' @param resources Resources and resource templates to serve: one made
#'   with [resource()] or [resource_template()], or a list of them. See
#'   `vignette("resources-and-prompts")`. `list()` serves none yet, but
#'   tells clients that resources may come (see [mcp_add()]).
#' @param prompts Prompts to serve: one made with [prompt_template()], or a list
#'   (`list()`: none yet, as for `resources`).
#' @param middleware A function `function(request, call_next)`, or a list of
#'   them, run in order around every request R serves (and then around the
#'   list methods too), or `NULL` for none. See [middleware].
#' @param telemetry OpenTelemetry traces of the requests: `NULL` (the
#'   default) follows the standard `OTEL_*` environment variables (on when
#'   an OTLP endpoint is set); settings made with [mcp_telemetry()], or
#'   `TRUE` for its defaults, turn it on; `FALSE` turns it off.
#' @return `NULL`, invisibly, once the client disconnects (or Ctrl-C). An
#'   internal error in the server (a bug, reported on stderr) stops it with
#'   an R error instead.
#' @examples
#' add <- function(x, y) x + y
#' add <- tool(add, "Add two numbers",
#'   arguments = list(x = type_number(), y = type_number())
#' )
#' if (FALSE) {
#'   # In server.R, started by a client as `Rscript server.R`:
#'   mcp_server(list(add), instructions = "Use add for arithmetic.")
#' }
#' @export
mcp_server <- function(tools, instructions = NULL, ..., name = NULL,
                       version = "1.0.0", title = NULL, timeout = NULL, queue_timeout = NULL,
                       max_message_size = 32 * 1024^2, request_state_key = NULL,
                       request_state_store = NULL, workers = NULL, worker_queue = 100,
                       worker_grace = 1, transport = c("stdio", "http"), host = "127.0.0.1",
                       port = 8000L, path = "/mcp", http = http_options(), background = FALSE,
                       resources = NULL, prompts = NULL, middleware = NULL,
                       telemetry = NULL) {
  if (missing(tools)) {
    if (is.null(resources) && is.null(prompts)) abort("`tools` is required.")
    tools <- list()
  }
  if (...length() > 0) {
    check_options(match.call(expand.dots = FALSE)$..., mcp_server, "mcp_server()")
  }
  transport <- match.arg(transport)
  if (!is.null(instructions) && !is_string(instructions)) {
    abort("`instructions` must be NULL or a single string.")
  }
  name <- name %||% default_server_name()
  check_server_options(name, version, title, timeout, max_message_size)
  if (!is.null(queue_timeout) && !is_positive_number(queue_timeout)) {
    abort("`queue_timeout` must be NULL or a positive number of seconds.")
  }
  if (!is.null(request_state_key) && !(is_string(request_state_key) && nzchar(request_state_key))) {
    abort("`request_state_key` must be NULL or a non-empty string.")
  }
  request_state_store <- check_request_state_store(request_state_store, request_state_key)
  check_worker_options(workers, worker_queue, worker_grace)
  middleware <- check_middleware(middleware)
  if (transport == "http") settings <- http_settings(host, port, path, http)
  tools <- collect_tools(tools)
  token_check <- if (transport == "http") token_check_entry(http)
  # Handlers of resources, prompts and completions follow the tools.
  served <- served_start(tools, resources, prompts, token_check, middleware)
  if (!is.null(served$token_handler)) settings$token_handler <- served$token_handler
  runnable <- served$runnable
  specs <- lapply(runnable, tool_spec)
  options <- list(
    name = name, version = version, title = title, instructions = instructions,
    max_message_size = max_message_size, timeout = timeout, queue_timeout = queue_timeout,
    request_state_key = request_state_key, request_state_store = request_state_store,
    catalog = served$catalog, telemetry = telemetry_settings(telemetry)
  )
  if (!is_flag(background)) abort("`background` must be TRUE or FALSE.")
  if (background) background_check(transport, tools)
  workers_check(runnable, workers)
  # The workers first, every tool installed in each, and only then the
  # server that reads the client's messages: no call (not even
  # initialize) is taken before a concurrent call can start at once. Every
  # runnable entry, so a handler's index is never out of range there.
  pool <- workers_start(runnable, workers, worker_queue, timeout, worker_grace)
  raw <- tryCatch(
    if (transport == "http") {
      rust(server_start_http_(specs, options, settings))
    } else {
      rust(server_start_(specs, options))
    },
    error = function(e) {
      workers_stop(pool)
      stop(e)
    }
  )
  server <- bind_methods(raw)
  watch_for_exit()
  # What it serves, for mcp_add() and mcp_remove() (see R/changes.R).
  server$served <- served
  if (!is.null(pool)) server$run_on_workers(which(pool$concurrent))
  if (background) {
    url <- http_url(server$http_address(), path)
    return(background_start(raw, server, served, url, length(tools), pool))
  }
  on.exit(server$stop(), add = TRUE)
  on.exit(workers_stop(pool), add = TRUE)
  the$server <- server
  on.exit(the$server <- NULL, add = TRUE)
  if (transport == "http") {
    # Always said (on stderr): with `port = 0` it is how to learn the port.
    message(sprintf("mcpserver: serving %d tool(s) on %s", length(tools), http_url(server$http_address(), path)))
  } else if (interactive()) {
    message(sprintf("Serving %d tool(s) on stdin/stdout; press Ctrl-C to stop.", length(tools)))
  }
  status <- serve(server, served, pool)
  if (identical(status, "interrupted")) message("mcp_server() stopped by an interrupt.")
  if (identical(status, "terminated")) message("mcp_server() stopped by SIGTERM.")
  if (identical(status[1], "failed")) abort(paste0(status[2], "; the server has stopped."))
  invisible(NULL)
}

# The store only matters with a shared key: without one, no other process
# can verify a state at all. Returns the directory's absolute path (a tool
# may change the working directory while the server runs), or NULL.
check_request_state_store <- function(store, key) {
  if (is.null(store)) return(NULL)
  if (!is_string(store) || !nzchar(store)) abort("`request_state_store` must be NULL or a directory path.")
  if (is.null(key)) {
    abort("`request_state_store` needs a `request_state_key`: without a shared key, only the process that issued a state accepts it.")
  }
  if (!dir.exists(store)) dir.create(store, recursive = TRUE, showWarnings = FALSE)
  if (!dir.exists(store) || file.access(store, 2) != 0) {
    abort(paste0("`request_state_store` must be a directory the server can write to: ", store))
  }
  normalizePath(store)
}

check_server_options <- function(name, version, title, timeout, max_message_size) {
  if (!is_string(name) || !nzchar(name)) abort("`name` must be a non-empty string.")
  if (!is_string(version) || !nzchar(version)) abort("`version` must be a non-empty string.")
  if (!is.null(title) && !is_string(title)) abort("`title` must be NULL or a single string.")
  if (!is.null(timeout) && !is_positive_number(timeout)) {
    abort("`timeout` must be NULL or a positive number of seconds.")
  }
  if (!is_positive_number(max_message_size) || max_message_size < 1024) {
    abort("`max_message_size` must be a number of bytes, at least 1024.")
  }
}

collect_tools <- function(tools) {
  if (is_tool(tools) || is_ellmer_tool(tools)) tools <- list(tools)
  bad <- paste(
    "`tools` must be a mcpserver::tool() definition or a list of mcpserver::tool() definitions.",
    "Compatible ellmer::tool() objects are also accepted when supplied directly."
  )
  if (!is.list(tools) || is.object(tools)) abort(bad)
  lapply(unname(tools), function(t) {
    if (is_tool(t)) t else if (is_ellmer_tool(t)) tool_from_ellmer(t) else abort(bad)
  })
}

# The script a client started (`Rscript server.R`), if any.
script_path <- function() {
  file <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(file) == 0) return(NULL)
  sub("^--file=", "", file[[1]])
}

# A name for a user's server: its script's name, or its folder's name when
# the script has a generic name such as `server.R`.
default_server_name <- function() {
  file <- script_path()
  if (is.null(file)) "r-mcp-server" else server_name_for_script(file)
}

# The server's methods as a plain list, each looked up once: extendr's `$`
# builds a new closure at every use, which the per-call loop and the
# functions tools call (mcp_progress(), ...) would otherwise pay each time.
bind_methods <- function(server) {
  methods <- names(McpServer)
  structure(lapply(methods, function(method) server[[method]]), names = methods)
}

# The R side of the server loop: wait for a call, run it, hand back the
# outcome. `served` holds the functions to run (see `served_start()`),
# which mcp_add() and mcp_remove() change as it serves. The server interrupts only the call it means (a cancel, a time
# limit), and none of its interrupts outlives that call. An interrupt caught
# out here, between calls or before a call's own handler is set up, goes to
# the server too: it ends the call it was meant for and serving goes on; any
# other interrupt (Ctrl-C) stops serving.
serve <- function(server, served, pool = NULL) {
  repeat {
    status <- tryCatch(
      serve_calls(server, served, pool),
      interrupt = function(e) if (identical(server$interrupted(), "user")) "interrupted" else "continue"
    )
    if (!identical(status, "continue")) return(status)
  }
}

# The loop proper; the handler above is set up once, not per call.
# After a call, the next look for one does not wait: calls sent together
# (an agent's parallel calls) are all dispatched to workers at once,
# instead of one per wait on the workers' connections.
#
# Plain calls (no middleware, not on a worker) run under condition
# handlers set up once for many calls (see `serve_plain()`), not once per
# call: setting up `tryCatch()` with its four handlers and
# `withCallingHandlers()` cost more than everything else R does for a
# trivial call (bench/per-call.md). A condition that ends a call unwinds
# to them; they answer the call and the loop sets them up again.
serve_calls <- function(server, served, pool) {
  took_one <- FALSE
  repeat {
    status <- tryCatch(
      withCallingHandlers(
        serve_plain(server, served, pool, took_one),
        message = log_tool_message,
        warning = log_tool_warning
      ),
      error = function(e) end_plain_call(server, e, "error"),
      interrupt = function(e) end_plain_call(server, e, "interrupt"),
      mcpserver_input_required = function(e) end_plain_call(server, e, "input required")
    )
    if (is.character(status)) return(status)
    # After a call that ended with a condition, look again without waiting.
    took_one <- TRUE
  }
}

# Takes calls and runs the plain ones, until serving ends (a status for
# `serve()`). The condition handlers around it act only while
# `the$direct` says a plain call runs here: calls through middleware have
# handlers of their own (`run_job()`), and conditions between calls are
# the server's own.
serve_plain <- function(server, served, pool, took_one) {
  repeat {
    # Without workers (`pool` NULL) their functions would do nothing: not
    # called at all, as this runs for every call. Nor is the look without
    # waiting after a call, which only serves the workers: a waiting poll
    # returns at once when a call is queued.
    job <- server$poll(if (took_one && !is.null(pool)) 0L else poll_wait_ms(pool))
    if (!is.null(pool)) workers_service(server, pool)
    took_one <- !is.null(job)
    if (is.null(job)) next
    if (is.character(job)) return(job)
    if (!is.null(served$middleware)) {
      if (identical(serve_through_middleware(server, served, pool, job), "user")) return("interrupted")
      next
    }
    if (!is.null(pool) && is_worker_job(pool, job)) {
      worker_submit(server, pool, job, served$runnable[[job$tool]])
      next
    }
    the$job <- job
    the$asked <- 0L
    the$direct <- TRUE
    value <- do.call(served$runnable[[job$tool]], job$arguments)
    # from_ellmer_value() looks for S7 objects: an atomic value has none.
    if (is.object(value) || is.list(value)) value <- from_ellmer_value(value)
    server$complete_value(job$id, job$tool, value)
    the$direct <- FALSE
    the$job <- NULL
  }
}

# A condition unwound out of `serve_plain()`: it ends the plain call that
# was running, as `run_job()` would end it. Returns a status that stops
# serving, or NULL to go on. An error while no plain call runs is the
# server's own, and stops it as before; an interrupt then goes to the
# server, as in `serve()`.
end_plain_call <- function(server, condition, kind) {
  job <- if (isTRUE(the$direct)) the$job
  the$direct <- FALSE
  the$job <- NULL
  if (kind == "interrupt") {
    return(if (identical(server$interrupted(), "user")) "interrupted")
  }
  if (is.null(job)) stop(condition)
  if (kind == "error") {
    server$complete_error(job$id, condition_text(condition))
  } else {
    server$complete_input_required(job$id)
  }
  NULL
}

# A tool's messages and warnings become log notifications of its call
# (the handlers of `run_job()`, for the plain calls of `serve_plain()`).
log_tool_message <- function(m) {
  if (isTRUE(the$direct)) forward_log("info", sub("\n$", "", condition_text(m)))
}

log_tool_warning <- function(w) {
  if (!isTRUE(the$direct)) return()
  forward_log("warning", condition_text(w))
  message("Warning in tool call: ", condition_text(w))
  # signalCondition() offers no restart: R just carries on then.
  if (!is.null(findRestart("muffleWarning"))) invokeRestart("muffleWarning")
}

# A tool that calls quit() or q() ends the process inside its call, where no
# R code of the server runs again, except exit finalizers: this one answers
# the call (see McpServer$exiting() in src/rust/mcpserver/src/server/mod.rs).
# Registered once per session, on an object that lives as long as it.
watch_for_exit <- function() {
  if (!is.null(the$exit_watch)) return(invisible())
  the$exit_watch <- new.env(parent = emptyenv())
  reg.finalizer(the$exit_watch, function(e) exiting_during_call(), onexit = TRUE)
  invisible()
}

exiting_during_call <- function() {
  server <- the$server
  if (!is.null(the$job) && !is.null(server)) server$exiting()
  invisible()
}

# With `middleware`, `handler` runs the server's middleware around the
# entry's function (R/middleware.R), and an R error is the middleware's.
run_job <- function(server, job, handler, middleware = FALSE) {
  the$job <- job
  the$asked <- 0L
  on.exit(the$job <- NULL)
  tryCatch(
    {
      value <- withCallingHandlers(
        do.call(handler, job$arguments),
        message = function(m) forward_log("info", sub("\n$", "", condition_text(m))),
        warning = function(w) {
          forward_log("warning", condition_text(w))
          message("Warning in tool call: ", condition_text(w))
          # signalCondition() offers no restart: R just carries on then.
          if (!is.null(findRestart("muffleWarning"))) invokeRestart("muffleWarning")
        }
      )
      server$complete_value(job$id, job$tool, from_ellmer_value(value))
      "done"
    },
    error = function(e) {
      if (middleware) {
        server$complete_failed(job$id, middleware_failure(e))
      } else {
        server$complete_error(job$id, condition_text(e))
      }
      "error"
    },
    interrupt = function(e) server$interrupted(),
    mcpserver_input_required = function(e) {
      server$complete_input_required(job$id)
      "input required"
    }
  )
}

# The text of a condition a tool signalled, whatever its message holds: R
# code may give it NULL, several strings, NA or a number. This runs where
# an R error would escape the loop and stop the server, so it cannot fail.
condition_text <- function(condition) {
  text <- tryCatch(conditionMessage(condition), error = function(e) NULL)
  text <- tryCatch(as.character(unlist(text)), error = function(e) character())
  paste(text, collapse = "\n")
}
