# What one `add` call costs inside R, to split mcpserver's round trip:
#   - the R function itself, called through do.call() with a list of
#     arguments as every R server calls it (subtracted for the target);
#   - mcpserver's R-level loop around it (serve_calls(): the poll, the
#     function through do.call(), the completion), with the server's poll
#     and completion stubbed out by R closures (as cheap as the .Call
#     wrappers' closures, less the work in Rust); and run_job(), the
#     per-call handlers the middleware path still sets up each time;
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

# n calls through the serving loop, then "finished".
serve_calls <- get("serve_calls", asNamespace("mcpserver"))
loop_us <- function(n) {
  left <- n
  server <- list(
    poll = function(timeout_ms) if ((left <<- left - 1L) >= 0L) job else "finished",
    complete_value = function(id, tool, value) NULL
  )
  served <- list(runnable = list(add), middleware = NULL)
  serve_calls(server, served, NULL) # warm-up (byte-compilation)
  left <- n
  t0 <- Sys.time()
  serve_calls(server, served, NULL)
  as.numeric(Sys.time() - t0, units = "secs") / n * 1e6
}

cat(jsonlite::toJSON(list(
  iterations = n,
  do_call_add_us = per_call_us(function() do.call(add, args)),
  loop_us = loop_us(n),
  run_job_us = per_call_us(function() run_job(stub, job, add)),
  render_us = per_call_us(function() mcpserver:::result_json_for_test_(3, "2025-11-25", FALSE))
), auto_unbox = TRUE, digits = NA), "\n")
