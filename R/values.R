#' How values cross between R and JSON
#'
#' What a tool receives from a client, and what a client receives from a
#' tool. Both directions are converted in one pass by the package's Rust
#' library.
#'
#' @section Arguments: JSON to R:
#' Arguments are first checked against the tool's input schema; a call that
#' does not fit is answered with a tool error naming the argument, and the
#' tool is not run. They are then converted by their declared type (with
#' `tool(..., convert = TRUE)`, the default):
#'
#' | Declared type | JSON | R |
#' |---|---|---|
#' | `type_number()` | `3`, `2.5` | double: `3`, `2.5` |
#' | `type_integer()` | `3` (or `3.0`) | integer `3L`; a value outside R's integer range is a tool error |
#' | `type_string()` | `"a"` | character `"a"` |
#' | `type_boolean()` | `true` | logical `TRUE` |
#' | `type_enum()` | by its values' type | as above |
#' | `type_array()` of a scalar type | `[1, 2]`, `[]`, `[1, null]` | atomic vector `c(1, 2)`, a zero-length vector, `c(1, NA)` |
#' | `type_array()` of objects or arrays | `[{...}, {...}]` | unnamed list of converted elements |
#' | `type_object()` | `{"a": 1}` | named list, properties converted by their types |
#' | `type_from_schema()` for one argument, or `convert = FALSE` | anything | mcplite's raw shapes (below) |
#' | `tool(arguments = type_from_schema(<object schema>))` | by the schema | as above where the schema makes the type certain (`type`, `enum`, `$ref`, `allOf`, agreeing `anyOf`/`oneOf`), raw shapes elsewhere |
#'
#' Raw shapes (as mcplite passes them): `null` is `NULL`; `true`/`false`
#' logical; integers in R's integer range are integers, other numbers
#' doubles; strings character; every array an unnamed list (`[]` is
#' `list()`); every object a named list (`{}` is a named empty list).
#'
#' Arguments are matched to the function's arguments by exact name (never
#' partially). An argument the client leaves out takes the function's
#' default; `null` for an optional argument counts as leaving it out. A
#' required argument declared `nullable = TRUE` that the client sends as
#' `null` arrives as `NA` of its type (`NULL` for arrays and objects).
#'
#' R strings cannot hold a NUL character (`\u0000` in JSON): a call with
#' one in any argument (value or name, however deeply nested) is answered
#' with a tool error naming where it is, e.g. `options.note: text with a NUL
#' character`, and the tool is not run.
#'
#' @section Results: R to JSON:
#' A tool's return value becomes the result the client receives:
#'
#' * a [tool_result()] is sent as it says;
#' * with an `output_schema`, a plain value is sent as `structuredContent`
#'   (checked against the schema) plus a text block holding its JSON;
#' * otherwise a character vector becomes one text block (elements joined by
#'   newlines), `NULL` becomes the text `{}`, and anything else the text of
#'   its JSON.
#'
#' Values map to JSON like `jsonlite::toJSON(x, auto_unbox = TRUE)`, but at
#' full precision:
#'
#' | R | JSON |
#' |---|---|
#' | `NULL` | `null` |
#' | length-1 vector | a scalar: `3.5`, `"a"`, `true` |
#' | longer or empty vector, or `I(x)` | an array (names dropped) |
#' | double | the shortest text that reads back as the same double: `pi` is `3.141592653589793`; whole numbers without `.0` |
#' | `NA` (any type), `NaN`, `Inf` | `null` |
#' | factor | its labels |
#' | `Date` | `"2024-01-02"` |
#' | `POSIXct`, `POSIXlt` | ISO 8601 with the offset of its time zone: `"2024-01-02T03:04:05Z"`, `"2024-07-02T03:04:05+02:00"` |
#' | matrix, array | nested arrays, row by row |
#' | data frame | an array of row objects; `NA` cells are `null` (kept) |
#' | named list | an object; every element must be named, names unique |
#' | unnamed list | an array; `list()` is `[]`, a named empty list is `{}` |
#' | raw vector | a base64 string |
#' | complex | a string such as `"1+2i"` |
#' | bit64 `integer64` | an exact integer |
#' | a string of class `json` (from `jsonlite::toJSON()`) | embedded as it is |
#'
#' Environments, functions, external pointers, formulas and other calls
#' cannot be sent: the tool call fails with an error that says where the
#' value sits, e.g. `cannot convert an environment to JSON (at $model$env)`.
#'
#' @section Structured results: directed by the output schema:
#' A tool's `output_schema` directs how its structured results become JSON,
#' wherever the schema makes the shape certain (the helpers always do;
#' a [type_from_schema()] does through `type`, `$ref`, `allOf` and agreeing
#' `anyOf`/`oneOf` branches):
#'
#' | The schema says | R value | JSON |
#' |---|---|---|
#' | array | a vector of any length, `I()` or not | an array: `"a"` is `["a"]`, `character(0)` and `NULL` are `[]` |
#' | array of objects | a data frame, or a list of named lists | an array of objects, each field as its schema says |
#' | a single value | a vector of length 1 | the value |
#' | a single value | a vector of another length | an error naming the field (`field $n is a zero-length vector ...`) |
#' | nullable (`nullable = TRUE`, or `"null"` among the types) | `NA`, `NaN`, `Inf`, `NULL` | `null` |
#' | not nullable, the field optional (`required = FALSE`) | `NA` (a single value, or a data frame cell), `NULL` | the field left out |
#' | not nullable, the field required | `NA`, `NULL` | an error naming the field (`$Ozone[[5]]`) and the fix |
#' | an object | `list()` | `{}` |
#'
#' Conversion errors are tool errors the model can read. The compiled schema
#' then checks the result: one that breaks it (a field the schema leaves
#' open, a missing required field, a value outside an enum) is answered
#' with a -32603 error that names the field and, where R's mapping is the
#' cause, the fix (`I()` to keep an array, `nullable = TRUE` for `NA`).
#'
#' @name mcpserver-values
#' @aliases values
NULL
