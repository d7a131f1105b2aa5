#' Powers for long-running tools: progress, logging, cancellation
#'
#' Functions a tool can call while it runs. Outside a tool call (for
#' example when the function is called directly in R) they do nothing and
#' return quietly, so tools stay ordinary, testable R functions.
#'
#' * `mcp_progress()` reports progress. The client sees it only if it asked
#'   for progress (by sending a progress token with the call); clients such as
#'   Claude Code reset their timeout on each report, so long tools stay alive.
#'   Values must increase: a report whose `progress` is not above the last
#'   one is dropped. Reports in a tight loop are thinned to at most one per 50
#'   milliseconds, the latest value winning.
#' * `mcp_log()` sends a log message at one of the eight RFC 5424 levels. It
#'   reaches the client only if the client asked for logs at that level or
#'   above (`logging/setLevel` in the handshake-era protocol, a per-request
#'   log level in 2026-07-28); it always goes to stderr too. Inside a tool,
#'   `message()` is forwarded at level `"info"` and `warning()` at level
#'   `"warning"` in the same way (and still printed to stderr).
#' * `mcp_cancelled()` tells whether the client cancelled the call. A cancel
#'   interrupts the tool's R code as Ctrl-C would (so `on.exit()` handlers
#'   run); `mcp_cancelled()` is for code that catches that interrupt, or runs
#'   C code that never checks for interrupts, and wants to stop cleanly. A
#'   cancel or time limit only ever interrupts the call it was meant for:
#'   one that arrives as the call finishes is dropped, never delivered to
#'   the next call.
#' * `mcp_request()` describes the request being served.
#' * `mcp_close_stream()`, over HTTP, ends the connection that carries the
#'   call's messages while the call goes on: the client reconnects a second
#'   later and receives what it missed, then the rest (the event stream is
#'   resumable). A long call can so avoid holding a connection that a proxy
#'   would cut. It does nothing (and returns `FALSE`) on stdio, for clients
#'   of revisions before 2025-11-25 (they could not resume before the
#'   first message), for clients that read JSON answers only, and in a
#'   worker.
#'
#' In a tool made with `tool(concurrent = TRUE)`, which runs in a worker
#' process, progress, logs, messages and warnings are relayed to the server
#' while the call runs. On a cancel the server answers the client at once
#' and `mcp_cancelled()` turns `TRUE` in the worker (when it runs on the
#' server's machine), and the worker's R code is interrupted (its
#' `on.exit()` code runs and the worker is kept). A worker
#' that has not returned `worker_grace` seconds later is killed (see
#' [mcp_server()] and `vignette("concurrency")`, which says what each
#' future backend gets). A time limit ends a worker's call the same way.
#'
#' @param progress How far the work has come (any increasing number).
#' @param total The value `progress` will reach at the end, or `NULL`.
#' @param message A short description of the current step, or `NULL`
#'   (clients of the 2024-11-05 revision do not receive it).
#' @param level One of `"debug"`, `"info"`, `"notice"`, `"warning"`,
#'   `"error"`, `"critical"`, `"alert"`, `"emergency"`.
#' @param ... The message, pasted together (as in [message()]).
#' @return `mcp_progress()` and `mcp_log()`: whether a tool call was
#'   running (invisibly). `mcp_cancelled()`: `TRUE` or `FALSE`.
#'   `mcp_close_stream()`: whether the connection was let go (invisibly).
#'   `mcp_request()`: `NULL` outside a tool call, otherwise a list with
#'   `request_id`, `tool`, `protocol_version`, `client` (the client's name
#'   and version as it reported them), `capabilities` (what the client
#'   declared it can do, e.g. `elicitation`, `sampling`, `roots`: from this
#'   request on 2026-07-28, from `initialize` before), `meta` (the request's `_meta`, e.g.
#'   a `traceparent`), `progress_token`, `log_level`, `auth` (over HTTP,
#'   the list the server's bearer-token function returned for the caller's
#'   token, see [http_options()]; `NULL` otherwise), `session_id` (the
#'   `Mcp-Session-Id` of a handshake-era HTTP session; `NULL` over stdio
#'   and for 2026-07-28 requests, which have none), and `trace_id` and
#'   `span_id` (the call's OpenTelemetry span, as hex strings, when
#'   telemetry is on: see [mcp_telemetry()] and [mcp_span()]; `NULL`
#'   otherwise). In a concurrent tool
#'   it also has `worker`: `number` (the worker's place in the server's
#'   own pool, `NA` on a [future::plan()] of yours), `pid` and `host`; the
#'   server's log names the worker of each line a tool logs or prints. If the request
#'   holds text R cannot (a NUL character, say in the client's name),
#'   `mcp_request()` raises an error naming the field.
#' @examples
#' fit_models <- function(n = 3) {
#'   for (i in seq_len(n)) {
#'     if (mcp_cancelled()) break
#'     mcp_progress(i, total = n, message = sprintf("model %d of %d", i, n))
#'     mcp_log("info", "fitting model ", i)
#'     Sys.sleep(0.1)
#'   }
#'   "done"
#' }
#' fit_models() # outside a server: the calls do nothing
#' @name tool-context
NULL

# The server and the call R is running, for the functions above.
the <- new.env(parent = emptyenv())

current_call <- function() {
  if (is.null(the$server) || is.null(the$job)) NULL else the$job
}

log_levels <- c("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

#' @rdname tool-context
#' @export
mcp_progress <- function(progress, total = NULL, message = NULL) {
  if (!is_number(progress)) abort("`progress` must be a single finite number.")
  if (!is.null(total) && !is_number(total)) abort("`total` must be NULL or a single finite number.")
  if (!is.null(message) && !is_string(message)) abort("`message` must be NULL or a single string.")
  if (in_worker()) {
    return(worker_relay("progress", list(
      progress = as.double(progress), total = if (!is.null(total)) as.double(total), message = message
    )))
  }
  job <- current_call()
  if (is.null(job)) return(invisible(FALSE))
  the$server$progress(job$id, as.double(progress), if (!is.null(total)) as.double(total), message)
  invisible(TRUE)
}

#' @rdname tool-context
#' @export
mcp_log <- function(level, ...) {
  if (!is_string(level) || !level %in% log_levels) {
    abort(paste0("`level` must be one of ", paste0('"', log_levels, '"', collapse = ", "), "."))
  }
  text <- paste0(...)
  cat(sprintf("[%s] %s\n", level, text), file = stderr())
  forward_log(level, text)
}

forward_log <- function(level, text) {
  if (in_worker()) return(worker_relay("log", list(level = level, text = text)))
  job <- current_call()
  if (is.null(job)) return(invisible(FALSE))
  the$server$log(job$id, level, text)
  invisible(TRUE)
}

#' @rdname tool-context
#' @export
mcp_cancelled <- function() {
  if (in_worker()) return(worker_cancelled())
  job <- current_call()
  !is.null(job) && isTRUE(the$server$cancelled(job$id))
}

#' @rdname tool-context
#' @export
mcp_close_stream <- function() {
  if (in_worker()) return(invisible(FALSE))
  job <- current_call()
  if (is.null(job)) return(invisible(FALSE))
  invisible(isTRUE(the$server$close_stream(job$id)))
}

#' @rdname tool-context
#' @export
mcp_request <- function() {
  if (in_worker()) return(worker_request())
  if (is.null(current_call())) return(NULL)
  rust(the$server$request_context())
}

#' Go on as a task
#'
#' In a tool made with `tool(task = "deferred")`, `mcp_task()` turns the
#' running call into a task: the client's request is answered at once with
#' the task's handle, and what the tool returns from then on becomes the
#' task's result, which the client fetches with `tasks/get`. Call it once
#' the tool has what it needs from the client and the long part begins: on
#' 2026-07-28, questions asked before it ([mcp_elicit()], [mcp_ask()]) are
#' answered by `input_required` rounds of the call itself (the tool runs
#' again from the start with the answers), and questions asked after it
#' wait in the task until the client answers them with `tasks/update`.
#'
#' The call becomes a task only on a 2026-07-28 request whose client
#' declared the `io.modelcontextprotocol/tasks` extension. Elsewhere
#' `mcp_task()` does nothing and the call goes on as a plain call: a
#' 2025-11-25 client decides itself, when it calls, whether a deferred tool
#' runs as a task (it sees an optional task tool), and then `mcp_task()`
#' finds the call a task already. Calling it again, in a call that runs as
#' a task from the start, or in a concurrent tool (`concurrent = TRUE`),
#' does nothing either.
#'
#' @return The task's id, invisibly; `NULL` when the call goes on as a
#'   plain call (or outside a tool call).
#' @seealso [tool()]'s `task`, and `vignette("long-running")`.
#' @examples
#' book_trip <- function() {
#'   where <- mcp_elicit("Where to?", list(city = type_string()))
#'   mcp_task() # the client has its handle; the rest runs as a task
#'   Sys.sleep(5) # the long search
#'   paste("Booked a trip to", where$content$city)
#' }
#' if (FALSE) {
#'   mcp_server(list(tool(book_trip, "Book a trip", task = "deferred")))
#' }
#' @export
mcp_task <- function() {
  if (in_worker()) return(invisible(NULL))
  if (is.null(current_call())) return(invisible(NULL))
  invisible(rust(the$server$continue_as_task()))
}
