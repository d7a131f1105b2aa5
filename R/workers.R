# Concurrent tools: calls of tools made with `tool(concurrent = TRUE)` run in
# worker processes, so several run at once and R's main thread stays free
# to take the next call. With no future::plan() of the user's, the workers
# are the server's own PSOCK cluster, with the tools installed in each once
# (see "The local pool" below); with one, each call is a future on it.
#
# The main thread owns the pool. Between polls for new calls it looks at
# every running future: relays what the worker reported (progress, logs,
# messages, warnings; as immediate conditions, in the order signalled),
# stops workers whose call was cancelled or ran out of time, and hands
# finished results to the engine exactly as a main-thread call's. A worker
# that dies gives its call an error result and is replaced. Calls beyond the
# workers wait in a bounded queue; beyond that they get an error result.
#
# A tool that asks the user (mcp_elicit()) in a worker ends its run there
# with the question. The main thread asks the client with the engine's
# machinery and, once the answer is in, runs the tool again from the start
# with the answers so far, which mcp_elicit() returns at once: the same
# replay a 2026-07-28 call gets from its client. While the user thinks, the
# call holds no worker and no R thread, so an abandoned question (a task's
# may wait for an hour) blocks nothing; and the answer travels to the
# worker the way the call itself did, with the future, so this works on
# every backend (a side channel such as a file or a socket would not reach
# a worker on another machine).

# How long the server waits for news from running futures before it looks
# for new calls again, in milliseconds. Workers of cluster futures
# (multisession, cluster) wake it at once (see wait_for_workers()); for
# other backends it is how often the server looks.
worker_tick_ms <- 20L

# The pool for one run of mcp_server(), or NULL when no tool is concurrent.
# `limit` is the server's default time limit in seconds (or NULL).
workers_start <- function(tools, workers, queue, limit, grace = 1) {
  concurrent <- concurrent_tools(tools)
  if (!any(concurrent)) return(NULL)
  pool <- new.env(parent = emptyenv())
  pool$concurrent <- concurrent
  pool$limits <- lapply(tools, function(t) tool_spec(t)$timeout %||% limit)
  if (uses_local_pool()) {
    # Up, with every tool installed in every worker, before the server
    # takes its first message (see mcp_server()).
    pool$backend <- "psock"
    pool$size <- as.integer(workers %||% default_worker_count())
    psock_start(pool, pool$size, tool_bundle(tools, concurrent))
  } else {
    pool$backend <- "future"
    pool$size <- min(workers %||% Inf, future::nbrOfWorkers())
  }
  pool$queue_limit <- queue
  pool$grace <- grace
  pool$running <- list()
  pool$waiting <- list()
  # Calls waiting for the user's answer: they hold no worker.
  pool$asking <- list()
  # Where cancel flags and run directories go (see mcp_cancelled() and
  # interrupt_if_running()): a place workers on this machine can see.
  root <- flags_root()
  remove_stale_flags(root)
  pool$flags <- tempfile(flags_dir_name(), tmpdir = root)
  dir.create(pool$flags, showWarnings = FALSE)
  pool$calls <- 0L
  pool$runs <- 0L
  pool
}

# Each worker call makes and removes two directories here: in memory
# (/dev/shm, Linux) they cost microseconds, on a disk a few tenths of a
# millisecond each under load.
flags_root <- function() {
  shm <- "/dev/shm"
  if (dir.exists(shm) && file.access(shm, 2) == 0) shm else tempdir()
}

# A server's directory there is `mcpserver-calls-<pid namespace>-<pid>-<random>`.
flags_prefix <- "mcpserver-calls-"

flags_dir_name <- function() {
  paste0(flags_prefix, pid_namespace(), "-", Sys.getpid(), "-")
}

# Which processes a pid names: /dev/shm may be shared by containers whose
# pids are not. "0" where it cannot be told (no stale directory is removed
# then).
pid_namespace <- function() {
  link <- suppressWarnings(Sys.readlink("/proc/self/ns/pid"))
  digits <- sub("^pid:\\[([0-9]+)\\]$", "\\1", link)
  if (length(digits) == 1 && grepl("^[0-9]+$", digits)) digits else "0"
}

# /dev/shm outlives processes: a server that crashed or was killed (no
# workers_stop()) leaves its directory there until the machine restarts.
# Removed as the next pool starts: only directories named by this scheme,
# owned by this user, whose server ran in this pid namespace and is gone.
# (In tempdir(), the fallback, R removes them with the session's directory.)
remove_stale_flags <- function(root) {
  namespace <- pid_namespace()
  if (!identical(root, "/dev/shm") || namespace == "0") return(invisible(character()))
  pattern <- paste0("^", flags_prefix, namespace, "-([0-9]+)-[0-9a-f]+$")
  names <- list.files(root, pattern = pattern)
  if (length(names) == 0) return(invisible(character()))
  paths <- file.path(root, names)
  info <- file.info(paths, extra_cols = TRUE)
  pids <- as.integer(sub(pattern, "\\1", names))
  stale <- info$isdir %in% TRUE & Sys.readlink(paths) == "" &
    info$uname %in% Sys.info()[["effective_user"]] &
    pids != Sys.getpid() & !vapply(pids, process_exists, logical(1))
  unlink(paths[stale], recursive = TRUE)
  invisible(paths[stale])
}

# Whether process `pid` runs (as any user): on Linux /proc says so without
# asking for permission to signal it.
process_exists <- function(pid) {
  if (dir.exists("/proc/self")) return(dir.exists(file.path("/proc", pid)))
  isTRUE(tools::pskill(pid, 0L))
}

concurrent_tools <- function(tools) {
  vapply(tools, function(t) isTRUE(tool_spec(t)$concurrent), logical(1))
}

# `workers` without a concurrent tool would do nothing, silently. (What
# concurrent tools need is checked as the pool starts, which is before the
# server reads its first message.)
workers_check <- function(tools, workers) {
  concurrent <- any(concurrent_tools(tools))
  if (!concurrent && !is.null(workers)) {
    # At once: under Rscript a plain warning would wait for the server to end.
    warning(sprintf(paste(
      "`workers = %s` has no effect: no tool is marked `concurrent = TRUE`, so every call runs",
      "on the server's R thread, one at a time. Mark the tools whose calls may run in parallel",
      "with `tool(..., concurrent = TRUE)` (see vignette(\"concurrency\")), or drop `workers`."
    ), format(workers)), call. = FALSE, immediate. = TRUE)
  }
  invisible()
}

# R's socket connections take their options from getOption("socketOptions")
# when they are made. parallelly sets TCP_NODELAY on the workers' ends only;
# without it on the server's end too, Nagle's algorithm holds back each
# small message (a call, a result) for about 40 ms. Scoped to the code that
# makes the connections: the user's options stay as they were.
with_no_delay <- function(code) {
  old <- options(socketOptions = "no-delay")
  on.exit(options(old), add = TRUE)
  force(code)
}

# No plan of the user's (sequential would run calls on this thread, and
# without future there is none): the server's own pool.
uses_local_pool <- function() {
  !requireNamespace("future", quietly = TRUE) || inherits(future::plan(), "sequential")
}

# Where future 1.31 keeps its multisession cluster (not exported).
cluster_registry <- function() {
  environment(utils::getFromNamespace("ClusterRegistry", "future"))
}

default_worker_count <- function() {
  cores <- if (requireNamespace("parallelly", quietly = TRUE)) parallelly::availableCores() else 2L
  max(2L, min(4L, as.integer(cores)))
}

# Stops what still runs (the client left) and shuts down a pool started
# here (safe to call twice).
workers_stop <- function(pool) {
  if (is.null(pool)) return(invisible())
  for (call in pool$running) {
    flag_cancelled(call)
    stop_worker(call)
  }
  pool$running <- list()
  pool$asking <- list()
  pool$waiting <- list()
  if (identical(pool$backend, "psock")) psock_stop(pool)
  unlink(pool$flags, recursive = TRUE)
  invisible()
}

# `job$tool` is the entry's key: tools added while serving have keys past
# the pool's (and are never concurrent).
is_worker_job <- function(pool, job) {
  !is.null(pool) && job$tool <= length(pool$concurrent) && isTRUE(pool$concurrent[[job$tool]])
}

# Milliseconds the server may wait for the next call: short while futures
# run or calls wait for answers, so their news is picked up promptly; none
# when the wait was spent on the workers' connections instead.
poll_wait_ms <- function(pool) {
  idle <- is.null(pool) || (length(pool$running) == 0 && length(pool$asking) == 0)
  if (idle) return(1000L)
  if (wait_for_workers(pool, worker_tick_ms)) 0L else worker_tick_ms
}

# Waits up to `ms` until a running worker sends something (its result, or
# a progress or log report), on the connections of cluster futures, so a
# result is collected the moment it arrives instead of at the next look.
# FALSE (nothing waited) unless every running future has such a connection.
wait_for_workers <- function(pool, ms) {
  if (length(pool$running) == 0) return(FALSE)
  connections <- lapply(pool$running, function(call) worker_connection(pool, call))
  if (any(vapply(connections, is.null, logical(1)))) return(FALSE)
  ready <- tryCatch(socketSelect(unname(connections), write = FALSE, timeout = ms / 1000), error = function(e) NULL)
  # What the next look at the calls needs to know (see ready_to_collect()):
  # nothing reads the connections before it.
  if (identical(pool$backend, "psock") && length(ready) == length(connections)) {
    pool$ready <- structure(ready, names = names(pool$running))
  }
  TRUE
}

worker_connection <- function(pool, call) {
  if (identical(pool$backend, "psock")) return(pool$nodes[[call$node]]$con)
  future <- call$future
  if (!inherits(future, "ClusterFuture") || is.null(future$node)) return(NULL)
  con <- tryCatch(future$workers[[future$node]]$con, error = function(e) NULL)
  if (inherits(con, "connection")) con else NULL
}

# A new call of a concurrent tool: run it, queue it, or refuse it.
worker_submit <- function(server, pool, job, handler) {
  call <- new_worker_call(server, pool, job, handler)
  if (length(pool$running) < pool$size) {
    launch(server, pool, call)
  } else if (length(pool$waiting) < pool$queue_limit) {
    pool$waiting[[length(pool$waiting) + 1]] <- call
  } else {
    server$complete_error(job$id, sprintf(
      "The server is busy: all %d workers are running calls and %d more are waiting (the limit). Try again later.",
      pool$size, length(pool$waiting)
    ))
  }
}

new_worker_call <- function(server, pool, job, handler) {
  call <- new.env(parent = emptyenv())
  call$job <- job
  call$handler <- handler
  taken <- server$worker_call()
  call$context <- taken$context
  # What the tool's mcp_elicit() calls return on the next run, by key.
  call$answers <- taken$answers
  call$unavailable <- taken$unavailable
  call$limit <- pool$limits[[job$tool]]
  call$seq <- 0L
  call$pid <- NULL
  call$answered <- FALSE
  pool$calls <- pool$calls + 1L
  call$cancel_flag <- file.path(pool$flags, pool$calls)
  call
}

launch <- function(server, pool, call) {
  # A call's time limit counts from its first run, waits for the user
  # included, as on the main thread.
  call$started <- call$started %||% Sys.time()
  call$seq <- 0L
  call$pid <- NULL
  call$host <- NULL
  # Where the worker and the server settle when it may be interrupted (see
  # "Interrupts only while the tool runs" in R/worker_process.R): one per
  # run, as a call run again after a question may go to another worker.
  pool$runs <- pool$runs + 1L
  call$run_dir <- paste0(call$cancel_flag, "-run-", pool$runs)
  started <- if (identical(pool$backend, "psock")) psock_launch(pool, call) else future_launch(call)
  if (!isTRUE(started)) {
    why <- if (inherits(started, "error")) conditionMessage(started) else "no worker is left (see the server's log)"
    server$complete_error(call$job$id, paste0("The call could not be started on a worker: ", why))
    return(invisible())
  }
  pool$running[[call_key(call$job$id)]] <- call
}

# A call's name in the pool's lists (format() would cost more than the
# rest of the dispatch).
call_key <- function(id) if (is.character(id)) id else as.character(id)

# What a worker needs of the call besides its arguments.
worker_call_info <- function(call) {
  list(
    context = call$context, answers = call$answers,
    unavailable = call$unavailable, cancel_flag = call$cancel_flag,
    run_dir = call$run_dir
  )
}

# A call on the user's plan: a future that ships the tool and its globals
# (future finds them) each time.
future_launch <- function(call) {
  env <- new.env(parent = environment(call$handler) %||% globalenv())
  env$handler <- call$handler
  env$arguments <- call$job$arguments
  env$id <- call$job$id
  env$call <- worker_call_info(call)
  call$future <- tryCatch(
    future::future(
      # Looked up in the worker (shipping the function itself would make
      # future scan and send the package's internals along with it).
      quote(asNamespace("mcpserver")$worker_run(handler, arguments, id, call)),
      substitute = FALSE, envir = env, packages = "mcpserver", seed = NULL
    ),
    error = function(e) e
  )
  if (inherits(call$future, "error")) call$future else TRUE
}

# One look at every running call, then start waiting ones on free workers.
workers_service <- function(server, pool) {
  if (is.null(pool)) return(invisible())
  ready <- ready_to_collect(pool)
  for (key in names(pool$running)) {
    call <- pool$running[[key]]
    if (!call$answered) {
      check_stop(server, pool, call)
    } else if (!is.null(call$kill_at)) {
      interrupt_if_running(call)
      check_grace(call)
    }
    if (ready[[key]] && check_done(server, pool, call)) pool$running[[key]] <- NULL
  }
  for (key in names(pool$asking)) {
    if (check_answer(server, pool, pool$asking[[key]])) pool$asking[[key]] <- NULL
  }
  # Waiting calls the client cancelled leave the queue at once.
  if (length(pool$waiting) > 0) {
    cancelled <- vapply(pool$waiting, function(call) isTRUE(server$cancelled(call$job$id)), logical(1))
    for (call in pool$waiting[cancelled]) server$complete_cancelled(call$job$id)
    pool$waiting <- pool$waiting[!cancelled]
  }
  while (length(pool$waiting) > 0 && length(pool$running) < pool$size) {
    call <- pool$waiting[[1]]
    pool$waiting[[1]] <- NULL
    launch(server, pool, call)
  }
  invisible()
}

# Which running calls may have news: on the server's own pool, those whose
# worker's connection has something to read, found with one socketSelect()
# for all of them (the one the server just waited in, if it did); on a
# future backend every call (future looks itself).
ready_to_collect <- function(pool) {
  keys <- names(pool$running)
  known <- pool$ready
  pool$ready <- NULL
  if (!is.null(known) && identical(names(known), keys)) return(known)
  if (length(keys) == 0 || !identical(pool$backend, "psock")) {
    return(structure(rep(TRUE, length(keys)), names = keys))
  }
  connections <- lapply(pool$running, function(call) pool$nodes[[call$node]]$con)
  ready <- tryCatch(
    socketSelect(unname(connections), write = FALSE, timeout = 0),
    error = function(e) rep(TRUE, length(keys))
  )
  structure(ready, names = keys)
}

# A cancelled call or one past its limit is answered at once, its cancel
# flag raised and, on the local pool, its worker interrupted (SIGINT: the
# tool's R code stops with an interrupt, its on.exit() code runs, and the
# worker returns and is kept). A worker that has not returned within the
# grace period is killed. The call stays in the pool until its worker
# answers or its connection ends, so a killed worker is replaced before it
# takes another call.
check_stop <- function(server, pool, call) {
  if (stopped_by_server(server, call)) {
    flag_cancelled(call)
    call$interrupt_wanted <- pool$grace > 0
    interrupt_if_running(call)
    call$kill_at <- Sys.time() + pool$grace
    check_grace(call)
  }
}

# Only while the tool runs, which the server knows by claiming the end of
# the call's window before it signals (see "Interrupts only while the tool
# runs" in R/worker_process.R): before the tool starts, or once it has
# returned, the claim fails, and this is tried again at the next look while
# the call's worker has it. Any backend whose worker runs on this machine
# and whose process is known can be interrupted (the server's own pool,
# multisession, multicore, callr, a local cluster).
interrupt_if_running <- function(call) {
  if (isTRUE(call$interrupt_wanted) && !isTRUE(call$interrupted) && runs_here(call) &&
    dir.create(file.path(call$run_dir, "end"), showWarnings = FALSE, mode = dir_mode)) {
    call$interrupted <- TRUE
    tools::pskill(call$pid, tools::SIGINT)
    file.create(file.path(call$run_dir, "end", "sent"), showWarnings = FALSE)
  }
  invisible()
}

# Whether process `pid`, the worker of `call`, runs on this machine (a call
# whose worker never said its host ran on the server's own pool, here).
runs_here <- function(call, pid = call$pid) {
  here <- Sys.info()[["nodename"]]
  !is.null(pid) && identical(call$host %||% here, here)
}

# The worker of an answered call had its time to return: stop it.
check_grace <- function(call) {
  if (!is.null(call$kill_at) && !isTRUE(call$killed) && Sys.time() >= call$kill_at) stop_worker(call)
}

# Answers a call the client cancelled or that ran out of time; whether it did.
stopped_by_server <- function(server, call) {
  if (isTRUE(server$cancelled(call$job$id))) {
    call$answered <- TRUE
    server$complete_cancelled(call$job$id)
    TRUE
  } else if (!is.null(call$limit) &&
    as.numeric(difftime(Sys.time(), call$started, units = "secs")) >= call$limit) {
    call$answered <- TRUE
    server$complete_timed_out(call$job$id, as.double(call$limit))
    TRUE
  } else {
    FALSE
  }
}

# Tells the tool, through mcp_cancelled(), that its call is over, so it
# can tidy up and return before the grace period ends; the only stop for a
# worker the server cannot kill (whose process id it never learned). The
# worker sees the flag if it shares this machine's file system.
flag_cancelled <- function(call) {
  call$flagged <- TRUE
  try(file.create(call$cancel_flag, showWarnings = FALSE), silent = TRUE)
  invisible()
}

# A call waiting for the user's answer: cancelled or out of time, it is
# answered so (no worker to stop); answered by the user, it runs again.
# Whether it leaves the waiting list.
check_answer <- function(server, pool, call) {
  if (stopped_by_server(server, call)) return(TRUE)
  answer <- server$worker_answer(call$job$id)
  if (is.null(answer)) return(FALSE)
  call$answers[[call$asked]] <- answer
  run_again(pool, call)
  TRUE
}

# Ahead of new calls: this one was let in before them.
run_again <- function(pool, call) {
  pool$waiting <- c(list(call), pool$waiting)
}

# Kills the worker process running `call`, when it runs on this machine
# and its process id is known (multisession, multicore, callr and local
# cluster workers). Remote workers finish their work; the answer is dropped.
stop_worker <- function(call) {
  pid <- call$pid %||% call$future$job$pid
  if (!runs_here(call, pid)) return(invisible(FALSE))
  call$killed <- TRUE
  invisible(tools::pskill(pid, tools::SIGKILL))
}

# Whether the call's future has resolved (its outcome then handed over).
check_done <- function(server, pool, call) {
  outcome <- if (identical(pool$backend, "psock")) {
    got <- psock_collect(server, pool, call)
    if (is.null(got)) return(FALSE)
    got[[1]]
  } else {
    future_outcome(server, call)
  }
  if (identical(outcome, FALSE)) return(FALSE)
  if (!call$answered) {
    if (is.list(outcome) && !is.null(outcome$question)) {
      ask_user_for_worker(server, pool, call, outcome$question)
    } else {
      deliver(server, call, outcome)
    }
  }
  if (isTRUE(call$flagged)) unlink(call$cancel_flag)
  # A worker of the server's own pool removes its last run directory as it
  # takes its next call; others may not come back.
  if (!identical(pool$backend, "psock") || inherits(outcome, "error")) unlink(call$run_dir, recursive = TRUE)
  TRUE
}

# The outcome of a call's future, or FALSE while it runs.
future_outcome <- function(server, call) {
  relay <- function(condition) relay_report(server, call, condition)
  done <- tryCatch(
    # timeout = 0: future 1.31 otherwise waits up to 10 ms per unfinished
    # cluster future, so each look at 4 running calls took 40 ms and every
    # result waited for it. The wait belongs in the server's poll.
    withCallingHandlers(future::resolved(call$future, timeout = 0), mcpserver_relay = relay),
    error = function(e) e
  )
  if (isFALSE(done)) return(FALSE)
  outcome <- if (inherits(done, "error")) {
    done
  } else {
    tryCatch(
      withCallingHandlers(future::value(call$future), mcpserver_relay = relay),
      error = function(e) e
    )
  }
  if (inherits(outcome, "error")) replace_dead_worker(call$future)
  call$future <- NULL
  outcome
}

# The tool's run ended at mcp_elicit() with a question it has no answer to.
ask_user_for_worker <- function(server, pool, call, question) {
  id <- call$job$id
  asked <- server$worker_ask(id, question$key, question$message, question$schema)
  switch(asked$status,
    asked = {
      call$asked <- question$key
      pool$asking[[call_key(id)]] <- call
    },
    needs_input = {
      # 2026-07-28: the client asks the user and calls again.
      call$answered <- TRUE
      server$complete_input_required(id)
    },
    {
      # No answer can come: mcp_elicit() raises why on the next run, where
      # the tool may catch it, as on the main thread.
      call$answers[[question$key]] <- asked
      run_again(pool, call)
    }
  )
}

deliver <- function(server, call, outcome) {
  call$answered <- TRUE
  id <- call$job$id
  if (inherits(outcome, "error")) {
    # What future says names the worker's process id and host and the
    # globals sent along (names and sizes of the server's objects): for
    # the server's log, not for the client.
    cat(sprintf(
      "mcpserver: the R worker running job %s stopped unexpectedly: %s\n",
      format(id, scientific = FALSE), conditionMessage(outcome)
    ), file = stderr())
    server$complete_error(id, paste0(
      "The R worker running this call stopped unexpectedly (it crashed or quit), ",
      "so the call has no result; the server's log has the details."
    ))
  } else if (isTRUE(outcome$ok)) {
    server$complete_value(id, call$job$tool, outcome$value)
  } else {
    server$complete_error(id, outcome$message)
  }
}

# How the server's log names the worker of a call: its place in the
# server's own pool (as mcp_request()$worker has it) and its process, so
# the lines of calls running side by side can be told apart.
worker_label <- function(call) {
  where <- if (is.null(call$node)) "worker" else sprintf("worker %d", call$node)
  sprintf("[%s, pid %s]", where, call$pid %||% "?")
}

# A report from a worker, at most once each (future may signal a relayed
# condition again when the value is collected).
relay_report <- function(server, call, condition) {
  if (condition$seq <= call$seq) return(invisible())
  call$seq <- condition$seq
  data <- condition$data
  if (identical(condition$kind, "started")) {
    call$pid <- data$pid
    call$host <- data$host
    # Stopped before its worker said who it is.
    if (call$answered) {
      interrupt_if_running(call)
      check_grace(call)
    }
    return(invisible())
  }
  if (identical(condition$kind, "printed")) {
    cat(paste(worker_label(call), data$text), sep = "\n", file = stderr())
    return(invisible())
  }
  if (call$answered) return(invisible())
  id <- call$job$id
  switch(condition$kind,
    progress = server$progress(id, data$progress, data$total, data$message),
    # A span the worker ran, and attributes for the call's span (R/telemetry.R).
    span = server$span_record(id, data),
    span_annotate = server$span_annotate(id, data$attributes, data$event),
    log = {
      cat(sprintf("%s [%s] %s\n", worker_label(call), data$level, data$text), file = stderr())
      server$log(id, data$level, data$text)
    }
  )
  invisible()
}

# future 1.31 neither notices nor replaces a dead multisession worker of a
# user's plan: the next future sent to it fails. Put a fresh one in its place.
replace_dead_worker <- function(future) {
  if (!inherits(future, "MultisessionFuture") || is.null(future$node)) return(invisible())
  registry <- cluster_registry()
  cluster <- registry$cluster
  node <- future$node
  if (length(cluster) < node || node_alive(cluster[[node]])) return(invisible())
  fresh <- tryCatch(
    with_no_delay(parallelly::makeClusterPSOCK(1L, rscript_libs = .libPaths())),
    error = function(e) NULL
  )
  if (is.null(fresh)) return(invisible())
  cluster[[node]] <- fresh[[1]]
  registry$cluster <- cluster
  invisible()
}

node_alive <- function(node) {
  isTRUE(tryCatch(
    parallel::clusterEvalQ(structure(list(node), class = c("SOCKcluster", "cluster")), TRUE)[[1]],
    error = function(e) FALSE
  ))
}

# ---- The local pool: parallel's PSOCK workers, tools installed once --------
#
# With no plan of the user's, the server runs its own PSOCK cluster (what
# future's multisession is built on) and drives it with parallel's own
# messages: at start, and for a replacement worker, every concurrent tool's
# function and the globals it uses (found by the globals package, as
# future finds them) are sent to each worker once; a call then sends only
# the tool's key, its arguments and the call's context, and gets back only
# the outcome. What the tool reports while it runs (progress, logs) comes
# back on the same connection as extra parallel result messages, tagged so
# that they are told apart from the outcome (future relays its immediate
# conditions the same way).

# The tag of a report message from a worker (any other message is a call's
# outcome).
relay_tag <- "mcpserver-relay"

# What every worker needs to run the concurrent tools: the functions by
# key, the globals they use and the packages those come from. Taken once,
# here: a global changed while serving is not seen by workers (the rule
# the concurrency vignette states).
tool_bundle <- function(tools, concurrent) {
  if (!requireNamespace("globals", quietly = TRUE)) {
    abort(paste(
      "Tools with `concurrent = TRUE` need the globals package to ship their functions to workers.",
      "Install it (on Debian or Ubuntu: apt-get install r-cran-globals)."
    ))
  }
  keys <- which(concurrent)
  handlers <- tools[keys]
  globals <- list()
  packages <- character()
  for (handler in handlers) {
    found <- globals::globalsOf(handler, envir = environment(handler) %||% globalenv(), mustExist = FALSE)
    packages <- union(packages, globals::packagesOf(found))
    found <- globals::cleanup(found)
    globals[names(found)] <- as.list(found)
  }
  list(
    keys = keys, handlers = handlers, globals = globals,
    packages = setdiff(packages, "base")
  )
}

psock_start <- function(pool, n, bundle) {
  pool$bundle <- bundle
  # parallel's own messages, looked up once.
  pool$send_call <- parallel_fun("sendCall")
  pool$recv_data <- parallel_fun("recvData")
  pool$nodes <- vector("list", n)
  pool$busy <- rep(FALSE, n)
  pool$pids <- rep(NA_integer_, n)
  cluster <- with_no_delay(make_psock(n))
  for (i in seq_len(n)) pool$nodes[[i]] <- cluster[[i]]
  installed <- tryCatch(
    parallel::clusterApply(cluster, seq_len(n), worker_install, bundle),
    error = function(e) {
      try(parallel::stopCluster(cluster), silent = TRUE)
      abort(paste0("The workers could not load the concurrent tools: ", conditionMessage(e)))
    }
  )
  pool$pids <- vapply(installed, function(x) x, integer(1))
  invisible(pool)
}

make_psock <- function(n) {
  if (requireNamespace("parallelly", quietly = TRUE)) {
    parallelly::makeClusterPSOCK(n, rscript_libs = .libPaths(), autoStop = FALSE)
  } else {
    parallel::makePSOCKcluster(n)
  }
}

as_cluster <- function(nodes) structure(nodes, class = c("SOCKcluster", "cluster"))

psock_stop <- function(pool) {
  for (i in seq_along(pool$nodes)) {
    if (pool$busy[[i]] && !is.na(pool$pids[[i]])) tools::pskill(pool$pids[[i]], tools::SIGKILL)
    try(parallel::stopCluster(as_cluster(pool$nodes[i])), silent = TRUE)
  }
  pool$nodes <- list()
  invisible()
}

# A fresh worker in node `i`'s place, with the tools installed (after a
# crash, or a worker killed after the grace period).
psock_replace <- function(pool, i) {
  try(close(pool$nodes[[i]]$con), silent = TRUE)
  fresh <- tryCatch(with_no_delay(make_psock(1L)), error = function(e) e)
  if (inherits(fresh, "error")) {
    cat("mcpserver: could not start a worker in place of one that stopped: ", conditionMessage(fresh), "\n", file = stderr())
    pool$nodes[i] <- list(NULL)
    return(invisible())
  }
  pid <- tryCatch(parallel::clusterCall(fresh, worker_install, i, pool$bundle)[[1]], error = function(e) e)
  if (inherits(pid, "error")) {
    cat("mcpserver: a fresh worker could not load the concurrent tools: ", conditionMessage(pid), "\n", file = stderr())
    try(parallel::stopCluster(fresh), silent = TRUE)
    pool$nodes[i] <- list(NULL)
    return(invisible())
  }
  pool$nodes[[i]] <- fresh[[1]]
  pool$pids[[i]] <- pid
  pool$busy[[i]] <- FALSE
  invisible()
}

psock_launch <- function(pool, call) {
  free <- which(!pool$busy & !vapply(pool$nodes, is.null, logical(1)))
  if (length(free) == 0) return(FALSE)
  i <- free[[1]]
  sent <- tryCatch(
    {
      info <- worker_call_info(call)
      # Which of the pool's workers runs it, for mcp_request()$worker.
      info$worker <- i
      pool$send_call(pool$nodes[[i]], ".mcpserver_serve", list(
        call$job$tool, call$job$arguments, call$job$id, info
      ))
      TRUE
    },
    error = function(e) e
  )
  if (inherits(sent, "error")) {
    psock_replace(pool, i)
    return(sent)
  }
  pool$busy[[i]] <- TRUE
  call$node <- i
  call$pid <- pool$pids[[i]]
  call$host <- NULL
  TRUE
}

parallel_fun <- function(name) utils::getFromNamespace(name, "parallel")

# Reads what worker `call$node` has sent (its connection has something to
# read: see ready_to_collect()): reports are relayed; the outcome, when it
# is there, is returned (list(outcome)); a dead connection gives an error
# outcome and a fresh worker. NULL while the call runs on.
psock_collect <- function(server, pool, call) {
  node <- pool$nodes[[call$node]]
  repeat {
    msg <- tryCatch(pool$recv_data(node), error = function(e) e)
    if (inherits(msg, "error") || !is.list(msg)) {
      pool$busy[[call$node]] <- FALSE
      psock_replace(pool, call$node)
      reason <- if (inherits(msg, "error")) conditionMessage(msg) else "an unreadable message"
      return(list(simpleError(sprintf(
        "the connection to worker %d (process %s) ended: %s", call$node, call$pid %||% "?", reason
      ))))
    }
    if (identical(msg$tag, relay_tag)) {
      relay_report(server, call, msg$value)
      if (!more_to_read(node)) return(NULL)
      next
    }
    pool$busy[[call$node]] <- FALSE
    outcome <- if (isTRUE(msg$success)) msg$value else simpleError(paste(unclass(msg$value), collapse = " "))
    return(list(outcome))
  }
}

more_to_read <- function(node) {
  isTRUE(tryCatch(socketSelect(list(node$con), write = FALSE, timeout = 0), error = function(e) TRUE))
}

check_worker_options <- function(workers, queue, grace = 1) {
  if (!(is_number(grace) && grace >= 0)) {
    abort("`worker_grace` must be a number of seconds, at least 0.")
  }
  if (!is.null(workers) && !(is_positive_number(workers) && workers == round(workers))) {
    abort("`workers` must be NULL or a whole number of at least 1.")
  }
  if (!(is_number(queue) && queue >= 0 && queue == round(queue))) {
    abort("`worker_queue` must be a whole number of at least 0.")
  }
}
