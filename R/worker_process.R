# What runs inside a worker process of the server's pool (see R/workers.R,
# which runs on the server's main thread): installing the tools once, and
# running one call with its output captured and its reports relayed.

# ---- In a PSOCK worker -------------------------------------------------------

# Run once per worker (and per replacement): puts the tools, their globals
# and packages in place, and returns the worker's process id.
worker_install <- function(number, bundle) {
  for (pkg in bundle$packages) {
    suppressPackageStartupMessages(try(library(pkg, character.only = TRUE), silent = TRUE))
  }
  list2env(lapply(bundle$globals, compiled), envir = globalenv())
  tools <- list()
  for (i in seq_along(bundle$keys)) tools[[as.character(bundle$keys[[i]])]] <- compiled(bundle$handlers[[i]])
  the$tools <- tools
  the$worker_number <- number
  the$send_data <- parallel_fun("sendData")
  # The connection to the server, the same for the worker's life.
  the$master <- find_master()
  output_capture_start()
  assign(".mcpserver_serve", worker_serve, envir = globalenv())
  Sys.getpid()
}

# A function byte-compiled now, at start, rather than by R's JIT at its
# second call: that took 10-30 ms of CPU in every worker at about the same
# moment (a pool's workers get their calls together), which the server's
# own threads then waited for on a machine with few cores.
compiled <- function(f) {
  if (!is.function(f) || is.primitive(f)) return(f)
  tryCatch(compiler::cmpfun(f, options = list(suppressAll = TRUE)), error = function(e) f)
}

# One call, as parallel's worker loop runs it: the tool by its key.
# What the tool prints is captured and sent to the server, which writes it
# to its stderr: the worker's own output goes nowhere (and must never
# reach the server's stdout, the protocol stream).
worker_serve <- function(key, arguments, id, call) {
  # The previous call's run directory (see worker_run()): the server read
  # that call's outcome before it sent this one, so it is done with it.
  if (!is.null(the$last_run)) remove_run_dir(the$last_run)
  the$last_run <- call$run_dir
  outcome <- worker_run(the$tools[[as.character(key)]], arguments, id, call)
  printed <- output_capture_take()
  if (length(printed) > 0) worker_relay("printed", list(text = printed))
  outcome
}

# What the worker prints goes to one text connection for the worker's
# life (a connection per call cost more than the rest of the worker's part
# of a call); it is started afresh only after a call that printed.
output_capture_start <- function() {
  the$printed <- textConnection(NULL, "w")
  sink(the$printed)
  the$sinks <- sink.number()
}

# The lines printed since the last look. A sink the tool left open is
# closed, and the worker's own put back if the tool closed it.
output_capture_take <- function() {
  while (sink.number() > the$sinks) sink()
  con <- the$printed
  ours <- sink.number() == the$sinks
  if (ours && !isIncomplete(con) && length(textConnectionValue(con)) == 0) return(character())
  # A last line without its newline ends with the call, as it did when
  # each call had a connection of its own.
  if (isIncomplete(con)) cat("\n", file = con)
  printed <- textConnectionValue(con)
  if (ours) sink()
  close(con)
  output_capture_start()
  printed
}

# Two rmdir()s, unless the server left `sent` in it.
remove_run_dir <- function(dir) {
  removed <- suppressWarnings(file.remove(file.path(dir, "end"), dir))
  if (!all(removed)) unlink(dir, recursive = TRUE)
  invisible()
}

# The connection to the server: parallel's worker loop holds it as
# `master` in one of the frames this call runs in.
find_master <- function() {
  for (frame in rev(sys.frames())) {
    master <- get0("master", envir = frame, inherits = FALSE)
    if (inherits(master, c("SOCKnode", "SOCK0node"))) return(master)
  }
  NULL
}

# ---- In the worker -------------------------------------------------------

# Runs a tool call in a worker process. What the tool reports goes back as
# immediate conditions (relayed while the server polls); the outcome is a
# plain list, so a tool's error is told apart from a dead worker.
worker_run <- function(handler, arguments, id, call) {
  # A forked worker (multicore) inherits the server's state: never use it.
  the$server <- NULL
  the$job <- NULL
  call$id <- id
  the$worker <- call
  the$relayed <- 0L
  the$asked <- 0L
  on.exit(the$worker <- NULL)
  # The server's own pool knows its workers' processes; on a future
  # backend the server learns here which process to interrupt.
  if (is.null(the$master)) worker_relay("started", list(pid = Sys.getpid(), host = Sys.info()[["nodename"]]))
  guarded <- NA
  started <- FALSE
  running <- FALSE
  outcome <- NULL
  # Until the tool's window is closed, an interrupt anywhere in here is
  # caught and the steps not yet done are taken again (none twice). One
  # tryCatch() for the tool and the window: each costs about 10 us.
  repeat {
    closed <- tryCatch(
      {
        if (is.na(guarded)) guarded <- interrupt_window_open(call$run_dir)
        if (!started) {
          started <- running <- TRUE
          outcome <- tool_value(handler, arguments)
          running <- FALSE
        }
        if (isTRUE(guarded)) interrupt_window_close(call$run_dir)
        TRUE
      },
      error = function(e) {
        # Not the tool's: the worker's own code failed.
        if (!running) stop(e)
        running <<- FALSE
        outcome <<- list(ok = FALSE, message = conditionMessage(e))
        FALSE
      },
      # The server's SIGINT (a cancel, a time limit): the tool's on.exit()
      # code has run; the worker answers and takes the next call. Before
      # the tool started, it does not start; after it returned, its
      # outcome stands.
      interrupt = function(e) {
        started <<- TRUE
        running <<- FALSE
        FALSE
      },
      mcpserver_question = function(q) {
        running <<- FALSE
        outcome <<- list(ok = FALSE, question = list(key = q$key, message = q$question, schema = q$schema))
        FALSE
      }
    )
    if (closed) break
  }
  outcome %||% interrupted_outcome()
}

# The tool's value, with its messages and warnings relayed as logs.
tool_value <- function(handler, arguments) {
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
}

interrupted_outcome <- function() list(ok = FALSE, message = "The call was interrupted.", interrupted = TRUE)

# ---- Interrupts only while the tool runs -------------------------------------
#
# The server interrupts a call (SIGINT) only while its tool runs: one
# arriving while the worker's loop reads a call or sends an outcome would
# put the connection out of step, and one taken after the call would hit
# the next. Signals are asynchronous, so the two sides settle who ends the
# window with the call's run directory, which only one of them can make
# `end` in (mkdir is atomic):
# - the worker makes the run directory as the call starts (before, the
#   server cannot claim the call, and does not signal);
# - the server, to interrupt, makes `end`, signals, then makes `end/sent`;
# - the worker, once the tool has returned, makes `end`. If it cannot, the
#   server's signal is on its way or in: the worker waits for `sent` and
#   takes the interrupt here, before the outcome goes back.
# Without a shared file system (a worker on another machine), there is no
# run directory, and no interrupt either (the server only signals
# processes on its own machine).

# dir.create()'s default mode, converted once: as.octmode("0777") took half
# the time of each of the call's mkdir()s.
dir_mode <- as.octmode("777")

interrupt_window_open <- function(dir) {
  is_string(dir) && (dir.create(dir, showWarnings = FALSE, mode = dir_mode) || dir.exists(dir))
}

interrupt_window_close <- function(dir) {
  end <- file.path(dir, "end")
  if (dir.create(end, showWarnings = FALSE, mode = dir_mode)) return(invisible())
  sent <- file.path(end, "sent")
  # The server makes `sent` just after its signal (a bound in case it died).
  until <- Sys.time() + 5
  while (!file.exists(sent) && Sys.time() < until) Sys.sleep(0.001)
  # Once `sent` is there the signal has arrived; if R holds it pending,
  # this takes it (and the caller catches it).
  Sys.sleep(0)
  invisible()
}

in_worker <- function() !is.null(the$worker)

# mcp_request() in a worker: the call's context, and which worker runs it
# (its number in the server's own pool, NA on a future backend).
worker_request <- function() {
  context <- rust(the$worker$context)
  context$worker <- list(
    number = as.integer(the$worker$worker %||% NA_integer_),
    pid = Sys.getpid(),
    host = Sys.info()[["nodename"]]
  )
  context
}

# mcp_elicit() in a worker: the answer if this run has it, else the run
# ends here with the question (see the top of this file).
worker_elicit <- function(message, schema) {
  the$asked <- the$asked + 1L
  key <- paste0("input-", the$asked)
  answer <- the$worker$answers[[key]]
  if (!is.null(answer)) return(input_answer(answer))
  if (!is.null(the$worker$unavailable)) {
    abort(paste0("Cannot ask the user for input: ", the$worker$unavailable, "."))
  }
  stop(structure(
    class = c("mcpserver_question", "condition"),
    list(message = "the tool needs input from the user", call = NULL, key = key, question = message, schema = schema)
  ))
}

worker_cancelled <- function() {
  flag <- the$worker$cancel_flag
  is_string(flag) && file.exists(flag)
}

# A report to the server while the tool runs. The send is shielded from
# the server's SIGINT (a cancel): one arriving in the middle of a message
# (a long log line takes several writes) cut it short, and the server,
# reading the rest of a message that never came, waited for ever. R's
# socket writes take an interrupt even inside suspendInterrupts(), so the
# signal is blocked for the send (sigint_hold_()) and taken once the
# message is out, in the tool's code, as the server meant.
worker_relay <- function(kind, data) {
  the$relayed <- the$relayed + 1L
  held <- sigint_hold_()
  on.exit(if (!held) sigint_release_())
  if (!is.null(the$master)) {
    report <- list(kind = kind, data = data, seq = the$relayed)
    the$send_data(the$master, list(type = "VALUE", value = report, success = TRUE, tag = relay_tag))
    return(invisible(TRUE))
  }
  # future sends the condition on (for a cluster future, on its
  # connection) from its handler, which runs inside this call.
  signalCondition(structure(
    class = c("mcpserver_relay", "immediateCondition", "condition"),
    list(message = kind, call = NULL, kind = kind, data = data, seq = the$relayed)
  ))
  invisible(TRUE)
}
