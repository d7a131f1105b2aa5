# Helpers of test-examples.R, which runs every R code chunk of the README
# and the vignettes and every example of man/*.Rd (those inside `\dontrun`,
# `\donttest` and `if (FALSE)` too), as a user would: pasted into an
# interactive R session, in order, one session per document.
#
# A chunk is cut into steps at its top-level calls of `mcp_server()` (in
# the foreground) and `mcp_bridge()`: such a call would take over the
# session's console, so it runs as the server script it is, in a process
# of its own that starts from the session's state (its global environment,
# saved) and the chunk's code up to that call, and the test then lists the
# server's tools and calls them through `mcp_client()`. A server started
# with `background = TRUE` runs in the session itself and is called from
# the test. Everything else runs in the session's console.
#
# Two changes are made to the code, and only these: port 8000, which the
# documents use, becomes a free port of this run (a shared machine may use
# 8000); and a chunk the text asks to save as a file (Save as `server.R`)
# is also written there, in the session's working directory. The session
# attaches mcpserver before the examples of an Rd file, as example() does,
# and testthat before a chunk written for a test file (`test_that()`).

example_sources <- function() {
  root <- test_path("..", "..")
  list(
    readme = file.path(root, "README.md"),
    vignettes = sort(Sys.glob(file.path(root, "vignettes", "*.Rmd"))),
    rd = sort(Sys.glob(file.path(root, "man", "*.Rd")))
  )
}

# ---- Extraction ------------------------------------------------------------

# The R chunks of a Markdown or R Markdown file: fenced blocks opened with
# ```r or ```{r ...}. Each is a list with `line` (of its opening fence),
# `code`, `options` (the knitr options written in its header) and
# `saved_as` (a file the text just before it says to save it as, or NULL).
markdown_chunks <- function(path) {
  lines <- readLines(path, warn = FALSE, encoding = "UTF-8")
  chunks <- list()
  i <- 1L
  while (i <= length(lines)) {
    fence <- regmatches(lines[[i]], regexec("^(`{3,})\\s*(.*)$", lines[[i]]))[[1]]
    if (length(fence) == 0) {
      i <- i + 1L
      next
    }
    close <- i + 1L
    while (close <= length(lines) && !grepl(paste0("^", fence[[2]], "\\s*$"), lines[[close]])) close <- close + 1L
    info <- trimws(fence[[3]])
    if (identical(info, "r") || grepl("^\\{r[ ,}]", info)) {
      chunks[[length(chunks) + 1L]] <- list(
        line = i,
        code = lines[seq_len(close - i - 1L) + i],
        options = chunk_options(info),
        saved_as = saved_as(lines[seq_len(i - 1L)])
      )
    }
    i <- close + 1L
  }
  chunks
}

# `{r label, eval = FALSE}` -> list(eval = FALSE); `r` -> list().
chunk_options <- function(info) {
  if (identical(info, "r")) return(list())
  inner <- sub("^\\{r\\s*", "", sub("\\}\\s*$", "", info))
  inner <- sub("^[^,=]*(,|$)", "", inner) # the label, if any
  if (!nzchar(trimws(inner))) return(list())
  eval(parse(text = sprintf("list(%s)", inner)), baseenv())
}

# "Save as `server.R`:" (or "Save this as ...") in the paragraph just
# before a chunk.
saved_as <- function(before) {
  while (length(before) > 0 && !nzchar(trimws(before[[length(before)]]))) before <- before[-length(before)]
  blank <- which(!nzchar(trimws(before)))
  paragraph <- paste(before[seq_along(before) > max(c(0L, blank))], collapse = " ")
  found <- regmatches(paragraph, regexec("Save (?:this |it )?as `([^`]+)`", paragraph, perl = TRUE))[[1]]
  if (length(found) == 2) found[[2]] else NULL
}

# The examples of an Rd file as one chunk, with `\dontrun` and `\donttest`
# code uncommented.
rd_chunks <- function(path) {
  out <- tempfile(fileext = ".R")
  on.exit(unlink(out))
  tools::Rd2ex(path, out, commentDontrun = FALSE, commentDonttest = FALSE)
  if (!file.exists(out)) return(list())
  code <- readLines(out, warn = FALSE, encoding = "UTF-8")
  list(list(line = NA_integer_, code = code, options = list(), saved_as = NULL))
}

document_chunks <- function(path) {
  if (grepl("\\.Rd$", path)) rd_chunks(path) else markdown_chunks(path)
}

# ---- Steps -----------------------------------------------------------------

# The chunk's top-level expressions as steps: list(kind, code, call), where
# kind is "console", "server" (a foreground mcp_server() call), "bridge" or
# "background" (a console step that starts a background server). The code
# of `if (FALSE) { ... }` blocks (examples never run by R CMD check) is
# taken as if written at top level. Consecutive console expressions make
# one step; `prefix` of a server step is the chunk's code before it.
chunk_steps <- function(code) {
  exprs <- parse(text = code, keep.source = TRUE)
  texts <- expression_texts(exprs)
  steps <- list()
  console <- character()
  seen <- character()
  flush <- function() {
    if (length(console) > 0) steps[[length(steps) + 1L]] <<- list(kind = "console", code = console)
    console <<- character()
  }
  for (i in seq_along(texts$exprs)) {
    e <- texts$exprs[[i]]
    text <- texts$text[[i]]
    kind <- step_kind(e)
    if (kind == "console") {
      console <- c(console, text)
    } else if (kind == "background") {
      flush()
      steps[[length(steps) + 1L]] <- list(kind = "background", code = text)
    } else {
      flush()
      steps[[length(steps) + 1L]] <- list(kind = kind, code = text, prefix = seen, call = e)
    }
    seen <- c(seen, text)
  }
  flush()
  steps
}

# Each top-level expression with its source text, `if (FALSE)` blocks
# opened.
expression_texts <- function(exprs) {
  refs <- attr(exprs, "srcref")
  out_exprs <- list()
  out_text <- character()
  for (i in seq_along(exprs)) {
    e <- exprs[[i]]
    if (is.call(e) && identical(e[[1]], as.name("if")) && identical(e[[2]], FALSE) && length(e) == 3 &&
      is.call(e[[3]]) && identical(e[[3]][[1]], as.name("{"))) {
      body <- e[[3]]
      body_refs <- attr(body, "srcref")
      for (j in seq_along(body)[-1]) {
        out_exprs[[length(out_exprs) + 1L]] <- body[[j]]
        out_text <- c(out_text, paste(as.character(body_refs[[j]]), collapse = "\n"))
      }
    } else {
      out_exprs[[length(out_exprs) + 1L]] <- e
      out_text <- c(out_text, paste(as.character(refs[[i]]), collapse = "\n"))
    }
  }
  list(exprs = out_exprs, text = out_text)
}

# The call of an expression, through an assignment (`srv <- mcp_server(...)`).
called <- function(e) {
  while (is.call(e) && (identical(e[[1]], as.name("<-")) || identical(e[[1]], as.name("=")))) e <- e[[3]]
  if (!is.call(e)) return(NULL)
  e
}

called_name <- function(e) {
  e <- called(e)
  if (is.null(e)) return("")
  f <- e[[1]]
  if (is.call(f) && identical(f[[1]], as.name("::"))) f <- f[[3]]
  if (is.name(f)) as.character(f) else ""
}

step_kind <- function(e) {
  name <- called_name(e)
  if (name == "mcp_bridge") return("bridge")
  if (name != "mcp_server") return("console")
  call <- match.call(mcpserver::mcp_server, called(e))
  if (isTRUE(call$background)) "background" else "server"
}

server_transport <- function(call) {
  call <- match.call(mcpserver::mcp_server, called(call))
  if (identical(call$transport, "http")) "http" else "stdio"
}

# ---- A free port, and the code as run --------------------------------------

free_port <- function() {
  for (attempt in 1:50) {
    port <- sample(20000:60000, 1)
    # Nothing listens there if a connection is refused at once.
    con <- tryCatch(
      suppressWarnings(socketConnection("127.0.0.1", port, open = "r", timeout = 1)),
      error = function(e) NULL
    )
    if (is.null(con)) return(port)
    close(con)
  }
  stop("no free port found")
}

with_port <- function(code, port) gsub("\\b8000\\b", as.character(port), code)

# ---- An interactive R session ----------------------------------------------

# A real interactive R (`R --interactive`, as in test-background.R) reading
# commands from a pipe, in a fresh working directory, with a home folder of
# its own (mcp_client_install() writes there).
# `dir` is a folder of its own; close the session with session_close().
example_session <- function(dir, extra_env = character()) {
  work <- file.path(dir, "work")
  home <- file.path(dir, "home")
  control <- file.path(dir, "control")
  for (d in c(work, home, control)) dir.create(d)
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  proc <- processx::process$new(
    file.path(R.home("bin"), "R"),
    c("--interactive", "--no-save", "--no-restore", "--quiet", "--no-readline"),
    stdin = "|", stdout = "|", stderr = "|", wd = work,
    env = c("current", R_LIBS = lib, R_LIBS_USER = lib, R_PROFILE_USER = "", R_ENVIRON_USER = "",
      HOME = home, extra_env)
  )
  session <- new.env()
  session$proc <- proc
  session$work <- work
  session$home <- home
  session$control <- control
  session$out <- ""
  session$err <- ""
  session$steps <- 0L
  runner <- file.path(control, "runner.R")
  writeLines(c(
    # Runs one step's file as the console would (visible values printed),
    # and records how it went in <file>.rds: its error, its warnings.
    ".mcpx_run <- function(file) {",
    "  warnings <- character()",
    "  error <- tryCatch(withCallingHandlers({",
    "    for (e in parse(file, keep.source = TRUE)) {",
    "      r <- withVisible(eval(e, globalenv()))",
    "      if (r$visible) print(r$value)",
    "    }",
    "    NULL",
    "  }, warning = function(w) {",
    "    warnings <<- c(warnings, conditionMessage(w))",
    "    invokeRestart('muffleWarning')",
    "  }), error = function(e) conditionMessage(e))",
    "  saveRDS(list(error = error, warnings = warnings), paste0(file, '.rds'))",
    "  cat('\\n<<mcpx ', basename(file), ' done>>\\n', sep = '')",
    "  invisible()",
    "}"
  ), runner)
  session_send(session, sprintf("source(%s)", deparse(runner)))
  session
}

# Ends the session and whatever it started (servers, clients, workers).
session_close <- function(session) {
  if (session$proc$is_alive()) session$proc$kill_tree()
  invisible()
}

session_send <- function(session, line) session$proc$write_input(paste0(line, "\n"))

session_read <- function(session) {
  session$out <- paste0(session$out, session$proc$read_output())
  session$err <- paste0(session$err, session$proc$read_error())
}

# Runs code in the session's console; returns list(error, warnings, output).
session_run <- function(session, code, timeout = 120) {
  session$steps <- session$steps + 1L
  file <- file.path(session$control, sprintf("step-%03d.R", session$steps))
  writeLines(code, file, useBytes = TRUE)
  session$out <- ""
  session_send(session, sprintf(".mcpx_run(%s)", deparse(file)))
  marker <- sprintf("<<mcpx %s done>>", basename(file))
  deadline <- Sys.time() + timeout
  repeat {
    session_read(session)
    if (grepl(marker, session$out, fixed = TRUE)) break
    if (!session$proc$is_alive()) {
      return(list(error = paste("the R session exited:", session$err), warnings = character(), output = session$out))
    }
    if (Sys.time() > deadline) {
      return(list(
        error = sprintf("no end within %d seconds", timeout), warnings = character(), output = session$out,
        timed_out = TRUE
      ))
    }
    session$proc$poll_io(100)
  }
  result <- readRDS(paste0(file, ".rds"))
  result$output <- session$out
  result
}

# The URL a server started in the background announced on the session's
# stderr (each announcement is read once).
session_background_url <- function(session, timeout = 30) {
  pattern <- "on (http://[^ ]+) in the background"
  deadline <- Sys.time() + timeout
  repeat {
    session_read(session)
    found <- regmatches(session$err, regexec(pattern, session$err))[[1]]
    if (length(found) == 2) {
      session$err <- substring(session$err, regexpr(pattern, session$err) + nchar(found[[1]]))
      return(found[[2]])
    }
    if (Sys.time() > deadline) stop("no background server announced: ", session$err)
    session$proc$poll_io(100)
  }
}

# ---- Server steps ----------------------------------------------------------

# The script a server step runs: the session's state, then the chunk's code
# up to and including the server's call.
server_step_script <- function(session, step) {
  session$steps <- session$steps + 1L
  image <- file.path(session$control, sprintf("image-%03d.RData", session$steps))
  saved <- session_run(session, sprintf("save.image(%s)", deparse(image)))
  if (!is.null(saved$error)) stop("could not save the session: ", saved$error)
  script <- file.path(session$control, sprintf("server-%03d.R", session$steps))
  writeLines(c(
    "library(mcpserver)",
    sprintf("load(%s)", deparse(image)),
    step$prefix,
    step$code
  ), script, useBytes = TRUE)
  script
}

# Starts an HTTP server script; returns list(url, proc) once it says where.
start_http_script <- function(script, wd, env = character(), timeout = 60, frame = parent.frame()) {
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  proc <- processx::process$new(
    file.path(R.home("bin"), "Rscript"), script,
    stdout = "|", stderr = "|", wd = wd, env = c("current", R_LIBS = lib, env)
  )
  withr::defer(if (proc$is_alive()) proc$kill_tree(), envir = frame)
  deadline <- Sys.time() + timeout
  said <- ""
  repeat {
    said <- paste0(said, proc$read_error())
    url <- regmatches(said, regexec("serving [0-9]+ tool\\(s\\) on (http://[^ \n]+)", said))[[1]]
    if (length(url) == 2) return(list(url = url[[2]], proc = proc))
    if (!proc$is_alive()) stop("the server exited: ", said, proc$read_all_error())
    if (Sys.time() > deadline) stop("the server did not say where it listens: ", said)
    proc$poll_io(200)
  }
}

stop_process <- function(proc) {
  if (proc$is_alive()) {
    proc$kill_tree()
    proc$wait(5000)
  }
}
