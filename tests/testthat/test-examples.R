# Every R code chunk of the README and the vignettes, and every example of
# man/*.Rd, runs as written (see helper-examples.R for how). A chunk that
# serves is served: the test lists its tools and calls them, as a client.
# The few chunks skipped are listed below with their reason, and the run
# prints them at its end.
skip_on_cran()
skip_on_os("windows")
sources <- example_sources()
skip_if_not(file.exists(sources$readme), "the package's sources (README, vignettes, man) are not here")

# ---- What the test asks of each server an example starts --------------------
#
# `doc` (a file name) and `match` (a regular expression on the server's
# code) find the server. `probe(client)` checks it through mcp_client();
# `client` holds more arguments for mcp_client() (an `elicit` function, a
# token), `env` the server process's environment ("{port}" is the
# document's port, "{free_port}" another free one). `probe_url(url)` replaces
# `probe` where a client cannot connect as is (a server that allows other
# host names only). `http_server` is code of a server the example needs
# to be running on the document's port (for the bridge).

example_server <- function(doc, match, probe = NULL, client = list(), env = character(),
                           probe_url = NULL, http_server = NULL) {
  list(doc = doc, match = match, probe = probe, client = client, env = env,
    probe_url = probe_url, http_server = http_server)
}

expect_add <- function(client) {
  expect_true("add" %in% names(mcp_tools(client)))
  expect_equal(mcp_call(client, "add", x = 1, y = 2)$text, "3")
}

expect_column_summary <- function(client) {
  expect_equal(names(mcp_tools(client)), "column_summary")
  result <- mcp_call(client, "column_summary", column = "mpg")
  expect_false(result$is_error, info = result$text)
  expect_equal(result$structured$mean, mean(mtcars$mpg))
}

expect_fit <- function(client) {
  expect_equal(names(mcp_tools(client)), "fit")
  result <- mcp_call(client, "fit", formula = "y ~ x", n = 200)
  expect_false(result$is_error, info = result$text)
  r_squared <- as.numeric(result$text)
  expect_true(r_squared > 0.5 && r_squared <= 1, info = result$text)
}

expect_describe <- function(client) {
  expect_equal(names(mcp_tools(client)), "describe")
  result <- mcp_call(client, "describe", column = "mpg")
  expect_false(result$is_error, info = result$text)
  expect_equal(jsonlite::fromJSON(result$text)[["Max."]], max(mtcars$mpg))
}

answer_questions <- function(message, schema) {
  content <- switch(message,
    "What is your name?" = list(name = "Ada"),
    "Where to?" = list(city = "Lisbon"),
    "Your pizza" = list(size = "l", toppings = list("ham", "basil"), extra_cheese = TRUE),
    stop("unexpected question: ", message)
  )
  list(action = "accept", content = content)
}

example_servers <- list(
  example_server("README.md", "mcp_server\\(list\\(\\s*tool\\(add", expect_add),
  example_server("README.md", "column_summary", expect_column_summary),
  example_server("README.md", "mcp_server\\(tools, transport = \"http\", port = [0-9]+\\)", expect_add),
  example_server("README.md", "background = TRUE", expect_add),
  example_server("getting-started.Rmd", "column_summary", expect_column_summary),
  example_server("concurrency.Rmd", "mcp_server\\(list\\(fit\\), workers = 4\\)", expect_fit),
  example_server("concurrency.Rmd", "mcp_server\\(list\\(fit\\)\\)", expect_fit),
  example_server("concurrency.Rmd", "copy_table", function(client) {
    result <- mcp_call(client, "copy_table", table = "mtcars")
    expect_equal(result$text, "copied 32 rows", info = result$text)
  }),
  example_server("http.Rmd", "mcp_server\\(tools, transport = \"http\", port = [0-9]+\\)", expect_add),
  example_server("http.Rmd", "host = \"0.0.0.0\"",
    env = c(MCP_TOKEN = "a-long-random-token"),
    probe_url = function(url) {
      # Reached by the name it allows, with the token: the 2026-07-28
      # revision needs no session, so one request lists the tools.
      url <- sub("//0\\.0\\.0\\.0:", "//127.0.0.1:", url)
      body <- list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(
        name = "add", arguments = list(x = 1, y = 2), `_meta` = modern_meta()
      ))
      headers <- c(Host = "mcp.example.com", Authorization = "Bearer a-long-random-token",
        modern_headers("tools/call", "add"))
      reply <- curl_request(url, body, headers = headers)
      expect_equal(reply$status, 200)
      expect_equal(http_messages(reply)[[1]]$result$content[[1]]$text, "3")
      # Another name, or no token, is refused.
      expect_equal(curl_request(url, body, headers = headers[names(headers) != "Host"])$status, 421)
      expect_equal(curl_request(url, body, headers = headers[names(headers) != "Authorization"])$status, 401)
    }
  ),
  example_server("http.Rmd", "mcp_server\\(whoami", client = list(token = "4f1c...e9"), probe = function(client) {
    expect_equal(mcp_call(client, "whoami")$text, "ann")
  }),
  example_server("http.Rmd", "mcp_server\\(describe", expect_describe),
  example_server("http.Rmd", "Sys.getenv\\(\"PORT\"\\)", expect_add,
    env = c(PORT = "{free_port}", MCP_STATE_KEY = "a-shared-secret")
  ),
  example_server("long-running.Rmd", "mcp_server\\(list\\(fit_tool\\), timeout = 300\\)", function(client) {
    result <- mcp_call(client, "fit_all", models = 3L, progress = TRUE)
    expect_equal(result$text, "all fitted")
    expect_equal(result$progress$progress, c(1, 2, 3))
  }),
  example_server("migrating.Rmd", "get_weather", function(client) {
    expect_equal(mcp_call(client, "get_weather", city = "Paris")$text, "Sunny in Paris")
  }),
  example_server("resources-and-prompts.Rmd", "prompts = list\\(explore_prompt, review\\)", function(client) {
    expect_setequal(names(mcp_tools(client)), c("add_note", "add_notebook", "drop_notebook"))
    expect_setequal(names(mcp_resources(client)), c("data://mtcars", "docs://readme", "notes://all"))
    expect_match(mcp_read_resource(client, "data://mtcars")$text, "\"mpg\":21,", fixed = TRUE)
    expect_match(mcp_read_resource(client, "data://datasets/iris")$text, "\"Species\":\"setosa\"", fixed = TRUE)
    expect_equal(mcp_complete(client, "dataset", "airq", prompt = "explore"), "airquality")
    expect_match(mcp_get_prompt(client, "explore", dataset = "iris")$text, "Explore the iris data set")
    expect_equal(mcp_get_prompt(client, "review", code = "x <- 1")$roles, c("user", "assistant"))
    expect_equal(mcp_call(client, "add_note", text = "buy milk")$text, "Noted.")
    expect_equal(mcp_read_resource(client, "notes://all")$text, "buy milk")
    expect_equal(mcp_call(client, "add_notebook", name = "work")$text, "Created work")
    expect_true("notes://work" %in% names(mcp_resources(client)))
  }),
  example_server("middleware.Rmd", "middleware = list\\(timing\\)", expect_add),
  example_server("middleware.Rmd", "middleware = shout", function(client) {
    expect_equal(mcp_call(client, "echo", text = "hi")$text, "HI!")
  }),
  example_server("middleware.Rmd", "middleware_cache\\(ttl = 300\\)", function(client) {
    expect_equal(names(mcp_tools(client)), "summarise")
    first <- mcp_call(client, "summarise", column = "mpg")
    expect_false(first$is_error, info = first$text)
    expect_equal(mcp_call(client, "summarise", column = "mpg")$text, first$text)
    expect_true(mcp_call(client, "reset")$is_error)
  }),
  example_server("middleware.Rd", "middleware = list\\(timing\\)", expect_add),
  example_server("middleware_ready_made.Rd", "middleware_audit\\(\\)", expect_add),
  example_server("mcp_server.Rd", "instructions = \"Use add for arithmetic.\"", function(client) {
    expect_equal(client$initialized$instructions, "Use add for arithmetic.")
    expect_add(client)
  }),
  example_server("mcp_elicit.Rd", "tool\\(greet", client = list(elicit = answer_questions), probe = function(client) {
    expect_equal(mcp_call(client, "greet")$text, "Hello, Ada!")
    expect_equal(mcp_call(client, "order_pizza")$text, "l ham, basil")
  }),
  example_server("mcp_task.Rd", "book_trip", client = list(elicit = answer_questions), probe = function(client) {
    expect_equal(mcp_tools(client)$book_trip$execution$taskSupport, "optional")
    expect_equal(mcp_call(client, "book_trip")$text, "Booked a trip to Lisbon")
  }),
  example_server("mcp_background.Rd", "mcp_server\\(describe", expect_describe),
  # Telemetry to a collector that is not there: spans are dropped, calls go on.
  example_server("telemetry.Rmd", "mcp_server\\(list\\(add\\), name = \"adder\"", expect_add),
  example_server("mcp_telemetry.Rd", "telemetry = mcp_telemetry", function(client) {
    expect_equal(mcp_call(client, "echo", x = "hi")$text, "hi")
  }),
  example_server("mcp_bridge.Rd", "mcp_bridge\\(", env = c(MCP_TOKEN = "bridge-secret"),
    http_server = c(
      "add <- function(x, y) x + y",
      "mcp_server(tool(add, 'Add two numbers', arguments = list(x = type_number(), y = type_number())),",
      "  transport = 'http', port = {port}, http = http_options(bearer_tokens = 'bridge-secret'))"
    ),
    probe = expect_add
  )
)

# ---- Chunks that are not run, and why ----------------------------------------
#
# None needs a desktop client: mcp_client_install() writes the client's
# configuration into the session's own home folder. Only the ellmer and btw
# chunks are left out, where those cannot be installed (they are only on CRAN).

example_skips <- list()
if (!requireNamespace("ellmer", quietly = TRUE)) {
  example_skips[[length(example_skips) + 1L]] <- list(
    doc = "migrating.Rmd", match = "ellmer::tool\\(",
    reason = "needs the ellmer package, which is not installed here"
  )
}

if (!requireNamespace("btw", quietly = TRUE)) {
  example_skips[[length(example_skips) + 1L]] <- list(
    doc = "session.Rmd", match = "btw::btw_tools\\(",
    reason = "needs the btw package, which is not installed here (it is only on CRAN)"
  )
}

# ---- The run -----------------------------------------------------------------

examples_seen <- new.env()
examples_seen$servers <- integer()
examples_seen$skipped <- character()
examples_seen$skipped_code <- character()

find_entry <- function(entries, doc, code) {
  hits <- which(vapply(entries, function(e) e$doc == doc && any(grepl(e$match, code)), logical(1)))
  if (length(hits) == 0) return(NULL)
  hits[[1]]
}

expect_step_ran <- function(result, where, error_expected = FALSE) {
  output <- paste(utils::tail(strsplit(result$output, "\n")[[1]], 20), collapse = "\n")
  if (error_expected) {
    expect(!is.null(result$error), sprintf("%s is marked `error = TRUE` but ran without an error", where))
  } else {
    expect(is.null(result$error), sprintf("%s failed: %s\nIts output ended:\n%s", where, result$error, output))
  }
  expect(length(result$warnings) == 0, sprintf(
    "%s warned: %s", where, paste(result$warnings, collapse = "; ")
  ))
}

# Serves a server step as a client would start it, and probes it.
serve_step <- function(state, step, chunk, where) {
  entry <- find_entry(example_servers, state$doc, step$code)
  if (is.null(entry)) {
    fail(sprintf("%s serves, but example_servers has no probe for it: add one. Its code:\n%s", where, step$code))
    return(invisible())
  }
  examples_seen$servers <- c(examples_seen$servers, entry)
  spec <- example_servers[[entry]]
  env <- gsub("{port}", state$port, spec$env, fixed = TRUE)
  env <- gsub("{free_port}", free_port(), env, fixed = TRUE)
  session <- state$session
  if (!is.null(spec$http_server)) {
    needed <- server_script(gsub("{port}", state$port, spec$http_server, fixed = TRUE))
    needed <- start_http_script(needed, session$work)
    on.exit(stop_process(needed$proc), add = TRUE)
  }
  script <- if (!is.null(chunk$saved_as) && step$kind == "server") {
    file.path(session$work, chunk$saved_as)
  } else {
    server_step_script(session, step)
  }
  http <- step$kind == "server" && server_transport(step$call) == "http"
  if (!http) {
    client <- withr::with_dir(session$work, do.call(mcp_client, c(list(script, env = env), spec$client)))
    on.exit(mcp_close(client), add = TRUE)
    return(spec$probe(client))
  }
  server <- start_http_script(script, session$work, env = env)
  on.exit(stop_process(server$proc), add = TRUE)
  if (!is.null(spec$probe_url)) return(spec$probe_url(server$url))
  client <- do.call(mcp_client, c(list(server$url), spec$client))
  on.exit(mcp_close(client), add = TRUE, after = FALSE)
  spec$probe(client)
}

# A server the console started in the background: called from here, while
# the session waits at its prompt.
probe_background <- function(state, step, where) {
  url <- session_background_url(state$session)
  entry <- find_entry(example_servers, state$doc, step$code)
  if (is.null(entry)) {
    fail(sprintf("%s serves in the background, but example_servers has no probe for it: add one.", where))
    return(invisible())
  }
  examples_seen$servers <- c(examples_seen$servers, entry)
  spec <- example_servers[[entry]]
  client <- do.call(mcp_client, c(list(url), spec$client))
  on.exit(mcp_close(client))
  spec$probe(client)
}

run_chunk <- function(state, chunk, where) {
  if (!is.null(state$stuck)) {
    fail(sprintf("%s cannot run: the session is still busy with %s", where, state$stuck))
    return(invisible())
  }
  skip_entry <- find_entry(example_skips, state$doc, chunk$code)
  if (!is.null(skip_entry)) {
    reason <- example_skips[[skip_entry]]$reason
    examples_seen$skipped <- c(examples_seen$skipped, sprintf("%s: %s", where, reason))
    examples_seen$skipped_code <- c(examples_seen$skipped_code, paste(chunk$code, collapse = "\n"))
    skip(reason)
  }
  if (is.null(state$session)) {
    state$session <- example_session(state$dir)
    # Examples run with their package attached, as example() and R CMD
    # check run them.
    if (grepl("\\.Rd$", state$doc)) session_run(state$session, "library(mcpserver)")
  }
  session <- state$session
  code <- with_port(chunk$code, state$port)
  if (!is.null(chunk$saved_as)) writeLines(code, file.path(session$work, chunk$saved_as), useBytes = TRUE)
  if (any(grepl("test_that(", code, fixed = TRUE)) && !isTRUE(state$testthat)) {
    # A chunk written for a file under tests/testthat, where testthat is attached.
    session_run(session, "library(testthat)")
    state$testthat <- TRUE
  }
  for (step in chunk_steps(code)) {
    if (step$kind %in% c("server", "bridge")) {
      serve_step(state, step, chunk, where)
      next
    }
    result <- session_run(session, step$code)
    if (isTRUE(result$timed_out)) state$stuck <- where
    expect_step_ran(result, where, isTRUE(chunk$options$error))
    if (step$kind == "background" && is.null(result$error)) probe_background(state, step, where)
  }
}

all_documents <- c(sources$readme, sources$vignettes, sources$rd)
# MCPSERVER_EXAMPLES, a regular expression, runs only the documents whose
# file names match it (to work on one).
only <- Sys.getenv("MCPSERVER_EXAMPLES")
documents <- if (nzchar(only)) all_documents[grepl(only, basename(all_documents))] else all_documents

test_that("the examples are found: every vignette, the README and the Rd files", {
  expect_gte(length(sources$vignettes), 8)
  expect_gte(length(sources$rd), 25)
  counts <- vapply(all_documents, function(path) length(document_chunks(path)), 0L)
  expect_gte(counts[[sources$readme]], 6)
  # Every vignette but the migration guide's setup has chunks to run.
  expect_true(all(counts[sources$vignettes] >= 2))
  expect_gte(sum(counts[sources$rd]), 20)
})

for (path in documents) {
  chunks <- document_chunks(path)
  if (length(chunks) == 0) next
  state <- new.env()
  state$doc <- basename(path)
  state$port <- free_port()
  state$dir <- withr::local_tempdir(.local_envir = teardown_env())
  for (chunk in chunks) {
    where <- if (is.na(chunk$line)) {
      sprintf("the examples of man/%s", state$doc)
    } else {
      sprintf("%s, chunk at line %d", state$doc, chunk$line)
    }
    test_that(paste(where, "runs"), {
      run_chunk(state, chunk, where)
    })
  }
  if (!is.null(state$session)) session_close(state$session)
}

test_that("every server probe was used, and the skips are listed", {
  unused <- setdiff(seq_along(example_servers), examples_seen$servers)
  # The servers of skipped chunks, and of documents not run, are not used.
  in_skipped <- vapply(example_servers, function(e) any(grepl(e$match, examples_seen$skipped_code)), logical(1))
  run <- vapply(example_servers, function(e) e$doc %in% basename(documents), logical(1))
  unused <- unused[!in_skipped[unused] & run[unused]]
  for (i in unused) {
    fail(sprintf("example_servers entry for %s /%s/ matched no example: remove or fix it",
      example_servers[[i]]$doc, example_servers[[i]]$match))
  }
  cat("\nExample chunks skipped:\n", file = stderr())
  skipped <- if (length(examples_seen$skipped) > 0) examples_seen$skipped else "(none)"
  cat(paste0("  ", skipped, "\n"), sep = "", file = stderr())
  expect_true(all(grepl("needs", examples_seen$skipped)))
  succeed()
})
