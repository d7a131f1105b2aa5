schema_of <- function(x) jsonlite::fromJSON(mcpserver:::type_schema_(x, FALSE), simplifyVector = FALSE)
json_of <- function(x) unclass(mcpserver:::type_schema_(x, FALSE))

test_that("scalar helpers give their JSON type, with the description last", {
  expect_equal(json_of(type_boolean()), '{"type":"boolean"}')
  expect_equal(json_of(type_integer()), '{"type":"integer"}')
  expect_equal(json_of(type_number("Radius")), '{"type":"number","description":"Radius"}')
  expect_equal(json_of(type_string(required = FALSE)), '{"type":"string"}')
  expect_s3_class(type_string(), c("mcpserver_type_string", "mcpserver_type"))
  expect_false(type_string(required = FALSE)$required)
})

test_that("shared arguments are checked with mcplite's messages", {
  for (bad in list(1, c("a", "b"), NA_character_, TRUE)) {
    expect_error(type_number(bad), "`description` must be a single string.", fixed = TRUE)
  }
  for (bad in list(NA, "yes", c(TRUE, FALSE), 1)) {
    expect_error(type_number(required = bad), "`required` must be TRUE or FALSE.", fixed = TRUE)
  }
  expect_silent(type_string(""))
})

test_that("enum types follow the values", {
  expect_equal(json_of(type_enum(c("a", "b"))), '{"type":"string","enum":["a","b"]}')
  expect_equal(json_of(type_enum("only")), '{"type":"string","enum":["only"]}')
  expect_equal(json_of(type_enum(1:3)), '{"type":"integer","enum":[1,2,3]}')
  expect_equal(json_of(type_enum(c(1.5, 2))), '{"type":"number","enum":[1.5,2]}')
  expect_equal(json_of(type_enum(c(TRUE, FALSE))), '{"type":"boolean","enum":[true,false]}')
  # Deliberate difference from mcplite: mixed values get no type (mcplite says "string").
  expect_equal(json_of(type_enum(list("a", 1))), '{"enum":["a",1]}')
  # Deliberate difference: factors use their levels and say so.
  expect_equal(json_of(type_enum(factor(c("y", "x")))), '{"type":"string","enum":["x","y"]}')
  expect_error(type_enum(character()), "`values` must contain at least one enum value.", fixed = TRUE)
  expect_error(type_enum(NULL), "`values` must contain at least one enum value.", fixed = TRUE)
})

test_that("arrays and objects nest", {
  expect_equal(
    json_of(type_array(type_object(a = type_string()))),
    '{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}'
  )
  expect_error(type_array("x"), "`items` must be a mcpserver or compatible ellmer type helper.", fixed = TRUE)
  expect_equal(json_of(type_object()), '{"type":"object","properties":{},"additionalProperties":false}')
  obj <- type_object(
    .description = "A point", x = type_number(), label = type_string(required = FALSE),
    skip = type_ignore(), .additional_properties = TRUE
  )
  expect_equal(
    json_of(obj),
    '{"type":"object","properties":{"x":{"type":"number"},"label":{"type":"string"}},"required":["x"],"additionalProperties":true,"description":"A point"}'
  )
  expect_false(type_object(.required = FALSE)$required)
  expect_error(type_object(type_string()), "`description` must be a single string.", fixed = TRUE)
  expect_error(type_object(.description = "d", type_string()),
    "Object properties must be supplied as named type helpers.", fixed = TRUE)
  expect_error(type_object(a = 1), "Each entry in `arguments` must be a mcpserver or compatible ellmer type helper.", fixed = TRUE)
})

test_that("type_from_schema() takes a list, JSON text or a file, verbatim", {
  expect_equal(
    json_of(type_from_schema('{"type":"string","format":"date"}')),
    '{"type":"string","format":"date"}'
  )
  expect_equal(
    json_of(type_from_schema(list(type = "object", properties = setNames(list(), character())))),
    '{"type":"object","properties":{}}'
  )
  path <- withr::local_tempfile(fileext = ".json")
  writeLines('{"type": "array", "items": {"type": "integer"}, "minItems": 1}', path)
  expect_equal(json_of(type_from_schema(path = path)), '{"type":"array","items":{"type":"integer"},"minItems":1}')
  expect_true(type_from_schema("{}")$required)
  expect_error(type_from_schema(), "Supply exactly one of `text` or `path`.", fixed = TRUE)
  expect_error(type_from_schema("{}", path = path), "Supply exactly one of `text` or `path`.", fixed = TRUE)
  expect_error(type_from_schema(42), "`text` must be a schema list or a JSON string.", fixed = TRUE)
  expect_error(type_from_schema("{not json"), "invalid JSON")
})

test_that("an empty list() in a schema list is {} where a schema or map belongs (mcplite scripts)", {
  # R has one empty list for [] and {}; mcplite scripts write properties = list().
  expect_equal(json_of(type_from_schema(list(type = "object", properties = list()))), '{"type":"object","properties":{}}')
  nested <- type_from_schema(list(
    type = "object",
    properties = list(
      opts = list(type = "object", properties = list(), required = list()),
      tags = list(type = "array", items = list(), default = list())
    ),
    additionalProperties = list()
  ))
  expect_equal(
    json_of(nested),
    paste0(
      '{"type":"object","properties":{"opts":{"type":"object","properties":{},"required":[]},',
      '"tags":{"type":"array","items":{},"default":[]}},"additionalProperties":{}}'
    )
  )
  # On the wire too, for arguments and for the output schema.
  empty <- type_from_schema(list(type = "object", properties = list()))
  f <- function(opts = NULL) list()
  def <- jsonlite::fromJSON(tool_definition(tool(f, "d", arguments = list(opts = empty), output_schema = empty), pretty = FALSE),
    simplifyVector = FALSE)
  expect_equal(def$inputSchema$properties$opts$properties, setNames(list(), character()))
  expect_match(unclass(tool_definition(tool(f, "d", output_schema = empty), pretty = FALSE)),
    '"outputSchema":{"type":"object","properties":{}}', fixed = TRUE)
})

test_that("type helpers carry mcplite's class names too", {
  for (helper in list(type_boolean(), type_integer(), type_number(), type_string(), type_enum("a"),
                      type_array(type_string()), type_object(), type_from_schema("{}"), type_ignore())) {
    expect_s3_class(helper, "mcplite_tool_type")
    expect_s3_class(helper, paste0("mcplite_tool_type_", helper$kind))
    expect_s3_class(helper, "mcpserver_type")
  }
})

test_that("type_from_schema() refuses schemas clients would choke on", {
  # Deliberate difference: mcplite passes these through unchecked.
  expect_error(type_from_schema('{"type":"strnig"}'), "not a valid JSON Schema")
  expect_error(type_from_schema('{"type":"array"}'), "has no `items`")
  expect_error(type_from_schema('{"$ref":"https://example.com/s.json"}'))
  expect_error(
    type_from_schema(list(type = "object", properties = list(a = data.frame(x = 1)))),
    "unsupported classed list container"
  )
  expect_error(type_from_schema(list(type = "object", default = new.env())), "functions and environments")
})

test_that("type_ignore() is optional and prints", {
  expect_false(type_ignore()$required)
  expect_output(print(type_ignore()), "<type_ignore>")
  expect_output(print(type_number("x")), '<type_number> {"type":"number","description":"x"}', fixed = TRUE)
})

test_that("nullable = TRUE lets null stand too, in the schema of every helper", {
  expect_equal(json_of(type_number(nullable = TRUE)), '{"type":["number","null"]}')
  expect_equal(json_of(type_integer("Ozone", nullable = TRUE)), '{"type":["integer","null"],"description":"Ozone"}')
  expect_equal(json_of(type_boolean(nullable = TRUE)), '{"type":["boolean","null"]}')
  expect_equal(json_of(type_string(required = FALSE, nullable = TRUE)), '{"type":["string","null"]}')
  expect_equal(json_of(type_enum(c("a", "b"), nullable = TRUE)), '{"type":["string","null"],"enum":["a","b",null]}')
  expect_equal(json_of(type_enum(list("a", 1), nullable = TRUE)), '{"enum":["a",1,null]}')
  expect_equal(
    json_of(type_enum(c("a", "b"), titles = c("A", "B"), nullable = TRUE)),
    '{"type":["string","null"],"oneOf":[{"const":"a","title":"A"},{"const":"b","title":"B"},{"const":null}]}'
  )
  expect_equal(json_of(type_array(type_number(), nullable = TRUE)), '{"type":["array","null"],"items":{"type":"number"}}')
  expect_equal(
    json_of(type_object(x = type_number(), .nullable = TRUE)),
    '{"type":["object","null"],"properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}'
  )
  # Without it, the helpers keep mcplite's fields.
  expect_null(type_number()$nullable)
  expect_true(type_number(nullable = TRUE)$nullable)
  expect_error(type_number(nullable = NA), "`nullable` must be TRUE or FALSE.", fixed = TRUE)
  expect_error(type_object(.nullable = "yes"), "`nullable` must be TRUE or FALSE.", fixed = TRUE)
  # mcplite's positional arguments still mean what they meant.
  expect_false(type_number("d", FALSE)$required)
  expect_equal(type_enum(c("a", "b"), "d", FALSE)$description, "d")
})

test_that("definitions with nullable types are valid for clients of every revision", {
  f <- function(x, y = NULL) x
  t <- tool(f, "d",
    arguments = list(x = type_number(nullable = TRUE), y = type_enum(c("a", "b"), nullable = TRUE, required = FALSE)),
    output_schema = type_object(v = type_array(type_integer(nullable = TRUE), nullable = TRUE), .nullable = TRUE)
  )
  for (rev in schema_revisions) {
    json <- tool_definition(t, rev, pretty = FALSE)
    expect_length(mcpserver:::json_schema_problems_(definition_schema(rev, "Tool"), json), 0)
    def <- jsonlite::fromJSON(json, simplifyVector = FALSE)
    expect_equal(def$inputSchema$properties$x$type, list("number", "null"))
    # Before 2026-07-28 an output schema must have an object root: a
    # nullable one travels wrapped, as arrays do.
    if (rev %in% c("2025-06-18", "2025-11-25")) expect_equal(def$outputSchema$type, "object")
  }
})

test_that("a required nullable argument sent as null arrives as NA of its type", {
  f <- function(n, x, s, b, v) NULL
  spec <- list(attr(tool(f, "d", arguments = list(
    n = type_integer(nullable = TRUE), x = type_number(nullable = TRUE), s = type_string(nullable = TRUE),
    b = type_boolean(nullable = TRUE), v = type_array(type_number(nullable = TRUE))
  )), "mcpserver_tool"))
  args <- mcpserver:::arguments_for_test_(spec, 1L, '{"n":null,"x":null,"s":null,"b":null,"v":[1,null]}')
  expect_identical(args, list(n = NA_integer_, x = NA_real_, s = NA_character_, b = NA, v = c(1, NA)))
  args <- mcpserver:::arguments_for_test_(spec, 1L, '{"n":2,"x":1.5,"s":"a","b":true,"v":[]}')
  expect_identical(args, list(n = 2L, x = 1.5, s = "a", b = TRUE, v = numeric(0)))
  # An array sent as null arrives as NULL; an undeclared argument is left out.
  g <- function(v, ...) NULL
  spec <- list(attr(tool(g, "d", arguments = list(v = type_array(type_number(), nullable = TRUE))), "mcpserver_tool"))
  expect_identical(mcpserver:::arguments_for_test_(spec, 1L, '{"v":null,"w":null}'), list(v = NULL))
})
