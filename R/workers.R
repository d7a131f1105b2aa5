# Concurrent tools: calls of tools made with `tool(concurrent = TRUE)` run as
# futures on the user's future::plan() (by default a multisession pool), so
# several run at once and R's main thread stays free to take the next call.
#
# The main thread owns the pool. Between polls for new calls it looks at
# every running future: relays what the worker reported (progress, logs,
# messages, warnings; as immediate conditions, in the order signalled),
# stops workers whose call was cancelled or ran out of time, and hands
# finished results to the engine exactly as a main-thread call's. A worker
# that dies gives its call an error result and is replaced. Calls beyond the
# workers wait in a bounded queue; beyond that they get an error result.

# How often the server looks at running futures, in milliseconds.
worker_tick_ms <- 20L

# The pool for one run of mcp_server(), or NULL when no tool is concurrent.
# `limit` is the server's default time limit in seconds (or NULL).
workers_start <- function(tools, workers, queue, limit) {
  concurrent <- vapply(tools, function(t) isTRUE(tool_spec(t)$concurrent), logical(1))
  if (!any(concurrent)) return(NULL)
  if (!requireNamespace("future", quietly = TRUE)) {
    abort(paste(
      "Tools with `concurrent = TRUE` run on the future package, which is not installed.",
      "Install it (on Debian or Ubuntu: apt-get install r-cran-future) or drop `concurrent = TRUE`."
    ))
  }
  pool <- new.env(parent = emptyenv())
  pool$concurrent <- concurrent
  pool$limits <- lapply(tools, function(t) tool_spec(t)$timeout %||% limit)
  pool$previous_plan <- NULL
  if (inherits(future::plan(), "sequential")) {
    # No plan set (sequential would run calls on this thread): a local pool.
    n <- workers %||% default_worker_count()
    pool$previous_plan <- future::plan(future::multisession, workers = I(as.integer(n)))
    warm_pool()
  }
  pool$size <- min(workers %||% Inf, future::nbrOfWorkers())
  pool$queue_limit <- queue
  pool$running <- list()
  pool$waiting <- list()
  pool
}

# Starts the pool's R processes and loads mcpserver in each now, so the
# first calls do not pay for it.
warm_pool <- function() {
  try(future::value(future::future(NULL, seed = NULL)), silent = TRUE)
  cluster <- cluster_registry()$cluster
  if (length(cluster) > 0) {
    try(parallel::clusterCall(cluster, requireNamespace, "mcpserver", quietly = TRUE), silent = TRUE)
  }
  invisible()
}

# Where future 1.31 keeps its multisession cluster (not exported).
cluster_registry <- function() {
  environment(utils::getFromNamespace("ClusterRegistry", "future"))
}

default_worker_count <- function() {
  cores <- if (requireNamespace("parallelly", quietly = TRUE)) parallelly::availableCores() else 2L
  max(2L, min(4L, as.integer(cores)))
}

# Stops what still runs (the client left) and restores the user's plan,
# which also shuts down a pool started here.
workers_stop <- function(pool) {
  if (is.null(pool)) return(invisible())
  for (call in pool$running) stop_worker(call)
  pool$running <- list()
  if (!is.null(pool$previous_plan)) future::plan(pool$previous_plan)
  invisible()
}

is_worker_job <- function(pool, job) !is.null(pool) && isTRUE(pool$concurrent[[job$tool]])

# Milliseconds the server may wait for the next call: short while futures
# run, so their results and reports are picked up promptly.
poll_wait_ms <- function(pool) {
  if (is.null(pool) || length(pool$running) == 0) 1000L else worker_tick_ms
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
  call$context <- server$request_context()
  call$limit <- pool$limits[[job$tool]]
  call$seq <- 0L
  call$pid <- NULL
  call$answered <- FALSE
  call
}

launch <- function(server, pool, call) {
  call$started <- Sys.time()
  env <- new.env(parent = environment(call$handler) %||% globalenv())
  env$handler <- call$handler
  env$arguments <- call$job$arguments
  env$id <- call$job$id
  env$context <- call$context
  call$future <- tryCatch(
    future::future(
      # Looked up in the worker (shipping the function itself would make
      # future scan and send the package's internals along with it).
      quote(asNamespace("mcpserver")$worker_run(handler, arguments, id, context)),
      substitute = FALSE, envir = env, packages = "mcpserver", seed = NULL
    ),
    error = function(e) e
  )
  if (inherits(call$future, "error")) {
    server$complete_error(call$job$id, paste0(
      "The call could not be started on a worker: ", conditionMessage(call$future)
    ))
    return(invisible())
  }
  pool$running[[format(call$job$id, scientific = FALSE)]] <- call
}

# One look at every running call, then start waiting ones on free workers.
workers_service <- function(server, pool) {
  if (is.null(pool)) return(invisible())
  for (key in names(pool$running)) {
    call <- pool$running[[key]]
    if (!call$answered) check_stop(server, pool, call)
    if (check_done(server, pool, call)) pool$running[[key]] <- NULL
  }
  # Waiting calls the client cancelled leave the queue at once.
  cancelled <- vapply(pool$waiting, function(call) isTRUE(server$cancelled(call$job$id)), logical(1))
  for (call in pool$waiting[cancelled]) server$complete_cancelled(call$job$id)
  pool$waiting <- pool$waiting[!cancelled]
  while (length(pool$waiting) > 0 && length(pool$running) < pool$size) {
    call <- pool$waiting[[1]]
    pool$waiting[[1]] <- NULL
    launch(server, pool, call)
  }
  invisible()
}

# A cancelled call or one past its limit is answered at once, and its
# worker stopped; the call stays in the pool until its future resolves, so
# the worker is replaced before it takes another call.
check_stop <- function(server, pool, call) {
  if (isTRUE(server$cancelled(call$job$id))) {
    call$answered <- TRUE
    server$complete_cancelled(call$job$id)
    stop_worker(call)
  } else if (!is.null(call$limit) &&
    as.numeric(difftime(Sys.time(), call$started, units = "secs")) >= call$limit) {
    call$answered <- TRUE
    server$complete_timed_out(call$job$id, as.double(call$limit))
    stop_worker(call)
  }
}

# Kills the worker process running `call`, when it runs on this machine
# and its process id is known (multisession, multicore, callr and local
# cluster workers). Remote workers finish their work; the answer is dropped.
stop_worker <- function(call) {
  here <- Sys.info()[["nodename"]]
  pid <- call$pid %||% call$future$job$pid
  if (is.null(pid) || !identical(call$host %||% here, here)) return(invisible(FALSE))
  call$killed <- TRUE
  invisible(tools::pskill(pid, tools::SIGKILL))
}

# Whether the call's future has resolved (its outcome then handed over).
check_done <- function(server, pool, call) {
  relay <- function(condition) relay_report(server, call, condition)
  done <- tryCatch(
    withCallingHandlers(future::resolved(call$future), mcpserver_relay = relay),
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
  if (!call$answered) deliver(server, call, outcome)
  TRUE
}

deliver <- function(server, call, outcome) {
  call$answered <- TRUE
  id <- call$job$id
  if (inherits(outcome, "error")) {
    server$complete_error(id, paste0(
      "The R worker running this call stopped unexpectedly (it crashed or quit), ",
      "so the call has no result. ", conditionMessage(outcome)
    ))
  } else if (isTRUE(outcome$ok)) {
    server$complete_value(id, call$job$tool, outcome$value)
  } else {
    server$complete_error(id, outcome$message)
  }
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
    if (call$answered) stop_worker(call)
    return(invisible())
  }
  if (call$answered) return(invisible())
  id <- call$job$id
  switch(condition$kind,
    progress = server$progress(id, data$progress, data$total, data$message),
    log = {
      cat(sprintf("[%s] %s\n", data$level, data$text), file = stderr())
      server$log(id, data$level, data$text)
    }
  )
  invisible()
}

# future 1.31 neither notices nor replaces a dead multisession worker: the
# next future sent to it fails. Put a fresh one in its place.
replace_dead_worker <- function(future) {
  if (!inherits(future, "MultisessionFuture") || is.null(future$node)) return(invisible())
  registry <- cluster_registry()
  cluster <- registry$cluster
  node <- future$node
  if (length(cluster) < node || node_alive(cluster[[node]])) return(invisible())
  fresh <- tryCatch(
    parallelly::makeClusterPSOCK(1L, rscript_libs = .libPaths()),
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

# ---- In the worker -------------------------------------------------------

# Runs a tool call in a worker process. What the tool reports goes back as
# immediate conditions (relayed while the server polls); the outcome is a
# plain list, so a tool's error is told apart from a dead worker.
worker_run <- function(handler, arguments, id, context) {
  # A forked worker (multicore) inherits the server's state: never use it.
  the$server <- NULL
  the$job <- NULL
  the$worker <- list(id = id, context = context)
  the$relayed <- 0L
  on.exit(the$worker <- NULL)
  worker_relay("started", list(pid = Sys.getpid(), host = Sys.info()[["nodename"]]))
  tryCatch(
    {
      value <- withCallingHandlers(
        do.call(handler, arguments),
        message = function(m) {
          worker_relay("log", list(level = "info", text = sub("\n$", "", conditionMessage(m))))
          invokeRestart("muffleMessage")
        },
        warning = function(w) {
          worker_relay("log", list(level = "warning", text = conditionMessage(w)))
          invokeRestart("muffleWarning")
        }
      )
      list(ok = TRUE, value = from_ellmer_value(value))
    },
    error = function(e) list(ok = FALSE, message = conditionMessage(e))
  )
}

in_worker <- function() !is.null(the$worker)

worker_relay <- function(kind, data) {
  the$relayed <- the$relayed + 1L
  signalCondition(structure(
    class = c("mcpserver_relay", "immediateCondition", "condition"),
    list(message = kind, call = NULL, kind = kind, data = data, seq = the$relayed)
  ))
  invisible(TRUE)
}

check_worker_options <- function(workers, queue) {
  if (!is.null(workers) && !(is_positive_number(workers) && workers == round(workers))) {
    abort("`workers` must be NULL or a whole number of at least 1.")
  }
  if (!(is_number(queue) && queue >= 0 && queue == round(queue))) {
    abort("`worker_queue` must be a whole number of at least 0.")
  }
}
