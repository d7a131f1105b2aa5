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
