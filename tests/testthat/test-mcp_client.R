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

# A fixture script served over HTTP on a free port: its closing
# mcp_server() call gets the transport.
serve_fixture_http <- function(name, env = parent.frame()) {
  code <- readLines(fixture(name))
  last <- max(grep(")", code, fixed = TRUE))
  code[last] <- sub("\\)([^)]*)$", ", transport = 'http', port = 0)\\1", code[last])
  start_http_server(code, env = env)$url
}

model <- function(messages, params) {
  paste0("Paris (", params$maxTokens, " tokens, asked: ", messages[[1]]$content$text, ")")
}
user <- function(message, schema) list(action = "accept", content = list(name = "Ada"))
two_roots <- c(Project = "file:///work/project", "file:///data")

test_that("sample and roots answer the server's requests, over stdio and HTTP, in both eras", {
  servers <- list(stdio = fixture("asking.R"), http = serve_fixture_http("asking.R"))
  for (where in names(servers)) {
    for (version in c("2025-11-25", "2026-07-28")) {
      info <- paste(where, version)
      client <- mcp_client(servers[[where]], protocol_version = version, sample = model, roots = two_roots, elicit = user)
      expect_equal(
        mcp_call(client, "capital")$text,
        "LLM response: Paris (100 tokens, asked: What is the capital of France?) (mcpserver-r-client, endTurn)",
        info = info
      )
      expect_equal(mcp_call(client, "roots")$text, "2 roots: file:///work/project Project; file:///data NA", info = info)
      # Three requests of three kinds, in one round on 2026-07-28.
      expect_equal(mcp_call(client, "multiple")$text, "Paris (50 tokens, asked: Generate a greeting) Ada - roots: 2", info = info)
      mcp_close(client)
    }
  }
})

test_that("the client declares only the capabilities it was given a function for", {
  for (version in c("2025-11-25", "2026-07-28")) {
    # Sampling only: the tool asks the model, not the user.
    client <- mcp_client(fixture("asking.R"), protocol_version = version, sample = function(messages, params) "Hello!")
    expect_equal(mcp_call(client, "by_capability")$text, "Hello!", info = version)
    mcp_close(client)
    # Elicitation only: the tool asks the user.
    client <- mcp_client(fixture("asking.R"), protocol_version = version, elicit = user)
    expect_equal(mcp_call(client, "by_capability")$text, "Ada", info = version)
    mcp_close(client)
  }
  # Without `sample`, sampling cannot be had: a tool error before
  # 2026-07-28, -32021 naming sampling on it.
  client <- mcp_client(fixture("asking.R"), elicit = user)
  r <- mcp_call(client, "capital")
  expect_true(r$is_error)
  expect_match(r$text, "sampling")
  mcp_close(client)
  client <- mcp_client(fixture("asking.R"), protocol_version = "2026-07-28", elicit = user)
  err <- tryCatch(mcp_call(client, "roots"), error = identity)
  expect_s3_class(err, "mcpserver_protocol_error")
  expect_equal(err$code, -32021L)
  expect_named(err$data$requiredCapabilities, "roots")
  mcp_close(client)
})

test_that("a sampling answer may be a whole result, and roots a function or paths", {
  whole <- function(messages, params) {
    list(role = "assistant", content = list(type = "text", text = "Lyon"), model = "tiny", stopReason = "maxTokens")
  }
  dir <- file.path(withr::local_tempdir(), "my project")
  dir.create(dir)
  calls <- 0
  roots <- function() {
    calls <<- calls + 1
    c(Here = dir)
  }
  for (version in c("2025-11-25", "2026-07-28")) {
    client <- mcp_client(fixture("asking.R"), protocol_version = version, sample = whole, roots = roots)
    expect_equal(mcp_call(client, "capital")$text, "LLM response: Lyon (tiny, maxTokens)")
    # A path becomes a file:// URI, percent-encoded.
    expect_equal(mcp_call(client, "roots")$text, paste0("1 roots: file://", sub(" ", "%20", normalizePath(dir)), " Here"))
    mcp_close(client)
  }
  expect_equal(calls, 2)
  # A function of the messages alone.
  client <- mcp_client(fixture("asking.R"), sample = function(messages) toupper(messages[[1]]$content$text))
  expect_match(mcp_call(client, "capital")$text, "WHAT IS THE CAPITAL OF FRANCE?", fixed = TRUE)
  mcp_close(client)
})

test_that("an error in an answering function is raised, and the server goes on", {
  broken <- function(messages, params) stop("no model here")
  for (version in c("2025-11-25", "2026-07-28")) {
    client <- mcp_client(fixture("asking.R"), protocol_version = version, sample = broken, roots = two_roots)
    expect_error(mcp_call(client, "capital"), "no model here")
    expect_equal(mcp_call(client, "roots")$text, "2 roots: file:///work/project Project; file:///data NA", info = version)
    mcp_close(client)
  }
  client <- mcp_client(fixture("asking.R"), sample = function(messages, params) 42)
  expect_error(mcp_call(client, "capital"), "`sample` must return a string or a list")
  mcp_close(client)
})

test_that("an answer that cannot become JSON is an error the server hears of", {
  # The shape passes the checks, but a function cannot be sent: the
  # server's tool must get an error response, not wait for ever.
  garbage <- function(messages, params) list(role = "assistant", content = function() 1, model = "x")
  for (version in c("2025-11-25", "2026-07-28")) {
    client <- mcp_client(fixture("asking.R"), protocol_version = version, sample = garbage, roots = two_roots, timeout = 10)
    expect_error(mcp_call(client, "capital"), "cannot convert a function to JSON", info = version)
    expect_equal(mcp_call(client, "roots")$text, "2 roots: file:///work/project Project; file:///data NA", info = version)
    mcp_close(client)
  }
})

test_that("mcp_client() checks sample and roots", {
  expect_error(mcp_client(fixture("asking.R"), sample = "model"), "`sample` must be NULL or a function")
  expect_error(mcp_client(fixture("asking.R"), roots = 1), "`roots` must be a character vector")
  expect_error(mcp_client(fixture("asking.R"), roots = c("file:///a", NA)), "`roots` must be a character vector")
})

test_that("resources, templates and prompts are listed, read and got, over stdio and HTTP, in both eras", {
  servers <- list(stdio = fixture("resources.R"), http = serve_fixture_http("resources.R"))
  context <- function(message, schema) list(action = "accept", content = list(context = "sales data"))
  for (where in names(servers)) {
    for (version in c("2025-11-25", "2026-07-28")) {
      info <- paste(where, version)
      client <- mcp_client(servers[[where]], protocol_version = version, elicit = context)
      resources <- mcp_resources(client)
      expect_s3_class(resources, "mcpserver_resource_list")
      expect_true(all(c("test://static-text", "test://static-binary", "notes://all") %in% names(resources)), info = info)
      expect_equal(resources$`test://static-text`$mimeType, "text/plain", info = info)
      expect_output(print(resources), "test://static-text: A static text resource", fixed = TRUE)
      templates <- mcp_resource_templates(client)
      expect_equal(names(templates), c("test://template/{id}/data", "datasets://{name}"), info = info)
      expect_output(print(templates), "<2 resource templates>", fixed = TRUE)

      text <- mcp_read_resource(client, "test://static-text")
      expect_s3_class(text, "mcpserver_read_result")
      expect_equal(text$text, "This is the content of the static text resource.", info = info)
      expect_equal(text$result_type, "complete")
      binary <- mcp_read_resource(client, "test://static-binary")
      expect_equal(binary$text, "")
      expect_equal(binary$contents[[1]]$mimeType, "image/png")
      expect_equal(mcp_read_resource(client, "test://template/42/data")$text, '{"id":"42","templateTest":true,"data":"Data for ID: 42"}')
      err <- tryCatch(mcp_read_resource(client, "test://nothing"), error = identity)
      expect_s3_class(err, "mcpserver_protocol_error")
      expect_equal(err$code, if (version == "2026-07-28") -32602L else -32002L, info = info)
      expect_equal(err$data$uri, "test://nothing")

      prompts <- mcp_prompts(client)
      expect_true(all(c("test_simple_prompt", "dialogue") %in% names(prompts)), info = info)
      expect_output(print(prompts), "dialogue: A two-turn dialogue", fixed = TRUE)
      dialogue <- mcp_get_prompt(client, "dialogue", topic = "cats", tone = "warm")
      expect_s3_class(dialogue, "mcpserver_prompt_result")
      expect_equal(dialogue$roles, c("user", "assistant"))
      expect_equal(dialogue$text, "Tell me about cats.\nGladly, in a warm tone.", info = info)
      expect_equal(mcp_get_prompt(client, "test_prompt_with_arguments", arguments = list(arg1 = "a", arg2 = 2))$text,
        "Prompt with arguments: arg1='a', arg2='2'")
      expect_equal(mcp_get_prompt(client, "test_prompt_with_image")$messages[[1]]$content$type, "image")
      # A prompt asking the user: a request, or an input_required round.
      expect_equal(mcp_get_prompt(client, "test_input_required_result_prompt")$text, "Prompt with context: sales data", info = info)
      err <- tryCatch(mcp_get_prompt(client, "dialogue"), error = identity)
      expect_equal(err$code, -32602L)

      # The values compare as a plain character vector; the counts come
      # with `details = TRUE`.
      expect_equal(mcp_complete(client, "name", "a", template = "datasets://{name}"), "airquality", info = info)
      completions <- mcp_complete(client, "name", "a", template = "datasets://{name}", details = TRUE)
      expect_equal(completions, list(values = "airquality", total = 1L, has_more = FALSE), info = info)
      # The other arguments already given reach the completion function.
      expect_equal(
        as.vector(mcp_complete(client, "arg1", "x", prompt = "test_prompt_with_arguments", context = list(arg2 = "!"))),
        c("xA!", "xB!"), info = info
      )
      expect_length(mcp_complete(client, "tone", "w", prompt = "dialogue"), 0)
      mcp_close(client)
    }
  }
})

test_that("the resource and prompt helpers check their arguments", {
  client <- mcp_client(fixture("resources.R"))
  withr::defer(mcp_close(client))
  expect_error(mcp_read_resource(client, 1), "`uri` must be a single string")
  expect_error(mcp_get_prompt(client, "dialogue", "cats"), "Prompt arguments must be named")
  expect_error(mcp_get_prompt(client, "dialogue", topic = c("a", "b")), "Prompt arguments must be single strings")
  expect_error(mcp_complete(client, "name", "a"), "Give one of `prompt`")
  expect_error(mcp_complete(client, "name", "a", prompt = "x", template = "y"), "Give one of `prompt`")
  expect_error(mcp_resources(list()), "`client` must be made by `mcp_client()`", fixed = TRUE)
  # A prompt asking the user, with no `elicit`: a tool-like failure the
  # server reports.
  expect_error(mcp_get_prompt(client, "test_input_required_result_prompt"), class = "mcpserver_protocol_error")
})

test_that("mcp_call() sees a tool's progress reports and log messages", {
  fit <- function(n = 3) {
    for (i in seq_len(n)) {
      mcp_progress(i, total = n, message = sprintf("model %d", i))
      mcp_log("info", "fitted model ", i)
      Sys.sleep(0.06) # reports closer than 50 ms apart are thinned
    }
    mcp_log("debug", "details")
    "done"
  }
  tools <- list(tool(fit, "Fit models", arguments = list(n = type_integer(required = FALSE))))
  for (version in c("2025-11-25", "2026-07-28")) {
    client <- mcp_client(tools, protocol_version = version, log_level = "info")
    # `n = 3` is the tool's, though R would match it to `name`.
    result <- mcp_call(client, "fit", n = 3, progress = TRUE)
    expect_equal(result$text, "done")
    expect_equal(result$progress, data.frame(
      progress = c(1, 2, 3), total = c(3, 3, 3), message = sprintf("model %d", 1:3)
    ), info = version)
    # "debug" is below the client's level.
    expect_equal(result$logs, data.frame(
      level = rep("info", 3), logger = rep("fit", 3), message = sprintf("fitted model %d", 1:3)
    ), info = version)
    expect_length(result$notifications, 6)
    # Without a progress token the server sends no progress.
    quiet <- mcp_call(client, "fit", n = 2)
    expect_equal(nrow(quiet$progress), 0)
    expect_equal(nrow(quiet$logs), 2)
    mcp_close(client)
  }
  # A client without a log level gets no log messages.
  client <- mcp_client(tools)
  withr::defer(mcp_close(client))
  expect_equal(nrow(mcp_call(client, "fit", n = 1, progress = TRUE)$logs), 0)
  expect_error(mcp_client(tools, log_level = "loud"), "`log_level` must be NULL or one of")
  expect_error(mcp_call(client, "fit", progress = "yes"), "`progress` must be TRUE or FALSE")
})

test_that("a line printed before mcp_server() is named, with the way out", {
  script <- server_script(c(
    "cat('Welcome to my project\\n')",
    "mcp_server(tool(function() 'hi', 'Hi', name = 'hi'))"
  ))
  err <- tryCatch(mcp_client(script), error = identity)
  expect_s3_class(err, "mcpserver_error")
  expect_match(conditionMessage(err), "not a JSON-RPC message: Welcome to my project", fixed = TRUE)
  expect_match(conditionMessage(err), "Troubleshooting", fixed = TRUE)
  expect_match(conditionMessage(err), 'rscript_args = "--no-init-file"', fixed = TRUE)
})

test_that("rscript_args start R without the user's profile", {
  # An R profile that prints, as an .Rprofile greeting would: without the
  # option the protocol stream is corrupted, with it the server starts.
  home <- withr::local_tempdir()
  writeLines("cat('Hello from .Rprofile\\n')", file.path(home, ".Rprofile"))
  script <- server_script("mcp_server(tool(function() 'hi', 'Hi', name = 'hi'))")
  env <- c(R_PROFILE_USER = file.path(home, ".Rprofile"))
  expect_error(mcp_client(script, env = env), "Hello from .Rprofile", fixed = TRUE)
  client <- mcp_client(script, env = env, rscript_args = "--no-init-file")
  withr::defer(mcp_close(client))
  expect_equal(mcp_call(client, "hi")$text, "hi")
  expect_error(mcp_client(script, rscript_args = "no-dash"), "`rscript_args` must be NULL or a character vector")
})

test_that("tool and prompt arguments that abbreviate mcp_call()'s own are the tool's", {
  pick <- function(n, c = "none") paste(n, c)
  about <- function(na) paste("About", na)
  client <- mcp_client(list(
    tool(pick, "Pick", arguments = list(n = type_integer(), c = type_string(required = FALSE)))
  ))
  withr::defer(mcp_close(client))
  # R alone would bind `n` to `name` and `c` to `client`.
  expect_equal(mcp_call(client, "pick", n = 2L)$text, "2 none")
  expect_equal(mcp_call(client, "pick", c = "x", n = 1L)$text, "1 x")
  expect_equal(mcp_call(client = client, name = "pick", n = 3L)$text, "3 none")
  expect_equal(mcp_call(client, "pick", arguments = list(n = 4L))$text, "4 none")
  expect_error(mcp_call(client, "pick", n = 1L, 5), "Tool arguments must be named")
})

test_that("a tool or prompt argument called `name` or `client` is the tool's", {
  notebook <- function(name, client = "me") paste(name, "for", client)
  client <- mcp_client(list(
    tool(notebook, "Notebook", arguments = list(name = type_string(), client = type_string(required = FALSE)))
  ))
  withr::defer(mcp_close(client))
  # Before, `name = "work"` took the tool name's place.
  expect_equal(mcp_call(client, "notebook", name = "work")$text, "work for me")
  expect_equal(mcp_call(client, "notebook", name = "work", client = "Ada")$text, "work for Ada")
  expect_equal(mcp_call(client, name = "notebook", arguments = list(name = "x"))$text, "x for me")
})

test_that("a client tells whether a URL is this session's background server", {
  same <- mcpserver:::same_endpoint
  expect_true(same("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"))
  expect_true(same("http://localhost:8000/mcp", "http://127.0.0.1:8000/mcp"))
  expect_true(same("http://[::1]:8000/mcp", "http://127.0.0.1:8000/mcp"))
  expect_true(same("http://LOCALHOST:8000/x", "http://0.0.0.0:8000/mcp"))
  expect_false(same("http://127.0.0.1:8001/mcp", "http://127.0.0.1:8000/mcp"))
  expect_false(same("http://10.1.2.3:8000/mcp", "http://127.0.0.1:8000/mcp"))
  expect_false(same("http://localhost/mcp", "http://127.0.0.1:8000/mcp"))
})
