# mcp_add() and mcp_remove(): tools, resources and prompts changing while
# a real stdio server serves, what clients see and hear, and checks.

changing_server <- function(env = parent.frame()) {
  script <- server_script(c(
    "hello <- tool(function() 'hi', 'Says hi', name = 'hello')",
    "adder <- tool(function(n = 1) {",
    "  for (i in seq_len(n)) mcp_add(tool(local({ j <- i; function() j }), paste('Tool', i), name = paste0('made_', i)))",
    "  mcp_add(prompt_template(function() 'Hello', name = 'greeting', description = 'Greets'))",
    "  paste('added', n)",
    "}, 'Adds n tools and a prompt', arguments = list(n = type_integer(required = FALSE)), name = 'adder')",
    "remover <- tool(function(what) { mcp_remove(what); 'removed' }, 'Removes', arguments = list(what = type_string()), name = 'remover')",
    "slow <- tool(function() { Sys.sleep(1); 'slow done' }, 'Sleeps a second', name = 'slow')",
    "bad <- tool(function() { mcp_add(list(hello, hello)); 'no' }, 'Adds a bad set', name = 'bad')",
    "mcp_server(list(hello, adder, remover, slow, bad), prompts = list())"
  ), env)
  start_server(script, env)
}

tool_names_of <- function(client, id) {
  r <- rpc(client, id, "tools/list", result_type = "ListToolsResult")
  vapply(r$result$tools, function(t) t$name, character(1))
}

test_that("tools added in a call are served after it, announced once per list", {
  client <- changing_server()
  caps <- initialize(client)$result$capabilities
  expect_identical(caps$tools$listChanged, TRUE)
  expect_identical(caps$prompts$listChanged, TRUE)
  expect_length(rpc(client, 1, "prompts/list")$result$prompts, 0)
  send(client, list(jsonrpc = "2.0", id = 2, method = "tools/call", params = list(name = "adder", arguments = list(n = 3))))
  response <- receive(client)
  expect_identical(response$result$content[[1]]$text, "added 3")
  heard <- list(receive(client), receive(client))
  methods <- sort(vapply(heard, function(m) m$method, character(1)))
  expect_identical(methods, c("notifications/prompts/list_changed", "notifications/tools/list_changed"))
  expect_true(quiet_for(client, 0.3))
  expect_identical(tool_names_of(client, 3), c("hello", "adder", "remover", "slow", "bad", "made_1", "made_2", "made_3"))
  expect_identical(call_tool(client, 4, "made_2")$result$content[[1]]$text, "2")
  expect_identical(rpc(client, 5, "prompts/list")$result$prompts[[1]]$name, "greeting")
  expect_log_valid(client)
  expect_identical(finish(client), 0L)
})

test_that("a call running when its tool is removed finishes; later calls are refused", {
  client <- changing_server()
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "slow")))
  send(client, list(jsonrpc = "2.0", id = 2, method = "tools/call", params = list(name = "remover", arguments = list(what = "slow"))))
  got <- list(receive(client), receive(client), receive(client))
  by_id <- Filter(function(m) !is.null(m$id), got)
  texts <- vapply(by_id, function(m) m$result$content[[1]]$text, character(1))
  expect_setequal(texts, c("slow done", "removed"))
  expect_true(any(vapply(got, function(m) identical(m$method, "notifications/tools/list_changed"), logical(1))))
  expect_identical(call_tool(client, 3, "slow")$error$code, -32602L)
  expect_false("slow" %in% tool_names_of(client, 4))
  expect_log_valid(client)
})

test_that("a bad change is an error in the call and changes nothing", {
  client <- changing_server()
  initialize(client)
  bad <- call_tool(client, 1, "bad")
  expect_true(bad$result$isError)
  expect_match(bad$result$content[[1]]$text, "twice")
  missing <- call_tool(client, 2, "remover", list(what = "nope"))
  expect_true(missing$result$isError)
  expect_match(missing$result$content[[1]]$text, "Nothing is served as \"nope\"")
  expect_true(quiet_for(client, 0.3))
  expect_identical(tool_names_of(client, 3), c("hello", "adder", "remover", "slow", "bad"))
})

test_that("2026-07-28 clients hear of changes only on listen streams that asked", {
  client <- changing_server()
  client$rev <- "2026-07-28"
  send(client, list(jsonrpc = "2.0", id = 1, method = "subscriptions/listen", params = list(
    notifications = list(toolsListChanged = TRUE), `_meta` = catalog_meta
  )))
  ack <- receive(client)
  expect_identical(ack$params$notifications, list(toolsListChanged = TRUE))
  send(client, list(jsonrpc = "2.0", id = 2, method = "tools/call", params = list(
    name = "adder", arguments = list(n = 1), `_meta` = catalog_meta
  )))
  expect_identical(receive(client)$result$content[[1]]$text, "added 1")
  heard <- receive(client)
  expect_identical(heard$method, "notifications/tools/list_changed")
  expect_identical(heard$params$`_meta`$`io.modelcontextprotocol/subscriptionId`, 1L)
  expect_true(quiet_for(client, 0.3))
  listed <- rpc(client, 3, "tools/list", result_type = "ListToolsResult")
  expect_identical(listed$result$ttlMs, 10000L)
  expect_log_valid(client)
})

test_that("mcp_add() and mcp_remove() check their input and do nothing outside a server", {
  t <- tool(function() 1, "One", name = "one")
  expect_false(mcp_add(t))
  expect_false(mcp_add(list(t, resource("data://x", "x"), prompt_template(function() "p", name = "p", description = "P"))))
  expect_false(mcp_remove("one"))
  expect_error(mcp_add("one"), "must be a definition")
  expect_error(mcp_add(list(t, t)), "gives the tool \"one\" twice")
  expect_error(mcp_add(list()), "must be a definition")
  expect_error(mcp_remove(42), "character vector of their names")
  expect_error(mcp_add(t, server = "x"), "`server` must be NULL")
})
