# Telemetry against a real OTLP receiver (fixtures/otlp_receiver.py, which
# decodes with the official opentelemetry-proto package): the server's
# spans, their names, attributes and parents, with the official Python SDK
# client sending a traceparent in `_meta`, over stdio and HTTP.

test_that("mcp_telemetry() checks its arguments and hides header values", {
  expect_error(mcp_telemetry(endpoint = "localhost:4318"), "URL")
  expect_error(mcp_telemetry(headers = c("a")), "named character")
  expect_error(mcp_telemetry(sample = 2), "between 0 and 1")
  expect_error(mcp_telemetry(enabled = NA), "TRUE or FALSE")
  expect_error(mcp_server(list(), telemetry = "yes"), "mcp_telemetry")
  t <- mcp_telemetry(endpoint = "http://c:4318", headers = c(`x-api-key` = "sekrit"), sample = 0.5)
  expect_equal(t$headers, "x-api-key=sekrit")
  out <- capture.output(print(t))
  expect_true(any(grepl("x-api-key", out)))
  expect_false(any(grepl("sekrit", out)))
})

# Starts the receiver; returns its endpoint and the files of spans and of
# metric points it writes.
start_otlp_receiver <- function(env = parent.frame()) {
  python <- python_sdk()
  probe <- processx::run(python, c("-c", "import opentelemetry.proto"),
    error_on_status = FALSE, env = c("current", LD_LIBRARY_PATH = "")
  )
  if (probe$status != 0) {
    skip("opentelemetry-proto is not installed in the Python SDK's environment: run tools/python-clients.sh mcp2 (make test does)")
  }
  out <- withr::local_tempfile(.local_envir = env, fileext = ".jsonl")
  metrics <- withr::local_tempfile(.local_envir = env, fileext = ".jsonl")
  proc <- processx::process$new(python, c(fixture("otlp_receiver.py"), out, metrics),
    stdout = "|", stderr = "|", env = c("current", LD_LIBRARY_PATH = "")
  )
  withr::defer(if (proc$is_alive()) proc$kill(), envir = env)
  port <- read_port(proc)
  list(endpoint = sprintf("http://127.0.0.1:%d", port), file = out, metrics = metrics)
}

# The spans received so far, waiting until `until(spans)` holds.
received_spans <- function(receiver, until = function(s) length(s) > 0, timeout = 20) {
  deadline <- Sys.time() + timeout
  repeat {
    lines <- if (file.exists(receiver$file)) readLines(receiver$file, warn = FALSE) else character()
    spans <- lapply(lines, jsonlite::fromJSON, simplifyVector = FALSE)
    if (until(spans) || Sys.time() > deadline) return(spans)
    Sys.sleep(0.1)
  }
}

named <- function(spans, name) Filter(function(s) identical(s$name, name), spans)

# The histogram points of the receiver's latest metric export (each export
# carries the totals so far), waiting until `until(points)` holds.
received_points <- function(receiver, until = function(p) length(p) > 0, timeout = 20) {
  deadline <- Sys.time() + timeout
  repeat {
    lines <- if (file.exists(receiver$metrics)) readLines(receiver$metrics, warn = FALSE) else character()
    points <- lapply(lines, jsonlite::fromJSON, simplifyVector = FALSE)
    latest <- max(c(0, vapply(points, function(p) p$export %||% 0, numeric(1))))
    errors <- Filter(function(p) !is.null(p$error), points)
    points <- c(errors, Filter(function(p) isTRUE(p$export == latest), points))
    if (until(points) || Sys.time() > deadline) return(points)
    Sys.sleep(0.1)
  }
}

# The points of metric `name` whose attributes include `with` (and lack
# the names in `without`).
points_of <- function(points, name, with = list(), without = character()) {
  Filter(function(p) {
    a <- p$attributes
    identical(p$name, name) && all(vapply(names(with), function(k) identical(a[[k]], with[[k]]), logical(1))) &&
      !any(names(a) %in% without)
  }, points)
}

conventions_buckets <- c(0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

expect_histogram <- function(point, count) {
  expect_equal(unlist(point$bounds), conventions_buckets)
  expect_equal(point$count, count)
  expect_length(point$bucket_counts, length(conventions_buckets) + 1)
  expect_equal(sum(unlist(point$bucket_counts)), count)
  expect_equal(point$unit, "s")
  expect_equal(point$temporality, 2L) # AGGREGATION_TEMPORALITY_CUMULATIVE
  expect_true(point$sum >= 0)
}

# The operation histograms of the SDK client's run (one echo, one failing
# call, the handshake), as the conventions describe them.
expect_operation_points <- function(points, transport) {
  expect_false(any(vapply(points, function(p) !is.null(p$error), logical(1))))
  op <- "mcp.server.operation.duration"
  echo <- points_of(points, op, list(gen_ai.tool.name = "echo"), without = "error.type")
  expect_length(echo, 1)
  expect_histogram(echo[[1]], 1)
  a <- echo[[1]]$attributes
  expect_equal(a[["mcp.method.name"]], "tools/call")
  expect_equal(a[["gen_ai.operation.name"]], "execute_tool")
  expect_equal(a[["network.transport"]], transport)
  expect_true(nzchar(a[["mcp.protocol.version"]]))
  # No ids, sessions or addresses: their cardinality has no bound.
  expect_false(any(c("jsonrpc.request.id", "mcp.session.id", "client.address") %in% names(a)))
  expect_equal(echo[[1]]$resource[["service.name"]], "otel-test")
  fail <- points_of(points, op, list(gen_ai.tool.name = "fail", error.type = "tool_error"))
  expect_length(fail, 1)
  expect_histogram(fail[[1]], 1)
  init <- points_of(points, op, list(mcp.method.name = "initialize"))
  expect_length(init, 1)
  expect_histogram(init[[1]], 1)
}

telemetry_server_code <- function(endpoint, transport = "stdio") {
  c(
    "echo <- tool(function(text) paste('echo', text), 'Echo', arguments = list(text = type_string()), name = 'echo')",
    "fail <- tool(function() stop('no'), 'Fails', name = 'fail')",
    "whoami <- tool(function() { r <- mcp_request(); paste(if (is.null(r$session_id)) 'none' else r$session_id, r$trace_id) }, 'Who', name = 'whoami')",
    sprintf(
      "mcp_server(list(echo, fail, whoami), name = 'otel-test', transport = '%s', port = 0L,
         telemetry = mcp_telemetry(endpoint = '%s', headers = c(`x-test` = 'yes', `x-list` = 'a,b=c')))",
      transport, endpoint
    )
  )
}

parent_trace <- "4bf92f3577b34da6a3ce929d0e0e4736"
parent_span <- "00f067aa0ba902b7"
traceparent <- sprintf("00-%s-%s-01", parent_trace, parent_span)

run_sdk_client <- function(args) {
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  out <- processx::run(python_sdk(), c(fixture("otel_sdk_client.py"), traceparent, args),
    error_on_status = FALSE, timeout = 60,
    env = c("current", R_LIBS = lib, LD_LIBRARY_PATH = "")
  )
  if (out$status != 0) stop("the SDK client failed: ", out$stderr)
  jsonlite::fromJSON(out$stdout)
}

expect_joined_call_spans <- function(spans, transport) {
  echo <- named(spans, "tools/call echo")
  expect_length(echo, 1)
  echo <- echo[[1]]
  expect_equal(echo$trace_id, parent_trace)
  expect_equal(echo$parent_span_id, parent_span)
  expect_equal(echo$kind, 2L) # SPAN_KIND_SERVER
  a <- echo$attributes
  expect_equal(a[["mcp.method.name"]], "tools/call")
  expect_equal(a[["gen_ai.tool.name"]], "echo")
  expect_equal(a[["gen_ai.operation.name"]], "execute_tool")
  expect_equal(a[["network.transport"]], transport)
  expect_true(nzchar(a[["jsonrpc.request.id"]]))
  expect_true(nzchar(a[["mcp.protocol.version"]]))
  expect_null(a[["error.type"]])
  expect_equal(echo$status_code, 0L) # unset
  expect_equal(echo$resource[["service.name"]], "otel-test")
  expect_equal(echo$headers[["x-test"]], "yes")
  # A header value from R is sent as it is, commas and all.
  expect_equal(echo$headers[["x-list"]], "a,b=c")
  # The tool's arguments and result stay out of the span (capture is off).
  expect_false(grepl("hi", paste(unlist(a), collapse = " ")))
  expect_null(a[["gen_ai.tool.call.arguments"]])
  expect_null(a[["gen_ai.tool.call.result"]])
  fail <- named(spans, "tools/call fail")
  expect_length(fail, 1)
  expect_equal(fail[[1]]$attributes[["error.type"]], "tool_error")
  expect_equal(fail[[1]]$status_code, 2L) # error
  expect_equal(fail[[1]]$trace_id, parent_trace)
  # The handshake is traced too, in a trace of its own.
  init <- named(spans, "initialize")
  expect_length(init, 1)
  expect_false(identical(init[[1]]$trace_id, parent_trace))
  expect_equal(init[[1]]$parent_span_id, "")
  a
}

test_that("over stdio, the SDK client's traceparent is the parent of the call's span", {
  skip_on_cran()
  receiver <- start_otlp_receiver()
  script <- server_script(telemetry_server_code(receiver$endpoint))
  got <- run_sdk_client(c("stdio", file.path(R.home("bin"), "Rscript"), script))
  expect_equal(got$text, "echo hi")
  expect_true(got$failed)
  spans <- received_spans(receiver, function(s) length(named(s, "tools/call fail")) > 0)
  expect_false(any(vapply(spans, function(s) !is.null(s$error), logical(1))))
  a <- expect_joined_call_spans(spans, "pipe")
  expect_null(a[["client.address"]])
  expect_null(a[["mcp.session.id"]])
  # mcp_request() knows the call's trace (the client's) and no session.
  expect_equal(got$who, paste("none", parent_trace))

  # The metrics went out when the server stopped: the operations, and the
  # session that lasted from initialize to the end of input.
  points <- received_points(receiver, function(p) length(points_of(p, "mcp.server.session.duration")) > 0)
  expect_operation_points(points, "pipe")
  session <- points_of(points, "mcp.server.session.duration")
  expect_length(session, 1)
  expect_histogram(session[[1]], 1)
  expect_equal(session[[1]]$attributes[["network.transport"]], "pipe")
  expect_equal(session[[1]]$attributes[["mcp.protocol.version"]], a[["mcp.protocol.version"]])
  expect_null(session[[1]]$attributes[["error.type"]])
})

test_that("over HTTP, spans name the session and the client's address", {
  skip_on_cran()
  receiver <- start_otlp_receiver()
  server <- start_http_server(telemetry_server_code(receiver$endpoint, "http"),
    vars = c(OTEL_METRIC_EXPORT_INTERVAL = "300")
  )
  got <- run_sdk_client(c("http", server$url))
  expect_equal(got$text, "echo hi")
  spans <- received_spans(receiver, function(s) length(named(s, "tools/call fail")) > 0)
  a <- expect_joined_call_spans(spans, "tcp")
  expect_equal(a[["client.address"]], "127.0.0.1")
  expect_true(is.numeric(a[["client.port"]]) && a[["client.port"]] > 0)
  expect_match(a[["mcp.session.id"]], "^[0-9a-f]{32}$")
  expect_equal(got$who, paste(a[["mcp.session.id"]], parent_trace))

  # The server runs on: its metrics go out every export interval
  # (OTEL_METRIC_EXPORT_INTERVAL, here 300 ms).
  points <- received_points(receiver, function(p) length(points_of(p, "mcp.server.operation.duration", list(gen_ai.tool.name = "fail"))) > 0)
  expect_operation_points(points, "tcp")
  echo <- points_of(points, "mcp.server.operation.duration", list(gen_ai.tool.name = "echo"))
  expect_equal(echo[[1]]$attributes[["network.protocol.name"]], "http")
  # The client ended its session (DELETE): the session's duration follows.
  points <- received_points(receiver, function(p) length(points_of(p, "mcp.server.session.duration")) > 0)
  session <- points_of(points, "mcp.server.session.duration")
  expect_length(session, 1)
  expect_histogram(session[[1]], 1)
  expect_equal(session[[1]]$attributes[["network.transport"]], "tcp")
  expect_equal(session[[1]]$attributes[["network.protocol.name"]], "http")
})

test_that("the standard environment variables turn telemetry on, and OTEL_SDK_DISABLED off", {
  skip_on_cran()
  receiver <- start_otlp_receiver()
  code <- c(
    "echo <- tool(function(text) text, 'Echo', arguments = list(text = type_string()), name = 'echo')",
    "mcp_server(list(echo))"
  )
  vars <- c(
    OTEL_EXPORTER_OTLP_ENDPOINT = receiver$endpoint, OTEL_SERVICE_NAME = "from-env",
    OTEL_RESOURCE_ATTRIBUTES = "deployment.environment=test",
    # Values URL-encoded, as the specification says: %2C is a comma.
    OTEL_EXPORTER_OTLP_HEADERS = "x-key=a%2Cb%3D,x-other=c"
  )
  client <- start_server(server_script(code), extra_env = vars)
  initialize(client)
  call_tool(client, 2, "echo", list(text = "x"))
  expect_equal(finish(client), 0)
  spans <- received_spans(receiver, function(s) length(named(s, "tools/call echo")) > 0)
  echo <- named(spans, "tools/call echo")
  expect_length(echo, 1)
  expect_equal(echo[[1]]$resource[["service.name"]], "from-env")
  expect_equal(echo[[1]]$resource[["deployment.environment"]], "test")
  expect_equal(echo[[1]]$headers[["x-key"]], "a,b=")
  expect_equal(echo[[1]]$headers[["x-other"]], "c")

  # Disabled: the same server sends nothing.
  off <- start_otlp_receiver()
  vars[["OTEL_EXPORTER_OTLP_ENDPOINT"]] <- off$endpoint
  client <- start_server(server_script(code), extra_env = c(vars, OTEL_SDK_DISABLED = "true"))
  initialize(client)
  call_tool(client, 2, "echo", list(text = "x"))
  expect_equal(finish(client), 0)
  expect_length(received_spans(off, timeout = 2), 0)
})

test_that("OTEL_EXPORTER_OTLP_PROTOCOL=http/json sends spans and metrics as OTLP/JSON", {
  skip_on_cran()
  receiver <- start_otlp_receiver()
  code <- c(
    "echo <- tool(function(text) text, 'Echo', arguments = list(text = type_string()), name = 'echo')",
    "mcp_server(list(echo))"
  )
  vars <- c(OTEL_EXPORTER_OTLP_ENDPOINT = receiver$endpoint, OTEL_EXPORTER_OTLP_PROTOCOL = "http/json")
  client <- start_server(server_script(code), extra_env = vars)
  initialize(client)
  parent <- "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
  request(client, 2, "tools/call", list(
    name = "echo", arguments = list(text = "x"), `_meta` = list(traceparent = parent)
  ))
  expect_equal(finish(client), 0)
  spans <- received_spans(receiver, function(s) length(named(s, "tools/call echo")) > 0)
  echo <- named(spans, "tools/call echo")
  expect_length(echo, 1)
  expect_equal(echo[[1]]$encoding, "json")
  # The ids went as OTLP/JSON writes them (hex) and came back whole.
  expect_equal(echo[[1]]$trace_id, "4bf92f3577b34da6a3ce929d0e0e4736")
  expect_equal(echo[[1]]$parent_span_id, "00f067aa0ba902b7")
  expect_match(echo[[1]]$span_id, "^[0-9a-f]{16}$")
  expect_equal(echo[[1]]$attributes[["gen_ai.tool.name"]], "echo")
  points <- received_points(receiver, function(p) length(p) > 0)
  expect_length(Filter(function(p) !is.null(p$error), points), 0)
  expect_true("mcp.server.operation.duration" %in% vapply(points, function(p) p$name %||% "", ""))
})

test_that("mcp_span() and friends check their arguments and do nothing outside a call", {
  expect_equal(mcp_span("step", 1 + 1), 2)
  expect_equal(mcp_span("step", "x", attributes = list(n = 1L, ok = TRUE, s = "a")), "x")
  expect_false(mcp_span_attributes(rows = 3))
  expect_false(mcp_span_event("checkpoint", rows = 3))
  expect_false(mcp_span_event("checkpoint"))
  expect_error(mcp_span("", 1), "non-empty string")
  expect_error(mcp_span("step", 1, attributes = list(1)), "must be named")
  expect_error(mcp_span_attributes(rows = 1:2), "single strings, numbers or logicals")
  expect_error(mcp_span_attributes(rows = NA), "`rows`")
  expect_error(mcp_span_event("e", when = Sys.time()), "`when`")
  # An R error leaves the span as it would leave any code.
  expect_error(mcp_span("step", stop("inner")), "inner")
  expect_null(mcp_request())
})

span_tools_code <- function(endpoint) {
  c(
    "traced <- tool(function() {",
    "  mcp_span_attributes(`app.rows` = 10L)",
    "  mcp_span('outer', attributes = list(`app.kind` = 'fit'), {",
    "    mcp_span_event('checkpoint', `app.step` = 1)",
    "    mcp_span('inner', mcp_span_attributes(`app.ok` = TRUE))",
    "    try(mcp_span('failing', stop('no luck')), silent = TRUE)",
    "  })",
    "  r <- mcp_request()",
    "  paste(r$trace_id, r$span_id, is.null(r$session_id))",
    "}, 'Traced', name = 'traced')",
    "remote <- tool(function() {",
    "  mcp_span('in worker', attributes = list(`app.pid` = Sys.getpid()), {",
    "    mcp_span_event('halfway')",
    "    mcp_span_attributes(`app.done` = TRUE)",
    "  })",
    "  mcp_span_attributes(`app.worker` = TRUE)",
    "  r <- mcp_request()",
    "  paste(r$trace_id, r$span_id)",
    "}, 'Traced on a worker', name = 'remote', concurrent = TRUE)",
    sprintf(
      "mcp_server(list(traced, remote), name = 'otel-test', workers = 1L,
         telemetry = mcp_telemetry(endpoint = '%s'))",
      endpoint
    )
  )
}

test_that("a tool's spans are children of its call's span, on R's thread and on a worker", {
  skip_on_cran()
  skip_if_not_installed("future", minimum_version = "1.31.0")
  skip_if_not_installed("parallelly")
  receiver <- start_otlp_receiver()
  client <- start_server(server_script(span_tools_code(receiver$endpoint)))
  initialize(client)
  got <- call_tool(client, 2, "traced")
  ids <- strsplit(got$result$content[[1]]$text, " ")[[1]]
  expect_match(ids[1], "^[0-9a-f]{32}$")
  expect_match(ids[2], "^[0-9a-f]{16}$")
  expect_equal(ids[3], "TRUE") # no session over stdio
  got <- call_tool(client, 3, "remote")
  remote_ids <- strsplit(got$result$content[[1]]$text, " ")[[1]]
  expect_equal(finish(client), 0)
  spans <- received_spans(receiver, function(s) length(named(s, "in worker")) > 0)

  call <- named(spans, "tools/call traced")[[1]]
  expect_equal(c(call$trace_id, call$span_id), ids[1:2])
  expect_equal(call$attributes[["app.rows"]], 10L)
  outer <- named(spans, "outer")[[1]]
  expect_equal(outer$kind, 1L) # SPAN_KIND_INTERNAL
  expect_equal(outer$trace_id, call$trace_id)
  expect_equal(outer$parent_span_id, call$span_id)
  expect_equal(outer$attributes[["app.kind"]], "fit")
  expect_equal(outer$events, list("checkpoint"))
  expect_equal(outer$status_code, 0L)
  inner <- named(spans, "inner")[[1]]
  expect_equal(inner$parent_span_id, outer$span_id)
  expect_true(inner$attributes[["app.ok"]])
  failing <- named(spans, "failing")[[1]]
  expect_equal(failing$parent_span_id, outer$span_id)
  expect_equal(failing$status_code, 2L)
  expect_equal(failing$status_message, "no luck")
  expect_equal(failing$attributes[["error.type"]], "r_error")

  # On the worker: timed there, recorded by the server in the call's trace.
  remote <- named(spans, "tools/call remote")[[1]]
  expect_equal(c(remote$trace_id, remote$span_id), remote_ids)
  expect_true(remote$attributes[["app.worker"]])
  worker <- named(spans, "in worker")[[1]]
  expect_equal(worker$trace_id, remote$trace_id)
  expect_equal(worker$parent_span_id, remote$span_id)
  expect_equal(worker$events, list("halfway"))
  expect_true(worker$attributes[["app.done"]])
  expect_true(is.numeric(worker$attributes[["app.pid"]]))
})

test_that("capture = records a call's arguments and result as sent, bounded", {
  skip_on_cran()
  expect_error(mcp_telemetry(capture = "body"), "arguments")
  expect_equal(mcp_telemetry(capture = c("result", "result"))$capture, "result")
  receiver <- start_otlp_receiver()
  code <- c(
    "echo <- tool(function(text) paste('echo', text), 'Echo', arguments = list(text = type_string()), name = 'echo')",
    sprintf(
      "mcp_server(list(echo), name = 'otel-test',
         telemetry = mcp_telemetry(endpoint = '%s', capture = c('arguments', 'result')))",
      receiver$endpoint
    )
  )
  client <- start_server(server_script(code))
  initialize(client)
  sent <- '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\\u00e9 \\"there\\""}}}'
  send_line(client, sent)
  small <- receive(client)
  big <- call_tool(client, 3, "echo", list(text = strrep("\u00e9", 6000)))
  expect_equal(finish(client), 0)
  spans <- received_spans(receiver, function(s) length(named(s, "tools/call echo")) >= 2)
  calls <- named(spans, "tools/call echo")
  expect_length(calls, 2)
  ids <- vapply(calls, function(s) s$attributes[["jsonrpc.request.id"]], "")
  a <- calls[[match("2", ids)]]$attributes
  expect_equal(
    jsonlite::fromJSON(a[["gen_ai.tool.call.arguments"]], simplifyVector = FALSE),
    list(text = "h\u00e9 \"there\"")
  )
  expect_equal(
    jsonlite::fromJSON(a[["gen_ai.tool.call.result"]], simplifyVector = FALSE),
    small$result
  )
  expect_equal(small$result$content[[1]]$text, "echo h\u00e9 \"there\"")
  # Longer than 8192 bytes: cut at a character's boundary, marked.
  b <- calls[[match("3", ids)]]$attributes
  for (text in c(b[["gen_ai.tool.call.arguments"]], b[["gen_ai.tool.call.result"]])) {
    expect_match(text, "...[truncated]", fixed = TRUE)
    expect_lte(nchar(text, "bytes"), 8192 + nchar("...[truncated]"))
    expect_true(validUTF8(text))
  }
  expect_true(startsWith(b[["gen_ai.tool.call.arguments"]], '{"text":"\u00e9\u00e9'))
})

test_that("a task's span follows it from its call to its end, through its input round, and holds its tool's spans", {
  skip_on_cran()
  empty <- setNames(list(), character())
  receiver <- start_otlp_receiver()
  code <- c(
    "greet <- function() {",
    "  got <- mcp_elicit('Your name?', list(name = type_string()))",
    "  mcp_span_attributes(`app.asked` = TRUE)",
    "  mcp_span('compose', paste('Hello,', got$content$name))",
    "}",
    sprintf(
      "mcp_server(list(tool(greet, 'Greets inside a task', task = 'optional')), name = 'otel-test',
         telemetry = mcp_telemetry(endpoint = '%s'))",
      receiver$endpoint
    )
  )
  client <- start_server(server_script(code))
  request(client, 0, "initialize", list(
    protocolVersion = "2025-11-25", capabilities = list(elicitation = empty),
    clientInfo = list(name = "testthat", version = "1")
  ))
  send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
  created <- request(client, 1, "tools/call", list(name = "greet", arguments = empty, task = empty))
  task <- created$result$task$taskId
  asked <- receive(client)
  expect_equal(asked$method, "elicitation/create")
  send(client, list(jsonrpc = "2.0", id = asked$id, result = list(action = "accept", content = list(name = "Ada"))))
  result <- request(client, 2, "tasks/result", list(taskId = task))
  expect_equal(result$result$content[[1]]$text, "Hello, Ada")
  expect_equal(finish(client), 0)
  spans <- received_spans(receiver, function(s) length(named(s, "task greet")) >= 1 && length(named(s, "compose")) >= 1)
  call <- named(spans, "tools/call greet")
  span <- named(spans, "task greet")
  expect_length(call, 1)
  expect_length(span, 1)
  span <- span[[1]]
  expect_equal(span$trace_id, call[[1]]$trace_id)
  expect_equal(span$parent_span_id, call[[1]]$span_id)
  expect_equal(span$attributes[["mcp.task.id"]], task)
  expect_equal(span$attributes[["mcp.task.status"]], "completed")
  expect_true(span$attributes[["app.asked"]])
  compose <- named(spans, "compose")
  expect_length(compose, 1)
  expect_equal(compose[[1]]$parent_span_id, span$span_id)
  expect_equal(compose[[1]]$trace_id, span$trace_id)
  expect_equal(
    unlist(span$events),
    c("task working", "task input_required", "task working", "task completed")
  )
  expect_true("task created" %in% unlist(call[[1]]$events))
})

test_that("without telemetry, mcp_span() runs its code and mcp_request() has no trace", {
  skip_on_cran()
  code <- c(
    "plain <- tool(function() {",
    "  x <- mcp_span('step', 41 + 1)",
    "  mcp_span_attributes(a = 1)",
    "  paste(x, is.null(mcp_request()$trace_id))",
    "}, 'Plain', name = 'plain')",
    "mcp_server(list(plain))"
  )
  client <- start_server(server_script(code), extra_env = c(OTEL_SDK_DISABLED = "true"))
  initialize(client)
  got <- call_tool(client, 2, "plain")
  expect_equal(got$result$content[[1]]$text, "42 TRUE")
  expect_equal(finish(client), 0)
})
