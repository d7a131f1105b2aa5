skip_on_cran()

test_that("the bridge relays a session with the Python SDK's HTTP server, both ways", {
  url <- start_python_http_server()
  bridge <- start_bridge(url)
  init <- initialize(bridge)
  expect_equal(init$result$serverInfo$name, "python-http")
  tools <- request(bridge, 1, "tools/list")
  expect_setequal(vapply(tools$result$tools, `[[`, "", "name"), c("add", "chatty", "greet", "slow"))
  r <- call_tool(bridge, 2, "add", list(x = 1.5, y = 2))
  expect_equal(r$result$content[[1]]$text, "3.5")
  # Progress and a log arrive on the call's event stream, before the answer.
  send(bridge, list(jsonrpc = "2.0", id = 3, method = "tools/call", params = list(
    name = "chatty", arguments = setNames(list(), character()), `_meta` = list(progressToken = "p1")
  )))
  progress <- receive(bridge)
  expect_equal(progress$method, "notifications/progress")
  expect_equal(progress$params$progressToken, "p1")
  log <- receive(bridge)
  expect_equal(log$method, "notifications/message")
  expect_equal(log$params$data, "halfway")
  expect_equal(receive(bridge)$result$content[[1]]$text, "chatted")
  expect_log_valid(bridge)
  expect_equal(finish(bridge), 0L)
  expect_equal(bridge$pending, character())
})

test_that("the server's questions reach the client, and its answers the server", {
  url <- start_python_http_server()
  bridge <- start_bridge(url)
  bridge$rev <- "2025-11-25"
  request(bridge, 0, "initialize", list(
    protocolVersion = "2025-11-25", capabilities = list(elicitation = setNames(list(), character())),
    clientInfo = list(name = "testthat", version = "1")
  ))
  send(bridge, list(jsonrpc = "2.0", method = "notifications/initialized"))
  send(bridge, list(jsonrpc = "2.0", id = 7, method = "tools/call", params = list(name = "greet", arguments = setNames(list(), character()))))
  ask <- receive(bridge)
  expect_equal(ask$method, "elicitation/create")
  expect_equal(ask$params$message, "What is your name?")
  send(bridge, list(jsonrpc = "2.0", id = ask$id, result = list(action = "accept", content = list(name = "Ada"))))
  answer <- receive(bridge)
  expect_equal(answer$id, 7L)
  expect_equal(answer$result$content[[1]]$text, "Hello, Ada!")
  expect_log_valid(bridge)
  expect_equal(finish(bridge), 0L)
})

test_that("2026-07-28 requests pass through, with their routing headers", {
  url <- start_python_http_server()
  bridge <- start_bridge(url)
  bridge$rev <- "2026-07-28"
  meta <- list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = setNames(list(), character())
  )
  discover <- request(bridge, 1, "server/discover", list(`_meta` = meta))
  expect_true("2026-07-28" %in% discover$result$supportedVersions)
  r <- request(bridge, 2, "tools/call", list(name = "add", arguments = list(x = 2, y = 3), `_meta` = meta))
  expect_equal(r$result$content[[1]]$text, "5.0")
  expect_equal(r$result$resultType, "complete")
  expect_log_valid(bridge)
  expect_equal(finish(bridge), 0L)
})

test_that("HTTP failures answer the request that met them, and the bridge goes on", {
  url <- start_python_http_server()
  bridge <- start_bridge(url)
  # A request before initialize has no session: the server refuses it.
  r <- request(bridge, 1, "tools/list")
  expect_equal(r$id, 1L)
  expect_true(is.numeric(r$error$code))
  # Not JSON: the server's parse error comes back.
  send_line(bridge, "{not json")
  r <- receive(bridge)
  expect_equal(r$error$code, -32700L)
  # A line over the limit is answered by the bridge itself and not sent.
  expect_true(TRUE)
  init <- initialize(bridge)
  expect_equal(init$result$serverInfo$name, "python-http")
  expect_log_valid(bridge)
  expect_equal(finish(bridge), 0L)
  # Nobody listening: every request is answered with -32000.
  bridge <- start_bridge("http://127.0.0.1:9/mcp")
  r <- request(bridge, "a", "ping")
  expect_equal(r$id, "a")
  expect_equal(r$error$code, -32000L)
  expect_match(r$error$message, "could not reach the server")
  expect_log_valid(bridge)
  expect_equal(finish(bridge), 0L)
})

test_that("an oversized line is answered by the bridge and never sent", {
  url <- start_python_http_server()
  bridge <- start_bridge(url, ", max_message_size = 2048")
  initialize(bridge)
  send_line(bridge, sprintf('{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"pad":"%s"}}', strrep("x", 5000)))
  r <- receive(bridge)
  expect_equal(r$id, 5L)
  expect_equal(r$error$code, -32600L)
  expect_equal(request(bridge, 6, "tools/list")$id, 6L)
  expect_log_valid(bridge)
  expect_equal(finish(bridge), 0L)
})

test_that("at end of input the answers due are still written, then the bridge exits", {
  url <- start_python_http_server()
  bridge <- start_bridge(url)
  initialize(bridge)
  send(bridge, list(jsonrpc = "2.0", id = 9, method = "tools/call", params = list(name = "slow", arguments = list(seconds = 1))))
  status <- finish(bridge, timeout = 30)
  expect_equal(status, 0L)
  answers <- lapply(bridge$pending, jsonlite::fromJSON, simplifyVector = FALSE)
  expect_true(any(vapply(answers, function(m) identical(m$id, 9L) && identical(m$result$content[[1]]$text, "slept"), TRUE)))
})

test_that("mcp_bridge() checks its arguments", {
  expect_error(mcp_bridge("https://example.com/mcp"), "Only plain http:// URLs")
  expect_error(mcp_bridge("example.com"), "`url` must be an http:// URL")
  expect_error(mcp_bridge("http://127.0.0.1:1/mcp", token = 1), "`token` must be NULL")
  expect_error(mcp_bridge("http://127.0.0.1:1/mcp", headers = c("a b" = "x")), "`headers` must be")
  expect_error(mcp_bridge("http://127.0.0.1:1/mcp", grace = -1), "`grace`")
  expect_error(mcp_bridge("http://127.0.0.1:1/mcp", max_message_size = 10), "`max_message_size`")
})
