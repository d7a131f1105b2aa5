#' Build a tool result
#'
#' Gives a tool full control over its answer: several content blocks,
#' structured content, an error flag and result metadata. Has the signature
#' and rules of mcplite's `tool_result()`. A tool may also simply return an
#' R value: a character vector becomes one text block (elements joined by
#' newlines), `NULL` becomes `{}`, anything else its JSON text; with an
#' `output_schema`, a plain value becomes structured content.
#'
#' The result is checked again when the tool returns it, so a result edited
#' or forged after it was built becomes a tool error rather than a broken
#' message. As in mcplite, a tool may also return a result built by hand:
#' a list of exactly `content` (blocks from the `content_*()` functions),
#' `structured_content`, `is_error` and `meta`, with class
#' `"mcplite_tool_result"` (or `"mcpserver_tool_result"`).
#'
#' @param content One content block or a list of them (see
#'   [content-blocks]). If missing and `structured_content` is given, one
#'   text block holding its compact JSON.
#' @param structured_content A named list sent as `structuredContent`
#'   (`list()` is the empty object), or `NULL`.
#' @param is_error `TRUE` to report that the tool failed, in a way the model
#'   can read and act on.
#' @param meta A named list sent as the result's `_meta`.
#' @return A list of class `mcpserver_tool_result` (and, for mcplite
#'   scripts, `mcplite_tool_result`).
#' @examples
#' tool_result(content_text("3 files found"))
#' tool_result(structured_content = list(count = 3L, files = c("a", "b", "c")))
#' tool_result(content_text("No such table: sales"), is_error = TRUE)
#' @export
tool_result <- function(content = list(), structured_content = NULL,
                        is_error = FALSE, meta = list()) {
  content_missing <- missing(content)
  # With `content` missing: the JSON text of `structured_content`.
  text <- rust(check_tool_result_(
    if (content_missing) NULL else content, content_missing,
    structured_content, is_error, meta
  ))
  if (content_missing) {
    content <- list(content_text(text))
  } else if (inherits(content, c("mcpserver_content", "mcplite_content"))) {
    content <- list(content)
  }
  content <- unname(content)
  result <- structure(
    list(
      content = content, structured_content = structured_content,
      is_error = is_error, meta = meta
    ),
    class = c("mcpserver_tool_result", "mcplite_tool_result")
  )
  if (content_missing) {
    # Marks the text block as the mirror of the structured content, so the
    # server sends the JSON already written instead of writing it again.
    # The attribute holds the result's own objects: any later change to
    # either copies it first, and the server then sees another object
    # (src/rust/mcpserver/src/result.rs, untouched_mirror()).
    attr(result, "mcpserver_mirror") <- list(structured_content, content)
  }
  result
}

#' @export
format.mcpserver_tool_result <- function(x, ...) {
  c(
    sprintf("<mcpserver_tool_result>%s", if (isTRUE(x$is_error)) " (error)" else ""),
    paste0("  ", vapply(x$content, format, character(1))),
    if (!is.null(x$structured_content)) {
      paste0("  structured: ", json_encode_(x$structured_content, FALSE))
    }
  )
}

#' @export
print.mcpserver_tool_result <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}
