# Middleware (R/middleware.R, src/rust/mcp-core/src/engine/middleware.rs),
# against a real server process: fixtures/middleware.R.

start_mw <- function(env = parent.frame(), extra = character()) {
  log <- withr::local_tempfile(.local_envir = env)
  client <- start_server(fixture("middleware.R"), env = env, extra_env = c(TEST_MW_LOG = log, extra))
  client$mw_log <- log
  client
}

mw_log <- function(client) if (file.exists(client$mw_log)) readLines(client$mw_log) else character()

tool_names <- function(listed) vapply(listed$result$tools, function(t) t$name, "")
text_of <- function(response) response$result$content[[1]]$text

# A 2026-07-28 request over stdio: no handshake, `_meta` names the version.
modern <- function(client, id, method, params = setNames(list(), character())) {
  params$`_meta` <- c(modern_meta(), list("io.modelcontextprotocol/clientInfo" = list(name = "modern-client", version = "1")))
  request(client, id, method, params)
}

test_that("middleware runs in order, first outermost, around a call, and sees the caller", {
  client <- start_mw()
  initialize(client)
  r <- call_tool(client, 1, "echo", list(text = "hi"))
  expect_equal(text_of(r), "hi (checked)")
  expect_equal(mw_log(client), c(
    "outer in tools/call echo", "inner in tools/call caller=testthat",
    "inner out tools/call character", "outer out tools/call"
  ))
  finish(client)
})

test_that("middleware changes arguments, results, and short-circuits", {
  client <- start_mw()
  initialize(client)
  # outer multiplies y by 10 on the way in.
  expect_equal(text_of(call_tool(client, 1, "add", list(x = 1, y = 2))), "21")
  # inner answers without calling the tool.
  r <- call_tool(client, 2, "short")
  expect_equal(text_of(r), "short-circuited")
  expect_false(r$result$isError)
  expect_false(any(grepl("inner out tools/call", mw_log(client)[-(1:4)])))
  # a prompt's arguments are changed too
  p <- request(client, 3, "prompts/get", list(name = "about", arguments = list(topic = "owls")))
  expect_equal(p$result$messages[[1]]$content$text, "Tell me about OWLS")
  finish(client)
})

test_that("an R error in middleware is -32603; a tool's own error stays a tool error", {
  client <- start_mw()
  initialize(client)
  r <- call_tool(client, 1, "mw_error")
  expect_null(r$result)
  expect_equal(r$error$code, -32603)
  expect_match(r$error$message, "Middleware failed: middleware says no", fixed = TRUE)
  r <- call_tool(client, 2, "boom")
  expect_null(r$error)
  expect_true(r$result$isError)
  expect_equal(text_of(r), "the tool broke")
  # The middleware saw the tool's error as a result.
  expect_true("inner out tools/call mcpserver_tool_result" %in% mw_log(client))
  finish(client)
})

test_that("list results are filtered through middleware, and a refused tool cannot be called", {
  client <- start_mw()
  initialize(client)
  listed <- request(client, 1, "tools/list")
  expect_false("secret" %in% tool_names(listed))
  expect_true(all(c("add", "echo", "counter") %in% tool_names(listed)))
  # The entries are the server's own, whole.
  add <- Filter(function(t) t$name == "add", listed$result$tools)[[1]]
  expect_equal(add$inputSchema$required, list("x", "y"))
  expect_true(any(grepl("^inner in tools/list caller=testthat$", mw_log(client))))
  r <- call_tool(client, 2, "secret")
  expect_true(r$result$isError)
  expect_match(text_of(r), "not available to this caller")
  resources <- request(client, 3, "resources/list")
  uris <- vapply(resources$result$resources, function(r) r$uri, "")
  expect_equal(uris, "data://greeting")
  prompts <- request(client, 4, "prompts/list")
  expect_equal(prompts$result$prompts[[1]]$name, "about")
  templates <- request(client, 5, "resources/templates/list")
  expect_length(templates$result$resourceTemplates, 0)
  read <- request(client, 6, "resources/read", list(uri = "data://greeting"))
  expect_equal(read$result$contents[[1]]$text, "hello")
  done <- request(client, 7, "completion/complete", list(
    ref = list(type = "ref/prompt", name = "about"), argument = list(name = "topic", value = "c")
  ))
  expect_equal(done$result$completion$values, list("cats", "cars"))
  log <- mw_log(client)
  for (method in c("resources/list", "prompts/list", "resources/templates/list", "resources/read", "completion/complete")) {
    expect_true(any(startsWith(log, paste("outer in", method))), label = method)
  }
  expect_true("outer in resources/read data://greeting" %in% log)
  # The audit log has a line per request.
  audit <- lapply(readLines(paste0(client$mw_log, ".audit")), jsonlite::fromJSON)
  secret <- Filter(function(a) identical(a$name, "secret"), audit)[[1]]
  expect_equal(secret$method, "tools/call")
  expect_equal(secret$caller, "client:testthat")
  expect_equal(secret$outcome, "tool error")
  expect_true(any(vapply(audit, function(a) identical(a$method, "tools/list") && a$outcome == "ok", NA)))
  finish(client)
})

test_that("tools added while serving are listed and called through middleware", {
  client <- start_mw()
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "grow", arguments = setNames(list(), character()))))
  seen <- list()
  while (length(seen) < 2) seen[[length(seen) + 1]] <- receive(client)
  methods <- vapply(seen, function(m) m$method %||% "", "")
  expect_true("notifications/tools/list_changed" %in% methods)
  expect_equal(text_of(Filter(function(m) identical(m$id, 1L), seen)[[1]]), "grown")
  listed <- request(client, 2, "tools/list")
  expect_true("late" %in% tool_names(listed))
  expect_false("secret" %in% tool_names(listed))
  expect_equal(text_of(call_tool(client, 3, "late")), "late")
  expect_true("outer in tools/call late" %in% mw_log(client))
  finish(client)
})

test_that("the rate limit refuses a caller's calls over it", {
  client <- start_mw()
  initialize(client)
  expect_equal(text_of(call_tool(client, 1, "limited")), "ok")
  expect_equal(text_of(call_tool(client, 2, "limited")), "ok")
  r <- call_tool(client, 3, "limited")
  expect_true(r$result$isError)
  expect_match(text_of(r), "Rate limit: at most 2 calls per 3600 seconds")
  # Other tools are not limited.
  expect_equal(text_of(call_tool(client, 4, "echo", list(text = "x"))), "x (checked)")
  finish(client)
})

test_that("the cache answers a read-only tool's repeated call without running it", {
  client <- start_mw()
  initialize(client)
  expect_equal(text_of(call_tool(client, 1, "counter", list(key = "a"))), "a 1")
  expect_equal(text_of(call_tool(client, 2, "counter", list(key = "a"))), "a 1")
  expect_equal(text_of(call_tool(client, 3, "counter", list(key = "b"))), "b 2")
  # add has no read-only hint: never cached (and y is multiplied each time).
  expect_equal(text_of(call_tool(client, 4, "add", list(x = 1, y = 1))), "11")
  # A 2026-07-28 caller is another caller: its own cache entry.
  expect_equal(text_of(modern(client, 5, "tools/call", list(name = "counter", arguments = list(key = "a")))), "a 3")
  finish(client)
})

test_that("middleware applies to 2026-07-28 requests over stdio", {
  client <- start_mw()
  listed <- modern(client, 1, "tools/list")
  expect_false("secret" %in% tool_names(listed))
  expect_equal(listed$result$cacheScope, "private")
  expect_equal(listed$result$resultType, "complete")
  expect_wire_valid(client$log[[1]]$line, "2026-07-28")
  expect_equal(text_of(modern(client, 2, "tools/call", list(name = "add", arguments = list(x = 1, y = 2)))), "21")
  r <- modern(client, 3, "tools/call", list(name = "mw_error", arguments = setNames(list(), character())))
  expect_equal(r$error$code, -32603)
  expect_true("inner in tools/call caller=modern-client" %in% mw_log(client))
  finish(client)
})

test_that("with middleware, the control plane still answers while R is busy; lists wait their turn", {
  client <- start_mw()
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = "long", method = "tools/call", params = list(name = "sleepy", arguments = list(seconds = 2))))
  send(client, list(jsonrpc = "2.0", id = "list", method = "tools/list"))
  send(client, list(jsonrpc = "2.0", id = "ping", method = "ping"))
  ids <- vapply(1:3, function(i) as.character(receive(client, timeout = 20)$id), "")
  # ping is answered by the server's threads; the list runs in R, after the call.
  expect_equal(ids, c("ping", "long", "list"))
  finish(client)
})

test_that("without middleware, tools/list is answered while R is busy", {
  client <- start_mw(extra = c(TEST_MW = "none"))
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = "long", method = "tools/call", params = list(name = "sleepy", arguments = list(seconds = 2))))
  send(client, list(jsonrpc = "2.0", id = "list", method = "tools/list"))
  first <- receive(client, timeout = 20)
  expect_equal(first$id, "list")
  expect_true("secret" %in% tool_names(first))
  expect_null(first$result$cacheScope)
  expect_equal(receive(client, timeout = 20)$id, "long")
  expect_length(mw_log(client), 0)
  finish(client)
})

test_that("mcp_client() sees the filtered list and the changed results", {
  skip_on_cran()
  log <- withr::local_tempfile()
  client <- mcp_client(fixture("middleware.R"), env = c(TEST_MW_LOG = log))
  on.exit(mcp_close(client), add = TRUE)
  expect_false("secret" %in% names(mcp_tools(client)))
  expect_equal(mcp_call(client, "echo", text = "a")$content[[1]]$text, "a (checked)")
})

test_that("middleware over HTTP, in a handshake session and in 2026-07-28 requests", {
  skip_on_cran()
  skip_if(Sys.which("curl") == "", "curl is not installed")
  log <- withr::local_tempfile()
  server <- start_http_server(readLines(fixture("middleware.R")), vars = c(TEST_MW_LOG = log, TEST_TRANSPORT = "http"))
  init <- http_initialize(server$url)
  h <- c("Mcp-Session-Id" = init$session, "MCP-Protocol-Version" = "2025-11-25")
  listed <- http_messages(curl_request(server$url, list(jsonrpc = "2.0", id = 1, method = "tools/list"), headers = h))[[1]]
  expect_false("secret" %in% tool_names(listed))
  expect_true("add" %in% tool_names(listed))
  called <- http_messages(curl_request(server$url, list(
    jsonrpc = "2.0", id = 2, method = "tools/call", params = list(name = "add", arguments = list(x = 1, y = 2))
  ), headers = h))[[1]]
  expect_equal(text_of(called), "21")
  failed <- http_messages(curl_request(server$url, list(
    jsonrpc = "2.0", id = 3, method = "tools/call", params = list(name = "mw_error", arguments = setNames(list(), character()))
  ), headers = h))
  expect_equal(failed[[length(failed)]]$error$code, -32603)
  # 2026-07-28: no session.
  listed <- http_messages(curl_request(server$url, list(
    jsonrpc = "2.0", id = 4, method = "tools/list", params = list(`_meta` = modern_meta())
  ), headers = modern_headers("tools/list")))[[1]]
  expect_false("secret" %in% tool_names(listed))
  expect_equal(listed$result$cacheScope, "private")
  called <- http_messages(curl_request(server$url, list(
    jsonrpc = "2.0", id = 5, method = "tools/call",
    params = list(name = "echo", arguments = list(text = "m"), `_meta` = modern_meta())
  ), headers = modern_headers("tools/call", "echo")))
  expect_equal(text_of(called[[length(called)]]), "m (checked)")
  refused <- http_messages(curl_request(server$url, list(
    jsonrpc = "2.0", id = 6, method = "tools/call",
    params = list(name = "secret", arguments = setNames(list(), character()), `_meta` = modern_meta())
  ), headers = modern_headers("tools/call", "secret")))
  expect_true(refused[[length(refused)]]$result$isError)
  log <- readLines(log)
  expect_true("outer in tools/list " %in% log)
  expect_true("inner in tools/call caller=testthat" %in% log)
})

test_that("over HTTP, the caller a bearer token names decides which tools it sees and calls", {
  skip_on_cran()
  skip_if(Sys.which("curl") == "", "curl is not installed")
  server <- start_http_server(c(
    "known <- c('token-of-ann' = 'ann', 'token-of-bob' = 'bob')",
    "check <- function(token) if (token %in% names(known)) list(user = known[[token]]) else FALSE",
    "tools <- list(tool(function() 'a', 'A', name = 'a'), tool(function() 'b', 'B', name = 'b'))",
    "allowed <- function(caller) if (identical(caller$auth$user, 'ann')) c('a', 'b') else 'a'",
    "mcp_server(tools, transport = 'http', port = 0L, http = http_options(bearer_tokens = check),",
    "  middleware = list(middleware_allow_tools(allowed)))"
  ))
  as_caller <- function(token, id, method, params = setNames(list(), character())) {
    params$`_meta` <- modern_meta()
    headers <- c(modern_headers(method, params$name), Authorization = paste("Bearer", token))
    reply <- curl_request(server$url, list(jsonrpc = "2.0", id = id, method = method, params = params), headers = headers)
    messages <- http_messages(reply)
    messages[[length(messages)]]
  }
  expect_equal(tool_names(as_caller("token-of-ann", 1, "tools/list")), c("a", "b"))
  expect_equal(tool_names(as_caller("token-of-bob", 2, "tools/list")), "a")
  expect_equal(text_of(as_caller("token-of-ann", 3, "tools/call", list(name = "b", arguments = setNames(list(), character())))), "b")
  refused <- as_caller("token-of-bob", 4, "tools/call", list(name = "b", arguments = setNames(list(), character())))
  expect_true(refused$result$isError)
  expect_match(text_of(refused), "not available to this caller")
  expect_equal(curl_request(server$url, list(jsonrpc = "2.0", id = 5, method = "tools/list", params = list(`_meta` = modern_meta())),
    headers = c(modern_headers("tools/list"), Authorization = "Bearer wrong"))$status, 401)
})

test_that("a concurrent tool's middleware runs on the main thread before it goes to a worker", {
  skip_on_cran()
  skip_if_not_installed("parallelly")
  client <- start_mw(extra = c(TEST_WORKERS = "2"))
  initialize(client)
  r <- call_tool(client, 1, "nap", list(seconds = 0.05))
  got <- jsonlite::fromJSON(text_of(r))
  # outer doubled the seconds; the call ran in a worker process.
  expect_equal(got$seconds, 0.1)
  expect_false(got$pid == client$proc$get_pid())
  log <- mw_log(client)
  expect_true("outer in tools/call nap" %in% log)
  expect_true("inner out tools/call mcpserver_sent_to_worker" %in% log)
  short <- call_tool(client, 2, "nap", list(seconds = -1))
  expect_equal(text_of(short), "short-circuited")
  refused <- call_tool(client, 3, "nap", list(seconds = 49.5))
  expect_equal(refused$error$code, -32603)
  expect_match(refused$error$message, "middleware refuses 99")
  finish(client)
})

test_that("middleware is checked when the server starts", {
  expect_error(mcp_server(list(), middleware = "x"), "must be NULL, a function, or a list of functions")
  expect_error(mcp_server(list(), middleware = list(function(request) 1)), "`\\(request, call_next\\)`")
  expect_error(middleware_rate_limit(0), "positive whole number")
  expect_error(middleware_cache(ttl = -1), "positive number")
  expect_error(middleware_allow_tools(1), "character vector")
  expect_error(middleware_audit(to = 1), "connection, a file path or a function")
})

test_that("ready-made middleware work on plain requests, without a server", {
  request <- list(method = "tools/call", params = list(name = "t", arguments = list(a = 1)),
                  caller = list(client = list(name = "c")), annotations = list(readOnlyHint = TRUE))
  runs <- 0
  call_next <- function(request) {
    runs <<- runs + 1
    runs
  }
  cache <- middleware_cache(ttl = 60, max_entries = 1)
  expect_equal(cache(request, call_next), 1)
  expect_equal(cache(request, call_next), 1)
  other <- request
  other$params$arguments$a <- 2
  expect_equal(cache(other, call_next), 2)
  # max_entries = 1: the first entry is forgotten.
  expect_equal(cache(request, call_next), 3)
  by_token <- request
  by_token$caller$auth <- list(sub = "alice")
  entries <- list()
  audit <- middleware_audit(to = function(entry) entries[[length(entries) + 1]] <<- entry)
  audit(by_token, call_next)
  expect_equal(entries[[1]]$caller, "auth:alice")
  expect_equal(entries[[1]]$name, "t")
  limit <- middleware_rate_limit(1, per = 3600, by = function(request) request$caller$client$name)
  expect_equal(limit(request, call_next), 5)
  expect_true(limit(request, call_next)$is_error)
  other_caller <- request
  other_caller$caller$client$name <- "d"
  expect_equal(limit(other_caller, call_next), 6)
})
