# Client text R cannot hold (a NUL character) is refused where it would
# become an R string, with the field named; the server goes on serving.
skip_on_cran()

nul_server <- function(env = parent.frame()) {
  script <- server_script(c(
    "echo <- function(text = '', tags = character(), options = list()) 'echoed'",
    "context <- function() paste('request', mcp_request()$request_id)",
    "greet <- function() paste('Hello,', mcp_elicit('Name?', list(name = type_string()))$content$name)",
    "mcp_server(list(",
    "  tool(echo, 'Echo', arguments = list(",
    "    text = type_string(required = FALSE),",
    "    tags = type_array(type_string(), required = FALSE),",
    "    options = type_object(.required = FALSE, .additional_properties = TRUE)",
    "  )),",
    "  tool(context, 'Describes its request'),",
    "  tool(greet, 'Greets')",
    "), name = 'nul')"
  ), env = env)
  start_server(script, env = env)
}

# JSON text with NULs: R strings cannot hold one, so the lines are written
# by hand, `\\u0000` being the JSON escape.
call_line <- function(id, name, arguments = "{}", meta = NULL) {
  params <- sprintf('"name":"%s","arguments":%s', name, arguments)
  if (!is.null(meta)) params <- paste0(params, ',"_meta":', meta)
  sprintf('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{%s}}', id, params)
}

expect_tool_error <- function(answer, pattern, label) {
  expect_true(isTRUE(answer$result$isError), label = paste(label, "is a tool error"))
  expect_match(answer$result$content[[1]]$text, pattern, fixed = TRUE, label = label)
}

expect_still_serving <- function(client, id) {
  send_line(client, call_line(id, "echo", '{"text":"fine"}'))
  answer <- receive(client)
  expect_equal(answer$result$content[[1]]$text, "echoed")
}

test_that("arguments with a NUL are a tool error naming the argument", {
  client <- nul_server()
  initialize(client)
  cases <- list(
    list('{"text":"a\\u0000b"}', "text: text with a NUL character (\\u0000)"),
    list('{"tags":["ok","b\\u0000"]}', "tags[1]: text with a NUL character"),
    list('{"options":{"deep":{"k":"v\\u0000"}}}', "options.deep.k: text with a NUL character"),
    list('{"options":{"k\\u0000ey":1}}', "options.k\\u0000ey: a name with a NUL character")
  )
  for (i in seq_along(cases)) {
    send_line(client, call_line(i, "echo", cases[[i]][[1]]))
    answer <- receive(client)
    expect_equal(answer$id, i)
    expect_tool_error(answer, cases[[i]][[2]], cases[[i]][[1]])
    expect_still_serving(client, 100 + i)
  }
  expect_equal(finish(client), 0L)
  expect_log_valid(client)
})

test_that("mcp_request() names the field with a NUL, and the server goes on", {
  client <- nul_server()
  client$rev <- "2025-11-25"
  send_line(client, paste0(
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",',
    '"capabilities":{},"clientInfo":{"name":"t\\u0000","version":"1"}}}'
  ))
  expect_equal(receive(client)$id, 0L)
  send_line(client, call_line(1, "context"))
  expect_tool_error(receive(client), "`mcp_request()` cannot describe this request: clientInfo.name: text with a NUL", "clientInfo")
  expect_still_serving(client, 2)
  finish(client)

  client <- nul_server()
  initialize(client)
  send_line(client, call_line(1, "context", meta = '{"note":"a\\u0000"}'))
  expect_tool_error(receive(client), "_meta.note: text with a NUL", "_meta")
  send_line(client, call_line('"r\\u0000"', "context"))
  answer <- receive(client)
  # The id comes back as sent (jsonlite reads it only up to the NUL).
  expect_true(startsWith(client$log[[length(client$log)]]$line, '{"jsonrpc":"2.0","id":"r\\u0000",'))
  expect_tool_error(answer, "the request id: text with a NUL", "request id")
  send_line(client, call_line(3, "context"))
  expect_equal(receive(client)$result$content[[1]]$text, "request 3")
  expect_equal(finish(client), 0L)
  expect_log_valid(client)
})

test_that("an elicitation answer with a NUL is a tool error, in both eras", {
  client <- nul_server()
  client$rev <- "2025-11-25"
  request(client, 0, "initialize", list(
    protocolVersion = "2025-11-25", capabilities = list(elicitation = setNames(list(), character())),
    clientInfo = list(name = "t", version = "1")
  ))
  send_line(client, call_line(1, "greet"))
  ask <- receive(client)
  expect_equal(ask$method, "elicitation/create")
  send_line(client, sprintf(
    '{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"A\\u0000da"}}}',
    jsonlite::toJSON(ask$id, auto_unbox = TRUE)
  ))
  expect_tool_error(receive(client), "The user's answer cannot be used: answer.content.name: text with a NUL", "elicitation/create")
  expect_still_serving(client, 2)
  # A client's error reply with a NUL in its message: shown escaped.
  send_line(client, call_line(3, "greet"))
  ask <- receive(client)
  send_line(client, sprintf(
    '{"jsonrpc":"2.0","id":%s,"error":{"code":-1,"message":"no\\u0000pe"}}',
    jsonlite::toJSON(ask$id, auto_unbox = TRUE)
  ))
  expect_tool_error(receive(client), "could not ask the user: no\\u0000pe", "an error reply")
  expect_still_serving(client, 4)
  expect_equal(finish(client), 0L)

  client <- nul_server()
  client$rev <- "2026-07-28"
  modern <- paste0(
    '{"io.modelcontextprotocol/protocolVersion":"2026-07-28",',
    '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
  )
  send_line(client, call_line(1, "greet", meta = modern))
  first <- receive(client)
  expect_equal(first$result$resultType, "input_required")
  key <- names(first$result$inputRequests)[[1]]
  retry <- sprintf(
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{},"_meta":%s,"inputResponses":{"%s":{"action":"accept","content":{"name":"A\\u0000da"}}},"requestState":"%s"}}',
    modern, key, first$result$requestState
  )
  send_line(client, retry)
  expect_tool_error(receive(client), "answer.content.name: text with a NUL", "inputResponses")
  send_line(client, call_line(3, "echo", '{"text":"fine"}', meta = modern))
  expect_equal(receive(client)$result$content[[1]]$text, "echoed")
  expect_equal(finish(client), 0L)
  expect_log_valid(client)
})
