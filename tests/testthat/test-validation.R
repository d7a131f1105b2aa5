# Large calls over a real server process: their arguments are read and
# checked on R's thread, a flood of problems is summed up after the first
# ten, and the server answers pings and further calls throughout.
skip_on_cran()

sum_server <- function(env = parent.frame()) {
  script <- server_script(c(
    "sum_values <- tool(function(values) sum(values), 'Sum the values',",
    "  arguments = list(values = type_array(type_number())), name = 'sum_values')",
    "mcp_server(list(sum_values))"
  ), env = env)
  client <- start_server(script, env = env)
  initialize(client)
  client
}

# processx writes what the pipe takes at once and returns the rest.
send_large_line <- function(client, line) {
  rest <- charToRaw(paste0(line, "\n"))
  while (length(rest) > 0) {
    rest <- client$proc$write_input(rest)
    if (length(rest) > 0) Sys.sleep(0.01)
  }
}

# A tools/call line built as text (toJSON of 10^5 items is slow).
sum_line <- function(id, items) {
  sprintf(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sum_values","arguments":{"values":[%s]}}}',
    id, paste(items, collapse = ",")
  )
}

test_that("a large call gets the right answer", {
  client <- sum_server()
  values <- seq_len(200000) / 4
  send_large_line(client, sum_line(1, format(values, scientific = FALSE, trim = TRUE)))
  r <- receive(client, timeout = 60)
  expect_false(r$result$isError)
  expect_equal(as.numeric(r$result$content[[1]]$text), sum(values))
  expect_log_valid(client)
  expect_equal(finish(client), 0)
})

test_that("a flood of invalid items lists ten problems, and the server goes on", {
  client <- sum_server()
  send_large_line(client, sum_line(1, rep("[]", 300000)))
  send(client, list(jsonrpc = "2.0", id = 2, method = "ping"))
  got <- list(receive(client, timeout = 60), receive(client, timeout = 60))
  ids <- vapply(got, function(m) as.numeric(m$id), 0)
  call <- got[[which(ids == 1)]]
  expect_true(call$result$isError)
  problems <- strsplit(call$result$content[[1]]$text, "; ", fixed = TRUE)[[1]]
  expect_length(problems, 11)
  expect_equal(problems[1], 'Invalid arguments for tool "sum_values": values[0]: expected a number, got []')
  expect_equal(problems[10], "values[9]: expected a number, got []")
  expect_equal(problems[11], "and more problems (only the first 10 are listed)")
  r <- call_tool(client, 3, "sum_values", list(values = list(1, 2, 3.5)))
  expect_equal(r$result$content[[1]]$text, "6.5")
  expect_log_valid(client)
  expect_equal(finish(client), 0)
})
