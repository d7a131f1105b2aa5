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

stateless_meta <- function(caps) {
  list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = if (length(caps)) caps else empty
  )
}

# A 2026-07-28 request, its message checked against the wire schema.
stateless_request <- function(client, id, method, params, caps, result_type = NULL) {
  client$rev <- "2026-07-28"
  params[["_meta"]] <- stateless_meta(caps)
  send(client, list(jsonrpc = "2.0", id = id, method = method, params = params))
  msg <- receive(client)
  expect_wire_valid(client$log[[length(client$log)]]$line, "2026-07-28", if (is.null(msg$error)) result_type)
  msg
}

all_caps <- list(elicitation = empty, sampling = empty, roots = list(listChanged = TRUE))

stateless_call <- function(client, id, name, caps = list(elicitation = empty), extra = list()) {
  stateless_request(client, id, "tools/call", c(list(name = name, arguments = empty), extra), caps)
}

# A round's result is of `type` ("complete" or "input_required"), not an error.
expect_round <- function(r, type) {
  expect_equal(r$result$resultType, type)
  expect_null(r$error)
}

accepted <- function(...) list(action = "accept", content = list(...))
sampled <- function(text) list(role = "assistant", content = list(type = "text", text = text), model = "test-model", stopReason = "endTurn")
test_roots <- list(roots = list(list(uri = "file:///test/root", name = "Test Root")))

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
    "test_input_required_result_tampered_state", "test_custom_header",
    "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums", "test_sampling",
    "test_input_required_result_sampling", "test_input_required_result_list_roots",
    "test_input_required_result_multiple_inputs", "test_input_required_result_capabilities",
    "json_schema_2020_12_tool"
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

test_that("json_schema_2020_12_tool lists its whole 2020-12 schema as given (json-schema-2020-12)", {
  client <- start_fixture()
  initialize_with(client)
  tools <- request(client, 1, "tools/list")$result$tools
  schema <- tools[[match("json_schema_2020_12_tool", vapply(tools, `[[`, "", "name"))]]$inputSchema
  expect_equal(schema$`$schema`, "https://json-schema.org/draft/2020-12/schema")
  expect_equal(schema$`$defs`$address$`$anchor`, "addressDef")
  expect_equal(schema$properties$address, list(`$ref` = "#/$defs/address"))
  expect_equal(schema$allOf, list(list(anyOf = list(list(required = list("phone")), list(required = list("email"))))))
  expect_equal(schema$`if`, list(properties = list(contactMethod = list(const = "phone")), required = list("contactMethod")))
  expect_equal(schema$then, list(required = list("phone")))
  expect_equal(schema$`else`, list(required = list("email")))
  expect_false(schema$additionalProperties)
  # The schema is enforced: phone contact needs a phone number.
  ok <- call_tool(client, 2, "json_schema_2020_12_tool", list(name = "Ada", contactMethod = "phone", phone = "555"))
  expect_equal(ok$result$content[[1]]$text, "Contact Ada by phone 555.")
  bad <- call_tool(client, 3, "json_schema_2020_12_tool", list(contactMethod = "phone", email = "a@b.c"))
  expect_true(bad$result$isError)
  finish(client)
  expect_log_valid(client)
})

test_that("the resources read as the resources-* scenarios describe", {
  client <- start_fixture()
  caps <- initialize_with(client)
  listed <- request(client, 1, "resources/list")$result$resources
  uris <- vapply(listed, `[[`, "", "uri")
  expect_equal(uris, c("test://static-text", "test://static-binary", "test://watched-resource"))
  for (r in listed) expect_true(nzchar(r$name) && nzchar(r$description) && nzchar(r$mimeType))
  templates <- request(client, 2, "resources/templates/list")$result$resourceTemplates
  expect_equal(vapply(templates, `[[`, "", "uriTemplate"), "test://template/{id}/data")

  text <- request(client, 3, "resources/read", list(uri = "test://static-text"))$result$contents
  expect_equal(text, list(list(
    uri = "test://static-text", mimeType = "text/plain",
    text = "This is the content of the static text resource."
  )))
  binary <- request(client, 4, "resources/read", list(uri = "test://static-binary"))$result$contents
  expect_length(binary, 1)
  expect_equal(binary[[1]][c("uri", "mimeType")], list(uri = "test://static-binary", mimeType = "image/png"))
  expect_equal(base64_bytes(binary[[1]]$blob)[1:4], as.raw(c(0x89, 0x50, 0x4e, 0x47)))
  templated <- request(client, 5, "resources/read", list(uri = "test://template/123/data"))$result$contents
  expect_equal(templated, list(list(
    uri = "test://template/123/data", mimeType = "application/json",
    text = '{"id":"123","templateTest":true,"data":"Data for ID: 123"}'
  )))
  watched <- request(client, 6, "resources/read", list(uri = "test://watched-resource"))$result$contents
  expect_equal(watched[[1]]$text, "Watched resource content")
  expect_equal(request(client, 7, "resources/subscribe", list(uri = "test://watched-resource"))$result, empty)
  expect_equal(request(client, 8, "resources/unsubscribe", list(uri = "test://watched-resource"))$result, empty)
  missing <- request(client, 9, "resources/read", list(uri = "test://nonexistent-resource-for-conformance-testing"))
  expect_equal(missing$error$code, -32002)
  finish(client)
  expect_log_valid(client)
})

test_that("2026-07-28 resources carry cache hints, and a miss is -32602 naming the URI (caching, sep-2164)", {
  client <- start_fixture()
  for (method in c("tools/list", "prompts/list", "resources/list", "resources/templates/list")) {
    r <- stateless_request(client, 1, method, empty, list())
    expect_true(is.numeric(r$result$ttlMs) && r$result$ttlMs >= 0 && r$result$ttlMs == round(r$result$ttlMs), info = method)
    expect_true(r$result$cacheScope %in% c("public", "private"), info = method)
  }
  r <- stateless_request(client, 2, "resources/read", list(uri = "test://static-text"), list(), "ReadResourceResult")
  expect_true(r$result$ttlMs >= 0)
  expect_true(r$result$cacheScope %in% c("public", "private"))
  missing <- "test://nonexistent-resource-for-conformance-testing"
  r <- stateless_request(client, 3, "resources/read", list(uri = missing), list())
  expect_null(r$result)
  expect_equal(r$error$code, -32602)
  expect_equal(r$error$data$uri, missing)
  finish(client)
  expect_log_valid(client)
})

test_that("the prompts and completion answer as the prompts-* and completion-complete scenarios describe", {
  client <- start_fixture()
  initialize_with(client)
  prompts <- request(client, 1, "prompts/list")$result$prompts
  names <- vapply(prompts, `[[`, "", "name")
  expect_true(all(c(
    "test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource",
    "test_prompt_with_image", "test_input_required_result_prompt"
  ) %in% names))
  expect_true(all(vapply(prompts, function(p) nzchar(p$description %||% ""), TRUE)))
  with_args <- prompts[[match("test_prompt_with_arguments", names)]]$arguments
  expect_equal(vapply(with_args, `[[`, "", "name"), c("arg1", "arg2"))
  expect_true(all(vapply(with_args, `[[`, TRUE, "required")))

  get <- function(id, name, arguments = empty) request(client, id, "prompts/get", list(name = name, arguments = arguments))$result$messages
  expect_equal(get(2, "test_simple_prompt"), list(list(
    role = "user", content = list(type = "text", text = "This is a simple prompt for testing.")
  )))
  expect_equal(get(3, "test_prompt_with_arguments", list(arg1 = "testValue1", arg2 = "testValue2")), list(list(
    role = "user", content = list(type = "text", text = "Prompt with arguments: arg1='testValue1', arg2='testValue2'")
  )))
  expect_equal(get(4, "test_prompt_with_embedded_resource", list(resourceUri = "test://example-resource")), list(
    list(role = "user", content = list(type = "resource", resource = list(
      uri = "test://example-resource", mimeType = "text/plain", text = "Embedded resource content for testing."
    ))),
    list(role = "user", content = list(type = "text", text = "Please process the embedded resource above."))
  ))
  image <- get(5, "test_prompt_with_image")
  expect_length(image, 2)
  expect_equal(image[[1]]$content$type, "image")
  expect_equal(image[[1]]$content$mimeType, "image/png")
  expect_equal(base64_bytes(image[[1]]$content$data)[1:4], as.raw(c(0x89, 0x50, 0x4e, 0x47)))
  expect_equal(image[[2]]$content, list(type = "text", text = "Please analyze the image above."))
  expect_equal(request(client, 6, "prompts/get", list(name = "test_prompt_with_arguments", arguments = list(arg1 = "x")))$error$code, -32602)

  complete <- function(id, value) {
    request(client, id, "completion/complete", list(
      ref = list(type = "ref/prompt", name = "test_prompt_with_arguments"),
      argument = list(name = "arg1", value = value)
    ))$result$completion
  }
  expect_equal(unlist(complete(7, "test")$values), c("test", "testing", "testValue1"))
  expect_equal(unlist(complete(8, "par")$values), c("paris", "park", "party"))
  expect_length(complete(9, "zzz")$values, 0)
  finish(client)
  expect_log_valid(client)
})

test_that("test_sampling asks the client's model and reports its answer (tools-call-sampling)", {
  client <- start_fixture()
  initialize_with(client, list(sampling = empty))
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(
    name = "test_sampling", arguments = list(prompt = "Test prompt for sampling")
  )))
  ask <- receive(client)
  expect_equal(ask$method, "sampling/createMessage")
  expect_equal(ask$params$messages, list(list(role = "user", content = list(type = "text", text = "Test prompt for sampling"))))
  expect_equal(ask$params$maxTokens, 100)
  send(client, list(jsonrpc = "2.0", id = ask$id, result = sampled("This is a test response from the client")))
  r <- receive(client)
  expect_equal(r$result$content[[1]]$text, "LLM response: This is a test response from the client")
  finish(client)
  expect_log_valid(client)
})

test_that("the SEP-1034 and SEP-1330 tools ask with defaults and every kind of enum", {
  client <- start_fixture()
  initialize_with(client, list(elicitation = empty))
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "test_elicitation_sep1034_defaults", arguments = empty)))
  ask <- receive(client)
  form <- ask$params$requestedSchema$properties
  expect_equal(form$name[c("type", "default")], list(type = "string", default = "John Doe"))
  expect_equal(form$age[c("type", "default")], list(type = "integer", default = 30L))
  expect_equal(form$score[c("type", "default")], list(type = "number", default = 95.5))
  expect_equal(form$status[c("type", "enum", "default")], list(type = "string", enum = list("active", "inactive", "pending"), default = "active"))
  expect_equal(form$verified[c("type", "default")], list(type = "boolean", default = TRUE))
  send(client, list(jsonrpc = "2.0", id = ask$id, result = accepted(name = "John Doe", age = 30, score = 95.5, status = "active", verified = TRUE)))
  r <- receive(client)
  expect_equal(r$result$content[[1]]$text, 'Elicitation completed: action=accept, content={"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}')

  send(client, list(jsonrpc = "2.0", id = 2, method = "tools/call", params = list(name = "test_elicitation_sep1330_enums", arguments = empty)))
  ask <- receive(client)
  form <- ask$params$requestedSchema$properties
  expect_equal(form$untitledSingle$enum, list("option1", "option2", "option3"))
  expect_null(form$untitledSingle$oneOf)
  expect_equal(form$titledSingle$oneOf[[1]], list(const = "value1", title = "First Option"))
  expect_null(form$titledSingle$enum)
  expect_equal(form$legacyEnum$enum, list("opt1", "opt2", "opt3"))
  expect_equal(form$legacyEnum$enumNames, list("Option One", "Option Two", "Option Three"))
  expect_equal(form$untitledMulti$type, "array")
  expect_equal(form$untitledMulti$items, list(type = "string", enum = list("option1", "option2", "option3")))
  expect_equal(form$titledMulti$type, "array")
  expect_equal(form$titledMulti$items$anyOf[[3]], list(const = "value3", title = "Third Choice"))
  expect_null(form$titledMulti$items$enum)
  send(client, list(jsonrpc = "2.0", id = ask$id, result = list(action = "accept", content = list(
    untitledSingle = "option1", titledSingle = "value1", legacyEnum = "opt1",
    untitledMulti = list("option1", "option2"), titledMulti = list("value2")
  ))))
  r <- receive(client)
  expect_equal(r$result$content[[1]]$text, paste0(
    'Elicitation completed: action=accept, content={"untitledSingle":"option1","titledSingle":"value1",',
    '"legacyEnum":"opt1","untitledMulti":["option1","option2"],"titledMulti":["value2"]}'
  ))
  finish(client)
  expect_log_valid(client)
})

test_that("the stateless fixtures answer as server-stateless describes", {
  client <- start_fixture()
  # Without sampling, which its question needs: -32021 naming it.
  r <- stateless_call(client, 1, "test_missing_capability", caps = list(elicitation = empty))
  expect_equal(r$error$code, -32021)
  expect_named(r$error$data$requiredCapabilities, "sampling")
  # With it: the question comes back as a result, never as a request.
  r <- stateless_call(client, 2, "test_streaming_elicitation")
  expect_round(r, "input_required")
  # No log level asked: no log message before the result.
  r <- stateless_call(client, 3, "test_logging_tool", caps = list())
  expect_equal(r$id, 3L)
  expect_equal(r$result$content[[1]]$text, "Logging evaluated")
  finish(client)
  expect_log_valid(client)
})

test_that("the input_required tools ask under the keys their scenarios name", {
  client <- start_fixture()
  r <- stateless_call(client, 1, "test_input_required_result_elicitation")
  expect_round(r, "input_required")
  expect_named(r$result$inputRequests, "user_name")
  expect_equal(r$result$inputRequests$user_name, list(method = "elicitation/create", params = list(
    message = "What is your name?",
    requestedSchema = list(type = "object", properties = list(name = list(type = "string")), required = list("name"))
  )))
  r <- stateless_call(client, 2, "test_input_required_result_elicitation",
    extra = list(inputResponses = list(user_name = accepted(name = "Alice")), requestState = r$result$requestState))
  expect_round(r, "complete")
  expect_equal(r$result$content[[1]]$text, "Hello, Alice!")
  # Answers without a state, beside keys nobody asked (ignore-extra-params).
  r <- stateless_call(client, 3, "test_input_required_result_elicitation", extra = list(inputResponses = list(
    user_name = accepted(name = "Alice"), unknown_extra_key = accepted(foo = "bar"), another_unexpected = accepted(baz = 123)
  )))
  expect_equal(r$result$content[[1]]$text, "Hello, Alice!")
  # A wrong key leaves the question open (missing-input-response).
  r <- stateless_call(client, 4, "test_input_required_result_elicitation",
    extra = list(inputResponses = list(wrong_key = accepted(data = "wrong"))))
  expect_round(r, "input_required")
  expect_named(r$result$inputRequests, "user_name")

  r <- stateless_call(client, 5, "test_input_required_result_sampling", caps = all_caps)
  expect_named(r$result$inputRequests, "capital_question")
  expect_equal(r$result$inputRequests$capital_question, list(method = "sampling/createMessage", params = list(
    messages = list(list(role = "user", content = list(type = "text", text = "What is the capital of France?"))),
    maxTokens = 100L
  )))
  r <- stateless_call(client, 6, "test_input_required_result_sampling", caps = all_caps, extra = list(
    inputResponses = list(capital_question = sampled("The capital of France is Paris.")), requestState = r$result$requestState
  ))
  expect_round(r, "complete")
  expect_match(r$result$content[[1]]$text, "The capital of France is Paris.", fixed = TRUE)

  r <- stateless_call(client, 7, "test_input_required_result_list_roots", caps = all_caps)
  expect_equal(r$result$inputRequests, list(client_roots = list(method = "roots/list", params = empty)))
  r <- stateless_call(client, 8, "test_input_required_result_list_roots", caps = all_caps, extra = list(
    inputResponses = list(client_roots = test_roots), requestState = r$result$requestState
  ))
  expect_equal(r$result$content[[1]]$text, "The client's roots: file:///test/root (Test Root).")

  r <- stateless_call(client, 9, "test_input_required_result_multiple_inputs", caps = all_caps)
  expect_named(r$result$inputRequests, c("user_name", "greeting", "client_roots"))
  expect_equal(
    vapply(r$result$inputRequests, `[[`, "", "method"),
    c(user_name = "elicitation/create", greeting = "sampling/createMessage", client_roots = "roots/list")
  )
  expect_equal(r$result$inputRequests$greeting$params$maxTokens, 50L)
  expect_type(r$result$requestState, "character")
  r <- stateless_call(client, 10, "test_input_required_result_multiple_inputs", caps = all_caps, extra = list(
    inputResponses = list(user_name = accepted(name = "Alice"), greeting = sampled("Hello there!"), client_roots = test_roots),
    requestState = r$result$requestState
  ))
  expect_round(r, "complete")
  expect_equal(r$result$content[[1]]$text, "Hello there! Alice! Your roots: file:///test/root (Test Root).")

  # Sampling only: no elicitation asked (capability-check).
  r <- stateless_call(client, 11, "test_input_required_result_capabilities", caps = list(sampling = empty))
  expect_round(r, "input_required")
  expect_equal(unname(vapply(r$result$inputRequests, `[[`, "", "method")), "sampling/createMessage")
  r <- stateless_call(client, 12, "test_input_required_result_capabilities", caps = list(sampling = empty), extra = list(
    inputResponses = list(greeting = sampled("Hi")), requestState = r$result$requestState
  ))
  expect_equal(r$result$content[[1]]$text, "Asked through: greeting.")
  r <- stateless_call(client, 13, "test_input_required_result_capabilities", caps = list())
  expect_equal(r$result$content[[1]]$text, "The client declared no capability to ask with.")
  finish(client)
  expect_log_valid(client)
})

test_that("the request-state, multi-round and tampered-state tools keep their state honest", {
  client <- start_fixture()
  r <- stateless_call(client, 1, "test_input_required_result_request_state")
  expect_named(r$result$inputRequests, "confirm")
  expect_equal(r$result$inputRequests$confirm$params$message, "Please confirm")
  expect_type(r$result$requestState, "character")
  r <- stateless_call(client, 2, "test_input_required_result_request_state",
    extra = list(inputResponses = list(confirm = accepted(ok = TRUE)), requestState = r$result$requestState))
  expect_match(r$result$content[[1]]$text, "state-ok", fixed = TRUE)

  r1 <- stateless_call(client, 3, "test_input_required_result_multi_round")
  expect_named(r1$result$inputRequests, "step1")
  expect_equal(r1$result$inputRequests$step1$params$message, "Step 1: What is your name?")
  r2 <- stateless_call(client, 4, "test_input_required_result_multi_round",
    extra = list(inputResponses = list(step1 = accepted(name = "Ada")), requestState = r1$result$requestState))
  expect_round(r2, "input_required")
  expect_named(r2$result$inputRequests, "step2")
  expect_equal(r2$result$inputRequests$step2$params$message, "Step 2: What is your favorite color?")
  expect_false(identical(r2$result$requestState, r1$result$requestState))
  r3 <- stateless_call(client, 5, "test_input_required_result_multi_round",
    extra = list(inputResponses = list(step2 = accepted(color = "green")), requestState = r2$result$requestState))
  expect_equal(r3$result$content[[1]]$text, "Multi-round complete: name Ada, favorite color green.")

  r <- stateless_call(client, 6, "test_input_required_result_tampered_state")
  answer <- list(confirm = accepted(ok = TRUE))
  r <- stateless_call(client, 7, "test_input_required_result_tampered_state",
    extra = list(inputResponses = answer, requestState = paste0(r$result$requestState, "-TAMPERED")))
  expect_equal(r$error$code, -32602)
  finish(client)
  expect_log_valid(client)
})

test_that("test_input_required_result_prompt asks for context before it is built (non-tool-request)", {
  client <- start_fixture()
  caps <- list(elicitation = empty)
  r <- stateless_request(client, 1, "prompts/get", list(name = "test_input_required_result_prompt"), caps)
  expect_round(r, "input_required")
  expect_equal(r$result$inputRequests$user_context$params, list(
    message = "What context should the prompt use?",
    requestedSchema = list(type = "object", properties = list(context = list(type = "string")), required = list("context"))
  ))
  r <- stateless_request(client, 2, "prompts/get", list(
    name = "test_input_required_result_prompt",
    inputResponses = list(user_context = accepted(context = "test context")), requestState = r$result$requestState
  ), caps, "GetPromptResult")
  expect_round(r, "complete")
  expect_equal(r$result$messages[[1]]$content$text, "Prompt with context: test context")
  finish(client)
  expect_log_valid(client)
})
