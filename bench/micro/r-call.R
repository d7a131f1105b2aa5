# What one `add` call costs inside R, to split mcpserver's round trip:
#   - the R function itself, called through do.call() with a list of
#     arguments as every R server calls it (subtracted for the target);
#   - mcpserver's R-level loop around it (run_job(): tryCatch, warning
#     handler, do.call), with the server's completion stubbed out;
#   - rendering the result in Rust (the test hook that builds the same
#     CallToolResult text the server sends; it also builds a one-tool
#     registry each time, so it is an upper bound).
#   Rscript bench/micro/r-call.R <iterations>
n <- as.integer(commandArgs(trailingOnly = TRUE)[[1]])
add <- function(x, y) x + y
args <- list(x = 1, y = 2)
per_call_us <- function(f) {
  for (i in 1:1000) f() # warm-up (byte-compilation)
  t0 <- Sys.time()
  for (i in seq_len(n)) f()
  as.numeric(Sys.time() - t0, units = "secs") / n * 1e6
}

run_job <- get("run_job", asNamespace("mcpserver"))
stub <- list(complete_value = function(id, tool, value) NULL)
job <- list(id = 1, tool = 1L, arguments = args)

cat(jsonlite::toJSON(list(
  iterations = n,
  do_call_add_us = per_call_us(function() do.call(add, args)),
  run_job_us = per_call_us(function() run_job(stub, job, add)),
  render_us = per_call_us(function() mcpserver:::result_json_for_test_(3, "2025-11-25", FALSE))
), auto_unbox = TRUE, digits = NA), "\n")
