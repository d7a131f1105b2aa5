#' Let an assistant work in your R session
#'
#' `mcp_session()` serves [session_tools()] from the R session you work in,
#' so that an MCP client (Claude Code, Claude Desktop, VS Code, Positron,
#' Codex...) can look at your data, models and help pages. It is one call,
#' made for `.Rprofile`:
#'
#' ```
#' if (interactive()) mcpserver::mcp_session()
#' ```
#'
#' It starts a server in the background (see [mcp_background()]) on a free
#' port of 127.0.0.1, which only accepts requests carrying a random secret
#' made for this session, and registers the session in a directory only
#' you can read (mode 0700): `$XDG_RUNTIME_DIR/mcpserver-sessions` when
#' that is set, else `sessions` in [tools::R_user_dir()]'s cache directory
#' (the option `mcpserver.session_dir` or the environment variable
#' `MCPSERVER_SESSION_DIR` choose another). The entry, readable by you
#' alone (mode 0600), holds the address, the secret, the process id, the
#' working directory, the R version and the start time. It is removed when
#' the session stops (`$stop()`, or R exits); an entry whose process has
#' died is ignored and removed by the next look at the directory.
#'
#' The client then starts `Rscript -e 'mcpserver::mcp_bridge()'` (written
#' for it by `mcp_client_config(session = TRUE)`), which finds the session
#' in the directory (see [mcp_bridge()]) and connects to it.
#'
#' @section At the console:
#' Each tool call prints one line to the console (on stderr) when it ends:
#' the tool, its arguments in short and the time it took, such as
#' `[mcp] describe_object(name = "flights") 0.02 s`. `log = FALSE` (or the
#' option `mcpserver.session_log = FALSE`) turns this off.
#'
#' Calls run only while R waits at the prompt, between your commands: the
#' console stays yours. While a command of yours runs, calls wait; one that
#' has waited `queue_timeout` seconds is answered with a tool error saying
#' R was busy and nothing ran (it never runs later), so the assistant is
#' never left hanging in silence.
#'
#' @param tools The tools to serve; by default [session_tools()] with
#'   `run_code`. A list of tools made with [tool()], ellmer tools
#'   (`ellmer::tool()`), or both, such as
#'   `c(session_tools(), btw::btw_tools())`.
#' @param ... Not used; named options go after it.
#' @param run_code Whether the assistant may run R code: `"off"`, `"ask"`
#'   or `"allow"` (see [session_tools()]). Defaults to the option
#'   `mcpserver.run_code`, else `"off"`.
#' @param log Whether each call prints a line at the console.
#' @param queue_timeout Seconds a call may wait while R is busy before it
#'   is answered as not run (see At the console); `NULL` waits as long as
#'   it takes.
#' @param name The server's name for clients.
#' @return A handle of class `mcp_session` (an [mcp_background()] handle
#'   too) with `$stop()`, `$url` and `$entry` (the registry file),
#'   invisibly. Calling `mcp_session()` again while one runs returns it.
#' @seealso [mcp_sessions()] lists the registered sessions, [mcp_bridge()]
#'   connects a client to one.
#' @examples
#' if (FALSE) {
#'   # In ~/.Rprofile:
#'   if (interactive()) mcpserver::mcp_session()
#'   # Then, once, to tell Claude Code how to reach it:
#'   mcp_client_install(client = "claude-code", session = TRUE)
#' }
#' @export
mcp_session <- function(tools = NULL, ..., run_code = getOption("mcpserver.run_code", "off"),
                        log = getOption("mcpserver.session_log", TRUE), queue_timeout = 60,
                        name = "r-session") {
  if (...length() > 0) abort("Options of `mcp_session()` must be named: `run_code`, `log`, `queue_timeout` or `name`.")
  if (!is_flag(log)) abort("`log` must be TRUE or FALSE.")
  current <- the$session
  if (!is.null(current) && current$running()) {
    message(sprintf("mcpserver: this session already serves on %s.", current$url))
    return(invisible(current))
  }
  tools <- tools %||% c(session_tools(run_code = run_code), list(list_sessions_tool()))
  if (inherits(tools, "mcpserver_tool") || is.function(tools)) tools <- list(tools)
  # ellmer tools (btw's among them) are made tools here, so the console
  # line can wrap them like the others.
  tools <- lapply(tools, function(t) if (is_ellmer_tool(t)) tool_from_ellmer(t) else t)
  if (log) tools <- lapply(tools, logged_tool)
  dir <- session_dir()
  token <- session_secret()
  started <- Sys.time()
  server <- mcp_server(tools,
    instructions = session_instructions(started), name = name, queue_timeout = queue_timeout,
    transport = "http", host = "127.0.0.1", port = 0L, background = TRUE,
    http = http_options(bearer_tokens = token)
  )
  entry <- tryCatch(session_register(dir, server$url, token, started), error = function(e) {
    server$stop()
    abort(paste("Could not register the session:", conditionMessage(e)))
  })
  session_handle(server, entry)
}

# The background handle, with a stop() that also removes the entry, and an
# exit finalizer that removes it when R ends without stop().
session_handle <- function(server, entry) {
  stop_server <- server$stop
  server$entry <- entry
  server$stop <- function() {
    unlink(entry)
    if (identical(the$session, server)) the$session <- NULL
    stop_server()
  }
  class(server) <- c("mcp_session", class(server))
  the$session <- server
  if (is.null(the$session_exit)) {
    the$session_exit <- new.env(parent = emptyenv())
    reg.finalizer(the$session_exit, function(e) if (!is.null(the$session)) unlink(the$session$entry), onexit = TRUE)
  }
  invisible(server)
}

session_instructions <- function(started) {
  paste0(
    "These tools work in the user's own R session (R ", getRversion(), ", process ", Sys.getpid(),
    ", working directory ", getwd(), ", started ", format(started, "%Y-%m-%d %H:%M:%S %Z"), "): ",
    "the objects you see are the ones the user works with. Calls run while R waits at the prompt; ",
    "if the user is running a command, a call waits and may come back as not run: try again later."
  )
}

# A tool that prints one line at the console, on stderr, when its call ends
# (written with cat(), not message(): a message would go to the client too).
logged_tool <- function(t) {
  spec <- attr(t, "mcpserver_tool")
  inner <- t
  wrapper <- function() NULL
  formals(wrapper) <- formals(args(inner) %||% inner)
  body(wrapper) <- quote({
    .mcp_started <- Sys.time()
    .mcp_call <- match.call()
    on.exit(session_log_call(.mcp_name, .mcp_call, .mcp_started))
    .mcp_call[[1L]] <- .mcp_inner
    eval(.mcp_call, parent.frame())
  })
  environment(wrapper) <- list2env(list(.mcp_inner = inner, .mcp_name = spec$name), parent = asNamespace("mcpserver"))
  keep <- attributes(t)
  keep$srcref <- NULL
  attributes(wrapper) <- keep
  wrapper
}

session_log_call <- function(name, call, started) {
  cat(session_log_line(name, as.list(call)[-1L], as.numeric(Sys.time() - started, units = "secs")), "\n",
    sep = "", file = stderr())
}

# `[mcp] tool(arg = value, ...) 0.02 s`, each argument cut to a few words.
session_log_line <- function(name, args, seconds) {
  shown <- vapply(args, function(a) {
    text <- paste(deparse(a, width.cutoff = 60L, nlines = 1L), collapse = "")
    if (nchar(text) > 40L) paste0(substr(text, 1L, 37L), "...") else text
  }, "")
  if (length(shown)) shown <- paste(names(args), "=", shown)
  sprintf("[mcp] %s(%s) %s s", name, paste(shown, collapse = ", "), format(round(seconds, 2), nsmall = 2))
}

# ---- The registry -------------------------------------------------------------

# The per-user directory of sessions: made with mode 0700 if missing; an
# existing one must be owned by this user and closed to others, as the
# secrets in it are what keeps other users out.
session_dir <- function(create = TRUE) {
  dir <- getOption("mcpserver.session_dir", Sys.getenv("MCPSERVER_SESSION_DIR"))
  if (!nzchar(dir)) {
    runtime <- Sys.getenv("XDG_RUNTIME_DIR")
    dir <- if (nzchar(runtime) && dir.exists(runtime)) {
      file.path(runtime, "mcpserver-sessions")
    } else {
      file.path(tools::R_user_dir("mcpserver", "cache"), "sessions")
    }
  }
  if (!dir.exists(dir)) {
    if (!create) return(dir)
    old <- Sys.umask("077")
    on.exit(Sys.umask(old))
    dir.create(dir, recursive = TRUE, mode = "0700")
  }
  session_dir_check(dir)
  dir
}

session_dir_check <- function(dir) {
  info <- file.info(dir, extra_cols = TRUE)
  if (is.na(info$isdir) || !info$isdir) abort(sprintf("The session directory %s is not a directory.", dir))
  me <- Sys.info()[["effective_user"]]
  if (!identical(info$uname, me)) {
    abort(sprintf("The session directory %s belongs to %s, not to you (%s): it is not used.", dir, info$uname, me))
  }
  if ((as.integer(info$mode) %% 64L) != 0L) {
    abort(sprintf("The session directory %s is open to other users (mode %s); `chmod 700` it.", dir, format(info$mode)))
  }
  invisible(dir)
}

# 64 hex digits from the system's random source (R's generator, and so
# the user's .Random.seed, is left alone).
session_secret <- function() {
  con <- file("/dev/urandom", "rb", raw = TRUE)
  on.exit(close(con))
  paste(format(readBin(con, "raw", 32L)), collapse = "")
}

# Writes this session's entry, readable by its owner alone, in one rename
# so a reader never sees half of it.
session_register <- function(dir, url, token, started) {
  entry <- file.path(dir, sprintf("session-%d.dcf", Sys.getpid()))
  fields <- data.frame(
    url = url, token = token, pid = Sys.getpid(), wd = normalizePath(getwd()),
    r_version = as.character(getRversion()), started = format(started, "%Y-%m-%dT%H:%M:%OS3%z"),
    user = Sys.info()[["effective_user"]], stringsAsFactors = FALSE
  )
  old <- Sys.umask("077")
  on.exit(Sys.umask(old))
  temp <- tempfile("entry-", tmpdir = dir)
  write.dcf(fields, temp)
  Sys.chmod(temp, "0600", use_umask = FALSE)
  if (!file.rename(temp, entry)) {
    unlink(temp)
    abort(sprintf("could not write %s", entry))
  }
  entry
}

#' The R sessions you can reach
#'
#' Lists the sessions that [mcp_session()] registered for your user and
#' that still run, newest first. Entries of sessions whose process has
#' ended are removed.
#'
#' @param dir The registry directory (see [mcp_session()]).
#' @return A data frame with a row per session: `pid`, `wd` (working
#'   directory), `r_version`, `started` (a time), `url`; the secrets are
#'   left out.
#' @examples
#' mcp_sessions()
#' @export
mcp_sessions <- function(dir = session_dir(create = FALSE)) {
  found <- session_entries(dir)
  found$token <- NULL
  found$file <- NULL
  rownames(found) <- NULL
  found
}

# Every live entry (stale ones removed), newest first, secrets included.
session_entries <- function(dir) {
  if (dir.exists(dir)) session_dir_check(dir)
  files <- list.files(dir, pattern = "^session-[0-9]+[.]dcf$", full.names = TRUE)
  rows <- lapply(files, function(file) {
    row <- tryCatch(as.data.frame(read.dcf(file), stringsAsFactors = FALSE), error = function(e) NULL)
    if (is.null(row) || !all(c("url", "token", "pid", "wd", "started") %in% names(row))) return(NULL)
    pid <- as.integer(row$pid)
    if (is.na(pid) || !process_alive(pid)) {
      unlink(file)
      return(NULL)
    }
    row$file <- file
    row
  })
  rows <- Filter(Negate(is.null), rows)
  columns <- c("pid", "wd", "r_version", "started", "url", "token", "file")
  if (length(rows) == 0) {
    empty <- as.data.frame(stats::setNames(replicate(length(columns), character(), simplify = FALSE), columns))
    empty$pid <- integer()
    empty$started <- as.POSIXct(character())
    return(empty)
  }
  table <- do.call(rbind, lapply(rows, function(r) r[, intersect(columns, names(r)), drop = FALSE]))
  table$pid <- as.integer(table$pid)
  table$started <- as.POSIXct(table$started, format = "%Y-%m-%dT%H:%M:%OS%z")
  table[order(table$started, decreasing = TRUE), , drop = FALSE]
}

# Signal 0 checks that the process exists without touching it.
process_alive <- function(pid) {
  if (pid == Sys.getpid()) return(TRUE)
  isTRUE(tools::pskill(pid, 0L))
}

# The session a client started in `wd` reaches: the newest whose working
# directory is `wd` or an ancestor of it (the deepest such), else the only
# one, else the newest. NULL when none runs.
session_choose <- function(entries, wd = getwd()) {
  if (nrow(entries) == 0) return(NULL)
  wd <- normalizePath(wd, mustWork = FALSE)
  within <- vapply(entries$wd, function(d) identical(wd, d) || startsWith(wd, paste0(sub("/$", "", d), "/")), TRUE)
  if (any(within)) {
    depth <- nchar(entries$wd)
    depth[!within] <- -1L
    return(entries[which(depth == max(depth))[1L], , drop = FALSE])
  }
  entries[1L, , drop = FALSE]
}

#' @export
print.mcp_session <- function(x, ...) {
  state <- if (x$running()) "serving" else "stopped"
  cat(sprintf("<mcp_session> %s on %s\n  registered in %s\n", state, x$url, x$entry))
  invisible(x)
}

# What the bridge serves when no session runs: the session tools, in its
# own fresh R process, saying so in its instructions and in a tool.
serve_without_session <- function() {
  message("mcp_bridge(): no R session serves with mcp_session(); serving session tools in this fresh R process.")
  mcp_server(c(session_tools(), list(list_sessions_tool())),
    instructions = paste(
      "No R session of the user serves with mcpserver::mcp_session(), so these tools run in a fresh R",
      "process started for this client: its global environment is empty and it holds none of the user's",
      "objects. Tell the user to run mcpserver::mcp_session() in their R session (and restart this",
      "server) to work with their data; list_r_sessions shows the sessions running."
    ),
    name = "r-session"
  )
}

list_sessions_tool <- function() {
  tool(function() session_list_text(session_entries(session_dir(create = FALSE))),
    "List the user's R sessions that serve with mcpserver::mcp_session(): process id, working directory, R version, start time.",
    name = "list_r_sessions", title = "List R sessions", annotations = tool_annotations(read_only_hint = TRUE)
  )
}

session_list_text <- function(entries, connected = NULL) {
  if (nrow(entries) == 0) {
    return("No R session serves with mcpserver::mcp_session() for this user now.")
  }
  mark <- ifelse(entries$pid %in% connected, " <- connected", "")
  paste(collapse = "\n", c(
    sprintf("%d R session(s), newest first:", nrow(entries)),
    sprintf("  %s%s", session_label(entries), mark)
  ))
}

session_label <- function(entries) {
  sprintf("process %d in %s (R %s, started %s)", entries$pid, entries$wd, entries$r_version, format(entries$started))
}

# ---- Switching sessions from the bridge -----------------------------------------

# The tools the bridge answers itself, in the bridge's R process (they read
# the registry): their definitions as the client sees them.
bridge_local_tools <- paste0(
  '[{"name":"list_r_sessions","title":"List R sessions",',
  '"description":"List the user\'s R sessions that serve with mcpserver::mcp_session(): process id, ',
  'working directory, R version, start time; the one these tools work in is marked connected.",',
  '"inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true}},',
  '{"name":"select_r_session","title":"Switch R session",',
  '"description":"Connect to another of the user\'s R sessions, by its process id (see list_r_sessions): ',
  'from then on every tool works in that session.",',
  '"inputSchema":{"type":"object","properties":{"pid":{"type":"integer",',
  '"description":"The process id of the session, as list_r_sessions shows it."}},"required":["pid"]},',
  '"annotations":{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":true}}]'
)

# Bridges stdin and stdout to `session` until the client goes, answering
# the calls of the local tools (and switching sessions) on the way.
session_bridge <- function(session, dir, max_message_size, grace, switch_timeout = 10) {
  note <- paste(
    "You reach the user's R session through mcp_bridge(): list_r_sessions lists the user's R sessions",
    "and select_r_session switches to another; its result says which session the tools work in."
  )
  handle <- rust(session_bridge_start_(session$url, session$token, bridge_local_tools, note,
    max_message_size, switch_timeout))
  on.exit(handle$close())
  current <- session
  ended <- NULL
  repeat {
    polled <- rust(handle$poll(0.05))
    if (identical(polled[1], "call")) {
      current <- bridge_call(handle, polled, current, dir, max_message_size)
    } else if (identical(polled[1], "input ended")) {
      if (identical(polled[2], "0")) break
      ended <- ended %||% Sys.time()
      if (as.numeric(Sys.time() - ended, units = "secs") > grace) {
        message(sprintf("mcp_bridge(): %s request(s) still unanswered %s s after the end of input.", polled[2], grace))
        break
      }
    } else if (!identical(polled, "running")) {
      break
    }
  }
  invisible(NULL)
}

# Answers one call of a local tool; returns the session connected after it.
bridge_call <- function(handle, polled, current, dir, max_message_size) {
  name <- polled[3]
  outcome <- tryCatch(
    {
      args <- rust(json_decode_(polled[4]))
      if (identical(name, "select_r_session")) {
        bridge_select(handle, args$pid, current, dir, max_message_size)
      } else {
        list(text = session_list_text(session_entries(dir), connected = current$pid))
      }
    },
    error = function(e) list(text = conditionMessage(e), is_error = TRUE)
  )
  # The notice first, so it reaches the client with the call it follows.
  if (isTRUE(outcome$tools_changed)) handle$notify_tools_changed()
  handle$answer(polled[2], outcome$text, isTRUE(outcome$is_error))
  outcome$session %||% current
}

bridge_select <- function(handle, pid, current, dir, max_message_size) {
  pid <- suppressWarnings(as.integer(pid))
  if (length(pid) != 1L || is.na(pid)) {
    return(list(text = "`pid` must be the process id of a session, as list_r_sessions shows it.", is_error = TRUE))
  }
  entries <- session_entries(dir)
  target <- entries[entries$pid == pid, , drop = FALSE]
  if (nrow(target) == 0L) {
    return(list(is_error = TRUE, text = sprintf(
      "No R session of process %d serves for this user; list_r_sessions shows those that do. Still connected to %s.",
      pid, session_label(current)
    )))
  }
  if (identical(pid, as.integer(current$pid))) {
    return(list(text = paste("Already connected to", session_label(target))))
  }
  changed <- tryCatch(rust(handle$switch_to(target$url, target$token, max_message_size)), error = identity)
  if (inherits(changed, "error")) {
    return(list(is_error = TRUE, text = sprintf(
      "Could not switch to %s: %s. Still connected to %s.",
      session_label(target), conditionMessage(changed), session_label(current)
    )))
  }
  message(sprintf("mcp_bridge(): switched to the R session of %s.", session_label(target)))
  list(
    session = target, tools_changed = changed,
    text = paste0(
      "Switched: the tools now work in the R session of ", session_label(target),
      ", no longer in that of ", session_label(current), ". ",
      if (changed) {
        "Its tools differ from the previous session's: the tool list changed, list the tools again."
      } else {
        "It offers the same tools."
      }
    )
  )
}
