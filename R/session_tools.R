#' Tools that let an assistant look at your R session
#'
#' `session_tools()` returns tools for the R session that serves them: an
#' assistant can see the objects of your global environment, describe one
#' (a data frame's columns, a model's summary, a function's code), read
#' help pages of any installed package, search help, list packages, see
#' session information, the last error and its traceback, the current plot,
#' and files in the working directory. They are what [mcp_session()]
#' serves, and work with [mcp_server()] too. Every tool only reads, except
#' `run_r_code`, which is offered only when `run_code` allows it.
#'
#' | Tool | What it returns |
#' |---|---|
#' | `list_objects` | the objects of the global environment, with class, size and dimensions |
#' | `describe_object` | one object: a data frame's columns with types, missing values and a summary, then its first rows; a model's `summary()`; a function's arguments and code; `str()` of a list or anything else |
#' | `help_page` | a help page as text, from the installed documentation of any package |
#' | `search_help` | help topics matching words, with their package and title |
#' | `list_packages` | attached and loaded packages with versions (all installed ones on request) |
#' | `session_info` | `sessionInfo()` and the working directory |
#' | `last_error` | the last error message at the console and its traceback |
#' | `current_plot` | the plot on the current graphics device, as a PNG image |
#' | `read_file` | the lines of a text file in the working directory (or a folder's contents) |
#' | `run_r_code` | (only with `run_code = "ask"` or `"allow"`) runs R code in the global environment |
#'
#' Every text result is at most `max_output` characters; a longer one is cut
#' at a line and ends with a note saying how much was left out, so one call
#' cannot flood the model's context. Objects are only read: describing one
#' never changes it or the global environment (active bindings are not
#' called).
#'
#' @section Running code:
#' `run_r_code` runs R code as if typed at the console, one expression
#' after another, stopping at the first error. With `run_in = "scratch"`
#' (the default) it runs in a scratch environment whose parent is the
#' global environment: the code reads your objects, but what it assigns
#' stays in the scratch environment (kept for later calls, and shown by
#' `list_objects` and `describe_object`), so your workspace never changes
#' behind your back; `run_in = "global"` runs it in the global environment
#' itself.
#' It returns a transcript (each expression, then what it printed, its
#' visible value, messages, warnings and the error, if any) and each plot
#' it drew as a PNG image (drawn on a device of its own, so the plots you
#' have open are left alone). The result is flagged as an error when the
#' code raised one.
#'
#' What `run_code` allows:
#' - `"off"` (the default): no `run_r_code` tool at all.
#' - `"ask"`: every snippet is shown to you before it runs, and runs only if
#'   you agree. A client that can ask the user (it declares the MCP
#'   elicitation capability) shows the question in its window; otherwise
#'   the question is asked at the R console ([utils::askYesNo()], a dialog
#'   in RStudio and Positron). If neither can ask, the code is not run. A
#'   refusal is answered as a tool error saying the code did not run.
#' - `"allow"`: snippets run without asking. Only for sessions whose data
#'   and files you would let the model change.
#'
#' @param run_code Whether the assistant may run R code: `"off"`, `"ask"`
#'   or `"allow"` (see Running code). Defaults to the option
#'   `mcpserver.run_code`, else `"off"`.
#' @param max_output The most characters of text one call returns.
#' @param run_in Where `run_r_code` runs code: `"scratch"` or `"global"`
#'   (see Running code).
#' @return A list of tools (see [tool()]), for [mcp_session()] or
#'   [mcp_server()].
#' @seealso [mcp_session()] to serve them from your R session.
#' @examples
#' tools <- session_tools()
#' vapply(tools, function(t) attr(t, "mcpserver_tool")$name, "")
#'
#' # Each tool is an R function too:
#' describe <- tools[[2]]
#' cars_copy <- mtcars
#' cat(describe("cars_copy"))
#' rm(cars_copy)
#' @export
session_tools <- function(run_code = getOption("mcpserver.run_code", "off"), max_output = 20000,
                          run_in = c("scratch", "global")) {
  if (!is_string(run_code) || !run_code %in% c("off", "ask", "allow")) {
    abort("`run_code` must be \"off\", \"ask\" or \"allow\".")
  }
  run_in <- match.arg(run_in)
  if (!is_number(max_output) || max_output < 1000) {
    abort("`max_output` must be a number of characters, at least 1000.")
  }
  reading <- tool_annotations(read_only_hint = TRUE)
  tools <- list(
    tool(function() bounded(session_objects(), max_output),
      "List the objects in the user's R session (its global environment): name, class, size and dimensions.",
      name = "list_objects", title = "List R objects", annotations = reading
    ),
    tool(function(name) bounded(session_describe(name), max_output),
      paste(
        "Describe one object of the user's R session by name: a data frame's columns (type, missing values,",
        "summary) and first rows, a model's summary, a function's code, or the structure of anything else."
      ),
      arguments = list(name = type_string("The object's name, as list_objects shows it.")),
      name = "describe_object", title = "Describe an R object", annotations = reading
    ),
    tool(function(topic, package = NULL) bounded(session_help_page(topic, package), max_output),
      "Show an R help page as text, from the installed documentation (a function, data set or other topic of any installed package).",
      arguments = list(
        topic = type_string("The help topic, such as \"lm\" or \"mtcars\"."),
        package = type_string("The package to look in, if the topic is in several.", required = FALSE)
      ),
      name = "help_page", title = "Read an R help page", annotations = reading
    ),
    tool(function(query) bounded(session_search_help(query), max_output),
      "Search the help pages of the installed R packages for words in their topics, titles and concepts.",
      arguments = list(query = type_string("Words to look for, such as \"linear model\".")),
      name = "search_help", title = "Search R help", annotations = reading
    ),
    tool(function(installed = FALSE) bounded(session_packages(installed), max_output),
      "List the R packages attached and loaded in the session, with their versions; with installed = true, every installed package.",
      arguments = list(installed = type_boolean("Whether to list every installed package too.", required = FALSE)),
      name = "list_packages", title = "List R packages", annotations = reading
    ),
    tool(function() bounded(session_info_text(), max_output),
      "Show the R session's information: R version, platform, locale, attached and loaded packages, working directory.",
      name = "session_info", title = "R session information", annotations = reading
    ),
    tool(function() bounded(session_last_error(), max_output),
      "Show the last error raised at the R console and its traceback (the calls that led to it).",
      name = "last_error", title = "Last R error", annotations = reading
    ),
    tool(function() session_current_plot(),
      "Show the plot on the R session's current graphics device as a PNG image.",
      name = "current_plot", title = "Current R plot", annotations = reading
    ),
    tool(function(path, from = 1L, lines = 200L) bounded(session_read_file(path, from, lines), max_output),
      paste(
        "Read lines of a text file in the R session's working directory (or below it), or list a folder's",
        "contents. Paths are relative to the working directory."
      ),
      arguments = list(
        path = type_string("The file or folder, relative to the working directory; \".\" is the working directory itself."),
        from = type_integer("The first line to read (1 for the start).", required = FALSE),
        lines = type_integer("How many lines to read at most.", required = FALSE)
      ),
      name = "read_file", title = "Read a file", annotations = reading
    )
  )
  if (run_code != "off") tools <- c(tools, list(run_code_tool(run_code, max_output, run_in)))
  tools
}

run_code_tool <- function(policy, max_output, run_in) {
  where <- if (run_in == "global") {
    "in the global environment, where the objects it creates or changes stay."
  } else {
    paste(
      "in a scratch environment of its own, which sees the user's objects but keeps what the code assigns",
      "(the user's workspace is not changed by assignments; later calls see the scratch objects)."
    )
  }
  description <- paste(
    "Run R code in the user's R session, as if typed at its console:", where,
    "Returns what it printed, its values, messages, warnings, errors and plots."
  )
  if (policy == "ask") description <- paste(description, "The user is asked to approve each snippet before it runs.")
  tool(function(code) session_run_code(code, policy, max_output, run_env(run_in)),
    description,
    arguments = list(code = type_string("The R code to run.")),
    name = "run_r_code", title = "Run R code",
    annotations = tool_annotations(read_only_hint = FALSE, destructive_hint = TRUE, open_world_hint = TRUE)
  )
}

# ---- Bounded text --------------------------------------------------------------

# One string of at most `max` characters: a longer text is cut at the end
# of a line, with a note saying how much was left out.
bounded <- function(lines, max) {
  text <- paste(lines, collapse = "\n")
  total <- nchar(text, type = "chars", allowNA = TRUE)
  if (is.na(total) || total <= max) return(text)
  kept <- substr(text, 1L, max)
  at_line <- sub("\n[^\n]*$", "", kept)
  if (nchar(at_line) > max / 2) kept <- at_line
  paste0(kept, sprintf(
    "\n[... truncated: the first %d of %d characters are shown]", nchar(kept), total
  ))
}

# What print() writes for `x`, `width` characters wide at most.
printed <- function(x, width = 100L) {
  old <- options(width = width)
  on.exit(options(old))
  utils::capture.output(print(x))
}

# ---- Objects -------------------------------------------------------------------

session_objects <- function(env = globalenv()) {
  listing <- object_listing(env, "the global environment")
  if (!is.null(the$scratch) && length(ls(the$scratch)) > 0) {
    listing <- c(listing, "", object_listing(the$scratch, "run_r_code's scratch environment"))
  }
  listing
}

object_listing <- function(env, where) {
  names <- sort(ls(env))
  if (length(names) == 0) return(sprintf("%s is empty.", upper_first(where)))
  rows <- lapply(names, function(name) {
    if (bindingIsActive(name, env)) return(c(name, "active binding", "", ""))
    x <- get(name, envir = env, inherits = FALSE)
    c(name, object_class(x), format(utils::object.size(x), units = "auto", standard = "SI"), object_shape(x))
  })
  table <- do.call(rbind, rows)
  colnames(table) <- c("name", "class", "size", "dimensions")
  c(sprintf("%d object(s) in %s:", length(names), where), "", format_table(table))
}

object_class <- function(x) paste(class(x), collapse = "/")

object_shape <- function(x) {
  if (is.function(x)) return(paste0("function(", paste(names(formals(args(x) %||% x)), collapse = ", "), ")"))
  if (is.environment(x)) return(sprintf("%d object(s)", length(ls(x, all.names = TRUE))))
  d <- dim(x)
  if (!is.null(d)) return(paste(d, collapse = " x "))
  sprintf("length %d", length(x))
}

# A character matrix as aligned lines, with its column names as the header.
format_table <- function(table) {
  table <- rbind(colnames(table), table)
  widths <- apply(table, 2, function(column) max(nchar(column, type = "width")))
  lines <- apply(table, 1, function(row) {
    padded <- vapply(seq_along(row), function(i) formatC(row[[i]], width = -widths[[i]]), "")
    paste(padded, collapse = "  ")
  })
  sub("[[:space:]]+$", "", lines)
}

upper_first <- function(text) paste0(toupper(substr(text, 1L, 1L)), substring(text, 2L))

session_describe <- function(name, env = globalenv()) {
  if (!exists(name, envir = env, inherits = FALSE) && !is.null(the$scratch) &&
    exists(name, envir = the$scratch, inherits = FALSE)) {
    env <- the$scratch
  }
  if (!exists(name, envir = env, inherits = FALSE)) {
    abort(sprintf("There is no object named `%s` in the global environment; list_objects shows what there is.", name))
  }
  if (bindingIsActive(name, env)) return(sprintf("`%s` is an active binding: it is not read, as reading runs its code.", name))
  x <- get(name, envir = env, inherits = FALSE)
  if (is.data.frame(x)) return(describe_data_frame(name, x))
  if (is.function(x)) return(describe_function(name, x))
  header <- sprintf("`%s`: %s, %s, %s.", name, object_class(x), object_shape(x),
    format(utils::object.size(x), units = "auto", standard = "SI"))
  if (has_own_summary(x)) {
    return(c(header, "", "summary():", printed(summary(x))))
  }
  c(header, "", "str():", utils::capture.output(utils::str(x, max.level = 3, list.len = 50, vec.len = 4)))
}

# Whether a class of `x` has a summary() method of its own (models, tests,
# tables...), as opposed to summary.default's.
has_own_summary <- function(x) {
  if (!is.object(x)) return(FALSE)
  for (cls in class(x)) {
    if (!is.null(utils::getS3method("summary", cls, optional = TRUE))) return(TRUE)
  }
  FALSE
}

describe_data_frame <- function(name, x, preview = 6L) {
  columns <- cbind(
    column = names(x),
    type = vapply(x, object_class, ""),
    missing = vapply(x, function(column) format(sum(is.na(column))), ""),
    summary = vapply(x, column_summary, "")
  )
  c(
    sprintf("`%s`: a %s with %d rows and %d columns.", name, object_class(x), nrow(x), ncol(x)),
    "",
    format_table(columns),
    "",
    sprintf("First %d rows:", min(preview, nrow(x))),
    printed(utils::head(x, preview), width = 120L)
  )
}

column_summary <- function(column) {
  number <- function(v) format(signif(v, 4))
  tryCatch(
    {
      values <- column[!is.na(column)]
      if (length(values) == 0) return("all missing")
      if (is.factor(column)) {
        levels <- levels(column)
        shown <- paste(utils::head(levels, 5), collapse = ", ")
        return(sprintf("%d levels: %s%s", length(levels), shown, if (length(levels) > 5) ", ..." else ""))
      }
      if (is.logical(column)) return(sprintf("%d TRUE, %d FALSE", sum(values), sum(!values)))
      if (inherits(column, c("Date", "POSIXt")) || is.numeric(column)) {
        if (is.numeric(column) && !is.object(column)) {
          return(sprintf("min %s, mean %s, max %s", number(min(values)), number(mean(values)), number(max(values))))
        }
        return(sprintf("from %s to %s", format(min(values)), format(max(values))))
      }
      if (is.character(column)) return(sprintf("%d distinct", length(unique(values))))
      ""
    },
    error = function(e) ""
  )
}

describe_function <- function(name, fun) {
  code <- utils::capture.output(print(fun))
  # A closure prints its bytecode and environment after its code; keep the code.
  code <- code[!grepl("^<(bytecode|environment): ", code)]
  where <- environment(fun)
  from <- if (is.null(where)) "a primitive" else environmentName(where)
  c(
    sprintf("`%s`: a function of %s%s.", name, object_shape(fun),
      if (nzchar(from) && from != "R_GlobalEnv") paste0(", from ", from) else ""),
    "",
    code
  )
}

# ---- Help --------------------------------------------------------------------

session_help_page <- function(topic, package = NULL) {
  files <- do.call(utils::help, list(topic = topic, package = package, help_type = "text"))
  files <- as.character(files)
  if (length(files) == 0) {
    where <- if (is.null(package)) "in any installed package" else sprintf("in package %s", package)
    abort(sprintf("No help page for `%s` %s; search_help finds topics by words.", topic, where))
  }
  page <- help_text(files[[1]])
  others <- vapply(files[-1], help_package, "")
  if (length(others) > 0) {
    page <- c(sprintf(
      "(`%s` is documented in several packages: this is %s's page; also in %s.)",
      topic, help_package(files[[1]]), paste(others, collapse = ", ")
    ), "", page)
  }
  page
}

# A help file's path is <library>/<package>/help/<name>; the page is in the
# package's help database there, a lazy-load database of parsed Rd.
help_package <- function(file) basename(dirname(dirname(file)))

help_text <- function(file) {
  package <- help_package(file)
  name <- basename(file)
  db <- new.env(parent = emptyenv())
  lazyLoad(file.path(dirname(file), package), envir = db, filter = function(key) key == name)
  out <- tempfile(fileext = ".txt")
  on.exit(unlink(out))
  tools::Rd2txt(db[[name]], out = out, package = package, options = list(underline_titles = FALSE))
  readLines(out, encoding = "UTF-8", warn = FALSE)
}

session_search_help <- function(query) {
  pattern <- gsub("([][{}()+*^$|\\\\?.])", "\\\\\\1", query)
  found <- utils::help.search(pattern, fields = c("alias", "concept", "title"), agrep = FALSE)$matches
  if (is.null(found) || nrow(found) == 0) return(sprintf("No help topics match \"%s\".", query))
  found <- found[!duplicated(found[, c("Package", "Topic")]), , drop = FALSE]
  shown <- utils::head(found, 50)
  lines <- sprintf("%s::%s  %s", shown$Package, shown$Topic, shown$Title)
  c(
    sprintf("%d help topic(s) match \"%s\"%s:", nrow(found), query, if (nrow(found) > 50) " (the first 50)" else ""),
    "",
    lines,
    "",
    "help_page shows one (give its package when several share a topic)."
  )
}

# ---- Packages and session ----------------------------------------------------

session_packages <- function(installed = FALSE) {
  version <- function(packages) vapply(packages, function(p) format(utils::packageVersion(p)), "")
  attached <- sub("^package:", "", grep("^package:", search(), value = TRUE))
  loaded <- setdiff(loadedNamespaces(), attached)
  lines <- c(
    "Attached packages (search path order):",
    sprintf("  %s %s", attached, version(attached)),
    "",
    "Loaded but not attached:",
    if (length(loaded)) sprintf("  %s %s", sort(loaded), version(sort(loaded))) else "  (none)"
  )
  if (isTRUE(installed)) {
    all <- utils::installed.packages(fields = "Version")
    all <- all[!duplicated(all[, "Package"]), , drop = FALSE]
    all <- all[order(all[, "Package"]), , drop = FALSE]
    lines <- c(lines, "", sprintf("Installed packages (%d):", nrow(all)),
      sprintf("  %s %s", all[, "Package"], all[, "Version"]))
  }
  lines
}

session_info_text <- function() {
  c(printed(utils::sessionInfo()), "", paste("Working directory:", getwd()))
}

session_last_error <- function() {
  calls <- .traceback(x = NULL)
  message <- sub("\n$", "", geterrmessage())
  if (is.null(calls) && !nzchar(message)) return("No error has been raised at the console in this session.")
  lines <- c("Last error:", paste0("  ", strsplit(message, "\n", fixed = TRUE)[[1]]))
  if (length(calls) == 0) return(c(lines, "", "(No traceback: the error was raised at the top level.)"))
  numbered <- unlist(lapply(seq_along(calls), function(i) {
    call <- calls[[i]]
    if (length(call) > 4) call <- c(call[1:4], "...")
    c(paste0(length(calls) - i + 1L, ": ", call[[1]]), if (length(call) > 1) paste0("   ", call[-1]))
  }))
  c(lines, "", "Traceback (most recent call first):", numbered)
}

# ---- Plots -------------------------------------------------------------------

session_current_plot <- function(width = 768L, height = 512L) {
  if (grDevices::dev.cur() == 1L) {
    return(tool_result(content_text("No graphics device is open, so there is no plot."), is_error = TRUE))
  }
  plot <- tryCatch(grDevices::recordPlot(), error = function(e) e)
  if (inherits(plot, "error") || is.null(plot[[1]])) {
    return(tool_result(content_text(paste(
      "The current graphics device has no plot that can be read back",
      "(it is empty, or keeps no record of what was drawn: `dev.control(\"enable\")` makes it keep one)."
    )), is_error = TRUE))
  }
  png <- replay_as_png(plot, width, height)
  tool_result(list(
    content_text(sprintf("The plot on graphics device %d (%s):", grDevices::dev.cur(), names(grDevices::dev.cur()))),
    content_image(png, "image/png")
  ))
}

# The bytes of `plot` drawn again as a PNG, leaving the current device as
# it was.
replay_as_png <- function(plot, width, height) {
  current <- grDevices::dev.cur()
  file <- tempfile(fileext = ".png")
  on.exit(unlink(file), add = TRUE)
  grDevices::png(file, width = width, height = height)
  ours <- grDevices::dev.cur()
  on.exit(restore_device(ours, current), add = TRUE, after = FALSE)
  grDevices::replayPlot(plot)
  grDevices::dev.off(ours)
  readBin(file, "raw", file.size(file))
}

restore_device <- function(ours, previous) {
  if (ours %in% grDevices::dev.list()) grDevices::dev.off(ours)
  if (previous %in% grDevices::dev.list()) grDevices::dev.set(previous)
  invisible()
}

# ---- Files -------------------------------------------------------------------

session_read_file <- function(path, from = 1L, lines = 200L) {
  if (!is_number(from) || from < 1) abort("`from` must be a line number, 1 or more.")
  if (!is_number(lines) || lines < 1) abort("`lines` must be a number of lines, 1 or more.")
  file <- inside_working_directory(path)
  if (dir.exists(file)) return(folder_listing(path, file))
  head <- readBin(file, "raw", 8192L)
  if (any(head == as.raw(0L))) abort(sprintf("`%s` is not a text file.", path))
  con <- file(file, encoding = "UTF-8")
  on.exit(close(con))
  text <- readLines(con, n = from + lines - 1L, warn = FALSE)
  shown <- if (from <= length(text)) text[from:length(text)] else character()
  more <- length(text) == from + lines - 1L
  c(
    sprintf("%s, lines %d to %d%s:", path, as.integer(from), as.integer(from) + length(shown) - 1L,
      if (more) " (there may be more: read on with a larger `from`)" else " (the end)"),
    shown
  )
}

# The absolute path of `path`, which must name a file or folder in the
# working directory or below it (symbolic links resolved, so none leads out).
inside_working_directory <- function(path) {
  root <- normalizePath(getwd(), mustWork = TRUE)
  target <- if (grepl("^(/|~)", path)) path else file.path(root, path)
  if (!file.exists(target)) abort(sprintf("There is no file `%s` in the working directory (%s).", path, root))
  target <- normalizePath(target, mustWork = TRUE)
  if (target != root && !startsWith(target, paste0(sub("/$", "", root), "/"))) {
    abort(sprintf("`%s` is outside the working directory (%s): only files in it can be read.", path, root))
  }
  target
}

folder_listing <- function(path, folder) {
  entries <- list.files(folder, all.files = FALSE, no.. = TRUE)
  if (length(entries) == 0) return(sprintf("%s is an empty folder.", path))
  is_dir <- dir.exists(file.path(folder, entries))
  entries[is_dir] <- paste0(entries[is_dir], "/")
  c(sprintf("%s holds %d entr%s:", path, length(entries), if (length(entries) == 1) "y" else "ies"), entries)
}

# ---- Running code ------------------------------------------------------------

# Where run_r_code evaluates: the global environment, or the session's
# scratch environment, a child of it made once (so the code reads the user's
# objects, and its assignments stay out of the workspace).
run_env <- function(run_in) {
  if (run_in == "global") return(globalenv())
  if (is.null(the$scratch)) the$scratch <- new.env(parent = globalenv())
  the$scratch
}

session_run_code <- function(code, policy, max_output, env = globalenv()) {
  exprs <- tryCatch(parse(text = code, keep.source = TRUE), error = function(e) e)
  if (inherits(exprs, "error")) {
    return(tool_result(content_text(paste("The code does not parse, so nothing ran:", conditionMessage(exprs))), is_error = TRUE))
  }
  allowed <- if (policy == "allow") TRUE else ask_to_run(code)
  if (!isTRUE(allowed)) {
    why <- if (is.na(allowed)) {
      "There is no way to ask the user (the client cannot ask, and R has no console), so the code was not run."
    } else {
      "The user declined: the code was not run."
    }
    return(tool_result(content_text(why), is_error = TRUE))
  }
  run <- evaluate_at_top(exprs, env)
  content <- list(content_text(bounded(run$transcript, max_output)))
  plots <- utils::head(run$plots, 5L)
  for (png in plots) content[[length(content) + 1L]] <- content_image(png, "image/png")
  if (length(run$plots) > length(plots)) {
    content[[length(content) + 1L]] <- content_text(sprintf("(%d more plot(s) not shown.)", length(run$plots) - length(plots)))
  }
  tool_result(content, is_error = run$failed)
}

# TRUE to run, FALSE if the user declined, NA if nobody can be asked. A
# client that can ask the user does; otherwise the console asks.
ask_to_run <- function(code) {
  request <- mcp_request()
  if (!is.null(request) && !is.null(request$capabilities$elicitation)) {
    answer <- mcp_elicit(paste0("The assistant wants to run this R code in your session:\n\n", code, "\n\nRun it?"), list())
    return(identical(answer$action, "accept"))
  }
  if (!interactive()) return(NA)
  cat("\nThe assistant wants to run this R code:\n", paste0("  ", strsplit(code, "\n", fixed = TRUE)[[1]], "\n"), sep = "")
  isTRUE(utils::askYesNo("Run it?", default = FALSE))
}

# Evaluates `exprs` in the global environment as the console would: each
# expression in turn, printing visible values, until the first error.
# Output, messages, warnings and plots are collected instead of shown.
evaluate_at_top <- function(exprs, env = globalenv()) {
  plots <- plot_collector()
  on.exit(plots$close())
  sources <- lapply(attr(exprs, "srcref"), as.character)
  transcript <- character()
  failed <- FALSE
  for (i in seq_along(exprs)) {
    source <- sources[[i]]
    transcript <- c(transcript, paste0(c("> ", rep("+ ", length(source) - 1L)), source))
    outcome <- evaluate_one(exprs[[i]], env)
    transcript <- c(transcript, outcome$lines)
    if (outcome$failed) {
      failed <- TRUE
      break
    }
  }
  list(transcript = transcript, plots = plots$close(), failed = failed)
}

# One expression: what it printed, with its messages, warnings and error
# written in among the output where they happened, and whether it failed.
evaluate_one <- function(expr, env = globalenv()) {
  failed <- FALSE
  say <- function(text) cat(text, "\n", sep = "")
  lines <- utils::capture.output(
    withCallingHandlers(
      tryCatch(
        {
          shown <- withVisible(eval(expr, env))
          if (shown$visible) print(shown$value)
        },
        error = function(e) {
          failed <<- TRUE
          call <- conditionCall(e)
          # An error raised by the code's own top level names our eval().
          if (identical(call, quote(eval(expr, env)))) call <- NULL
          say(if (is.null(call)) {
            paste("Error:", conditionMessage(e))
          } else {
            paste0("Error in ", paste(deparse(call, nlines = 1L), collapse = ""), ": ", conditionMessage(e))
          })
        }
      ),
      message = function(m) {
        say(sub("\n$", "", conditionMessage(m)))
        invokeRestart("muffleMessage")
      },
      warning = function(w) {
        say(paste("Warning:", conditionMessage(w)))
        invokeRestart("muffleWarning")
      }
    )
  )
  list(lines = lines, failed = failed)
}

# A graphics device of its own for the code's plots: every page it draws
# becomes one PNG. `close()` shuts it (once), puts the user's device back,
# and returns the PNGs' bytes.
plot_collector <- function(width = 768L, height = 512L) {
  previous <- grDevices::dev.cur()
  folder <- tempfile("mcpserver-plots-")
  dir.create(folder)
  grDevices::png(file.path(folder, "plot-%03d.png"), width = width, height = height)
  ours <- grDevices::dev.cur()
  collected <- NULL
  list(close = function() {
    if (is.null(collected)) {
      restore_device(ours, previous)
      files <- sort(list.files(folder, full.names = TRUE))
      files <- files[file.size(files) > 0]
      collected <<- lapply(files, function(f) readBin(f, "raw", file.size(f)))
      unlink(folder, recursive = TRUE)
    }
    collected
  })
}
