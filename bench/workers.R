# Concurrent tools on future workers, measured in one run (issue [10]):
#   Rscript bench/workers.R [lib]     (lib: where mcpserver is installed, e.g. .lib)
# 1. 8 calls of a 1-s tool sent at once: on the main thread, and with 4 workers.
# 2. Per-call overhead of a trivial tool: concurrent (a worker) vs main thread.
# 3. ping round trips while all 4 workers are busy.
# Prints a table with ratios; needs future, parallelly, processx and jsonlite.
args <- commandArgs(TRUE)
if (length(args) > 0) .libPaths(c(normalizePath(args[[1]]), .libPaths()))
stopifnot(requireNamespace("processx"), requireNamespace("jsonlite"), requireNamespace("future"))

server_code <- '
library(mcpserver)
sleep1 <- function() { Sys.sleep(1); "slept" }
noop <- function() "ok"
mcp_server(list(
  tool(sleep1, "Sleep 1 s on the main thread", name = "sleep_main"),
  tool(sleep1, "Sleep 1 s on a worker", name = "sleep_worker", concurrent = TRUE),
  tool(noop, "Nothing, on the main thread", name = "noop_main"),
  tool(noop, "Nothing, on a worker", name = "noop_worker", concurrent = TRUE)
), workers = 4)
'
script <- tempfile(fileext = ".R")
writeLines(server_code, script)

proc <- processx::process$new(
  file.path(R.home("bin"), "Rscript"), script,
  stdin = "|", stdout = "|", stderr = "|",
  env = c("current", R_LIBS = paste(.libPaths(), collapse = ":"))
)
on.exit(proc$kill(), add = TRUE)
pending <- character()

send <- function(msg) {
  proc$write_input(paste0(jsonlite::toJSON(msg, auto_unbox = TRUE, null = "null"), "\n"))
}
receive <- function() {
  while (length(pending) == 0) {
    proc$poll_io(10000)
    pending <<- c(pending, proc$read_output_lines())
    if (!proc$is_alive() && length(pending) == 0) stop(proc$read_all_error())
  }
  line <- pending[[1]]
  pending <<- pending[-1]
  jsonlite::fromJSON(line, simplifyVector = FALSE)
}
call <- function(id, name) {
  send(list(jsonrpc = "2.0", id = id, method = "tools/call", params = list(name = name, arguments = setNames(list(), character()))))
}
now <- function() as.numeric(Sys.time())
next_id <- local({
  i <- 0
  function() (i <<- i + 1)
})

send(list(jsonrpc = "2.0", id = next_id(), method = "initialize", params = list(
  protocolVersion = "2025-11-25", capabilities = setNames(list(), character()),
  clientInfo = list(name = "bench", version = "1")
)))
invisible(receive())
send(list(jsonrpc = "2.0", method = "notifications/initialized"))

# Warm the pool (its R processes start on the first call).
for (i in 1:4) call(next_id(), "noop_worker")
for (i in 1:4) invisible(receive())

burst <- function(name, n = 8) {
  t0 <- now()
  for (i in seq_len(n)) call(next_id(), name)
  for (i in seq_len(n)) invisible(receive())
  now() - t0
}
per_call <- function(name, n = 100) {
  times <- numeric(n)
  for (i in seq_len(n)) {
    t0 <- now()
    call(next_id(), name)
    invisible(receive())
    times[[i]] <- now() - t0
  }
  median(times)
}

main_burst <- burst("sleep_main")
worker_burst <- burst("sleep_worker")
main_call <- per_call("noop_main")
worker_call <- per_call("noop_worker")

# ping while 4 worker calls sleep.
for (i in 1:4) call(next_id(), "sleep_worker")
pings <- numeric(20)
for (i in seq_along(pings)) {
  id <- next_id()
  t0 <- now()
  send(list(jsonrpc = "2.0", id = id, method = "ping"))
  repeat {
    msg <- receive()
    if (isTRUE(msg$id == id)) break
  }
  pings[[i]] <- now() - t0
}
for (i in 1:4) invisible(receive())

ms <- function(x) sprintf("%.3f ms", 1000 * x)
cat(sprintf(
  paste0(
    "| measure | main thread | 4 workers | ratio |\n|---|---|---|---|\n",
    "| 8 concurrent calls of a 1-s tool (wall time) | %.2f s | %.2f s | %.1fx faster |\n",
    "| one call of a trivial tool (median of 100) | %s | %s | %.1fx the main-thread time |\n",
    "| ping while all 4 workers are busy (median / max of 20) | | %s / %s | |\n"
  ),
  main_burst, worker_burst, main_burst / worker_burst,
  ms(main_call), ms(worker_call), worker_call / main_call,
  ms(median(pings)), ms(max(pings))
))
close(proc$get_input_connection())
proc$wait(10000)
