#' Define a prompt template
#'
#' Prompts are message templates a client offers its user (often as slash
#' commands): an analysis recipe, a review checklist. The client fills in
#' the prompt's arguments (always strings) and gets back messages to send
#' to the model. Give prompts to [mcp_server()]'s `prompts`.
#'
#' The function's value becomes the messages:
#' * a string (or character vector, joined with newlines): one user message;
#' * a content block ([content_text()], [content_image()],
#'   [content_audio()], [content_resource()], [content_resource_link()]):
#'   one user message holding it;
#' * [prompt_message()]: a message with a role (`"user"` or `"assistant"`);
#' * a list of any of these: several messages, in order.
#'
#' Missing required arguments are refused (-32602) before the function
#' runs; optional ones the client leaves out take the function's defaults.
#'
#' @param fun A function taking the prompt's arguments by name and
#'   returning its messages.
#' @param name The prompt's name. Defaults to the name of the variable
#'   passed as `fun`.
#' @param description What the prompt does, for the user choosing one.
#'   Strongly recommended (some clients list only prompts that have one).
#' @param arguments The arguments, or `NULL` to take them from `fun`'s
#'   formals (those without a default are required). Otherwise a character
#'   vector of names, or a named list whose entries are a description
#'   string or [prompt_argument()].
#' @param ... Not used; named options go after it.
#' @param title A human-readable title for clients to display, or `NULL`.
#' @param icons Icons for clients to display, as for [tool()].
#' @param meta A named list sent as the prompt's `_meta`, or `NULL`.
#' @param complete A named list of functions completing argument values,
#'   as for [resource_template()].
#' @param timeout A limit in seconds for one run, or `NULL` for the
#'   server's default.
#' @return A prompt definition, of class `mcpserver_prompt`.
#' @examples
#' explore <- function(dataset, focus = "distributions") {
#'   sprintf("Explore the %s data set, focusing on %s. Start with str() and summary().",
#'           dataset, focus)
#' }
#' prompt_template(explore, description = "Explore a data set step by step",
#'   arguments = list(
#'     dataset = prompt_argument("A data set of the datasets package"),
#'     focus = "What to look at first"
#'   )
#' )
#' @export
prompt_template <- function(fun, name = NULL, description = NULL, arguments = NULL, ...,
                   title = NULL, icons = NULL, meta = NULL, complete = list(),
                   timeout = NULL) {
  check_dots_empty(..., what = "prompt_template()")
  if (is.null(name)) {
    fun_expr <- substitute(fun)
    if (is.symbol(fun_expr)) name <- as.character(fun_expr)
  }
  if (!is.function(fun)) fun <- constant_function(fun, "fun")
  if (is.null(name)) abort("`name` is required when `fun` is not given as a variable name.")
  what <- sprintf("Prompt \"%s\"", name)
  arguments <- prompt_arguments(fun, arguments, what)
  complete <- check_completers(complete, names(arguments), what)
  structure(
    c(
      list(fun = fun, arguments = arguments, complete = complete),
      common_entry(name, description, NULL, title, list(), icons, meta, timeout)
    ),
    class = "mcpserver_prompt"
  )
}

#' @rdname prompt_template
#' @param required Whether the client must give the argument; `NULL` to
#'   decide from `fun` (required when it has no default).
#' @export
prompt_argument <- function(description = NULL, required = NULL, title = NULL) {
  if (!is.null(description) && !is_string(description)) abort("`description` must be NULL or a single string.")
  if (!is.null(required) && !is_flag(required)) abort("`required` must be NULL, TRUE or FALSE.")
  if (!is.null(title) && !is_string(title)) abort("`title` must be NULL or a single string.")
  structure(list(description = description, required = required, title = title),
    class = "mcpserver_prompt_argument"
  )
}

#' @rdname prompt_template
#' @param content A string or a content block.
#' @param role `"user"` or `"assistant"`.
#' @export
prompt_message <- function(content, role = c("user", "assistant")) {
  role <- match.arg(role)
  if (is_string(content)) content <- content_text(content)
  if (!inherits(content, "mcpserver_content")) {
    abort("`content` must be a string or a content block such as content_text().")
  }
  structure(list(role = role, content = content), class = "mcpserver_prompt_message")
}

# The declared arguments as a named list of prompt_argument(), checked
# against `fun`.
prompt_arguments <- function(fun, arguments, what) {
  formal_names <- as.character(setdiff(names(formals(fun)), "..."))
  takes_dots <- "..." %in% names(formals(fun))
  if (is.null(arguments)) arguments <- formal_names
  if (is.character(arguments) && is.null(names(arguments))) {
    arguments <- stats::setNames(rep(list(NULL), length(arguments)), arguments)
  }
  if (!is.list(arguments) || (length(arguments) > 0 && (is.null(names(arguments)) || any(!nzchar(names(arguments)))))) {
    abort(sprintf("%s: `arguments` must be NULL, a character vector of names or a named list.", what))
  }
  unknown <- setdiff(names(arguments), formal_names)
  if (length(unknown) > 0 && !takes_dots) {
    abort(sprintf("%s: `fun` has no argument(s) %s.", what, paste0("`", unknown, "`", collapse = ", ")))
  }
  needed <- setdiff(required_formals(fun), names(arguments))
  if (length(needed) > 0) {
    abort(sprintf("%s: `fun` needs %s, which `arguments` does not declare.", what,
                  paste0("`", needed, "`", collapse = ", ")))
  }
  required <- required_formals(fun)
  lapply(stats::setNames(names(arguments), names(arguments)), function(arg) {
    spec <- arguments[[arg]]
    if (is.null(spec)) spec <- prompt_argument()
    if (is_string(spec)) spec <- prompt_argument(spec)
    if (!inherits(spec, "mcpserver_prompt_argument")) {
      abort(sprintf("%s: argument `%s` must be a description string or prompt_argument().", what, arg))
    }
    spec$required <- spec$required %||% (arg %in% required)
    spec
  })
}

# One R value as prompt messages: list(roles, blocks).
prompt_messages <- function(value) {
  if (is.character(value) && !is.object(value)) {
    value <- prompt_message(paste(enc2utf8(value), collapse = "\n"))
  }
  if (inherits(value, "mcpserver_content")) value <- prompt_message(value)
  if (inherits(value, "mcpserver_prompt_message")) value <- list(value)
  if (!is.list(value) || is.object(value) || length(value) == 0) {
    abort("a prompt function must return a string, a content block, prompt_message() or a list of them")
  }
  messages <- lapply(value, function(v) {
    if (inherits(v, "mcpserver_prompt_message")) return(v)
    if (is_string(v) || inherits(v, "mcpserver_content")) return(prompt_message(v))
    abort("a prompt function must return a string, a content block, prompt_message() or a list of them")
  })
  list(
    roles = vapply(messages, function(m) m$role, character(1)),
    blocks = lapply(messages, function(m) m$content)
  )
}

# The function the server runs for prompts/get.
prompt_handler <- function(entry) {
  fun <- entry$fun
  function(...) {
    messages <- prompt_messages(fun(...))
    tool_result(messages$blocks, structured_content = list(roles = I(messages$roles)))
  }
}

#' @export
format.mcpserver_prompt <- function(x, ...) {
  c(
    sprintf("<mcpserver_prompt> %s(%s)", x$name, paste(names(x$arguments), collapse = ", ")),
    if (!is.null(x$description)) paste0("  ", x$description)
  )
}

#' @export
print.mcpserver_prompt <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}

#' @export
format.mcpserver_resource <- function(x, ...) {
  c(sprintf("<mcpserver_resource> %s", x$uri), if (!is.null(x$description)) paste0("  ", x$description))
}

#' @export
print.mcpserver_resource <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}

#' @export
format.mcpserver_resource_template <- function(x, ...) {
  c(
    sprintf("<mcpserver_resource_template> %s", x$uri_template),
    if (!is.null(x$description)) paste0("  ", x$description)
  )
}

#' @export
print.mcpserver_resource_template <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}
