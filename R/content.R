#' Content blocks for tool results
#'
#' Constructors for the blocks a [tool_result()] carries, with the
#' signatures of mcplite's. Arguments use R's snake_case names; the wire
#' uses the protocol's camelCase (`mime_type` becomes `mimeType`, `meta`
#' becomes `_meta`, `last_modified` becomes `lastModified`). Nothing is read
#' from files or downloaded. Binary data may be given as base64 text (as in
#' mcplite) or, unlike mcplite, as a raw vector, which is encoded for you.
#'
#' Blocks a client's protocol revision does not know are not sent: a client
#' on 2024-11-05 gets a tool error instead of a result holding audio or
#' resource links, and one on 2025-03-26 instead of one holding resource
#' links.
#'
#' @param text Text: a single string (`""` allowed).
#' @param data The bytes: base64 text as a single string, or a raw vector
#'   (for example from `readBin(path, "raw", file.size(path))`), which is
#'   encoded for you.
#' @param mime_type The media type, e.g. `"image/png"`.
#' @param uri The resource's URI.
#' @param name The resource's name.
#' @param title,description Optional human-readable title and description.
#' @param size Optional size in bytes: a non-negative whole number.
#' @param blob For `content_resource()`, the bytes as base64 text or a raw
#'   vector (give exactly one of `text` and `blob`).
#' @param annotations A named list: `audience` (a character vector of
#'   `"user"` and `"assistant"`), `priority` (a number from 0 to 1),
#'   `last_modified` (an ISO 8601 string), or other keys sent as they are.
#' @param meta A named list sent as the block's `_meta`.
#' @return A content block: a list of class `mcpserver_content` (and, for
#'   mcplite scripts, `mcplite_content`), with a class per type such as
#'   `mcpserver_content_text`.
#' @examples
#' content_text("Hello")
#' content_image("iVBORw0KGgo=", "image/png")
#' content_resource_link("file:///data/report.csv", "report.csv",
#'   mime_type = "text/csv", size = 2048
#' )
#' content_resource("file:///notes.txt", text = "Remember the milk",
#'   annotations = list(audience = "user", priority = 0.8)
#' )
#' @name content-blocks
NULL

as_base64 <- function(data) if (is.raw(data)) base64_encode_(data) else data

new_block <- function(type, fields, annotations, meta) {
  block <- c(list(type = type), fields, list(annotations = annotations, meta = meta))
  rust(check_content_(block))
  # mcplite's class names too, so scripts that test for them still work.
  structure(block, class = c(
    paste0("mcpserver_content_", type), paste0("mcplite_content_", type),
    "mcpserver_content", "mcplite_content"
  ))
}

#' @rdname content-blocks
#' @export
content_text <- function(text, annotations = list(), meta = list()) {
  new_block("text", list(text = text), annotations, meta)
}

#' @rdname content-blocks
#' @export
content_image <- function(data, mime_type, annotations = list(), meta = list()) {
  new_block("image", list(data = as_base64(data), mime_type = mime_type), annotations, meta)
}

#' @rdname content-blocks
#' @export
content_audio <- function(data, mime_type, annotations = list(), meta = list()) {
  new_block("audio", list(data = as_base64(data), mime_type = mime_type), annotations, meta)
}

#' @rdname content-blocks
#' @export
content_resource_link <- function(uri, name, title = NULL, description = NULL,
                                  mime_type = NULL, size = NULL,
                                  annotations = list(), meta = list()) {
  fields <- list(
    uri = uri, name = name, title = title, description = description,
    mime_type = mime_type, size = size
  )
  # `list(a = NULL)` keeps the name, so every field stays present.
  new_block("resource_link", fields, annotations, meta)
}

#' @rdname content-blocks
#' @export
content_resource <- function(uri, text = NULL, blob = NULL, mime_type = NULL,
                             annotations = list(), meta = list()) {
  new_block(
    "resource", list(uri = uri, text = text, blob = as_base64(blob), mime_type = mime_type),
    annotations, meta
  )
}

#' @export
format.mcpserver_content <- function(x, ...) {
  detail <- switch(x$type,
    text = encodeString(x$text, quote = "\""),
    image = ,
    audio = sprintf("%s, %d base64 characters", x$mime_type, nchar(x$data)),
    resource_link = x$uri,
    resource = x$uri
  )
  sprintf("<content_%s> %s", x$type, detail)
}

#' @export
print.mcpserver_content <- function(x, ...) {
  cat(format(x), "\n", sep = "")
  invisible(x)
}
