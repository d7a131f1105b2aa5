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
#'   the tool function. In an `output_schema`, whether the field must be in
#'   every result: an optional field whose value is `NULL` (or a single `NA`,
#'   unless the field is nullable) is left out of the result.
#' @param nullable Whether the value may be `null` as well as a value of the
#'   type: the schema then says `"type": ["number", "null"]` (for an enum,
#'   `null` is among the values too). In an `output_schema`, `NA` (and
#'   `NaN`, `Inf`) in a nullable field is sent as `null`; in a field that is
#'   not nullable it is an error naming the field, unless the field is
#'   optional (then it is left out). A required argument the client sends as
#'   `null` arrives as `NA` of the type. Not for [mcp_elicit()] forms.
#' @param values For `type_enum()`, the allowed values (a vector or a list).
#'   The JSON type is inferred from them: character values give `"string"`,
#'   integers `"integer"`, other numbers `"number"`, logicals `"boolean"`,
#'   and a mix gives no `type`. A factor uses its levels.
#' @param default The value a form shows before the user changes it: for
#'   [mcp_elicit()] forms, and advertised as the JSON Schema `default` of a
#'   tool argument (an argument the client leaves out still takes the tool
#'   function's default). A single value of the helper's type; for
#'   `type_enum()` one of `values`; for `type_array()` a vector of values
#'   (of `items`' `values` when it is a `type_enum()`).
#' @param titles For `type_enum()`, a label for each of `values`, in order
#'   (a character vector): forms show the labels and send back the values.
#'   The schema then lists `oneOf: [{const, title}]` (as an array's items,
#'   `anyOf` in a form); clients of the 2025-06-18 revision get the legacy
#'   `enumNames` instead.
#' @param items For `type_array()`, the type helper of the elements.
#' @param .description,.required,.nullable Like `description`, `required`
#'   and `nullable`, for `type_object()` (dotted so they cannot clash with
#'   property names).
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
#' type_number("Ozone, in ppb; missing days are null", nullable = TRUE)
#' type_enum(c("celsius", "fahrenheit"))
#' type_enum(c("c", "f"), titles = c("Celsius", "Fahrenheit"), default = "c")
#' type_array(type_string())
#' type_array(type_enum(c("red", "green", "blue")), default = "red")
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

new_type <- function(kind, description, required, ..., default = NULL, nullable = FALSE) {
  rust(check_type_args_(description, required))
  if (!is_flag(nullable)) abort("`nullable` must be TRUE or FALSE.")
  type <- list(kind = kind, description = description, required = required, ...)
  # Only when given, so helpers keep mcplite's fields otherwise.
  if (!is.null(default)) type$default <- default
  if (nullable) type$nullable <- TRUE
  structure(type, class = type_class(kind))
}

# A default must be a value of its helper, so a form never starts invalid.
check_default <- function(default, ok, what) {
  if (!is.null(default) && !isTRUE(ok(default))) abort(paste0("`default` must be ", what, "."))
  default
}

is_whole_number <- function(x) is_number(x) && x == round(x)

#' @rdname tool-types
#' @export
type_boolean <- function(description = NULL, required = TRUE, nullable = FALSE, default = NULL) {
  new_type("boolean", description, required,
    default = check_default(default, is_flag, "TRUE or FALSE"), nullable = nullable
  )
}

#' @rdname tool-types
#' @export
type_integer <- function(description = NULL, required = TRUE, nullable = FALSE, default = NULL) {
  new_type("integer", description, required,
    default = check_default(default, is_whole_number, "a single whole number"), nullable = nullable
  )
}

#' @rdname tool-types
#' @export
type_number <- function(description = NULL, required = TRUE, nullable = FALSE, default = NULL) {
  new_type("number", description, required,
    default = check_default(default, is_number, "a single finite number"), nullable = nullable
  )
}

#' @rdname tool-types
#' @export
type_string <- function(description = NULL, required = TRUE, nullable = FALSE, default = NULL) {
  new_type("string", description, required,
    default = check_default(default, is_string, "a single string"), nullable = nullable
  )
}

#' @rdname tool-types
#' @export
type_enum <- function(values, description = NULL, required = TRUE,
                      nullable = FALSE, titles = NULL, default = NULL) {
  if (is.factor(values)) values <- levels(values)
  rust(check_enum_values_(values))
  if (!is.null(titles) && !(is.character(titles) && length(titles) == length(values) && !anyNA(titles))) {
    abort("`titles` must be a character vector with one title for each of `values`.")
  }
  in_values <- function(d) length(d) == 1L && !is.list(d) && d %in% unlist(values)
  type <- new_type("enum", description, required,
    values = as.list(values),
    default = check_default(default, in_values, "one of `values`"), nullable = nullable
  )
  if (!is.null(titles)) type$titles <- titles
  type
}

#' @rdname tool-types
#' @export
type_array <- function(items, description = NULL, required = TRUE, nullable = FALSE, default = NULL) {
  items <- as_mcp_type(items)
  rust(check_items_(items))
  if (!is.null(default)) {
    allowed <- if (identical(items$kind, "enum")) unlist(items$values)
    ok <- is.atomic(default) && !anyNA(default) && (is.null(allowed) || all(default %in% allowed))
    if (!ok) abort("`default` must be a vector of values of `items` (for a type_enum(), of its `values`).")
    default <- I(default)
  }
  new_type("array", description, required, items = items, default = default, nullable = nullable)
}

#' @rdname tool-types
#' @export
type_object <- function(.description = NULL, ..., .required = TRUE,
                        .additional_properties = FALSE, .nullable = FALSE) {
  properties <- lapply(list(...), as_mcp_type)
  rust(check_properties_(properties))
  if (!isTRUE(.additional_properties) && !isFALSE(.additional_properties)) {
    abort("`.additional_properties` must be TRUE or FALSE.")
  }
  new_type("object", .description, .required,
    properties = properties,
    additional_properties = .additional_properties, nullable = .nullable
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
