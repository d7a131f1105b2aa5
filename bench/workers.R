# Concurrent tools on workers, measured in one run (issues [10] and [17]):
#   Rscript bench/workers.R [lib] [python]
# lib: where mcpserver is installed (e.g. .lib); python: the Python with the
# official SDK (default: the venv bench/run.sh makes, .cache/bench/python).
# 1. 8 calls of a 1-s tool sent at once: on the main thread, with 4
#    workers, and against the Python SDK server (an async tool).
# 2. Per-call overhead of a trivial tool: concurrent (a worker) vs main
#    thread (and the Python server's), median of 100 sequential calls.
# 3. ping round trips while all 4 workers are busy.
# 4. future's own round trip on a multisession worker, without the server.
# 5. Cold start: 8 calls of the 1-s tool sent as the first calls after
#    initialize (when the first and the last ended).
# 6. The server's main thread CPU per dispatched trivial call (from
#    /proc/<pid>/task/<pid>/stat, Linux), and calls/s with 100 sent at once.
# Prints a table with ratios; needs future, parallelly, processx and jsonlite.
args <- commandArgs(TRUE)
if (length(args) > 0) .libPaths(c(normalizePath(args[[1]]), .libPaths()))
python <- if (length(args) > 1) args[[2]] else Sys.getenv("BENCH_PYTHON", ".cache/bench/python/bin/python")
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

now <- function() as.numeric(Sys.time())

# A server process and a minimal client for it over stdio.
start_peer <- function(command, args, env = c("current", R_LIBS = paste(.libPaths(), collapse = ":"))) {
  proc <- processx::process$new(command, args, stdin = "|", stdout = "|", stderr = "2>&1", env = env)
  self <- new.env()
  self$proc <- proc
  self$pending <- character()
  self$id <- 0
  # Ids answered and not yet waited for.
  self$answered <- numeric()
  self
}
send <- function(peer, msg) {
  peer$proc$write_input(paste0(jsonlite::toJSON(msg, auto_unbox = TRUE, null = "null"), "\n"))
}
receive <- function(peer) {
  deadline <- now() + 60
  while (length(peer$pending) == 0) {
    peer$proc$poll_io(1000)
    lines <- peer$proc$read_output_lines()
    # Only protocol lines: the server's stderr is merged in (it must be
    # read, or a chatty server would block on a full pipe).
    peer$pending <- c(peer$pending, grep("^\\{", lines, value = TRUE))
    if (length(peer$pending) == 0 && (!peer$proc$is_alive() || now() > deadline)) {
      stop("no answer from the server; its last output:\n", paste(tail(lines, 20), collapse = "\n"))
    }
  }
  line <- peer$pending[[1]]
  peer$pending <- peer$pending[-1]
  jsonlite::fromJSON(line, simplifyVector = FALSE)
}
# Waits for the answers to requests `ids`, in whatever order they come
# (notifications skipped).
answers_to <- function(peer, ids) {
  while (!all(ids %in% peer$answered)) {
    msg <- receive(peer)
    if (!is.null(msg$id)) peer$answered <- c(peer$answered, msg$id)
  }
  peer$answered <- setdiff(peer$answered, ids)
  invisible()
}
answer_to <- function(peer, id) answers_to(peer, id)
next_id <- function(peer) (peer$id <- peer$id + 1)
call <- function(peer, name) {
  id <- next_id(peer)
  send(peer, list(jsonrpc = "2.0", id = id, method = "tools/call", params = list(name = name, arguments = setNames(list(), character()))))
  id
}

connect <- function(peer) {
  id <- next_id(peer)
  send(peer, list(jsonrpc = "2.0", id = id, method = "initialize", params = list(
    protocolVersion = "2025-11-25", capabilities = setNames(list(), character()),
    clientInfo = list(name = "bench", version = "1")
  )))
  invisible(answer_to(peer, id))
  send(peer, list(jsonrpc = "2.0", method = "notifications/initialized"))
  peer
}
stop_peer <- function(peer) {
  close(peer$proc$get_input_connection())
  peer$proc$wait(10000)
  if (peer$proc$is_alive()) peer$proc$kill()
}

burst <- function(peer, name, n = 8) {
  t0 <- now()
  answers_to(peer, vapply(seq_len(n), function(i) call(peer, name), numeric(1)))
  now() - t0
}
per_call <- function(peer, name, n = 100) {
  times <- numeric(n)
  for (i in seq_len(n)) {
    t0 <- now()
    invisible(answer_to(peer, call(peer, name)))
    times[[i]] <- now() - t0
  }
  median(times)
}

# CPU seconds R's main thread of process `pid` has used (Linux).
main_thread_cpu <- function(pid) {
  stat <- file.path("/proc", pid, "task", pid, "stat")
  if (!file.exists(stat)) return(NA_real_)
  fields <- strsplit(sub("^.*\\) ", "", readLines(stat)), " ")[[1]]
  # utime and stime, fields 14 and 15 of stat (12 and 13 after the name).
  sum(as.numeric(fields[12:13])) / 100
}

# Cold: the first calls after start.
cold <- connect(start_peer(file.path(R.home("bin"), "Rscript"), script))
t0 <- now()
cold_ids <- vapply(1:8, function(i) call(cold, "sleep_worker"), numeric(1))
cold_first <- NA_real_
while (length(cold$answered) < 8) {
  msg <- receive(cold)
  if (!is.null(msg$id)) {
    cold$answered <- c(cold$answered, msg$id)
    if (is.na(cold_first)) cold_first <- now() - t0
  }
}
cold_all <- now() - t0
stop_peer(cold)

r <- connect(start_peer(file.path(R.home("bin"), "Rscript"), script))
answers_to(r, vapply(1:4, function(i) call(r, "noop_worker"), numeric(1)))

main_burst <- burst(r, "sleep_main")
worker_burst <- burst(r, "sleep_worker")
main_call <- per_call(r, "noop_main")
worker_call <- per_call(r, "noop_worker")

# ping while 4 worker calls sleep.
busy <- vapply(1:4, function(i) call(r, "sleep_worker"), numeric(1))
pings <- numeric(20)
for (i in seq_along(pings)) {
  id <- next_id(r)
  t0 <- now()
  send(r, list(jsonrpc = "2.0", id = id, method = "ping"))
  invisible(answer_to(r, id))
  pings[[i]] <- now() - t0
}
answers_to(r, busy)

cpu_per_call <- function(name, n = 200) {
  before <- main_thread_cpu(r$proc$get_pid())
  for (i in seq_len(n)) answer_to(r, call(r, name))
  (main_thread_cpu(r$proc$get_pid()) - before) / n
}
main_cpu <- cpu_per_call("noop_main")
worker_cpu <- cpu_per_call("noop_worker")
t0 <- now()
answers_to(r, vapply(1:100, function(i) call(r, "noop_worker"), numeric(1)))
worker_rate <- 100 / (now() - t0)
stop_peer(r)

py_burst <- py_call <- NA_real_
if (file.exists(python)) {
  # R's LD_LIBRARY_PATH would give Python R's libraries (its ssl module fails).
  env <- Sys.getenv()
  env <- env[names(env) != "LD_LIBRARY_PATH"]
  py <- connect(start_peer(python, file.path("bench", "servers", "python-concurrent.py"), env = env))
  invisible(per_call(py, "noop_worker", 5))
  py_burst <- burst(py, "sleep_worker")
  py_call <- per_call(py, "noop_worker")
  stop_peer(py)
} else {
  message("No Python SDK at ", python, " (run bench/run.sh once, or pass its path): its column is empty.")
}

# future's own round trip, no server: what a worker call cannot go below.
# (Two workers: future runs a one-worker multisession plan sequentially.)
future::plan(future::multisession, workers = 2)
invisible(future::value(future::future(NULL)))
bare <- numeric(30)
for (i in seq_along(bare)) {
  t0 <- now()
  invisible(future::value(future::future(NULL, seed = NULL)))
  bare[[i]] <- now() - t0
}
future_call <- median(bare)
future::plan(future::sequential)

ms <- function(x) if (is.na(x)) "n/a" else sprintf("%.3f ms", 1000 * x)
s <- function(x) if (is.na(x)) "n/a" else sprintf("%.2f s", x)
cat(sprintf(
  paste0(
    "| measure | main thread | 4 workers | Python SDK (async tool) | workers vs main | workers vs Python |\n",
    "|---|---|---|---|---|---|\n",
    "| 8 concurrent calls of a 1-s tool (wall time) | %s | %s | %s | %.1fx faster | %.1fx the time |\n",
    "| one call of a trivial tool (median of 100) | %s | %s | %s | %.0fx the time | %.0fx the time |\n",
    "| ping while all 4 workers are busy (median / max of 20) | | %s / %s | | | |\n",
    "| future's own round trip, `value(future(NULL))` on multisession, no server (median of 30) | | %s | | | |\n",
    "| 8 x 1-s calls as the first calls after start: first / all answered | | %s / %s | | | %.1fx the warm time |\n",
    "| main thread CPU per trivial call (of 200) | %s | %s | | %.1fx | |\n",
    "| trivial concurrent calls per second (100 sent at once) | | %.0f | | | |\n",
    "load average at the end: %s\n"
  ),
  s(main_burst), s(worker_burst), s(py_burst), main_burst / worker_burst, worker_burst / py_burst,
  ms(main_call), ms(worker_call), ms(py_call), worker_call / main_call, worker_call / py_call,
  ms(median(pings)), ms(max(pings)), ms(future_call),
  s(cold_first), s(cold_all), cold_all / worker_burst,
  ms(main_cpu), ms(worker_cpu), worker_cpu / main_cpu,
  worker_rate, paste(readLines("/proc/loadavg"), collapse = "")
))
