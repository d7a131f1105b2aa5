# What "accepted once" means for the requestState of 2026-07-28 input rounds
# across server processes and restarts (see `request_state_key` and
# `request_state_store` in mcp_server()). Each server process here stands
# for one process of a deployment; a new one is a restart.
skip_on_cran()

empty <- setNames(list(), character())
caps <- list(elicitation = empty)

state_server <- function(options = "", env = parent.frame()) {
  server_script(c(
    'greet <- function() {',
    '  answer <- mcp_elicit("Name?", list(name = type_string()))',
    '  paste("Hello", answer$content$name)',
    '}',
    sprintf('mcp_server(list(tool(greet, "Greet")), name = "state"%s)', options)
  ), env = env)
}

# One 2026-07-28 call of greet, with `extra` params (state and answers).
greet <- function(client, id, extra = list()) {
  client$rev <- "2026-07-28"
  meta <- list(
    `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
    `io.modelcontextprotocol/clientCapabilities` = caps
  )
  params <- c(list(name = "greet", arguments = empty, `_meta` = meta), extra)
  request(client, id, "tools/call", params)
}

# The params of a retry that answers the first round, with its state.
answered <- function(first) {
  list(
    requestState = first$result$requestState,
    inputResponses = list(`input-1` = list(action = "accept", content = list(name = "Ada")))
  )
}

accepted <- function(r) identical(r$result$content[[1]]$text, "Hello Ada")
refused <- function(r) identical(r$error$data$reason, "invalid_request_state")

test_that("without a key, only the process that issued a state accepts it", {
  script <- state_server()
  first <- start_server(script)
  retry <- answered(greet(first, 1))
  other <- start_server(script)
  r <- greet(other, 1, retry)
  expect_true(refused(r))
  expect_match(r$error$message, "another server process", fixed = TRUE)
  expect_true(accepted(greet(first, 2, retry)))
  expect_true(refused(greet(first, 3, retry)))
  expect_equal(finish(first), 0)
  # A restart makes a new key: the old state is refused.
  restarted <- start_server(script)
  expect_true(refused(greet(restarted, 1, retry)))
  for (client in list(first, other, restarted)) expect_log_valid(client)
})

test_that("with a shared key and no store, each process accepts a state once", {
  script <- state_server(', request_state_key = "shared test key"')
  first <- start_server(script)
  retry <- answered(greet(first, 1))
  expect_true(accepted(greet(first, 2, retry)))
  expect_true(refused(greet(first, 3, retry)))
  # As documented: another process sharing the key accepts it once more,
  # and so does the server after a restart.
  other <- start_server(script)
  expect_true(accepted(greet(other, 1, retry)))
  expect_true(refused(greet(other, 2, retry)))
  expect_equal(finish(first), 0)
  restarted <- start_server(script)
  expect_true(accepted(greet(restarted, 1, retry)))
  for (client in list(first, other, restarted)) expect_log_valid(client)
})

test_that("with a shared key and store, a state is accepted once across processes and restarts", {
  store <- file.path(withr::local_tempdir(), "used-states")
  script <- state_server(sprintf(', request_state_key = "shared test key", request_state_store = "%s"', store))
  first <- start_server(script)
  retry <- answered(greet(first, 1))
  unused <- answered(greet(first, 2))
  expect_true(accepted(greet(first, 3, retry)))
  expect_length(list.files(store), 1)
  other <- start_server(script)
  expect_true(refused(greet(other, 1, retry)))
  expect_equal(finish(first), 0)
  restarted <- start_server(script)
  expect_true(refused(greet(restarted, 1, retry)))
  # A state issued before the restart and never used still works, once.
  expect_true(accepted(greet(restarted, 2, unused)))
  expect_true(refused(greet(other, 2, unused)))
  for (client in list(first, other, restarted)) expect_log_valid(client)
})

test_that("request_state_store is checked", {
  f <- function() 1
  t <- tool(f, "d")
  expect_error(mcp_server(list(t), request_state_store = "x"), "needs a `request_state_key`", fixed = TRUE)
  expect_error(mcp_server(list(t), request_state_key = "k", request_state_store = 1),
    "`request_state_store` must be NULL or a directory path.", fixed = TRUE)
  file <- withr::local_tempfile()
  writeLines("not a directory", file)
  expect_error(mcp_server(list(t), request_state_key = "k", request_state_store = file),
    "`request_state_store` must be a directory the server can write to", fixed = TRUE)
})
