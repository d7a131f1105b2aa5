# Defaults, so that tests of other checks may leave the arguments
# undeclared (an argument without one must be declared).
add <- function(x = 0, y = 0) x + y
definition <- function(t, rev = "2025-11-25") {
  jsonlite::fromJSON(unclass(tool_definition(t, rev, pretty = FALSE)), simplifyVector = FALSE)
}

test_that("tool() keeps the function callable and records the definition", {
  t <- tool(add, "Add two numbers", arguments = list(x = type_number(), y = type_number()))
  expect_equal(t(1, 2), 3)
  expect_s3_class(t, "mcpserver_tool")
  expect_s3_class(t, "mcplite_tool")
  expect_true(is.function(t))
  spec <- attr(t, "mcpserver_tool")
  expect_equal(spec$name, "add")
  expect_equal(spec$description, "Add two numbers")
  expect_named(spec$arguments, c("x", "y"))
  expect_output(print(t), "<mcpserver_tool> add(x, y)", fixed = TRUE)
})

test_that("the input schema has mcplite's shape", {
  t <- tool(add, "d", arguments = list(x = type_number(), y = type_number()))
  expect_equal(
    unclass(tool_definition(t, pretty = FALSE)),
    '{"name":"add","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}}'
  )
  none <- function() 1
  expect_equal(
    definition(tool(none, "no arguments"))$inputSchema,
    list(type = "object", properties = setNames(list(), character()), additionalProperties = FALSE)
  )
  expect_match(unclass(tool_definition(tool(none, "d"), pretty = FALSE)), '"properties":{}', fixed = TRUE)
  f <- function(flag, count = 1L, choice, items, payload, raw, ignored = NULL) NULL
  t <- tool(f, "d", arguments = list(
    flag = type_boolean(), count = type_integer(required = FALSE), choice = type_enum(c("a", "b")),
    items = type_array(type_string()), payload = type_object(a = type_number()),
    raw = type_from_schema('{"type":"string"}'), ignored = type_ignore()
  ))
  schema <- definition(t)$inputSchema
  expect_equal(unlist(schema$required), c("flag", "choice", "items", "payload", "raw"))
  expect_named(schema$properties, c("flag", "count", "choice", "items", "payload", "raw"))
})

test_that("names are inferred, checked, and long ones warned about", {
  expect_equal(attr(tool(add, "d"), "mcpserver_tool")$name, "add")
  expect_error(tool(function(x) x, "d"), "`name` is required when `fun` is anonymous.", fixed = TRUE)
  expect_error(tool(base::sum, "d"), "`name` is required when `fun` is anonymous.", fixed = TRUE)
  expect_equal(attr(tool(base::sum, "d", name = "sum"), "mcpserver_tool")$name, "sum")
  expect_silent(tool(add, "d", name = "abc.DEF_123-valid"))
  msg <- "`name` must be 1 to 128 characters using only letters, digits, underscore, dot, or hyphen."
  for (bad in c("", "a b", "a/b", "\u00fcmlaut", strrep("a", 129))) {
    expect_error(tool(add, "d", name = bad), msg, fixed = TRUE)
  }
  expect_error(tool(add, "d", name = 1), "`name` must be a single string.", fixed = TRUE)
  expect_warning(tool(add, "d", name = strrep("a", 65)), "longer than 64 characters")
  expect_silent(tool(add, "d", name = strrep("a", 64)))
  expect_warning(tool(add, "d", name = strrep("a", 128)))
})

test_that("a rejected name is quoted in the error, `%` and all", {
  rule <- "`name` must be 1 to 128 characters using only letters, digits, underscore, dot, or hyphen."
  err <- expect_error(tool(add, "d", name = "bad%sname%n"), class = "mcpserver_error")
  expect_equal(conditionMessage(err), paste(rule, 'Got "bad%sname%n", which contains "%".'))
  err <- expect_error(tool(add, "d", name = "tab\there"))
  expect_equal(conditionMessage(err), paste(rule, 'Got "tab\\there", which contains "\\t".'))
  err <- expect_error(tool(add, "d", name = ""))
  expect_equal(conditionMessage(err), paste(rule, "Got an empty name."))
  err <- expect_error(tool(add, "d", name = strrep("x", 300)))
  expect_equal(conditionMessage(err), paste0(rule, ' Got "', strrep("x", 80), '" (the first 80 of 300 characters).'))
})

test_that("tool() checks its arguments in mcplite's order", {
  expect_error(tool("add", "d"), "`fun` must be a function.", fixed = TRUE)
  expect_error(tool(add), 'argument "description" is missing', fixed = TRUE)
  expect_error(tool(add, 1), "`description` must be a single string.", fixed = TRUE)
  expect_error(tool(add, NA_character_), "`description` must be a single string.", fixed = TRUE)
  expect_silent(tool(add, ""))
  expect_error(tool(add, "d", x = type_number()),
    "`...` is not supported; supply argument schemas with `arguments`.", fixed = TRUE)
  expect_error(tool(add, "d", arguments = list(type_number())),
    "`arguments` must be a named list of type helpers.", fixed = TRUE)
  expect_error(tool(add, "d", arguments = "x"), "`arguments` must be a named list of type helpers.", fixed = TRUE)
  expect_error(tool(add, "d", annotations = list(TRUE)), "`annotations` must be a named list.", fixed = TRUE)
  expect_error(tool(add, "d", output_schema = list(type = "object")),
    "`output_schema` must be a mcpserver or compatible ellmer type helper.", fixed = TRUE)
  expect_error(tool(add, "d", arguments = list(x = "number")),
    "Each entry in `arguments` must be a mcpserver or compatible ellmer type helper.", fixed = TRUE)
})

test_that("declared arguments must be arguments of the function", {
  expect_error(tool(add, "d", arguments = list(z = type_number())), "`z`, which is not an argument of `fun`")
  dots <- function(value = NULL, ...) value
  expect_silent(tool(dots, "d", arguments = list(other = type_number())))
  # R would bind `val` to `value` by partial matching: refused.
  expect_error(tool(dots, "d", arguments = list(val = type_number())), "partial matching")
  expect_silent(tool(add, "d", arguments = list(x = type_number(), z = type_ignore())))
})

test_that("an argument without a default must be declared, or no call could work", {
  # Before, this was accepted and every call failed with
  # `argument "x" is missing, with no default`.
  err <- expect_error(
    tool(function(x, y = 1) x + y, "f", arguments = list(y = type_number(required = FALSE)), name = "f"),
    class = "mcpserver_error"
  )
  expect_match(conditionMessage(err), "`fun` has argument `x` without a default, which `arguments` does not declare", fixed = TRUE)
  expect_match(conditionMessage(err), 'argument "x" is missing', fixed = TRUE)
  sum2 <- function(x, y) x + y
  expect_error(tool(sum2, "Add"), "arguments `x`, `y` without a default")
  # Declared (as optional too: the function may test missing()), ignored,
  # or given a default: accepted.
  expect_silent(tool(function(x, y = 1) x + y, "f", name = "f", arguments = list(x = type_number())))
  expect_silent(tool(function(x) if (missing(x)) 0 else x, "f", name = "f",
    arguments = list(x = type_number(required = FALSE))))
  expect_silent(tool(function(x) 1, "f", name = "f", arguments = list(x = type_ignore())))
  expect_silent(tool(function(...) 1, "f", name = "f"))
  expect_error(tool(function(x, ...) x, "f", name = "f", arguments = list(y = type_number())), "argument `x` without a default")
  expect_silent(tool(function(x, y) x + y, "f", name = "f",
    arguments = type_object(x = type_number(), y = type_number()), convert = FALSE))
  # A complete schema declares its properties; where they are not certain
  # (no top-level properties), nothing is refused.
  schema <- '{"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}'
  expect_silent(tool(function(x) x, "f", name = "f", arguments = type_from_schema(schema)))
  expect_error(tool(function(x, y) x, "f", name = "f", arguments = type_from_schema(schema)), "argument `y` without a default")
  open_schema <- '{"type": "object", "anyOf": [{"properties": {"x": {"type": "number"}}}, {"properties": {"y": {"type": "string"}}}]}'
  expect_silent(tool(function(x, y) x, "f", name = "f", arguments = type_from_schema(open_schema)))
})

test_that("a misspelt option of tool() is named, with the nearest one", {
  expect_error(tool(add, "d", arguments = list(x = type_number(), y = type_number()), timout = 5),
    "`tool()` has no option `timout`; did you mean `timeout`?", fixed = TRUE)
  expect_error(tool(add, "d", argumnts = list(x = type_number())),
    "`tool()` has no option `argumnts`; did you mean `arguments`?", fixed = TRUE)
})

test_that("annotations are checked when the tool is defined", {
  t <- tool(add, "d", annotations = tool_annotations(title = "Adder", read_only_hint = TRUE, custom = 1))
  expect_equal(definition(t)$annotations, list(title = "Adder", readOnlyHint = TRUE, custom = 1))
  t <- tool(add, "d", annotations = list(readOnlyHint = TRUE, destructive_hint = FALSE))
  expect_equal(definition(t)$annotations, list(readOnlyHint = TRUE, destructiveHint = FALSE))
  expect_error(tool(add, "d", annotations = list(readOnlyHint = "yes")), "`annotations$readOnlyHint` must be TRUE or FALSE.", fixed = TRUE)
  expect_error(tool_annotations(open_world_hint = NA), "`annotations$openWorldHint` must be TRUE or FALSE.", fixed = TRUE)
  expect_error(tool_annotations(title = 1), "`annotations$title` must be a single string.", fixed = TRUE)
  # Deliberate difference: mcplite accepts this and crashes later, at tools/list.
  expect_error(tool(add, "d", annotations = list(x = new.env())), "`annotations` must be JSON serializable")
  expect_equal(tool_annotations(), list())
})

test_that("output schemas, titles, icons, meta, timeouts and convert", {
  stats <- function() list(mean = 1)
  t <- tool(stats, "d",
    output_schema = type_object(mean = type_number()), title = "Stats",
    icons = list(list(src = "https://example.com/i.png", mime_type = "image/png", sizes = "48x48", theme = "dark")),
    meta = list(team = "data"), timeout = 30, convert = FALSE
  )
  def <- definition(t, "2025-11-25")
  expect_equal(def$title, "Stats")
  expect_equal(def$outputSchema$properties$mean$type, "number")
  expect_equal(def$icons[[1]], list(src = "https://example.com/i.png", mimeType = "image/png", sizes = list("48x48"), theme = "dark"))
  expect_equal(def$`_meta`, list(team = "data"))
  old <- definition(t, "2024-11-05")
  expect_named(old, c("name", "description", "inputSchema"))
  # Non-object output schemas are allowed: wrapped for revisions before 2026-07-28.
  series <- function() c(1, 2)
  t <- tool(series, "d", output_schema = type_array(type_number()))
  expect_equal(definition(t, "2026-07-28")$outputSchema$type, "array")
  expect_equal(definition(t, "2025-11-25")$outputSchema$properties$result$type, "array")
  expect_error(tool(stats, "d", output_schema = type_ignore()), "output_schema")
  expect_error(tool(add, "d", title = 1), "`title` must be NULL or a single string.", fixed = TRUE)
  expect_error(tool(add, "d", icons = list(list(mime_type = "image/png"))), "`icons` must be a list of icons")
  expect_error(tool(add, "d", meta = list(1)), "`meta` must be a named JSON object.", fixed = TRUE)
  for (bad in list(0, -1, "5", Inf, c(1, 2))) {
    expect_error(tool(add, "d", timeout = bad), "`timeout` must be NULL or a positive number of seconds.", fixed = TRUE)
  }
  expect_error(tool(add, "d", convert = NA), "`convert` must be TRUE or FALSE.", fixed = TRUE)
  expect_error(tool_definition(tool(add, "d"), "2024-10-07"), "`protocol_version` must be one of")
  expect_error(tool_definition(add), "`x` must be a tool made with `tool()`.", fixed = TRUE)
})

test_that("a complete 2020-12 schema as `arguments` is sent as given, checked in full and converted where certain", {
  schema <- '{
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
      "point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}
    },
    "properties": {
      "origin": {"$ref": "#/$defs/point"},
      "path": {"type": "array", "items": {"$ref": "#/$defs/point"}},
      "count": {"allOf": [{"type": "integer"}, {"minimum": 0}]},
      "size": {"oneOf": [{"type": "number", "maximum": 10}, {"type": "number", "minimum": 100}]},
      "kind": {"type": "string", "enum": ["a", "b"]},
      "either": {"anyOf": [{"type": "string"}, {"type": "number"}]}
    },
    "required": ["origin"],
    "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
    "then": {"required": ["count"]},
    "else": {"properties": {"count": {"maximum": 5}}},
    "additionalProperties": false
  }'
  script <- server_script(c(
    sprintf("schema <- %s", deparse1(schema)),
    "shapes <- function(origin, path = NULL, count = NULL, size = NULL, kind = NULL, either = NULL) {",
    "  args <- list(origin = origin, path = path, count = count, size = size, kind = kind, either = either)",
    "  paste(names(args), vapply(args, function(a) paste(class(a), collapse = '/'), ''), sep = ':', collapse = ' ')",
    "}",
    "mcp_server(tool(shapes, 'Shapes', arguments = type_from_schema(schema)))"
  ))
  client <- start_server(script)
  initialize(client)
  listed <- request(client, 1, "tools/list")$result$tools[[1]]$inputSchema
  expect_equal(listed$`$schema`, "https://json-schema.org/draft/2020-12/schema")
  expect_equal(listed$`$defs`$point$required, list("x", "y"))
  expect_equal(listed$then, list(required = list("count")))
  r <- call_tool(client, 2, "shapes", list(
    origin = list(x = 1, y = 2), path = list(list(x = 1, y = 2)), count = 3, size = 5, kind = "a", either = 2
  ))
  expect_false(isTRUE(r$result$isError))
  expect_equal(r$result$content[[1]]$text,
    "origin:list path:list count:integer size:numeric kind:character either:integer")
  bad <- function(id, arguments, says) {
    r <- call_tool(client, id, "shapes", arguments)
    expect_true(r$result$isError, info = says)
    expect_match(r$result$content[[1]]$text, says, info = says)
  }
  bad(3, list(origin = list(x = 1)), "y")                      # $ref'd required
  bad(4, list(origin = list(x = 1, y = 2), kind = "a"), "count") # if/then
  bad(5, list(origin = list(x = 1, y = 2), count = 9), "9")      # else
  bad(6, list(origin = list(x = 1, y = 2), size = 50), "size")   # oneOf
  bad(7, list(origin = list(x = 1, y = 2), count = -1), "count") # allOf
  bad(8, list(origin = list(x = 1, y = 2), extra = TRUE), "extra")
  expect_equal(finish(client), 0)
  expect_log_valid(client)

  f <- function(a) a
  expect_error(tool(f, "d", arguments = type_from_schema('{"type": "string"}')), "must be an object schema")
  expect_error(tool(f, "d", arguments = type_from_schema('{"type": "object", "properties": {"b": {}}}')), "`b` are not arguments")
  expect_error(tool(f, "d", arguments = type_string()), "named list of type helpers")
  t <- tool(function(a, b) a, "d", name = "t", arguments = type_object(a = type_number(), b = type_string()))
  expect_equal(names(attr(t, "mcpserver_tool")$arguments), c("a", "b"))
  expect_match(format(tool(f, "d", arguments = type_from_schema('{"type": "object", "properties": {"a": {}}}')))[1], "f\\(a\\)")
})
