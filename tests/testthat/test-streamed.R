# A large table with an output schema is sent while it is written
# (src/rust/mcp-core/src/protocol/streamed.rs): the writer sends each part
# of the rows as it is encoded. What the client reads must be the very
# line the whole answer would have been, and everything that cannot take
# that path must be answered whole, as before.

streamed_tool_code <- c(
  "rows <- function(n, hole = FALSE) {",
  "  d <- data.frame(id = seq_len(n), x = seq_len(n) / 7,",
  "                  name = paste0('row \"', seq_len(n), '\" \\u00e9\\n\\\\'))",
  "  if (hole) d$x[n] <- NA",
  "  d",
  "}",
  "rows_tool <- tool(rows, 'Rows of a table',",
  "  arguments = list(n = type_integer(), hole = type_boolean(required = FALSE)),",
  "  output_schema = type_array(type_object(id = type_integer(), x = type_number(),",
  "                                         name = type_string())))",
  "open_rows <- function(n) tool_result(structured_content = list(rows = rows(n)))",
  "open_tool <- tool(open_rows, 'Rows, no output schema', arguments = list(n = type_integer()))"
)

# The tool, also in this process: what the server sends for it, written
# whole, comes from the same definition.
streamed_env <- function() {
  env <- new.env(parent = asNamespace("mcpserver"))
  eval(parse(text = streamed_tool_code), env)
  env
}

start_streamed_server <- function(env = parent.frame()) {
  script <- server_script(c(streamed_tool_code, "mcp_server(list(rows_tool, open_tool))"), env = env)
  start_server(script, env = env, extra_env = c(MCPSERVER_TRACE = "1"))
}

# What the server sends for `rows_tool` returning `value`, written whole.
whole_answer <- function(env, value, rev, tool = env$rows_tool) {
  mcpserver:::tool_result_for_test_(attr(tool, "mcpserver_tool"), value, rev)
}

# The raw text of the last line received.
last_line <- function(client) client$log[[length(client$log)]]$line

streamed_note <- "a line written as it is produced"

test_that("a large table is sent as it is written, byte for byte the answer written whole", {
  env <- streamed_env()
  for (rev in c("2024-11-05", "2025-06-18", "2025-11-25")) {
    client <- start_streamed_server()
    initialize(client, rev)
    response <- call_tool(client, 1L, "rows", list(n = 5000L))
    expected <- paste0(
      '{"jsonrpc":"2.0","id":1,"result":',
      whole_answer(env, env$rows(5000L), rev), "}"
    )
    # Not expect_identical(): a failure would print both 500 KB lines.
    expect_true(identical(last_line(client), expected), label = rev)
    expect_length(response$result$content, 1)
    expect_wire_valid(last_line(client), rev, "CallToolResult")
    expect_equal(finish(client), 0)
    expect_match(client$proc$read_all_error(), streamed_note, fixed = TRUE)
  }
})

test_that("a large result written already is sent as the writer escapes it, byte for byte", {
  # tool_result(structured_content =) without an output schema: the JSON
  # exists before the call ends; the writer escapes its text mirror while
  # it sends it.
  env <- streamed_env()
  client <- start_streamed_server()
  initialize(client)
  call_tool(client, 1L, "open_rows", list(n = 5000L))
  expected <- paste0(
    '{"jsonrpc":"2.0","id":1,"result":',
    whole_answer(env, env$open_rows(5000L), "2025-11-25", env$open_tool), "}"
  )
  expect_true(identical(last_line(client), expected))
  expect_wire_valid(last_line(client), "2025-11-25", "CallToolResult")
  expect_equal(finish(client), 0)
  expect_match(client$proc$read_all_error(), streamed_note, fixed = TRUE)
})

test_that("the mirror and the structured content of a streamed table hold the same rows", {
  client <- start_streamed_server()
  initialize(client)
  result <- call_tool(client, 1L, "rows", list(n = 20000L))$result
  rows <- jsonlite::fromJSON(result$content[[1]]$text, simplifyVector = FALSE)
  expect_identical(rows, result$structuredContent$result)
  expect_length(rows, 20000)
  expect_identical(rows[[20000]]$name, "row \"20000\" \u00e9\n\\")
  # The server goes on serving after it.
  expect_equal(request(client, 2L, "ping")$id, 2L)
  expect_equal(finish(client), 0)
})

test_that("tables that cannot be streamed are answered whole, as before", {
  env <- streamed_env()
  client <- start_streamed_server()
  initialize(client, "2025-03-26")
  # An NA where the schema refuses one: a tool error, found before any
  # byte is sent.
  response <- call_tool(client, 1L, "rows", list(n = 5000L, hole = TRUE))
  expected <- paste0(
    '{"jsonrpc":"2.0","id":1,"result":',
    whole_answer(env, env$rows(5000L, TRUE), "2025-03-26"), "}"
  )
  expect_identical(last_line(client), expected)
  expect_true(response$result$isError)
  expect_match(response$result$content[[1]]$text, "`$x[[5000]]` is NA", fixed = TRUE)
  # In a batch the answer is one member of the batch's array.
  send_line(client, paste0(
    '[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rows","arguments":{"n":5000}}},',
    '{"jsonrpc":"2.0","id":3,"method":"ping"}]'
  ))
  batch <- receive(client)
  answer <- Filter(function(m) identical(m$id, 2L), batch)[[1]]
  whole <- jsonlite::fromJSON(whole_answer(env, env$rows(5000L), "2025-03-26"),
                              simplifyVector = FALSE)
  expect_identical(answer$result, whole)
  expect_equal(finish(client), 0)
  expect_false(grepl(streamed_note, client$proc$read_all_error(), fixed = TRUE))
})

# A server writing a streamed table of 400,000 rows to stdout.
streaming_server <- function(env = parent.frame()) {
  client <- start_streamed_server(env)
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = 1L, method = "tools/call",
    params = list(name = "rows", arguments = list(n = 400000L))))
  expect_true(output_ready(client))
  client
}

test_that("a client that goes away while a table is streamed leaves the server to exit", {
  client <- streaming_server()
  close(client$proc$get_output_connection())
  close(client$proc$get_input_connection())
  client$proc$wait(20000)
  expect_false(client$proc$is_alive())
})

test_that("a client that closes stdin and never reads a streamed table lets the server exit", {
  client <- streaming_server()
  # The writer is stuck on the pipe mid-stream.
  expect_exit_unread(client)
})

test_that("a client that stops reading gets no further table encoded until it reads", {
  # The parts of a streamed table count as output waiting for the client
  # (4 MB by default; each table here is some 12 MB): while the first one
  # is unread, R starts no other call. Once the client reads, every call
  # is answered.
  code <- c(
    streamed_tool_code,
    "counted <- function(n) { message('encoding table ', n); rows(n) }",
    "counted_tool <- tool(counted, 'Rows, announced on stderr',",
    "  arguments = list(n = type_integer()),",
    "  output_schema = type_array(type_object(id = type_integer(), x = type_number(),",
    "                                         name = type_string())))",
    "mcp_server(list(counted_tool))"
  )
  client <- start_server(server_script(code))
  initialize(client)
  for (i in 1:3) {
    send(client, list(jsonrpc = "2.0", id = i, method = "tools/call",
      params = list(name = "counted", arguments = list(n = 100000L + i))))
  }
  stderr_text <- ""
  encodings <- function() {
    stderr_text <<- paste0(stderr_text, client$proc$read_error())
    regmatches(stderr_text, gregexpr("encoding table [0-9]+", stderr_text))[[1]]
  }
  deadline <- Sys.time() + 30
  while (length(encodings()) == 0 && Sys.time() < deadline) Sys.sleep(0.1)
  expect_identical(encodings(), "encoding table 100001")
  # Time enough for R to encode the other two, were it let.
  Sys.sleep(3)
  expect_identical(encodings(), "encoding table 100001")
  for (i in 1:3) {
    response <- receive(client, timeout = 60)
    expect_identical(response$id, i)
    expect_length(response$result$structuredContent$result, 100000L + i)
  }
  expect_identical(encodings(), sprintf("encoding table %d", 100001:100003))
  expect_equal(finish(client), 0)
})
