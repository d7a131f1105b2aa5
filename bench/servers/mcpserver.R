# The benchmark's mcpserver peer: the same tools every peer serves.
# Started by the driver as `Rscript bench/servers/mcpserver.R` with R_LIBS
# pointing at the copy of the package that bench/run.sh installed; with
# `--http PORT` it serves Streamable HTTP on 127.0.0.1:PORT/mcp instead
# (bench/driver/http_bench.py). With MCPSERVER_BENCH_MIDDLEWARE=1 it runs
# one trivial middleware around every request (bench/driver/middleware.py).
library(mcpserver)

source(file.path("bench", "servers", "tools.R"))  # add(), big_table(), slow()

tools <- list(
  tool(add, "Add two numbers", arguments = list(x = type_number(), y = type_number())),
  tool(big_table, "A 100,000-row table", output_schema = type_array(type_object(
    id = type_integer(), x1 = type_number(), x2 = type_number(), x3 = type_number(),
    x4 = type_number(), x5 = type_number(), x6 = type_number(), x7 = type_number(),
    x8 = type_number(), label = type_string()
  ))),
  # The same table without an output schema: structured content left open.
  tool(function() tool_result(structured_content = list(result = big_table())), "The same table, no output schema",
       name = "big_table_open"),
  tool(count_values, "Count numbers", name = "count_numbers",
       arguments = list(values = type_array(type_number()))),
  tool(count_values, "Count strings", name = "count_strings",
       arguments = list(values = type_array(type_string()))),
  tool(count_values, "Count objects", name = "count_objects",
       arguments = list(values = type_array(type_object(x = type_number())))),
  tool(slow, "Sleep for a number of seconds", arguments = list(seconds = type_number()))
)

# Passes every request on unchanged: what middleware costs by itself.
middleware <- if (nzchar(Sys.getenv("MCPSERVER_BENCH_MIDDLEWARE"))) {
  list(function(request, call_next) call_next(request))
}

args <- commandArgs(trailingOnly = TRUE)
if (length(args) == 2 && args[[1]] == "--http") {
  # More sessions than the default 100: the HTTP bench holds 100 clients
  # and opens up to a few hundred idle sessions to weigh them.
  mcp_server(tools, name = "bench-mcpserver", transport = "http", port = as.integer(args[[2]]),
             http = http_options(max_sessions = 1000), middleware = middleware)
} else {
  mcp_server(tools, name = "bench-mcpserver", middleware = middleware)
}
