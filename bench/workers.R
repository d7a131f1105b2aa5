# Concurrent tools on workers, measured in one run (issues [10] and [17]);
# a step of `make bench` (bench/run.sh), or by hand:
#   Rscript bench/workers.R [lib] [python]
# lib: where mcpserver is installed (e.g. .lib); python: the Python with the
# official SDK (default: the venv bench/run.sh makes, .cache/bench/python).
# 1. Cold start: 8 calls of a 1-s tool sent as the first calls after
#    initialize (when the first and the last were answered).
# 2. 8 calls of the 1-s tool sent at once: on the main thread, with 4
#    workers, and against the Python SDK server (an async tool).
# 3. Per-call overhead of a trivial tool: concurrent (a worker) vs main
#    thread vs the Python server's, median of 300 sequential calls.
# 4. ping round trips while all 4 workers are busy (the client collects its
#    garbage first, and reports what it spent collecting during them).
# 5. The server's main-thread CPU per dispatched trivial call (utime +
#    stime of /proc/<pid>/task/<pid>/stat, Linux; 1000 calls, as the clock
#    ticks 100 times a second), and calls/s with 200 sent at once.
# 6. future's own round trip on a multisession worker, without the server.
# Prints a markdown table with ratios and the targets of issue [17], and
# the load average; needs future, parallelly, processx and jsonlite.
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
n_seq <- 300
per_call <- function(peer, name, n = n_seq) {
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

load_average <- function() {
  if (!file.exists("/proc/loadavg")) return("n/a")
  paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = ", ")
}
load_before <- load_average()

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

# ping while 4 worker calls sleep. The client is R too: its own garbage
# collection (~30 ms here, after the calls above) once landed on a ping and
# was that ping's worst case, so it collects first, and what it still
# spends collecting during the pings is reported with them.
invisible(gc())
client_gc <- gc.time()[[3]]
busy <- vapply(1:4, function(i) call(r, "sleep_worker"), numeric(1))
pings <- numeric(20)
for (i in seq_along(pings)) {
  id <- next_id(r)
  t0 <- now()
  send(r, list(jsonrpc = "2.0", id = id, method = "ping"))
  invisible(answer_to(r, id))
  pings[[i]] <- now() - t0
}
client_gc <- gc.time()[[3]] - client_gc
answers_to(r, busy)

cpu_per_call <- function(name, n = 1000) {
  before <- main_thread_cpu(r$proc$get_pid())
  for (i in seq_len(n)) answer_to(r, call(r, name))
  (main_thread_cpu(r$proc$get_pid()) - before) / n
}
main_cpu <- cpu_per_call("noop_main")
worker_cpu <- cpu_per_call("noop_worker")
rate <- function(peer, name, n = 200) {
  t0 <- now()
  answers_to(peer, vapply(seq_len(n), function(i) call(peer, name), numeric(1)))
  n / (now() - t0)
}
worker_rate <- rate(r, "noop_worker")
main_rate <- rate(r, "noop_main")
stop_peer(r)

py_burst <- py_call <- py_rate <- NA_real_
if (file.exists(python)) {
  # R's LD_LIBRARY_PATH would give Python R's libraries (its ssl module fails).
  env <- Sys.getenv()
  env <- env[names(env) != "LD_LIBRARY_PATH"]
  py <- connect(start_peer(python, file.path("bench", "servers", "python-concurrent.py"), env = env))
  invisible(per_call(py, "noop_worker", 20))
  py_burst <- burst(py, "sleep_worker")
  py_call <- per_call(py, "noop_worker")
  py_rate <- rate(py, "noop_worker")
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
ratio <- function(a, b) if (is.na(a) || is.na(b)) "n/a" else sprintf("%.2f", a / b)
met <- function(ok) if (is.na(ok)) "n/a" else if (ok) "yes" else "**no**"
rows <- c(
  "| measure | 4 workers (concurrent tool) | main thread | Python SDK (async tool) | workers / main | workers / Python | target | met |",
  "|---|---|---|---|---|---|---|---|",
  sprintf("| trivial call, p50 of %d sequential | %s | %s | %s | %s | %s | <= 2 ms | %s |",
    n_seq, ms(worker_call), ms(main_call), ms(py_call), ratio(worker_call, main_call), ratio(worker_call, py_call),
    met(worker_call <= 0.002)),
  sprintf("| 8 calls of a 1-s tool sent at once, warm (wall) | %s | %s | %s | %s | %s | | |",
    s(worker_burst), s(main_burst), s(py_burst), ratio(worker_burst, main_burst), ratio(worker_burst, py_burst)),
  sprintf("| the same as the first calls after start: first answered | %s | | %s | | %s | <= 1.2 s | %s |",
    s(cold_first), s(py_burst), ratio(cold_first, py_burst), met(cold_first <= 1.2)),
  sprintf("| the same as the first calls after start: all answered | %s | | %s | | %s | <= 2.2 s | %s |",
    s(cold_all), s(py_burst), ratio(cold_all, py_burst), met(cold_all <= 2.2)),
  sprintf("| R's main-thread CPU per call (of 1000) | %s | %s | | %s | | < 1 ms | %s |",
    ms(worker_cpu), ms(main_cpu), ratio(worker_cpu, main_cpu), met(worker_cpu < 0.001)),
  sprintf("| trivial calls per second, 200 sent at once | %.0f | %.0f | %.0f | %s | %s | | |",
    worker_rate, main_rate, py_rate, ratio(worker_rate, main_rate), ratio(worker_rate, py_rate)),
  sprintf("| ping while all 4 workers are busy, median / max of 20 (the client's own GC meanwhile: %s) | %s / %s | | | | | | |",
    ms(client_gc), ms(median(pings)), ms(max(pings))),
  sprintf("| future's own round trip, `value(future(NULL))` on multisession, no server (median of 30) | %s | | | | | | |", ms(future_call))
)
cat(rows, sep = "\n")
cat(sprintf(
  "\nLoad average (1, 5, 15 min) before: %s; after: %s (%d cores).\n",
  load_before, load_average(), parallel::detectCores()
))
