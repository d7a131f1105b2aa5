# OpenTelemetry for a server: what `mcp_server(telemetry = )` takes. The
# spans themselves are made and exported in Rust (mcp-core's telemetry
# module), off R's thread; R only checks and hands over the settings.

#' Send OpenTelemetry traces of a server's requests
#'
#' `mcp_telemetry()` makes the settings for `mcp_server(telemetry = )`: the
#' server then emits one OpenTelemetry SERVER span per request, named and
#' described as the OpenTelemetry semantic conventions for MCP say (for
#' example `tools/call add`, with `mcp.method.name`, `gen_ai.tool.name`,
#' `jsonrpc.request.id`, `mcp.protocol.version`, `mcp.session.id`,
#' `network.transport`, `client.address` and `error.type`), joined to the
#' client's trace when the request's `params._meta` carries a W3C
#' `traceparent`. Spans are sent over OTLP/HTTP (protobuf, or JSON when
#' `OTEL_EXPORTER_OTLP_PROTOCOL` is `http/json`) in batches by a thread of
#' the server's own: a call never waits for the collector, and
#' spans that find the export queue full are dropped and counted (the count
#' is written to stderr when the server stops). It also records the
#' conventions' histograms `mcp.server.operation.duration` and
#' `mcp.server.session.duration` (seconds), sent to `/v1/metrics` every
#' `OTEL_METRIC_EXPORT_INTERVAL` milliseconds (60 000 by default) and when
#' the server stops. A tool adds to its span with [mcp_span()].
#'
#' Without `telemetry`, a server follows the standard OpenTelemetry
#' environment variables: it traces when `OTEL_EXPORTER_OTLP_ENDPOINT` or
#' `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (or
#' `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`) is set, unless
#' `OTEL_SDK_DISABLED=true`; `OTEL_EXPORTER_OTLP_HEADERS`,
#' `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and
#' `OTEL_TRACES_SAMPLER` (with `OTEL_TRACES_SAMPLER_ARG`) apply as in any
#' OpenTelemetry program. Arguments given here take precedence over them.
#'
#' Only names, ids and URIs are recorded, never bearer tokens or request
#' state; a tool call's arguments and result only when `capture` asks for
#' them (the conventions make `gen_ai.tool.call.arguments` and
#' `gen_ai.tool.call.result` opt-in, and no environment variable turns
#' them on). The exporter speaks plain HTTP;
#' to reach a collector over TLS, send to a local OpenTelemetry Collector.
#' See `vignette("telemetry", package = "mcpserver")`.
#'
#' @param endpoint The OTLP/HTTP base URL, e.g. `"http://localhost:4318"`
#'   (`/v1/traces` and `/v1/metrics` are appended). `NULL`: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
#'   `OTEL_EXPORTER_OTLP_ENDPOINT`, or `http://localhost:4318`.
#' @param headers A named character vector of HTTP headers for the
#'   collector (an API key, say), sent as they are. `NULL`:
#'   `OTEL_EXPORTER_OTLP_HEADERS` (`name=value` pairs separated by commas,
#'   values URL-encoded: `%2C` for a comma).
#' @param service_name The `service.name` of the spans. `NULL`:
#'   `OTEL_SERVICE_NAME`, else the server's `name`.
#' @param sample The fraction of traces to keep, between 0 and 1; a request
#'   whose parent was sampled is always kept. `NULL`: `OTEL_TRACES_SAMPLER`,
#'   else every trace.
#' @param capture What of a tool call's content its `tools/call` span
#'   records: `"arguments"` (the attribute `gen_ai.tool.call.arguments`,
#'   the call's `arguments` as JSON text) and/or `"result"`
#'   (`gen_ai.tool.call.result`, the result object as JSON text, as sent).
#'   Each text keeps at most 8192 bytes; a longer one is cut there and ends
#'   with `...[truncated]`. Default: neither, as arguments and results may
#'   hold personal or secret data.
#' @param enabled `FALSE` turns telemetry off whatever the environment says.
#' @return A list of class `mcp_telemetry`, for `mcp_server(telemetry = )`.
#' @examples
#' sampled <- mcp_telemetry(endpoint = "http://localhost:4318", sample = 0.25)
#' \dontrun{
#' echo <- tool(function(x) x, "Echo", arguments = list(x = type_string()), name = "echo")
#' mcp_server(list(echo), telemetry = mcp_telemetry(endpoint = "http://localhost:4318"))
#' }
#' @export
mcp_telemetry <- function(endpoint = NULL, headers = NULL, service_name = NULL,
                          sample = NULL, capture = character(), enabled = TRUE) {
  if (!is.null(endpoint) && !(is_string(endpoint) && grepl("^https?://", endpoint))) {
    abort("`endpoint` must be NULL or a URL starting with http:// (or https://).")
  }
  if (!is.null(headers)) {
    ok <- is.character(headers) && !anyNA(headers) && !is.null(names(headers)) &&
      all(nzchar(names(headers)))
    if (!ok) abort("`headers` must be NULL or a named character vector.")
  }
  if (!is.null(service_name) && !(is_string(service_name) && nzchar(service_name))) {
    abort("`service_name` must be NULL or a non-empty string.")
  }
  if (!is.null(sample) && !(is.numeric(sample) && length(sample) == 1L &&
    !is.na(sample) && sample >= 0 && sample <= 1)) {
    abort("`sample` must be NULL or a number between 0 and 1.")
  }
  if (!is.character(capture) || anyNA(capture) || !all(capture %in% c("arguments", "result"))) {
    abort('`capture` must be a character vector of "arguments" and/or "result".')
  }
  if (!is_flag(enabled)) abort("`enabled` must be TRUE or FALSE.")
  structure(
    list(
      enabled = enabled, endpoint = endpoint,
      headers = if (!is.null(headers)) paste0(names(headers), "=", unname(headers)),
      service_name = service_name, sample = if (!is.null(sample)) as.double(sample),
      capture = unique(capture)
    ),
    class = "mcp_telemetry"
  )
}

#' @export
print.mcp_telemetry <- function(x, ...) {
  if (!isTRUE(x$enabled)) {
    cat("<mcp_telemetry: off>\n")
    return(invisible(x))
  }
  cat("<mcp_telemetry>\n")
  cat("  endpoint:     ", x$endpoint %||% "(from the environment)", "\n", sep = "")
  # Header values may be secrets: only their names are shown.
  names <- if (length(x$headers)) sub("=.*$", "", x$headers) else "(from the environment)"
  cat("  headers:      ", paste(names, collapse = ", "), "\n", sep = "")
  cat("  service_name: ", x$service_name %||% "(from the environment, or the server's name)", "\n", sep = "")
  cat("  sample:       ", if (is.null(x$sample)) "(from the environment, or all)" else x$sample, "\n", sep = "")
  cat("  capture:      ", if (length(x$capture)) paste(x$capture, collapse = ", ") else "(nothing)", "\n", sep = "")
  invisible(x)
}

# What mcp_server() hands to Rust: NULL (the environment decides), or the
# settings of mcp_telemetry(); TRUE and FALSE are short for
# mcp_telemetry() and mcp_telemetry(enabled = FALSE).
telemetry_settings <- function(telemetry) {
  if (is.null(telemetry)) return(NULL)
  if (isTRUE(telemetry)) return(unclass(mcp_telemetry()))
  if (isFALSE(telemetry)) return(unclass(mcp_telemetry(enabled = FALSE)))
  if (!inherits(telemetry, "mcp_telemetry")) {
    abort("`telemetry` must be NULL, TRUE, FALSE or made with mcp_telemetry().")
  }
  unclass(telemetry)
}

#' Spans, attributes and events from inside a tool
#'
#' With telemetry on (see [mcp_telemetry()]), every request has its SERVER
#' span. A tool can add to it and open spans of its own:
#'
#' * `mcp_span(name, code)` runs `code` inside a new span (kind INTERNAL)
#'   named `name`, a child of the innermost `mcp_span()` open around it, or
#'   else of the call's span; it returns `code`'s value. An R error that
#'   leaves `code` sets the span's status to ERROR (with `error.type =
#'   "r_error"` and the error's message) and goes on as usual.
#' * `mcp_span_attributes(...)` sets attributes, and `mcp_span_event(name,
#'   ...)` records an event with attributes, on the innermost open
#'   `mcp_span()`, or else on the call's span.
#'
#' Attributes are named arguments (or a named list) of single strings,
#' numbers or logicals. Only what you pass is recorded: keep secrets out.
#' `mcp_request()` tells the call's `trace_id` and `span_id` (to log them,
#' or to hand to a service the tool calls).
#'
#' In a concurrent tool's worker process, a span is timed there and
#' reported to the server when it ends, which records it with the worker's
#' start and end times as a child of the call's span (spans nested in a
#' worker are all children of the call's span there); the worker's clock
#' is taken as the server's. Attributes and events outside a span go to
#' the call's span.
#'
#' Outside a tool call, or with telemetry off (or a call not sampled),
#' these do nothing: `mcp_span()` just evaluates `code`.
#'
#' @param name The span's or event's name: low cardinality (`"fit model"`,
#'   not `"fit model 17"`), details go into attributes.
#' @param code The code to run inside the span.
#' @param attributes A named list of attributes for the span's start.
#' @param ... Attributes, as named arguments or one named list.
#' @return `mcp_span()`: the value of `code`. The others: whether there was
#'   a call's span to add to (invisibly).
#' @examples
#' fit <- function(n = 100) {
#'   data <- mcp_span("simulate", rnorm(n), attributes = list(n = n))
#'   mcp_span_event("simulated", rows = length(data))
#'   mcp_span("fit", {
#'     mcp_span_attributes(method = "lm")
#'     coef(lm(data ~ 1))[[1]]
#'   })
#' }
#' fit() # outside a server: no spans, the same result
#' @name mcp_span
#' @export
mcp_span <- function(name, code, attributes = list()) {
  check_span_name(name)
  attributes <- span_attributes(attributes)
  if (in_worker()) return(worker_span(name, code, attributes))
  job <- current_call()
  server <- the$server
  if (is.null(job) || !isTRUE(server$span_open(job$id, name, attributes))) return(code)
  error <- NULL
  on.exit(server$span_close(error))
  withCallingHandlers(code, error = function(e) error <<- condition_message(e))
}

#' @rdname mcp_span
#' @export
mcp_span_attributes <- function(...) {
  attributes <- span_attributes(dots_attributes(...))
  span_annotate(attributes, NULL)
}

#' @rdname mcp_span
#' @export
mcp_span_event <- function(name, ...) {
  check_span_name(name)
  attributes <- span_attributes(dots_attributes(...))
  span_annotate(attributes, name)
}

check_span_name <- function(name) {
  if (!is_string(name) || !nzchar(name)) abort("`name` must be a non-empty string.")
}

# `...` as one list: named arguments, or a single named list.
dots_attributes <- function(...) {
  dots <- list(...)
  if (length(dots) == 1L && is.null(names(dots)) && is.list(dots[[1]])) dots[[1]] else dots
}

# Attributes checked: a named list of single strings, numbers or logicals.
span_attributes <- function(attributes) {
  if (is.null(attributes)) return(list())
  ok_names <- length(attributes) == 0L ||
    (!is.null(names(attributes)) && all(nzchar(names(attributes))) && !anyNA(names(attributes)))
  if (!is.list(attributes) || !ok_names) {
    abort("Span attributes must be named (a named list, or named arguments).")
  }
  single <- vapply(attributes, function(v) {
    (is.character(v) || is.numeric(v) || is.logical(v)) && length(v) == 1L && !is.na(v) &&
      is.null(attr(v, "class"))
  }, logical(1))
  if (!all(single)) {
    abort(paste0(
      "Span attribute values must be single strings, numbers or logicals (not NA); not: ",
      paste0("`", names(attributes)[!single], "`", collapse = ", "), "."
    ))
  }
  attributes
}

span_annotate <- function(attributes, event) {
  if (in_worker()) return(worker_span_annotate(attributes, event))
  job <- current_call()
  if (is.null(job)) return(invisible(FALSE))
  the$server$span_annotate(job$id, attributes, event)
  invisible(TRUE)
}

condition_message <- function(e) {
  tryCatch(conditionMessage(e), error = function(e2) "an R error")
}

# In a worker: spans are timed here and reported when they end (the worker
# has no telemetry of its own); the server records them.
worker_span <- function(name, code, attributes) {
  the$worker_spans <- c(the$worker_spans, list(list(
    name = name, start = as.numeric(Sys.time()), attributes = attributes,
    events = list(), error = NULL
  )))
  depth <- length(the$worker_spans)
  on.exit({
    span <- the$worker_spans[[depth]]
    the$worker_spans <- the$worker_spans[seq_len(depth - 1L)]
    span$end <- as.numeric(Sys.time())
    worker_relay("span", span)
  })
  withCallingHandlers(code, error = function(e) {
    the$worker_spans[[depth]]$error <- condition_message(e)
  })
}

worker_span_annotate <- function(attributes, event) {
  depth <- length(the$worker_spans)
  if (depth == 0L) {
    return(worker_relay("span_annotate", list(attributes = attributes, event = event)))
  }
  span <- the$worker_spans[[depth]]
  if (is.null(event)) {
    span$attributes[names(attributes)] <- attributes
  } else {
    span$events <- c(span$events, list(list(name = event, time = as.numeric(Sys.time()), attributes = attributes)))
  }
  the$worker_spans[[depth]] <- span
  invisible(TRUE)
}
