# Internal helpers shared by the R files.

# Raises an error as mcplite does (no call in the message), with a class
# callers can catch.
abort <- function(message) {
  stop(structure(
    class = c("mcpserver_error", "error", "condition"),
    list(message = message, call = NULL)
  ))
}

# The Rust side returns errors as values (see src/rust/mcpserver/src/check.rs):
# raise them here, where R owns the error path.
rust <- function(x) {
  if (inherits(x, "mcpserver_rust_error")) abort(x$message)
  x
}

is_string <- function(x) is.character(x) && length(x) == 1L && !is.na(x)

is_number <- function(x) is.numeric(x) && length(x) == 1L && !is.na(x) && is.finite(x)

is_positive_number <- function(x) is_number(x) && x > 0

`%||%` <- function(x, y) if (is.null(x)) y else x

# Prints JSON text returned by the Rust side.
new_json <- function(text) structure(text, class = "mcpserver_json")

#' @export
print.mcpserver_json <- function(x, ...) {
  cat(unclass(x), "\n", sep = "")
  invisible(x)
}
is_flag <- function(x) is.logical(x) && length(x) == 1L && !is.na(x)

# What reached `...` of `fun` (called `what`), refused: `given` is the
# list of expressions from `match.call(expand.dots = FALSE)$...` (nothing is
# evaluated). A misspelt option gets the nearest valid name, so `timeot = 5`
# is not lost in a list of names.
check_options <- function(given, fun, what) {
  if (length(given) == 0) return(invisible())
  formal_names <- names(formals(fun))
  valid <- option_names(fun)
  given <- names(given) %||% rep("", length(given))
  named <- given[nzchar(given)]
  if (length(named) > 0) {
    hints <- vapply(named, function(name) {
      near <- nearest_name(name, valid)
      if (is.null(near)) "" else sprintf("; did you mean `%s`?", near)
    }, "")
    abort(paste0(sprintf("`%s` has no option `%s`%s", what, named, hints), collapse = "\n"))
  }
  after_dots <- formal_names[seq_along(formal_names) > match("...", formal_names)]
  abort(sprintf(
    "Options of `%s` must be named: %s.", what,
    paste0("`", after_dots, "`", collapse = ", ")
  ))
}

# The valid name `name` is most likely a misspelling or an abbreviation of,
# or NULL when none is close.
nearest_name <- function(name, valid) {
  if (length(valid) == 0) return(NULL)
  distance <- drop(utils::adist(tolower(name), tolower(valid)))
  # An abbreviation names the option it starts (the nearest, of several).
  prefixed <- startsWith(valid, name)
  if (any(prefixed)) return(valid[prefixed][[which.min(distance[prefixed])]])
  best <- which.min(distance)
  if (distance[[best]] <= max(2, nchar(name) %/% 3)) valid[[best]] else NULL
}

# The named options of `fun` (its formals but `...`).
option_names <- function(fun) setdiff(names(formals(fun)), "...")
