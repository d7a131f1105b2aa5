# Baseline: an MCP server written the way R packages without a compiled
# core do it. One thread reads stdin line by line, parses with jsonlite,
# calls the tool with do.call() and writes the answer, so nothing is
# answered while a tool runs.
suppressPackageStartupMessages(library(jsonlite))

source(file.path("bench", "servers", "tools.R"))  # add(), big_table(), slow()

number <- list(type = "number")
row_schema <- list(
  type = "object",
  properties = c(
    list(id = list(type = "integer")),
    setNames(rep(list(number), 8), paste0("x", 1:8)),
    list(label = list(type = "string"))
  ),
  required = c("id", paste0("x", 1:8), "label")
)
tool_list <- list(
  list(
    name = "add", description = "Add two numbers",
    inputSchema = list(type = "object", properties = list(x = number, y = number), required = c("x", "y"))
  ),
  list(
    name = "big_table", description = "A 100,000-row table",
    inputSchema = list(type = "object", properties = setNames(list(), character())),
    outputSchema = list(
      type = "object",
      properties = list(result = list(type = "array", items = row_schema)),
      required = "result"
    )
  ),
  list(
    name = "slow", description = "Sleep for a number of seconds",
    inputSchema = list(type = "object", properties = list(seconds = number), required = "seconds")
  )
)
tools <- list(add = add, big_table = big_table, slow = slow)

to_json <- function(x) toJSON(x, auto_unbox = TRUE, digits = NA, dataframe = "rows", null = "null")

# The JSON-RPC result for a tools/call. A data frame goes out as structured
# content (wrapped as {"result": [...]}) plus its JSON text.
call_result <- function(params) {
  value <- tryCatch(do.call(tools[[params$name]], params$arguments %||% list()), error = function(e) e)
  if (inherits(value, "error")) {
    return(list(content = list(list(type = "text", text = conditionMessage(value))), isError = TRUE))
  }
  if (is.data.frame(value)) {
    text <- to_json(value)
    return(list(
      content = list(list(type = "text", text = as.character(text))),
      structuredContent = list(result = value)
    ))
  }
  list(content = list(list(type = "text", text = paste(value, collapse = "\n"))), isError = FALSE)
}

`%||%` <- function(x, y) if (is.null(x)) y else x

handle <- function(msg) {
  switch(msg$method,
    initialize = list(
      protocolVersion = msg$params$protocolVersion,
      capabilities = list(tools = setNames(list(), character())),
      serverInfo = list(name = "bench-plain-r", version = "1.0.0")
    ),
    ping = setNames(list(), character()),
    "tools/list" = list(tools = tool_list),
    "tools/call" = call_result(msg$params),
    NULL
  )
}

stdin_con <- file("stdin", open = "r")
repeat {
  line <- readLines(stdin_con, n = 1L, warn = FALSE)
  if (length(line) == 0L) break
  msg <- fromJSON(line, simplifyVector = FALSE)
  if (is.null(msg$id)) next # a notification
  result <- handle(msg)
  reply <- if (is.null(result)) {
    list(jsonrpc = "2.0", id = msg$id, error = list(code = -32601L, message = "Method not found"))
  } else {
    list(jsonrpc = "2.0", id = msg$id, result = result)
  }
  cat(to_json(reply), "\n", sep = "")
  flush(stdout())
}
