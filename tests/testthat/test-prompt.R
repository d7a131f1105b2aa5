# Prompts and completion: definitions checked in R, and a real server
# process rendering every kind of message on every revision.

test_that("prompt definitions are checked when they are made", {
  greet <- function(who, greeting = "Hello") paste(greeting, who)
  p <- prompt_template(greet, description = "Greets")
  expect_equal(p$name, "greet")
  expect_equal(names(p$arguments), c("who", "greeting"))
  expect_true(p$arguments$who$required)
  expect_false(p$arguments$greeting$required)
  p <- prompt_template(greet, arguments = list(who = "Whom to greet", greeting = prompt_argument(required = TRUE)))
  expect_equal(p$arguments$who$description, "Whom to greet")
  expect_true(p$arguments$greeting$required)
  expect_error(prompt_template(greet, arguments = "greeting"), "needs `who`")
  expect_error(prompt_template(greet, arguments = c("who", "nope")), "no argument")
  expect_error(prompt_template(greet, complete = list(nope = identity)), "`nope`")
  expect_error(prompt_template(function() "x"), "`name` is required")
  expect_error(prompt_message("x", role = "system"), "should be one of")
  expect_error(prompt_message(1), "content")
  expect_output(print(prompt_template(greet, description = "Greets")), "<mcpserver_prompt> greet\\(who, greeting\\)")
})

prompt_get <- function(client, id, name, arguments = NULL) {
  params <- list(name = name)
  if (!is.null(arguments)) params$arguments <- arguments
  rpc(client, id, "prompts/get", params, "GetPromptResult")
}

test_that("prompts are listed and rendered on every revision", {
  client <- start_server(fixture("resources.R"))
  for (rev in schema_revisions) {
    on_revision(client, rev)
    listed <- rpc(client, 1, "prompts/list", result_type = "ListPromptsResult")$result$prompts
    expect_true(all(vapply(listed, function(p) nzchar(p$description), logical(1))))
    dialogue <- listed[[5]]
    expect_equal(dialogue$arguments[[1]], list(name = "topic", description = "What to talk about", required = TRUE))
    expect_equal(is.null(dialogue$arguments[[2]]$title), rev < "2025-06-18")

    r <- prompt_get(client, 2, "test_simple_prompt")$result
    expect_equal(r$messages, list(list(role = "user", content = list(type = "text", text = "This is a simple prompt for testing."))))
    r <- prompt_get(client, 3, "test_prompt_with_arguments", list(arg1 = "testValue1", arg2 = "testValue2"))$result
    expect_equal(r$messages[[1]]$content$text, "Prompt with arguments: arg1='testValue1', arg2='testValue2'")
    r <- prompt_get(client, 4, "test_prompt_with_embedded_resource", list(resourceUri = "test://example-resource"))$result
    expect_equal(r$messages[[1]]$content$resource, list(
      uri = "test://example-resource", mimeType = "text/plain", text = "Embedded resource content for testing."
    ))
    expect_equal(r$messages[[2]]$content$text, "Please process the embedded resource above.")
    r <- prompt_get(client, 5, "test_prompt_with_image")$result
    expect_equal(r$messages[[1]]$content[c("type", "mimeType")], list(type = "image", mimeType = "image/png"))
    r <- prompt_get(client, 6, "dialogue", list(topic = "R"))$result
    expect_equal(vapply(r$messages, `[[`, "", "role"), c("user", "assistant"))
    expect_equal(r$messages[[2]]$content$text, "Gladly, in a neutral tone.")
    expect_equal(r$description, "A two-turn dialogue")
  }
  expect_equal(finish(client), 0)
})

test_that("bad prompt requests and failing prompts are errors, and serving goes on", {
  client <- start_server(fixture("resources.R"))
  initialize(client, "2025-06-18")
  expect_equal(prompt_get(client, 1, "nope")$error$code, -32602)
  e <- prompt_get(client, 2, "test_prompt_with_arguments", list(arg1 = "x"))$error
  expect_equal(e$code, -32602)
  expect_match(e$message, "`arg2`")
  e <- prompt_get(client, 3, "broken")$error
  expect_equal(e$code, -32603)
  expect_match(e$message, "no prompt today")
  e <- prompt_get(client, 4, "wrong")$error
  expect_equal(e$code, -32603)
  expect_match(e$message, "must return a string")
  expect_equal(length(prompt_get(client, 5, "test_simple_prompt")$result$messages), 1)
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("completion runs the R function of a prompt argument or template variable", {
  client <- start_server(fixture("resources.R"))
  for (rev in c("2025-03-26", "2026-07-28")) {
    on_revision(client, rev)
    complete <- function(id, ref, name, value, context = NULL) {
      params <- list(ref = ref, argument = list(name = name, value = value))
      if (!is.null(context)) params$context <- list(arguments = context)
      rpc(client, id, "completion/complete", params, "CompleteResult")
    }
    r <- complete(1, list(type = "ref/prompt", name = "test_prompt_with_arguments"), "arg1", "te",
                  context = list(arg2 = "!"))$result$completion
    expect_equal(r$values, list("teA!", "teB!"))
    expect_equal(r$total, 2)
    r <- complete(2, list(type = "ref/resource", uri = "datasets://{name}"), "name", "a")$result$completion
    expect_equal(r$values, list("airquality"))
    r <- complete(3, list(type = "ref/prompt", name = "test_prompt_with_arguments"), "arg2", "")$result$completion
    expect_equal(r$values, list())
    expect_equal(complete(4, list(type = "ref/prompt", name = "nope"), "x", "")$error$code, -32602)
  }
  expect_equal(finish(client), 0)
})

test_that("capabilities are declared, and only what is served", {
  client <- start_server(fixture("resources.R"))
  caps <- initialize(client, "2025-11-25")$result$capabilities
  expect_equal(caps$resources, list(subscribe = TRUE, listChanged = TRUE))
  expect_equal(caps$prompts, list(listChanged = TRUE))
  expect_equal(caps$completions, setNames(list(), character()))
  expect_equal(finish(client), 0)
  plain <- start_server(fixture("everything.R"))
  caps <- initialize(plain, "2025-11-25")$result$capabilities
  expect_null(caps$resources)
  expect_equal(request(plain, 1, "resources/list")$error$code, -32601)
  expect_equal(finish(plain), 0)
})

test_that("a prompt can ask the user for input, in both eras", {
  client <- start_server(fixture("resources.R"))
  # 2026-07-28: an input_required result, then a retry with the answer.
  client$rev <- "2026-07-28"
  meta <- catalog_meta
  meta[["io.modelcontextprotocol/clientCapabilities"]] <- list(elicitation = setNames(list(), character()))
  first <- request(client, 1, "prompts/get", list(name = "test_input_required_result_prompt", `_meta` = meta))
  expect_wire_valid(client$log[[length(client$log)]]$line, "2026-07-28")
  expect_equal(first$result$resultType, "input_required")
  key <- names(first$result$inputRequests)
  expect_length(key, 1)
  expect_equal(first$result$inputRequests[[key]]$method, "elicitation/create")
  expect_equal(first$result$inputRequests[[key]]$params$message, "What context should the prompt use?")
  answers <- list()
  answers[[key]] <- list(action = "accept", content = list(context = "sales data"))
  r <- request(client, 2, "prompts/get", list(
    name = "test_input_required_result_prompt", inputResponses = answers,
    requestState = first$result$requestState, `_meta` = meta
  ))
  expect_wire_valid(client$log[[length(client$log)]]$line, "2026-07-28", "GetPromptResult")
  expect_equal(r$result$messages[[1]]$content$text, "Prompt with context: sales data")

  # 2025-11-25: the server asks the client while the prompt waits.
  client$rev <- "2025-11-25"
  request(client, 0, "initialize", list(
    protocolVersion = "2025-11-25", capabilities = list(elicitation = setNames(list(), character())),
    clientInfo = list(name = "testthat", version = "1")
  ))
  send(client, list(jsonrpc = "2.0", id = 3, method = "prompts/get",
                    params = list(name = "test_input_required_result_prompt")))
  ask <- receive(client)
  expect_equal(ask$method, "elicitation/create")
  send(client, list(jsonrpc = "2.0", id = ask$id, result = list(action = "accept", content = list(context = "weather"))))
  r <- receive(client)
  expect_equal(r$result$messages[[1]]$content$text, "Prompt with context: weather")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})
