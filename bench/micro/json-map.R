# R -> JSON mapping micro-benchmark: one object, one encoder, one process.
#   Rscript bench/micro/json-map.R <data_frame|numeric|nested> <mcpserver|jsonlite> <reps>
# Prints one JSON line. Each (object, encoder) pair runs in a fresh process
# so that the peak-memory figures of one cannot leak into the other.
args <- commandArgs(trailingOnly = TRUE)
object <- args[[1]]
encoder <- args[[2]]
reps <- as.integer(args[[3]])

# make_table(): the table the servers send. Run from the repository root
# (bench/driver/bench.py does), so the relative path resolves.
source(file.path("bench", "servers", "tools.R"))

make_object <- function(object) {
  switch(object,
    data_frame = make_table(),
    numeric = {
      set.seed(42)
      rnorm(1e6)
    },
    # A tree 9 levels deep, 3 children per node: 29,524 named lists.
    nested = {
      node <- function(depth, path) {
        fields <- list(label = paste0("node-", path), depth = depth, weight = depth / 7, leaf = depth == 9L)
        if (depth == 9L) return(c(fields, list(values = c(1.5, 2.5, path %% 10))))
        c(fields, list(children = lapply(1:3, function(k) node(depth + 1L, path * 3 + k))))
      }
      node(0L, 0)
    }
  )
}

encode <- switch(encoder,
  mcpserver = {
    library(mcpserver)
    function(x) mcpserver:::json_encode_(x, FALSE)
  },
  jsonlite = {
    library(jsonlite)
    function(x) jsonlite::toJSON(x, digits = NA, auto_unbox = TRUE, dataframe = "rows")
  }
)

status_kb <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line))
}
heap_mb <- function(g, col) sum(g[, col]) # Ncells + Vcells, in Mb

x <- make_object(object)
g0 <- gc(reset = TRUE)
writeLines("5", "/proc/self/clear_refs") # resets VmHWM to the current RSS
rss0 <- status_kb("VmRSS")

# First call: memory. The process peak covers Rust-side buffers as well as
# R's heap; gc()'s "max used" covers R's heap only.
t0 <- Sys.time()
out <- encode(x)
times <- as.numeric(Sys.time() - t0, units = "secs")
peak_extra_mb <- (status_kb("VmHWM") - rss0) / 1024
g1 <- gc()
heap_extra_mb <- heap_mb(g1, 6L) - heap_mb(g0, 2L)
if (!is.character(out)) stop("encoder failed: ", format(out))
bytes <- sum(nchar(out, type = "bytes"))
rm(out)

for (r in seq_len(max(reps - 1L, 0L))) {
  t0 <- Sys.time()
  out <- encode(x)
  times <- c(times, as.numeric(Sys.time() - t0, units = "secs"))
  rm(out)
}

cat(jsonlite::toJSON(list(
  object = object, encoder = encoder, reps = reps, times_s = times,
  median_s = median(times), bytes = bytes,
  peak_extra_mb = peak_extra_mb, heap_extra_mb = heap_extra_mb
), auto_unbox = TRUE, digits = NA), "\n")
