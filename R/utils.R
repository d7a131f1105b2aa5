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
