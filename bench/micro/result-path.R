# Where mcpserver's time goes for the 100,000-row table, step by step, with
# the package's own internal entry points (each step as the server runs it):
#   encode   - the data frame to JSON text (R thread, complete_value());
#   render   - encode + the CallToolResult text with its escaped text copy
#              (the server renders on the R thread, off the engine's lock);
#   validate - parse that JSON into a serde_json::Value and check it against
#              the output schema (the server does this on the R thread too,
#              before rendering: result::check_output()).
# One step per process, so that memory freed by one step cannot hide the
# peak of the next.
#   Rscript bench/micro/result-path.R <encode|render|validate> <reps>
library(mcpserver)
args <- commandArgs(trailingOnly = TRUE)
which_step <- args[[1]]
reps <- as.integer(args[[2]])

# make_table(): the table the servers send. Run from the repository root
# (bench/driver/bench.py does), so the relative path resolves.
source(file.path("bench", "servers", "tools.R"))
df <- make_table()
# The output schema bench/servers/mcpserver.R declares for it.
schema <- mcpserver:::type_schema_(type_array(type_object(
  id = type_integer(), x1 = type_number(), x2 = type_number(), x3 = type_number(),
  x4 = type_number(), x5 = type_number(), x6 = type_number(), x7 = type_number(),
  x8 = type_number(), label = type_string()
)), FALSE)
json <- if (which_step == "validate") mcpserver:::json_encode_(df, FALSE)

status_kb <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line))
}

# Median time over reps; peak RSS added by the first run (later runs reuse
# memory the allocator kept, so only the first shows the true peak).
step <- function(f) {
  times <- numeric(reps)
  for (r in seq_len(reps)) {
    gc()
    writeLines("5", "/proc/self/clear_refs")
    rss0 <- status_kb("VmRSS")
    t0 <- Sys.time()
    out <- f()
    times[r] <- as.numeric(Sys.time() - t0, units = "secs")
    if (r == 1L) peak <- (status_kb("VmHWM") - rss0) / 1024
    rm(out)
  }
  list(ms = median(times) * 1e3, peak_extra_mb = peak)
}

f <- switch(which_step,
  encode = function() mcpserver:::json_encode_(df, FALSE),
  render = function() mcpserver:::result_json_for_test_(df, "2025-11-25", TRUE),
  validate = function() mcpserver:::json_schema_problems_(schema, json)
)
res <- step(f)
if (which_step == "validate" && length(f())) stop("the table does not match its schema")
cat(jsonlite::toJSON(c(list(step = which_step), res), auto_unbox = TRUE, digits = NA), "\n")
