skip_on_cran()

test_that("mcp_client() drives a server script and returns R values", {
  client <- mcp_client(fixture("everything.R"))
  withr::defer(mcp_close(client))
  expect_output(print(client), "<mcpserver_client> everything 9.9.9, protocol 2025-11-25 (running)", fixed = TRUE)
  tools <- mcp_tools(client)
  expect_true(all(c("add", "stats", "everything") %in% names(tools)))
  expect_equal(tools$add$inputSchema$required, list("x", "y"))
  expect_output(print(tools), "add: Add two numbers", fixed = TRUE)
  r <- mcp_call(client, "add", x = 1.5, y = 2)
  expect_s3_class(r, "mcpserver_call_result")
  expect_equal(r$text, "3.5")
  expect_false(r$is_error)
  r <- mcp_call(client, "stats", values = c(1, 2, 3, 4))
  expect_equal(r$structured, list(mean = 2.5, n = 4L))
  r <- mcp_call(client, "fail")
  expect_true(r$is_error)
  expect_equal(r$text, "it broke")
  r <- mcp_call(client, "add", arguments = list(x = "a", y = 1))
  expect_true(r$is_error)
  err <- tryCatch(mcp_call(client, "no_such_tool"), error = identity)
  expect_s3_class(err, "mcpserver_protocol_error")
  expect_equal(err$code, -32602L)
  expect_equal(mcp_close(client), 0L)
})

test_that("mcp_client() serves a list of tools from a fresh R process", {
  add <- function(x, y) x + y
  shout <- function(text) toupper(text)
  client <- mcp_client(list(
    tool(add, "Add", arguments = list(x = type_number(), y = type_number())),
    tool(shout, "Shout", arguments = list(text = type_string()))
  ), protocol_version = "2026-07-28")
  withr::defer(mcp_close(client))
  expect_equal(sort(names(mcp_tools(client))), c("add", "shout"))
  expect_equal(mcp_call(client, "shout", text = "hi")$text, "HI")
  expect_equal(mcp_call(client, "add", x = 2, y = 3)$result_type, "complete")
})

test_that("timeouts too long to matter are accepted and simply never fire", {
  add <- function(x, y) x + y
  client <- mcp_client(
    list(tool(add, "Add", arguments = list(x = type_number(), y = type_number()), timeout = 1e300)),
    timeout = 1e300
  )
  withr::defer(mcp_close(client))
  expect_equal(mcp_call(client, "add", x = 2, y = 3)$text, "5")
})

test_that("progress and logs are collected, and questions answered", {
  client <- mcp_client(fixture("long.R"))
  withr::defer(mcp_close(client))
  r <- mcp_call(client, "chatty")
  expect_equal(r$text, "chatted")
  answers <- function(message, schema) list(action = "accept", content = list(name = "Ada"))
  for (version in c("2025-11-25", "2026-07-28")) {
    client <- mcp_client(fixture("input.R"), protocol_version = version, elicit = answers)
    expect_match(mcp_call(client, "greet")$text, "Hello, Ada!")
    mcp_close(client)
  }
  client <- mcp_client(fixture("input.R"))
  r <- mcp_call(client, "greet")
  expect_true(r$is_error)
  expect_match(r$text, "elicitation capability")
  mcp_close(client)
})

test_that("mcp_client() checks its arguments and reports dead servers", {
  expect_error(mcp_client("no/such/server.R"), "No server script")
  expect_error(mcp_client(fixture("everything.R"), protocol_version = "2024-10-07"), "`protocol_version` must be one of")
  expect_error(mcp_client(42), "`server` must be")
  expect_error(mcp_client(fixture("everything.R"), timeout = Inf), "`timeout` must be a positive number")
  expect_error(mcp_client(fixture("everything.R"), env = c(A = NA)), "`env` must be NULL or a named character vector")
  script <- server_script("stop('broken at start-up')")
  expect_error(mcp_client(script), "broken at start-up")
  expect_error(mcp_tools(list()), "`client` must be made by `mcp_client()`", fixed = TRUE)
})

test_that("mcp_client() talks to an HTTP server by its URL, in both eras", {
  url <- start_python_http_server()
  answers <- function(message, schema) list(action = "accept", content = list(name = "Ada"))
  for (version in c("2025-06-18", "2025-11-25", "2026-07-28")) {
    client <- mcp_client(url, protocol_version = version, elicit = answers)
    expect_output(print(client), sprintf("at %s, protocol %s (running)", url, version), fixed = TRUE)
    expect_setequal(names(mcp_tools(client)), c("add", "chatty", "greet", "slow"))
    expect_equal(mcp_call(client, "add", x = 1, y = 2)$text, "3.0")
    expect_equal(mcp_call(client, "chatty")$text, "chatted")
    # The Python SDK's ctx.elicit() has no 2026-07-28 (input_required) form.
    if (version != "2026-07-28") expect_equal(mcp_call(client, "greet")$text, "Hello, Ada!", info = version)
    expect_null(mcp_close(client))
    expect_output(print(client), "(stopped)", fixed = TRUE)
    expect_error(mcp_tools(client), "closed")
  }
})

test_that("mcp_client() reads JSON answers as well as event streams", {
  client <- mcp_client(start_python_http_server(json = TRUE))
  withr::defer(mcp_close(client))
  expect_equal(mcp_call(client, "add", x = 2, y = 2)$text, "4.0")
})

test_that("HTTP failures are protocol errors with the HTTP status", {
  err <- tryCatch(mcp_client("http://127.0.0.1:9/mcp"), error = identity)
  expect_s3_class(err, "mcpserver_protocol_error")
  expect_equal(err$code, -32000L)
  expect_match(conditionMessage(err), "could not reach the server at http://127.0.0.1:9/mcp")
  url <- start_python_http_server()
  err <- tryCatch(mcp_client(sub("/mcp$", "/nothing-here", url)), error = identity)
  expect_s3_class(err, "mcpserver_protocol_error")
  expect_equal(err$data$httpStatus, 404L)
  expect_error(mcp_client(fixture("everything.R"), token = "x"), "`token` and `headers` are for a server given by its URL")
  expect_error(mcp_client("https://example.com/mcp"), "Only plain http:// URLs")
})
