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
#' `traceparent`. Spans are sent over OTLP/HTTP (protobuf) in batches by a
#' thread of the server's own: a call never waits for the collector, and
#' spans that find the export queue full are dropped and counted (the count
#' is written to stderr when the server stops).
#'
#' Without `telemetry`, a server follows the standard OpenTelemetry
#' environment variables: it traces when `OTEL_EXPORTER_OTLP_ENDPOINT` or
#' `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, unless
#' `OTEL_SDK_DISABLED=true`; `OTEL_EXPORTER_OTLP_HEADERS`,
#' `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and
#' `OTEL_TRACES_SAMPLER` (with `OTEL_TRACES_SAMPLER_ARG`) apply as in any
#' OpenTelemetry program. Arguments given here take precedence over them.
#'
#' Only names, ids and URIs are recorded: never a tool's arguments or
#' results, bearer tokens or request state. The exporter speaks plain HTTP;
#' to reach a collector over TLS, send to a local OpenTelemetry Collector.
#' See `vignette("telemetry", package = "mcpserver")`.
#'
#' @param endpoint The OTLP/HTTP base URL, e.g. `"http://localhost:4318"`
#'   (`/v1/traces` is appended). `NULL`: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
#'   `OTEL_EXPORTER_OTLP_ENDPOINT`, or `http://localhost:4318`.
#' @param headers A named character vector of HTTP headers for the
#'   collector (an API key, say). `NULL`: `OTEL_EXPORTER_OTLP_HEADERS`.
#' @param service_name The `service.name` of the spans. `NULL`:
#'   `OTEL_SERVICE_NAME`, else the server's `name`.
#' @param sample The fraction of traces to keep, between 0 and 1; a request
#'   whose parent was sampled is always kept. `NULL`: `OTEL_TRACES_SAMPLER`,
#'   else every trace.
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
                          sample = NULL, enabled = TRUE) {
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
  if (!is_flag(enabled)) abort("`enabled` must be TRUE or FALSE.")
  structure(
    list(
      enabled = enabled, endpoint = endpoint,
      headers = if (!is.null(headers)) paste0(names(headers), "=", unname(headers)),
      service_name = service_name, sample = if (!is.null(sample)) as.double(sample)
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
