# The conformance fixture (tests/conformance/server.R) does what each
# scenario of the official suite describes. The suite itself runs it over
# HTTP (tools/conformance.sh); these tests check the same tools over stdio,
# so a fixture mistake shows here, apart from the transport, with every
# message checked against the wire schema of its revision.
skip_on_cran()

conformance_fixture <- function() {
  path <- test_path("..", "conformance", "server.R")
  # tests/conformance is left out of the source tarball (.Rbuildignore).
  skip_if_not(file.exists(path), "tests/conformance is not in this tree")
  normalizePath(path)
}

start_fixture <- function(env = parent.frame()) {
  start_server(conformance_fixture(), env = env, extra_env = c(MCP_CONFORMANCE_TRANSPORT = "stdio"))
}

empty <- setNames(list(), character())

initialize_with <- function(client, capabilities = empty) {
  client$rev <- "2025-11-25"
  request(client, 0, "initialize", list(
    protocolVersion = "2025-11-25", capabilities = capabilities,
    clientInfo = list(name = "conformance-test", version = "1")
  ))
  send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
}

stateless_call <- function(client, id, name, caps = list(elicitation = empty), extra = list()) {
  client$rev <- "2026-07-28"
  meta <- list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = if (length(caps)) caps else empty
  )
  params <- c(list(name = name, arguments = empty, `_meta` = meta), extra)
  send(client, list(jsonrpc = "2.0", id = id, method = "tools/call", params = params))
  receive(client)
}

base64_bytes <- function(text) jsonlite::base64_dec(text)

test_that("the fixture lists every tool with a description and a valid name", {
  client <- start_fixture()
  initialize_with(client)
  tools <- request(client, 1, "tools/list")$result$tools
  names <- vapply(tools, `[[`, "", "name")
  expect_true(all(c(
    "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
    "test_multiple_content_types", "test_tool_with_logging", "test_error_handling",
    "test_tool_with_progress", "test_elicitation", "test_missing_capability",
    "test_streaming_elicitation", "test_logging_tool", "test_input_required_result_elicitation",
    "test_input_required_result_request_state", "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state", "test_custom_header"
  ) %in% names))
  header_tool <- tools[[match("test_custom_header", names)]]
  expect_equal(header_tool$inputSchema$properties$region, list(type = "string", `x-mcp-header` = "Region"))
  expect_true(all(grepl("^[A-Za-z0-9_./-]{1,64}$", names)))
  expect_true(all(vapply(tools, function(t) nzchar(t$description %||% ""), TRUE)))
  finish(client)
  expect_log_valid(client)
})

test_that("the content tools answer as the tools-call-* scenarios describe", {
  client <- start_fixture()
  initialize_with(client)
  text <- call_tool(client, 1, "test_simple_text")$result
  expect_equal(text$content, list(list(type = "text", text = "This is a simple text response for testing.")))

  image <- call_tool(client, 2, "test_image_content")$result$content
  expect_length(image, 1)
  expect_equal(image[[1]]$type, "image")
  expect_equal(image[[1]]$mimeType, "image/png")
  expect_equal(base64_bytes(image[[1]]$data)[1:8], as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)))

  audio <- call_tool(client, 3, "test_audio_content")$result$content
  expect_length(audio, 1)
  expect_equal(audio[[1]]$type, "audio")
  expect_equal(audio[[1]]$mimeType, "audio/wav")
  wav <- base64_bytes(audio[[1]]$data)
  expect_equal(rawToChar(wav[1:4]), "RIFF")
  expect_equal(rawToChar(wav[9:12]), "WAVE")
  # The RIFF size field counts the bytes after it.
  expect_equal(readBin(wav[5:8], "integer", size = 4, endian = "little"), length(wav) - 8L)

  embedded <- call_tool(client, 4, "test_embedded_resource")$result$content
  expect_equal(embedded, list(list(type = "resource", resource = list(
    uri = "test://embedded-resource", mimeType = "text/plain",
    text = "This is an embedded resource content."
  ))))

  mixed <- call_tool(client, 5, "test_multiple_content_types")$result$content
  expect_equal(vapply(mixed, `[[`, "", "type"), c("text", "image", "resource"))
  expect_equal(mixed[[1]]$text, "Multiple content types test:")
  expect_equal(mixed[[2]]$mimeType, "image/png")
  expect_equal(mixed[[3]]$resource, list(
    uri = "test://mixed-content-resource", mimeType = "application/json",
    text = '{"test":"data","value":123}'
  ))

  failure <- call_tool(client, 6, "test_error_handling")
  expect_null(failure$error)
  expect_true(failure$result$isError)
  expect_equal(failure$result$content[[1]]$text, "This tool intentionally returns an error for testing")
  finish(client)
  expect_log_valid(client)
})

test_that("the logging and progress tools send their notifications during the call", {
  client <- start_fixture()
  initialize_with(client)
  request(client, 1, "logging/setLevel", list(level = "debug"))
  send(client, list(jsonrpc = "2.0", id = 2, method = "tools/call", params = list(name = "test_tool_with_logging", arguments = empty)))
  logs <- list()
  repeat {
    msg <- receive(client)
    if (!is.null(msg$id)) break
    if (identical(msg$method, "notifications/message")) logs[[length(logs) + 1]] <- msg$params
  }
  expect_false(isTRUE(msg$result$isError))
  expect_equal(vapply(logs, `[[`, "", "level"), rep("info", 3))
  expect_equal(
    vapply(logs, function(l) as.character(l$data), ""),
    c("Tool execution started", "Tool processing data", "Tool execution completed")
  )

  send(client, list(jsonrpc = "2.0", id = 3, method = "tools/call", params = list(
    name = "test_tool_with_progress", arguments = empty, `_meta` = list(progressToken = "progress-test-1")
  )))
  progress <- list()
  repeat {
    msg <- receive(client)
    if (!is.null(msg$id)) break
    if (identical(msg$method, "notifications/progress")) progress[[length(progress) + 1]] <- msg$params
  }
  expect_false(isTRUE(msg$result$isError))
  expect_equal(vapply(progress, `[[`, 0, "progress"), c(0, 50, 100))
  expect_true(all(vapply(progress, `[[`, 0, "total") == 100))
  expect_true(all(vapply(progress, `[[`, "", "progressToken") == "progress-test-1"))
  finish(client)
  expect_log_valid(client)
})

test_that("test_elicitation asks for a username and an email and reports the answer", {
  client <- start_fixture()
  initialize_with(client, list(elicitation = empty))
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(
    name = "test_elicitation", arguments = list(message = "Please provide your details")
  )))
  ask <- receive(client)
  expect_equal(ask$method, "elicitation/create")
  expect_equal(ask$params$message, "Please provide your details")
  schema <- ask$params$requestedSchema
  expect_equal(schema$properties$username, list(type = "string", description = "User's response"))
  expect_equal(schema$properties$email, list(type = "string", description = "User's email address"))
  expect_setequal(unlist(schema$required), c("username", "email"))
  send(client, list(jsonrpc = "2.0", id = ask$id, result = list(
    action = "accept", content = list(username = "ada", email = "ada@example.com")
  )))
  r <- receive(client)
  expect_equal(r$result$content[[1]]$text, 'User response: <action: accept, content: {"username":"ada","email":"ada@example.com"}>')
  finish(client)
  expect_log_valid(client)
})

test_that("the stateless fixtures answer as server-stateless and input-required-result-* describe", {
  client <- start_fixture()
  # Without the capability its question needs: -32021 naming it.
  r <- stateless_call(client, 1, "test_missing_capability", caps = list())
  expect_equal(r$error$code, -32021)
  expect_named(r$error$data$requiredCapabilities, "elicitation")
  # With it: the question comes back as a result, never as a request.
  r <- stateless_call(client, 2, "test_streaming_elicitation")
  expect_equal(r$result$resultType, "input_required")
  # No log level asked: no log message before the result.
  r <- stateless_call(client, 3, "test_logging_tool", caps = list())
  expect_equal(r$id, 3L)
  expect_equal(r$result$content[[1]]$text, "Logging evaluated")

  r <- stateless_call(client, 4, "test_input_required_result_elicitation")
  expect_equal(r$result$resultType, "input_required")
  key <- names(r$result$inputRequests)
  expect_length(key, 1)
  expect_equal(r$result$inputRequests[[key]]$method, "elicitation/create")
  expect_equal(r$result$inputRequests[[key]]$params$message, "What is your name?")
  answer <- setNames(list(list(action = "accept", content = list(name = "Alice"))), key)
  r <- stateless_call(client, 5, "test_input_required_result_elicitation",
    extra = list(inputResponses = answer, requestState = r$result$requestState))
  expect_equal(r$result$content[[1]]$text, "Hello, Alice!")

  r <- stateless_call(client, 6, "test_input_required_result_request_state")
  expect_type(r$result$requestState, "character")
  key <- names(r$result$inputRequests)
  answer <- setNames(list(list(action = "accept", content = list(ok = TRUE))), key)
  r <- stateless_call(client, 7, "test_input_required_result_request_state",
    extra = list(inputResponses = answer, requestState = r$result$requestState))
  expect_match(r$result$content[[1]]$text, "state-ok", fixed = TRUE)

  r1 <- stateless_call(client, 8, "test_input_required_result_multi_round")
  expect_match(r1$result$inputRequests[[1]]$params$message, "^Step 1")
  answer <- setNames(list(list(action = "accept", content = list(name = "Ada"))), names(r1$result$inputRequests))
  r2 <- stateless_call(client, 9, "test_input_required_result_multi_round",
    extra = list(inputResponses = answer, requestState = r1$result$requestState))
  expect_equal(r2$result$resultType, "input_required")
  expect_match(r2$result$inputRequests[[1]]$params$message, "^Step 2")
  expect_false(identical(r2$result$requestState, r1$result$requestState))
  answer <- c(answer, setNames(list(list(action = "accept", content = list(color = "green"))), names(r2$result$inputRequests)))
  r3 <- stateless_call(client, 10, "test_input_required_result_multi_round",
    extra = list(inputResponses = answer[names(r2$result$inputRequests)], requestState = r2$result$requestState))
  expect_equal(r3$result$content[[1]]$text, "Multi-round complete: name Ada, favorite color green.")

  r <- stateless_call(client, 11, "test_input_required_result_tampered_state")
  state <- r$result$requestState
  substr(state, 5, 5) <- if (substr(state, 5, 5) == "A") "B" else "A"
  answer <- setNames(list(list(action = "accept", content = list(ok = TRUE))), names(r$result$inputRequests))
  r <- stateless_call(client, 12, "test_input_required_result_tampered_state",
    extra = list(inputResponses = answer, requestState = state))
  expect_equal(r$error$code, -32602)
  finish(client)
  expect_log_valid(client)
})
