#' Define a resource or a resource template
#'
#' Resources are data a client can list and read by URI, for the user or
#' the model to use as context: data sets, files, reports, plots.
#' `resource()` serves one URI; `resource_template()` serves every URI
#' matching an RFC 6570 template such as `"data://datasets/{name}"`, whose
#' variables become the R function's arguments. Give them to
#' [mcp_server()]'s `resources`. Everything is checked here, when the
#' resource is defined.
#'
#' The function's value becomes the resource's contents:
#' * a character vector: text (lines joined with newlines), of `mime_type`
#'   or `"text/plain"`;
#' * a raw vector: binary data (sent base64-encoded), of `mime_type` or
#'   `"application/octet-stream"`;
#' * [resource_file()]: the file's contents, text or binary by its MIME type
#'   (guessed from the file extension unless given);
#' * a data frame, list, number or logical: JSON text (`"application/json"`),
#'   with the mapping tools use (data frames as arrays of row objects);
#' * a plot made with [recordPlot()][grDevices::recordPlot()] or a ggplot:
#'   a PNG image;
#' * content blocks: [content_text()], [content_image()] and
#'   [content_audio()] become contents of the requested URI, and
#'   [content_resource()] blocks keep their own URI, so a read may return
#'   several items (say, the files of a folder). A list of any of these is
#'   allowed.
#'
#' A function that fails with an R error answers the client with an error
#' (JSON-RPC -32603) carrying its message. A URI that no resource or template
#' serves is "not found" (-32002 before 2026-07-28, -32602 from then on).
#'
#' @param uri The resource's URI: absolute, with a scheme, e.g.
#'   `"data://mtcars"` or `"file:///srv/report.html"`.
#' @param fun A function called with no arguments each time the resource is
#'   read, returning its contents; or the contents themselves (a string, a
#'   raw vector, a [resource_file()]).
#' @param name A short name for the resource. Defaults to the URI's last
#'   path segment (the template's text for templates).
#' @param description What the resource holds, for the model, or `NULL`.
#' @param mime_type The media type of its contents, or `NULL` to decide from
#'   each value.
#' @param ... Not used; named options go after it.
#' @param title A human-readable title for clients to display, or `NULL`.
#' @param size The size in bytes, if known (a hint for clients), or `NULL`.
#' @param annotations A named list: `audience` (`"user"` and/or
#'   `"assistant"`), `priority` (0 to 1), `last_modified` (ISO 8601).
#' @param icons Icons for clients to display: a list of lists with `src`
#'   and optionally `mime_type`, `sizes` and `theme`.
#' @param meta A named list sent as the resource's `_meta`, or `NULL`.
#' @param timeout A limit in seconds for one read, or `NULL` for the
#'   server's default.
#' @return A resource definition, of class `mcpserver_resource`.
#' @seealso [mcp_resource_updated()] to tell subscribed clients a resource
#'   changed; [prompt_template()]; `vignette("resources-and-prompts")`.
#' @examples
#' resource("data://mtcars", function() mtcars,
#'   description = "Motor Trend car road tests (1974), one row per car"
#' )
#' resource("text://greeting", "Hello from R", mime_type = "text/plain")
#' resource_template("data://datasets/{name}", function(name) get(name, "package:datasets"),
#'   description = "A data set of the datasets package, as JSON rows",
#'   complete = list(name = function(value) {
#'     grep(paste0("^", value), ls("package:datasets"), value = TRUE)
#'   })
#' )
#' @export
resource <- function(uri, fun, name = NULL, description = NULL, mime_type = NULL, ...,
                     title = NULL, size = NULL, annotations = list(), icons = NULL,
                     meta = NULL, timeout = NULL) {
  check_dots_empty(..., what = "resource()")
  if (!is_string(uri) || !grepl("^[A-Za-z][A-Za-z0-9+.-]*:", uri)) {
    abort("`uri` must be an absolute URI with a scheme, such as \"data://mtcars\".")
  }
  if (!is.function(fun)) fun <- constant_function(fun, "fun")
  if (length(required_formals(fun)) > 0) {
    abort(sprintf(
      "Resource \"%s\": `fun` is called with no arguments, but needs %s.",
      uri, paste0("`", required_formals(fun), "`", collapse = ", ")
    ))
  }
  if (!is.null(size) && !(is_number(size) && size >= 0 && size == round(size))) {
    abort("`size` must be NULL or a number of bytes.")
  }
  name <- name %||% uri_name(uri)
  structure(
    c(
      list(uri = uri, fun = fun, size = size),
      common_entry(name, description, mime_type, title, annotations, icons, meta, timeout)
    ),
    class = "mcpserver_resource"
  )
}

#' @rdname resource
#' @param uri_template An RFC 6570 URI template: `{name}` matches one path
#'   segment (up to the next `/`, `?` or `#`), `{+name}` the rest of the URI
#'   including slashes (at most one per template). Variables must be
#'   separated by text. Values are percent-decoded; values with a `..`
#'   segment, an absolute path or a NUL are refused before `fun` runs.
#' @param complete A named list of functions, one per variable (or prompt
#'   argument) that clients may ask completions for. Each is called with
#'   `value`, the text typed so far, and, if it takes one, `context`, a
#'   named list of the other arguments already filled in; it returns a
#'   character vector of suggestions (at most 100 are sent).
#' @export
resource_template <- function(uri_template, fun, name = NULL, description = NULL,
                              mime_type = NULL, ..., title = NULL, annotations = list(),
                              icons = NULL, meta = NULL, complete = list(), timeout = NULL) {
  check_dots_empty(..., what = "resource_template()")
  if (!is_string(uri_template)) abort("`uri_template` must be a single string.")
  variables <- rust(uri_template_variables_(uri_template))
  if (!is.function(fun)) abort("`fun` must be a function taking the template's variables.")
  missing_args <- setdiff(variables, names(formals(fun)))
  if (length(missing_args) > 0 && !"..." %in% names(formals(fun))) {
    abort(sprintf(
      "Resource template \"%s\": `fun` must take the variable(s) %s as arguments.",
      uri_template, paste0("`", missing_args, "`", collapse = ", ")
    ))
  }
  extra <- setdiff(required_formals(fun), variables)
  if (length(extra) > 0) {
    abort(sprintf(
      "Resource template \"%s\": `fun` needs %s, which the template does not give.",
      uri_template, paste0("`", extra, "`", collapse = ", ")
    ))
  }
  complete <- check_completers(complete, variables, sprintf("Resource template \"%s\"", uri_template))
  structure(
    c(
      list(uri_template = uri_template, fun = fun, variables = variables, complete = complete),
      common_entry(name %||% uri_template, description, mime_type, title, annotations, icons, meta, timeout)
    ),
    class = "mcpserver_resource_template"
  )
}

#' A file as a resource's contents
#'
#' Marks a path so that a resource (or template) function returning it
#' serves the file's contents: as text for text types, otherwise as binary
#' data. The file is read when the resource is read, not now.
#'
#' @param path The file's path (made absolute now, so a later change of
#'   working directory does not matter).
#' @param mime_type The media type, or `NULL` to guess it from the
#'   extension (`.csv` is `"text/csv"`, `.png` `"image/png"`, unknown ones
#'   `"application/octet-stream"`).
#' @return An object of class `mcpserver_resource_file`.
#' @examples
#' path <- tempfile(fileext = ".csv")
#' write.csv(head(mtcars), path)
#' resource("file:///mtcars.csv", resource_file(path))
#' @export
resource_file <- function(path, mime_type = NULL) {
  if (!is_string(path) || !nzchar(path)) abort("`path` must be a file path.")
  if (!is.null(mime_type) && !is_string(mime_type)) abort("`mime_type` must be NULL or a string.")
  structure(
    list(path = normalizePath(path, mustWork = FALSE), mime_type = mime_type %||% guess_mime_type(path)),
    class = "mcpserver_resource_file"
  )
}

#' Tell clients a resource has changed
#'
#' Call it from a tool (or anywhere while [mcp_server()] runs) after
#' changing what a resource returns. Clients that subscribed to `uri`
#' receive `notifications/resources/updated` and may read it again:
#' handshake-era clients after `resources/subscribe`, 2026-07-28 clients on
#' a `subscriptions/listen` stream that lists the URI. Others are not told.
#' It does nothing in a worker process (`tool(concurrent = TRUE)`); call it
#' from a tool that runs on the server's own thread.
#'
#' @param uri The URI of the resource that changed (for a template, the
#'   concrete URI a client read).
#' @return `NULL`, invisibly.
#' @examples
#' notes <- character()
#' add_note <- function(text) {
#'   notes <<- c(notes, text)
#'   mcp_resource_updated("notes://all")
#'   "Noted."
#' }
#' @export
mcp_resource_updated <- function(uri) {
  if (!is_string(uri)) abort("`uri` must be a single string.")
  server <- the$server
  if (!is.null(server)) server$resource_updated(uri)
  invisible(NULL)
}

# --- internals --------------------------------------------------------------

check_dots_empty <- function(..., what) {
  if (...length() > 0) abort(sprintf("Options of `%s` must be named.", what))
}

# Arguments of `fun` without a default (`...` aside): the ones a caller must give.
required_formals <- function(fun) {
  f <- formals(args(fun) %||% fun)
  names(f)[vapply(f, function(x) identical(x, quote(expr = )), logical(1)) & names(f) != "..."]
}

constant_function <- function(value, what) {
  if (is.null(value)) abort(sprintf("`%s` must be a function or the contents to serve.", what))
  force(value)
  function() value
}

uri_name <- function(uri) {
  parts <- strsplit(sub("[?#].*$", "", uri), "/", fixed = TRUE)[[1]]
  parts <- parts[nzchar(parts)]
  if (length(parts) == 0) uri else utils::tail(parts, 1)
}

# The fields resources, templates and prompts share, checked.
common_entry <- function(name, description, mime_type, title, annotations, icons, meta, timeout) {
  if (!is_string(name) || !nzchar(name)) abort("`name` must be a non-empty string.")
  for (arg in c("description", "mime_type", "title")) {
    value <- get(arg, inherits = FALSE)
    if (!is.null(value) && !is_string(value)) abort(sprintf("`%s` must be NULL or a single string.", arg))
  }
  if (!is.null(timeout) && !is_positive_number(timeout)) {
    abort("`timeout` must be NULL or a positive number of seconds.")
  }
  # Checked with the content blocks' rules: one vocabulary for annotations.
  if (length(annotations) > 0) content_text("", annotations = annotations)
  list(
    name = name, description = description, mime_type = mime_type, title = title,
    annotations = annotations, icons = icons, meta = meta, timeout = timeout
  )
}

check_completers <- function(complete, names, what) {
  if (is.null(complete) || length(complete) == 0) return(list())
  if (!is.list(complete) || is.null(names(complete)) || any(!nzchar(names(complete)))) {
    abort(sprintf("%s: `complete` must be a named list of functions.", what))
  }
  unknown <- setdiff(names(complete), names)
  if (length(unknown) > 0) {
    abort(sprintf(
      "%s: `complete` names %s, which is not one of %s.", what,
      paste0("`", unknown, "`", collapse = ", "),
      if (length(names)) paste0("`", names, "`", collapse = ", ") else "its (no) arguments"
    ))
  }
  if (!all(vapply(complete, is.function, logical(1)))) {
    abort(sprintf("%s: every entry of `complete` must be a function.", what))
  }
  complete
}

mime_types <- c(
  txt = "text/plain", log = "text/plain", csv = "text/csv", tsv = "text/tab-separated-values",
  md = "text/markdown", rmd = "text/markdown", qmd = "text/markdown", html = "text/html",
  htm = "text/html", css = "text/css", js = "text/javascript", r = "text/x-r",
  json = "application/json", xml = "application/xml", yaml = "application/yaml",
  yml = "application/yaml", svg = "image/svg+xml", png = "image/png", jpg = "image/jpeg",
  jpeg = "image/jpeg", gif = "image/gif", webp = "image/webp", pdf = "application/pdf",
  zip = "application/zip", gz = "application/gzip", wav = "audio/wav", mp3 = "audio/mpeg",
  parquet = "application/vnd.apache.parquet", rds = "application/octet-stream"
)

guess_mime_type <- function(path) {
  ext <- tolower(tools::file_ext(path))
  if (ext %in% names(mime_types)) mime_types[[ext]] else "application/octet-stream"
}

is_text_mime <- function(mime) {
  grepl("^text/", mime) || grepl("[+/](json|xml|yaml)$", mime) || mime == "application/javascript"
}

is_plot <- function(x) inherits(x, c("recordedplot", "ggplot", "gg"))

plot_png <- function(x, width = 800, height = 600) {
  path <- tempfile(fileext = ".png")
  on.exit(unlink(path))
  grDevices::png(path, width = width, height = height)
  tryCatch(print(x), finally = grDevices::dev.off())
  readBin(path, "raw", file.size(path))
}

file_contents <- function(file, uri) {
  if (!file.exists(file$path)) abort(sprintf("no such file: %s", file$path))
  bytes <- readBin(file$path, "raw", file.size(file$path))
  if (is_text_mime(file$mime_type)) {
    text <- rawToChar(bytes)
    Encoding(text) <- "UTF-8"
    content_resource(uri, text = text, mime_type = file$mime_type)
  } else {
    content_resource(uri, blob = bytes, mime_type = file$mime_type)
  }
}

# One R value as content blocks of the resource `uri`.
resource_contents <- function(value, uri, mime_type) {
  if (inherits(value, "mcpserver_content")) return(list(value))
  if (inherits(value, "mcpserver_resource_file")) return(list(file_contents(value, uri)))
  if (is.character(value) && !is.object(value)) {
    text <- paste(enc2utf8(value), collapse = "\n")
    return(list(content_resource(uri, text = text, mime_type = mime_type %||% "text/plain")))
  }
  if (is.raw(value)) {
    return(list(content_resource(uri, blob = value, mime_type = mime_type %||% "application/octet-stream")))
  }
  if (is_plot(value)) return(list(content_resource(uri, blob = plot_png(value), mime_type = "image/png")))
  if (is.list(value) && !is.data.frame(value) && length(value) > 0 &&
      all(vapply(value, function(v) inherits(v, c("mcpserver_content", "mcpserver_resource_file")), logical(1)))) {
    return(unlist(lapply(value, resource_contents, uri = uri, mime_type = mime_type), recursive = FALSE))
  }
  if (is.null(value)) abort("the resource function returned NULL")
  json <- rust(json_encode_(value, FALSE))
  list(content_resource(uri, text = json, mime_type = mime_type %||% "application/json"))
}

# The function the server runs for a read: it gets the URI and the
# template's variables, calls the user's function with the variables and
# returns the contents as embedded-resource blocks.
resource_handler <- function(entry) {
  fun <- entry$fun
  mime_type <- entry$mime_type
  function(...) {
    args <- list(...)
    uri <- args[[".uri"]]
    args[[".uri"]] <- NULL
    value <- do.call(fun, args)
    tool_result(resource_contents(value, uri, mime_type))
  }
}

# The function the server runs for completion/complete.
completion_handler <- function(fun) {
  takes_context <- any(c("context", "...") %in% names(formals(fun)))
  function(value, context = list()) {
    values <- if (takes_context) fun(value, context = context) else fun(value)
    if (is.null(values)) values <- character()
    if (is.factor(values)) values <- as.character(values)
    if (!is.character(values)) abort("a completion function must return a character vector")
    values <- unique(values[!is.na(values)])
    tool_result(structured_content = list(values = I(enc2utf8(values))))
  }
}
