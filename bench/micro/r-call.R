# The cost of the R function itself in the per-call benchmark: `add` called
# through do.call() with a list of arguments, as every R server calls it.
# Subtracted from mcpserver's round trip to get the server's own overhead.
#   Rscript bench/micro/r-call.R <iterations>
n <- as.integer(commandArgs(trailingOnly = TRUE)[[1]])
add <- function(x, y) x + y
args <- list(x = 1, y = 2)
for (i in 1:1000) do.call(add, args) # warm-up (byte-compilation)
t0 <- Sys.time()
for (i in seq_len(n)) do.call(add, args)
per_call_us <- as.numeric(Sys.time() - t0, units = "secs") / n * 1e6
cat(sprintf('{"do_call_add_us": %.4f, "iterations": %d}\n', per_call_us, n))
