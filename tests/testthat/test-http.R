# mcp_server(transport = "http") in a real process, driven over HTTP.

skip_if_no_curl <- function() {
  if (!nzchar(Sys.which("curl"))) skip("the curl command is not installed")
}

http_tools <- c(
  "add <- tool(function(x, y) x + y, 'Add two numbers', name = 'add',",
  "  arguments = list(x = type_number(), y = type_number()))",
  "steps <- tool(function() { mcp_progress(1, 2); message('half way'); mcp_progress(2, 2); 'done' },",
  "  'Reports progress', name = 'steps')",
  "greet <- tool(function() { a <- mcp_elicit('Your name?', list(name = type_string())); paste0('Hello, ', a$content$name, '!') },",
  "  'Asks for a name', name = 'greet')",
  "pair <- tool(function() { got <- mcp_ask(a = ask_user('A?', list(name = type_string())), b = ask_user('B?', list(name = type_string())))",
  "  paste(got$a$content$name, got$b$content$name) }, 'Asks two questions at once', name = 'pair', task = 'optional')",
  "nap <- tool(function(seconds) { Sys.sleep(seconds); 'rested' }, 'Sleeps', name = 'nap',",
  "  arguments = list(seconds = type_number()), task = 'optional')"
)

serve_http <- function(env = parent.frame(), extra = "") {
  start_http_server(c(http_tools, sprintf("mcp_server(list(add, steps, greet, pair, nap), transport = 'http', port = 0%s)", extra)), env = env)
}

test_that("the server says where it listens, on a free port", {
  skip_if_no_curl()
  server <- serve_http()
  expect_match(server$url, "^http://127\\.0\\.0\\.1:[0-9]+/mcp$")
  expect_false(grepl(":8000/", server$url))
})

test_that("a handshake-era client calls an R tool in its session", {
  skip_if_no_curl()
  server <- serve_http()
  init <- http_initialize(server$url)
  expect_equal(init$reply$status, 200L)
  expect_match(init$session, "^[!-~]{32,}$")
  reply <- curl_request(server$url, list(
    jsonrpc = "2.0", id = 1, method = "tools/call",
    params = list(name = "add", arguments = list(x = 2, y = 3.5))
  ), headers = c("Mcp-Session-Id" = init$session, "MCP-Protocol-Version" = "2025-11-25"))
  expect_equal(reply$status, 200L)
  answer <- http_messages(reply)
  answer <- answer[[length(answer)]]
  expect_equal(answer$id, 1)
  expect_equal(answer$result$content[[1]]$text, "5.5")
  # Without the session: refused, and the server goes on.
  no_session <- curl_request(server$url, list(jsonrpc = "2.0", id = 2, method = "tools/list"))
  expect_equal(no_session$status, 400L)
  gone <- curl_request(server$url, method = "DELETE", headers = c("Mcp-Session-Id" = init$session))
  expect_equal(gone$status, 200L)
  after <- curl_request(server$url, list(jsonrpc = "2.0", id = 3, method = "tools/list"), headers = c("Mcp-Session-Id" = init$session))
  expect_equal(after$status, 404L)
})

test_that("progress and logs of an R tool precede its result on the call's event stream", {
  skip_if_no_curl()
  server <- serve_http()
  init <- http_initialize(server$url)
  h <- c("Mcp-Session-Id" = init$session)
  curl_request(server$url, list(jsonrpc = "2.0", id = 1, method = "logging/setLevel", params = list(level = "info")), headers = h)
  reply <- curl_request(server$url, list(
    jsonrpc = "2.0", id = 2, method = "tools/call",
    params = list(name = "steps", arguments = setNames(list(), character()), `_meta` = list(progressToken = "t1"))
  ), headers = h)
  expect_equal(reply$headers[["content-type"]], "text/event-stream")
  messages <- http_messages(reply)
  methods <- vapply(messages, function(m) if (is.null(m$method)) "response" else m$method, "")
  expect_equal(methods[length(methods)], "response")
  expect_true("notifications/progress" %in% methods)
  expect_true("notifications/message" %in% methods)
  expect_equal(messages[[length(messages)]]$result$content[[1]]$text, "done")
})

test_that("a 2026-07-28 client calls statelessly, and input_required rounds work", {
  skip_if_no_curl()
  server <- serve_http()
  call <- function(id, name, params = list()) {
    params$name <- name
    if (is.null(params$arguments)) params$arguments <- setNames(list(), character())
    params$`_meta` <- modern_meta()
    params$`_meta`[["io.modelcontextprotocol/clientCapabilities"]] <- list(elicitation = setNames(list(), character()))
    curl_request(server$url, list(jsonrpc = "2.0", id = id, method = "tools/call", params = params),
      headers = modern_headers("tools/call", name))
  }
  reply <- call(1, "add", list(arguments = list(x = 1, y = 2)))
  expect_equal(reply$status, 200L)
  expect_null(reply$headers[["mcp-session-id"]])
  expect_equal(http_messages(reply)[[1]]$result$content[[1]]$text, "3")

  first <- http_messages(call(2, "greet"))[[1]]$result
  expect_equal(first$resultType, "input_required")
  key <- names(first$inputRequests)[[1]]
  responses <- setNames(list(list(action = "accept", content = list(name = "Ada"))), key)
  second <- http_messages(call(3, "greet", list(requestState = first$requestState, inputResponses = responses)))[[1]]
  expect_equal(second$result$content[[1]]$text, "Hello, Ada!")

  mismatch <- curl_request(server$url, list(jsonrpc = "2.0", id = 4, method = "tools/list", params = list(`_meta` = modern_meta())),
    headers = modern_headers("tools/call"))
  expect_equal(mismatch$status, 400L)
  expect_equal(http_messages(mismatch)[[1]]$error$code, -32020L)
})

test_that("2026-07-28 tasks live on across requests, take answers in parts and are cancelled by tasks/cancel only", {
  skip_if_no_curl()
  server <- serve_http()
  empty <- setNames(list(), character())
  meta <- modern_meta()
  meta[["io.modelcontextprotocol/clientCapabilities"]] <- list(
    elicitation = empty, extensions = list(`io.modelcontextprotocol/tasks` = empty)
  )
  post <- function(id, method, params, name = NULL) {
    params$`_meta` <- meta
    reply <- curl_request(server$url, list(jsonrpc = "2.0", id = id, method = method, params = params),
      headers = modern_headers(method, name))
    http_messages(reply)[[1]]
  }
  create <- function(id, tool, arguments = empty) {
    created <- post(id, "tools/call", list(name = tool, arguments = arguments), tool)$result
    expect_equal(created$resultType, "task")
    created$taskId
  }
  get <- function(id, task) post(id, "tasks/get", list(taskId = task), task)$result
  wait_for <- function(task, status) {
    for (i in 1:200) {
      got <- get(100 + i, task)
      if (identical(got$status, status)) return(got)
      Sys.sleep(0.05)
    }
    stop("task never became ", status, ": ", got$status)
  }
  # curl closes the stream that created the task as soon as it has the
  # handle: the task goes on, and another request finds it.
  napping <- create(1, "nap", list(seconds = 1))
  expect_equal(get(2, napping)$status, "working")
  expect_equal(wait_for(napping, "completed")$result$content[[1]]$text, "rested")

  asking <- create(3, "pair")
  expect_setequal(names(wait_for(asking, "input_required")$inputRequests), c("a", "b"))
  update <- function(id, responses) post(id, "tasks/update", list(taskId = asking, inputResponses = responses), asking)
  expect_equal(update(4, list(a = list(action = "accept", content = list(name = "Ada"))))$result$resultType, "complete")
  expect_named(get(5, asking)$inputRequests, "b")
  update(6, list(b = list(action = "accept", content = list(name = "Lovelace"))))
  expect_equal(wait_for(asking, "completed")$result$content[[1]]$text, "Ada Lovelace")

  long <- create(7, "nap", list(seconds = 60))
  expect_equal(post(8, "tasks/cancel", list(taskId = long), long)$result$resultType, "complete")
  expect_equal(wait_for(long, "cancelled")$status, "cancelled")
  # The R thread is free again.
  expect_equal(wait_for(create(9, "nap", list(seconds = 0)), "completed")$status, "completed")
})

test_that("several clients are served at once, each in its own session", {
  skip_if_no_curl()
  server <- serve_http()
  sessions <- vapply(1:4, function(i) http_initialize(server$url)$session, "")
  expect_equal(length(unique(sessions)), 4L)
  # The same request id in every session, sent at once.
  procs <- lapply(seq_along(sessions), function(i) {
    body <- jsonlite::toJSON(list(jsonrpc = "2.0", id = 1, method = "tools/call",
      params = list(name = "add", arguments = list(x = i, y = 100))), auto_unbox = TRUE)
    processx::process$new("curl", c("-s", "-i", "-N", "--max-time", "20", "-X", "POST", "--data-binary", body,
      "-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
      "-H", paste0("Mcp-Session-Id: ", sessions[[i]]), server$url), stdout = "|")
  })
  answers <- vapply(procs, function(p) {
    p$wait(20000)
    messages <- http_messages(parse_http_reply(p$read_all_output()))
    messages[[length(messages)]]$result$content[[1]]$text
  }, "")
  expect_equal(answers, as.character(100 + 1:4))
})

test_that("requests from other origins and hosts are refused", {
  skip_if_no_curl()
  server <- serve_http()
  body <- list(jsonrpc = "2.0", id = 1, method = "tools/list", params = list(`_meta` = modern_meta()))
  evil <- curl_request(server$url, body, headers = c(modern_headers("tools/list"), Origin = "http://evil.example.com"))
  expect_equal(evil$status, 403L)
  rebound <- curl_request(server$url, body, headers = c(modern_headers("tools/list"), Host = "evil.example.com"))
  expect_equal(rebound$status, 421L)
  ok <- curl_request(server$url, body, headers = c(modern_headers("tools/list"), Origin = "http://localhost:3000"))
  expect_equal(ok$status, 200L)
})

test_that("a bearer token is required when one is configured", {
  skip_if_no_curl()
  server <- serve_http(extra = ", http = http_options(bearer_tokens = 'let-me-in')")
  body <- list(jsonrpc = "2.0", id = 1, method = "tools/list", params = list(`_meta` = modern_meta()))
  refused <- curl_request(server$url, body, headers = modern_headers("tools/list"))
  expect_equal(refused$status, 401L)
  expect_match(refused$headers[["www-authenticate"]], "^Bearer")
  ok <- curl_request(server$url, body, headers = c(modern_headers("tools/list"), Authorization = "Bearer let-me-in"))
  expect_equal(ok$status, 200L)
})

# A server whose tokens are checked by an R function that records each
# token it sees in `log` (to tell cached verdicts from new checks).
serve_token_checked <- function(log, env = parent.frame()) {
  start_http_server(c(
    sprintf("log <- %s", deparse(log)),
    "check <- function(token) {",
    "  cat(token, '\\n', file = log, append = TRUE)",
    "  if (token == 'boom') stop('the directory is down for ', token)",
    "  if (token == 'slow') { Sys.sleep(30); return(TRUE) }",
    "  if (token == 'ann-token') return(list(user = 'ann', scopes = c('read', 'write')))",
    "  token == 'plain-yes'",
    "}",
    "whoami <- tool(function() { a <- mcp_request()$auth; if (is.null(a)) 'nobody' else paste(a$user, paste(a$scopes, collapse = '+')) },",
    "  'Who is calling', name = 'whoami')",
    "mcp_server(list(whoami), transport = 'http', port = 0,",
    "  http = http_options(bearer_tokens = check, bearer_timeout = 1))"
  ), env = env)
}

tokens_checked <- function(log) {
  if (!file.exists(log)) return(character())
  trimws(readLines(log))
}

test_that("a function checks bearer tokens: 401 with a challenge, or the caller for tools", {
  skip_if_no_curl()
  log <- withr::local_tempfile()
  server <- serve_token_checked(log)
  body <- list(jsonrpc = "2.0", id = 1, method = "tools/list", params = list(`_meta` = modern_meta()))
  none <- curl_request(server$url, body, headers = modern_headers("tools/list"))
  expect_equal(none$status, 401L)
  expect_equal(none$headers[["www-authenticate"]], "Bearer")
  bad <- curl_request(server$url, body, headers = c(modern_headers("tools/list"), Authorization = "Bearer wrong"))
  expect_equal(bad$status, 401L)
  expect_match(bad$headers[["www-authenticate"]], 'error="invalid_token"', fixed = TRUE)
  # The function's hidden entry is no tool.
  ok <- curl_request(server$url, body, headers = c(modern_headers("tools/list"), Authorization = "Bearer ann-token"))
  expect_equal(ok$status, 200L)
  listed <- http_messages(ok)[[1]]$result$tools
  expect_equal(vapply(listed, function(t) t$name, ""), "whoami")
  call <- list(jsonrpc = "2.0", id = 2, method = "tools/call", params = list(name = "whoami", arguments = setNames(list(), character()), `_meta` = modern_meta()))
  who <- curl_request(server$url, call, headers = c(modern_headers("tools/call", "whoami"), Authorization = "Bearer ann-token"))
  expect_equal(who$status, 200L)
  answer <- http_messages(who)
  expect_equal(answer[[length(answer)]]$result$content[[1]]$text, "ann read+write")
  plain <- curl_request(server$url, call, headers = c(modern_headers("tools/call", "whoami"), Authorization = "Bearer plain-yes"))
  answer <- http_messages(plain)
  expect_equal(answer[[length(answer)]]$result$content[[1]]$text, "nobody")
  # Each token was checked once: later requests used the remembered verdict
  # (a refusal included).
  again <- curl_request(server$url, body, headers = c(modern_headers("tools/list"), Authorization = "Bearer wrong"))
  expect_equal(again$status, 401L)
  expect_equal(sort(tokens_checked(log)), c("ann-token", "plain-yes", "wrong"))
})

test_that("a session stays bound to the token that opened it", {
  skip_if_no_curl()
  log <- withr::local_tempfile()
  server <- serve_token_checked(log)
  init <- curl_request(server$url, list(
    jsonrpc = "2.0", id = 0, method = "initialize",
    params = list(protocolVersion = "2025-11-25", capabilities = setNames(list(), character()), clientInfo = list(name = "t", version = "1"))
  ), headers = c(Authorization = "Bearer ann-token"))
  expect_equal(init$status, 200L)
  session <- init$headers[["mcp-session-id"]]
  body <- list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "whoami"))
  mine <- curl_request(server$url, body, headers = c("Mcp-Session-Id" = session, Authorization = "Bearer ann-token"))
  expect_equal(mine$status, 200L)
  answer <- http_messages(mine)
  expect_equal(answer[[length(answer)]]$result$content[[1]]$text, "ann read+write")
  theirs <- curl_request(server$url, body, headers = c("Mcp-Session-Id" = session, Authorization = "Bearer plain-yes"))
  expect_equal(theirs$status, 404L)
})

test_that("2026-07-28 tasks belong to the holder the token function names, or else to the token", {
  skip_if_no_curl()
  server <- start_http_server(c(
    "holders <- c('ann-old' = 'ann', 'ann-refreshed' = 'ann', 'bob-token' = 'bob')",
    "check <- function(token) {",
    "  if (token %in% names(holders)) return(list(user = holders[[token]]))",
    "  token %in% c('plain-a', 'plain-b')",
    "}",
    "nap <- tool(function(seconds) { Sys.sleep(seconds); 'rested' }, 'Sleeps', name = 'nap',",
    "  arguments = list(seconds = type_number()), task = 'optional')",
    "mcp_server(list(nap), transport = 'http', port = 0, http = http_options(bearer_tokens = check))"
  ))
  empty <- setNames(list(), character())
  meta <- modern_meta()
  meta[["io.modelcontextprotocol/clientCapabilities"]] <- list(
    extensions = list(`io.modelcontextprotocol/tasks` = empty)
  )
  post <- function(token, id, method, params, name = NULL) {
    params$`_meta` <- meta
    curl_request(server$url, list(jsonrpc = "2.0", id = id, method = method, params = params),
      headers = c(modern_headers(method, name), Authorization = paste("Bearer", token)))
  }
  create <- function(token, id, seconds) {
    reply <- post(token, id, "tools/call", list(name = "nap", arguments = list(seconds = seconds)), "nap")
    created <- http_messages(reply)[[1]]$result
    expect_equal(created$resultType, "task")
    created$taskId
  }
  task_call <- function(token, id, method, task) post(token, id, method, list(taskId = task), task)
  status_of <- function(token, id, task) http_messages(task_call(token, id, "tasks/get", task))[[1]]$result$status
  # What a task id the server never issued gets, as it reads for `task`.
  unknown <- function(token, id, method, task) {
    made_up <- paste0(substr(task, 1, nchar(task) - 1), if (endsWith(task, "0")) "1" else "0")
    reply <- task_call(token, id, method, made_up)
    reply$body <- gsub(made_up, task, reply$body, fixed = TRUE)
    reply
  }
  # Tokens are checked on R's thread, which the long task below keeps busy:
  # have every verdict remembered first.
  for (token in c("ann-old", "ann-refreshed", "bob-token", "plain-a", "plain-b")) {
    expect_equal(post(token, 0, "server/discover", list())$status, 200L)
  }
  long <- create("ann-old", 1, 60)
  # Ann's refreshed token is still ann: it reaches her task.
  expect_equal(status_of("ann-refreshed", 2, long), "working")
  # Bob's gets, word for word, what an unknown id gets.
  for (method in c("tasks/get", "tasks/cancel")) {
    theirs <- task_call("bob-token", 3, method, long)
    expect_equal(theirs$status, 400L)
    expect_equal(http_messages(theirs)[[1]]$error$code, -32602L)
    expect_identical(theirs$body, unknown("bob-token", 3, method, long)$body)
  }
  expect_equal(status_of("ann-old", 4, long), "working")
  # A function that answers TRUE names no holder: each token owns its own.
  # (It waits for R, busy with ann's task.)
  short <- create("plain-a", 5, 0)
  expect_equal(status_of("plain-a", 6, short), "working")
  expect_equal(task_call("plain-b", 7, "tasks/get", short)$status, 400L)
  expect_equal(task_call("ann-old", 8, "tasks/get", short)$status, 400L)
  expect_equal(task_call("ann-refreshed", 9, "tasks/cancel", long)$status, 200L)
  expect_equal(status_of("ann-old", 10, long), "cancelled")
  for (i in 1:100) {
    if (identical(status_of("plain-a", 11, short), "completed")) break
    Sys.sleep(0.05)
  }
  expect_equal(status_of("plain-a", 12, short), "completed")
})

test_that("a failing or slow token function answers 500 or 503, and serving goes on", {
  skip_if_no_curl()
  log <- withr::local_tempfile()
  server <- serve_token_checked(log)
  body <- list(jsonrpc = "2.0", id = 1, method = "tools/list", params = list(`_meta` = modern_meta()))
  ask <- function(token) curl_request(server$url, body, headers = c(modern_headers("tools/list"), Authorization = paste("Bearer", token)))
  failed <- ask("boom")
  expect_equal(failed$status, 500L)
  expect_match(failed$body, "could not check the bearer token")
  expect_false(grepl("boom", failed$body))
  started <- Sys.time()
  slow <- ask("slow")
  waited <- as.numeric(difftime(Sys.time(), started, units = "secs"))
  expect_equal(slow$status, 503L)
  expect_equal(slow$headers[["retry-after"]], "1")
  expect_lt(waited, 10)
  # Neither outcome is remembered: asked again, the function runs again.
  expect_equal(ask("boom")$status, 500L)
  expect_equal(sum(tokens_checked(log) == "boom"), 2L)
  # The server still serves, and its stderr masks the token in the error.
  expect_equal(ask("plain-yes")$status, 200L)
  said <- paste(server$proc$read_error_lines(), collapse = "\n")
  expect_match(said, "the directory is down for <token>", fixed = TRUE)
  expect_false(grepl("down for boom", said, fixed = TRUE))
})

test_that("bad bearer token settings are clear R errors", {
  expect_error(http_options(bearer_tokens = function() TRUE), "one argument")
  expect_error(http_options(bearer_tokens = function(t) TRUE, bearer_cache = -1), "bearer_cache")
  expect_error(http_options(bearer_tokens = function(t) TRUE, bearer_timeout = 0), "bearer_timeout")
  expect_output(print(http_options(bearer_tokens = function(t) TRUE)), "checked by a function")
  handler <- mcpserver:::token_check_handler(function(token) "yes")
  expect_error(handler("x"), "TRUE, FALSE or a named list")
})

test_that("a call whose stream the server lets go is resumed by its client", {
  skip_if_no_curl()
  server <- start_http_server(c(
    "polled <- tool(function() { closed <- mcp_close_stream(); mcp_progress(1, 2); Sys.sleep(0.3); paste('closed', closed) },",
    "  'Lets its connection go', name = 'polled')",
    "mcp_server(list(polled), transport = 'http', port = 0)"
  ))
  # By hand: the POST's stream holds only the priming event; the rest comes
  # on a GET that names it in Last-Event-ID.
  init <- http_initialize(server$url)
  headers <- c("Mcp-Session-Id" = init$session, "MCP-Protocol-Version" = "2025-11-25")
  body <- list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(
    name = "polled", `_meta` = list(progressToken = "p")
  ))
  reply <- curl_request(server$url, body, headers = headers)
  expect_equal(reply$status, 200L)
  expect_match(reply$headers[["content-type"]], "text/event-stream")
  lines <- strsplit(reply$body, "\n", fixed = TRUE)[[1]]
  ids <- sub("^id: ", "", lines[startsWith(lines, "id: ")])
  expect_length(ids, 1)
  expect_true(any(grepl("^retry: [0-9]+$", lines)))
  expect_length(http_messages(reply), 0)
  resumed <- curl_request(server$url, headers = c(headers, "Last-Event-ID" = ids[[1]], Accept = "text/event-stream"))
  expect_equal(resumed$status, 200L)
  messages <- http_messages(resumed)
  methods <- vapply(messages, function(m) if (is.null(m$method)) "" else m$method, "")
  expect_true("notifications/progress" %in% methods)
  answer <- messages[[length(messages)]]
  expect_equal(answer$id, 1)
  expect_equal(answer$result$content[[1]]$text, "closed TRUE")
  # An R client resumes by itself.
  client <- mcp_client(server$url)
  withr::defer(mcp_close(client))
  expect_equal(mcp_call(client, "polled")$text, "closed TRUE")
  # A client of an older revision cannot resume before a first message:
  # the stream is not let go.
  old <- mcp_client(server$url, protocol_version = "2025-06-18")
  withr::defer(mcp_close(old))
  expect_equal(mcp_call(old, "polled")$text, "closed FALSE")
})

test_that("bad HTTP settings are clear R errors", {
  expect_error(mcp_server(list(), transport = "http", port = -1), "`port`")
  expect_error(mcp_server(list(), transport = "http", path = "mcp"), "`path`")
  expect_error(mcp_server(list(), transport = "http", http = list()), "http_options")
  expect_error(mcp_server(list(), transport = "carrier pigeon"), "should be one of")
  expect_error(http_options(allowed_hosts = ""), "allowed_hosts")
  expect_error(http_options(max_body_size = 10), "max_body_size")
  expect_error(http_options(authorization_servers = "https://a.example"), "resource")
  expect_error(http_options(resource = "mcp.example.com"), "resource")
  expect_output(print(http_options(bearer_tokens = "secret")), "<1 token")
  expect_false(any(grepl("secret", capture.output(print(http_options(bearer_tokens = "secret"))))))
})

test_that("a port in use and a public address without an allow-list fail at start", {
  skip_if_no_curl()
  server <- serve_http()
  port <- sub("^.*:([0-9]+)/mcp$", "\\1", server$url)
  add <- tool(function(x) x, "Identity", name = "id", arguments = list(x = type_number()))
  expect_error(mcp_server(list(add), transport = "http", port = as.integer(port)), "could not serve HTTP")
  expect_error(mcp_server(list(add), transport = "http", host = "0.0.0.0", port = 0), "not a loopback address")
})

test_that("HTTP sessions and listen streams hear of list changes and resource updates", {
  skip_if_no_curl()
  server <- start_http_server(c(
    "notes <- 'first'",
    "note <- tool(function(text) { notes <<- c(notes, text); mcp_resource_updated('notes://all')",
    "  mcp_add(tool(function() length(notes), 'Counts notes', name = 'count')); 'noted' },",
    "  'Takes a note', name = 'note', arguments = list(text = type_string()))",
    "all_notes <- resource('notes://all', function() notes, description = 'All notes')",
    "mcp_server(note, resources = all_notes, transport = 'http', port = 0)"
  ))
  init <- http_initialize(server$url)
  session <- c("Mcp-Session-Id" = init$session, "MCP-Protocol-Version" = "2025-11-25")
  subscribed <- curl_request(server$url, list(jsonrpc = "2.0", id = 1, method = "resources/subscribe",
    params = list(uri = "notes://all")), headers = session)
  expect_equal(http_messages(subscribed)[[1]]$result, setNames(list(), character()))
  # Two long-lived streams, read by curl in the background until they time out.
  stream <- function(args) {
    processx::process$new("curl", c("-s", "-N", "--max-time", "6", args, server$url), stdout = "|", stderr = "|")
  }
  get_stream <- stream(c("-H", "Accept: text/event-stream", "-H", paste0("Mcp-Session-Id: ", init$session)))
  listen <- list(jsonrpc = "2.0", id = 7, method = "subscriptions/listen", params = list(
    notifications = list(toolsListChanged = TRUE, resourceSubscriptions = list("notes://all")),
    `_meta` = modern_meta()
  ))
  listen_headers <- modern_headers("subscriptions/listen")
  listen_stream <- stream(c(
    "-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
    unlist(lapply(names(listen_headers), function(n) c("-H", paste0(n, ": ", listen_headers[[n]])))),
    "--data-binary", jsonlite::toJSON(listen, auto_unbox = TRUE)
  ))
  # The listen stream is open once acknowledged (the GET stream opened first).
  seen <- ""
  deadline <- Sys.time() + 10
  while (!grepl("acknowledged", seen) && Sys.time() < deadline) {
    listen_stream$poll_io(200)
    seen <- paste0(seen, listen_stream$read_output())
  }
  expect_match(seen, "acknowledged")
  called <- curl_request(server$url, list(jsonrpc = "2.0", id = 2, method = "tools/call",
    params = list(name = "note", arguments = list(text = "second"))), headers = session)
  answer <- http_messages(called)
  expect_equal(answer[[length(answer)]]$result$content[[1]]$text, "noted")
  get_stream$wait(10000)
  listen_stream$wait(10000)
  data_of <- function(proc, before = "") {
    lines <- strsplit(paste0(before, proc$read_all_output()), "\n", fixed = TRUE)[[1]]
    lapply(sub("^data: ", "", lines[startsWith(lines, "data: ")]), jsonlite::fromJSON, simplifyVector = FALSE)
  }
  heard <- data_of(get_stream)
  expect_setequal(vapply(heard, function(m) m$method, ""), c("notifications/resources/updated", "notifications/tools/list_changed"))
  for (m in heard) expect_wire_valid(jsonlite::toJSON(m, auto_unbox = TRUE), "2025-11-25")
  on_listen <- data_of(listen_stream, seen)
  methods <- vapply(on_listen, function(m) m$method, "")
  expect_equal(methods[1], "notifications/subscriptions/acknowledged")
  expect_setequal(methods[-1], c("notifications/resources/updated", "notifications/tools/list_changed"))
  for (m in on_listen) {
    expect_equal(m$params$`_meta`$`io.modelcontextprotocol/subscriptionId`, 7)
    expect_wire_valid(jsonlite::toJSON(m, auto_unbox = TRUE), "2026-07-28")
  }
  listed <- curl_request(server$url, list(jsonrpc = "2.0", id = 3, method = "tools/list"), headers = session)
  names <- vapply(http_messages(listed)[[1]]$result$tools, function(t) t$name, "")
  expect_equal(names, c("note", "count"))
})

test_that("a bearer-token function still checks tokens after the tools change", {
  skip_if_no_curl()
  server <- start_http_server(c(
    "grow <- tool(function() { mcp_add(tool(function() 'new', 'A new tool', name = 'fresh')); 'grown' }, 'Adds a tool', name = 'grow')",
    "mcp_server(grow, prompts = list(), transport = 'http', port = 0,",
    "  http = http_options(bearer_tokens = function(token) token == 'good', bearer_cache = 0))"
  ))
  list_with <- function(token, id) {
    curl_request(server$url, list(jsonrpc = "2.0", id = id, method = "tools/list", params = list(`_meta` = modern_meta())),
      headers = c(modern_headers("tools/list"), Authorization = paste("Bearer", token)))
  }
  call <- curl_request(server$url, list(jsonrpc = "2.0", id = 1, method = "tools/call",
    params = list(name = "grow", arguments = setNames(list(), character()), `_meta` = modern_meta())),
    headers = c(modern_headers("tools/call", "grow"), Authorization = "Bearer good"))
  answer <- http_messages(call)
  expect_equal(answer[[length(answer)]]$result$content[[1]]$text, "grown")
  listed <- list_with("good", 2)
  expect_equal(listed$status, 200L)
  expect_equal(vapply(http_messages(listed)[[1]]$result$tools, function(t) t$name, ""), c("grow", "fresh"))
  expect_equal(list_with("bad", 3)$status, 401L)
})

test_that("a tool that calls quit() gets its HTTP call answered before the process ends", {
  server <- start_http_server(c(
    "bye <- tool(function() quit(save = 'no'), 'Ends R', name = 'bye')",
    "mcp_server(bye, transport = 'http', port = 0)"
  ))
  client <- mcp_client(server$url, timeout = 20)
  r <- mcp_call(client, "bye")
  expect_true(r$is_error)
  expect_match(r$text, "The tool \"bye\" ended the R process", fixed = TRUE)
  server$proc$wait(10000)
  expect_false(server$proc$is_alive())
  expect_match(server$proc$read_all_error(), "the tool \"bye\" ended the R process", fixed = TRUE)
})

test_that("MCPSERVER_TRACE never shows a bearer token, nor a piece of one", {
  skip_if_no_curl()
  server <- start_http_server(c(
    "check <- function(token) {",
    "  if (startsWith(token, 'whole')) stop(sprintf('lookup failed for token %s', token))",
    "  if (startsWith(token, 'part')) stop('no user for ', substr(token, 1, 12), '...')",
    "  token == 'fine-s3cr3t-9'",
    "}",
    "mcp_server(list(tool(function() 'hi', 'Says hi', name = 'hi')), transport = 'http', port = 0,",
    "  http = http_options(bearer_tokens = check))"
  ), vars = c(MCPSERVER_TRACE = "1"))
  body <- list(jsonrpc = "2.0", id = 1, method = "tools/list", params = list(`_meta` = modern_meta()))
  ask <- function(token) curl_request(server$url, body, headers = c(modern_headers("tools/list"), Authorization = paste("Bearer", token)))
  expect_equal(ask("whole-s3cr3t-9f8e7d")$status, 500L)
  expect_equal(ask("part-s3cr3t-6c5b4a")$status, 500L)
  expect_equal(ask("fine-s3cr3t-9")$status, 200L)
  said <- server$said
  deadline <- Sys.time() + 5
  while (!any(grepl("no user for", said)) && Sys.time() < deadline) {
    server$proc$poll_io(100)
    said <- c(said, server$proc$read_error_lines())
  }
  said <- paste(said, collapse = "\n")
  expect_match(said, "[mcpserver", fixed = TRUE) # the trace is on
  expect_match(said, "lookup failed for token <token>", fixed = TRUE)
  expect_match(said, "no user for <token>...", fixed = TRUE)
  expect_false(grepl("s3cr3t", said, fixed = TRUE))
})

# Linux's resident set size of a process, in bytes.
resident_bytes <- function(pid) {
  status <- readLines(sprintf("/proc/%d/status", pid))
  kb <- as.numeric(sub("^VmRSS:\\s*([0-9]+) kB$", "\\1", grep("^VmRSS:", status, value = TRUE)))
  kb * 1024
}

test_that("resumptions of a stream share what it keeps: 40 of an 8 MiB answer cost next to nothing", {
  skip_if_no_curl()
  skip_if_not(file.exists("/proc/self/status"), "needs Linux's /proc")
  server <- start_http_server(c(
    "big <- tool(function() { Sys.sleep(1); strrep('x', 8 * 1024^2) }, 'A large answer', name = 'big')",
    "mcp_server(list(big), transport = 'http', port = 0, http = http_options(max_streams_per_client = 64))"
  ))
  init <- http_initialize(server$url)
  session <- c("Mcp-Session-Id" = init$session, "MCP-Protocol-Version" = "2025-11-25")
  # An event-stream answer is kept for a client that comes back for it.
  call <- curl_request(server$url, list(jsonrpc = "2.0", id = 1, method = "tools/call",
    params = list(name = "big", arguments = setNames(list(), character()))),
    headers = c(session, Accept = "text/event-stream"), timeout = 60)
  expect_match(call$body, "id: 1:0", fixed = TRUE)
  port <- as.integer(sub("^http://[^:]+:([0-9]+)/.*$", "\\1", server$url))
  before <- resident_bytes(server$proc$get_pid())
  # 40 clients resume it and never read.
  get <- paste0(
    "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:", port, "\r\nAccept: text/event-stream\r\n",
    "Mcp-Session-Id: ", init$session, "\r\nLast-Event-ID: 1:0\r\n\r\n"
  )
  idle <- lapply(1:40, function(i) {
    con <- socketConnection("127.0.0.1", port, open = "r+b", blocking = TRUE)
    writeBin(charToRaw(get), con)
    con
  })
  withr::defer(for (con in idle) close(con))
  Sys.sleep(2)
  grown <- resident_bytes(server$proc$get_pid()) - before
  expect_lt(grown, 64 * 1024^2)
  # The newest resumption gets the whole answer.
  resumed <- curl_request(server$url, headers = c(session, Accept = "text/event-stream", "Last-Event-ID" = "1:0"), timeout = 60)
  messages <- http_messages(resumed)
  expect_equal(nchar(messages[[length(messages)]]$result$content[[1]]$text), 8 * 1024^2)
})
