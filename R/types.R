#' Type helpers for tool arguments and results
#'
#' These functions describe the JSON Schema of a tool's arguments (in
#' [tool()]'s `arguments`) and of its structured results (`output_schema`).
#' They have the signatures of the same helpers in the mcplite package.
#'
#' Arguments arrive in R typed by their helper (unless the tool sets
#' `convert = FALSE`): `type_number()` gives a double, `type_integer()` an
#' integer, `type_string()` a character string, `type_boolean()` a logical,
#' `type_array()` of a scalar type an atomic vector (`[]` gives a zero-length
#' vector), `type_object()` a named list, and `type_from_schema()` the raw
#' shapes (arrays as lists). Arguments are checked against the schema before
#' the tool runs; a call that does not fit is answered with a tool error that
#' names the argument.
#'
#' @param description A description of the value for the model, or `NULL`.
#' @param required Whether the argument must be supplied. An optional
#'   argument the client leaves out (or sends as `null`) takes the default of
#'   the tool function.
#' @param values For `type_enum()`, the allowed values (a vector or a list).
#'   The JSON type is inferred from them: character values give `"string"`,
#'   integers `"integer"`, other numbers `"number"`, logicals `"boolean"`,
#'   and a mix gives no `type`. A factor uses its levels.
#' @param items For `type_array()`, the type helper of the elements.
#' @param .description,.required Like `description` and `required`, for
#'   `type_object()` (dotted so they cannot clash with property names).
#' @param ... For `type_object()`, the properties: named type helpers.
#' @param .additional_properties Whether the object may have properties that
#'   are not listed.
#' @param text For `type_from_schema()`, a JSON Schema as a list or as JSON
#'   text. In a list, an empty `list()` where the schema wants an object
#'   (`properties = list()`, an `items` or `not` schema, ...) is sent as
#'   `{}`; elsewhere (`required`, `enum`, `default`) as `[]`.
#' @param path For `type_from_schema()`, a file holding a JSON Schema.
#' @return A type helper: a list of class `mcpserver_type` (and, for
#'   mcplite scripts, `mcplite_tool_type`).
#' @examples
#' type_number("The radius, in metres")
#' type_enum(c("celsius", "fahrenheit"))
#' type_array(type_string())
#' type_object(
#'   .description = "A point",
#'   x = type_number(),
#'   y = type_number(),
#'   label = type_string(required = FALSE)
#' )
#' type_from_schema('{"type": "string", "format": "date"}')
#' @name tool-types
NULL

# mcplite's class names too, so scripts that test for them still work.
type_class <- function(kind) {
  c(
    paste0("mcpserver_type_", kind), paste0("mcplite_tool_type_", kind),
    "mcpserver_type", "mcplite_tool_type"
  )
}

new_type <- function(kind, description, required, ...) {
  rust(check_type_args_(description, required))
  structure(
    list(kind = kind, description = description, required = required, ...),
    class = type_class(kind)
  )
}

#' @rdname tool-types
#' @export
type_boolean <- function(description = NULL, required = TRUE) {
  new_type("boolean", description, required)
}

#' @rdname tool-types
#' @export
type_integer <- function(description = NULL, required = TRUE) {
  new_type("integer", description, required)
}

#' @rdname tool-types
#' @export
type_number <- function(description = NULL, required = TRUE) {
  new_type("number", description, required)
}

#' @rdname tool-types
#' @export
type_string <- function(description = NULL, required = TRUE) {
  new_type("string", description, required)
}

#' @rdname tool-types
#' @export
type_enum <- function(values, description = NULL, required = TRUE) {
  if (is.factor(values)) values <- levels(values)
  rust(check_enum_values_(values))
  new_type("enum", description, required, values = as.list(values))
}

#' @rdname tool-types
#' @export
type_array <- function(items, description = NULL, required = TRUE) {
  items <- as_mcp_type(items)
  rust(check_items_(items))
  new_type("array", description, required, items = items)
}

#' @rdname tool-types
#' @export
type_object <- function(.description = NULL, ..., .required = TRUE,
                        .additional_properties = FALSE) {
  properties <- lapply(list(...), as_mcp_type)
  rust(check_properties_(properties))
  if (!isTRUE(.additional_properties) && !isFALSE(.additional_properties)) {
    abort("`.additional_properties` must be TRUE or FALSE.")
  }
  new_type("object", .description, .required,
    properties = properties,
    additional_properties = .additional_properties
  )
}

#' @rdname tool-types
#' @export
type_from_schema <- function(text = NULL, path = NULL) {
  if (is.null(text) == is.null(path)) abort("Supply exactly one of `text` or `path`.")
  what <- "text"
  if (!is.null(path)) {
    text <- paste(readLines(path, warn = FALSE), collapse = "\n")
    what <- "path"
  }
  schema <- if (is_string(text)) {
    rust(json_decode_(text))
  } else if (is.list(text)) {
    text
  } else {
    abort("`text` must be a schema list or a JSON string.")
  }
  rust(check_schema_(schema, what))
  structure(
    list(kind = "from_schema", description = NULL, required = TRUE, schema = schema),
    class = type_class("from_schema")
  )
}

#' @rdname tool-types
#' @export
type_ignore <- function() {
  structure(
    list(kind = "ignore", description = NULL, required = FALSE),
    class = type_class("ignore")
  )
}

#' @export
format.mcpserver_type <- function(x, ...) {
  if (identical(x$kind, "ignore")) return("<type_ignore>")
  schema <- rust(type_schema_(x, FALSE))
  sprintf("<type_%s%s> %s", x$kind, if (isTRUE(x$required)) "" else " (optional)", schema)
}

#' @export
print.mcpserver_type <- function(x, ...) {
  cat(format(x), "\n", sep = "")
  invisible(x)
}
