# ellmer interoperability. ellmer is not installable here (it is only on
# CRAN), so most of these tests build objects with the shape ellmer's
# documented S7 classes have: a class vector "ellmer::<Class>" and the
# properties stored as attributes. Tests with real ellmer objects run
# whenever ellmer is installed.

s7 <- function(class, ..., parents = "ellmer::Type", .data = list()) {
  structure(.data, class = c(paste0("ellmer::", class), parents, "S7_object"), ...)
}
basic <- function(type, description = NULL, required = TRUE) {
  s7("TypeBasic", type = type, description = description, required = required)
}

schema_json <- function(x) unclass(mcpserver:::type_schema_(mcpserver:::as_mcp_type(x), FALSE))

test_that("ellmer types become type helpers", {
  expect_equal(schema_json(basic("number", "a number")), '{"type":"number","description":"a number"}')
  expect_equal(schema_json(s7("TypeEnum", values = c("a", "b"), description = NULL, required = TRUE)),
    '{"type":"string","enum":["a","b"]}')
  expect_equal(schema_json(s7("TypeArray", items = basic("integer"), description = NULL, required = TRUE)),
    '{"type":"array","items":{"type":"integer"}}')
  obj <- s7("TypeObject",
    properties = list(x = basic("number"), label = basic("string", required = FALSE)),
    additional_properties = FALSE, description = "pt", required = TRUE
  )
  expect_equal(schema_json(obj),
    '{"type":"object","properties":{"x":{"type":"number"},"label":{"type":"string"}},"required":["x"],"additionalProperties":false,"description":"pt"}')
  expect_equal(schema_json(s7("TypeJsonSchema", json = list(type = "string", format = "date"), description = NULL, required = TRUE)),
    '{"type":"string","format":"date"}')
  expect_s3_class(mcpserver:::as_mcp_type(s7("TypeIgnore", description = NULL, required = FALSE)), "mcpserver_type_ignore")
  expect_error(mcpserver:::as_mcp_type(s7("TypeMystery")), "Unsupported ellmer tool type.", fixed = TRUE)
})

test_that("ellmer types are accepted wherever type helpers are", {
  f <- function(x, y) x + y
  t <- tool(f, "d", arguments = list(x = basic("number"), y = type_number()),
    output_schema = s7("TypeObject", properties = list(sum = basic("number")),
      additional_properties = FALSE, description = NULL, required = TRUE))
  def <- jsonlite::fromJSON(unclass(tool_definition(t, pretty = FALSE)), simplifyVector = FALSE)
  expect_equal(def$inputSchema$properties$x, list(type = "number"))
  expect_equal(def$outputSchema$properties$sum, list(type = "number"))
  expect_equal(schema_json(type_array(basic("string"))), '{"type":"array","items":{"type":"string"}}')
})

test_that("an ellmer ToolDef becomes a tool", {
  fun <- function(city) paste("Sunny in", city)
  def <- structure(fun,
    class = c("ellmer::ToolDef", "S7_object", "function"),
    name = "weather", description = "Weather for a city",
    arguments = s7("TypeObject", properties = list(city = basic("string")),
      additional_properties = FALSE, description = NULL, required = TRUE),
    annotations = list(read_only_hint = TRUE)
  )
  t <- mcpserver:::as_tool(def)
  expect_equal(t("Oslo"), "Sunny in Oslo")
  d <- jsonlite::fromJSON(unclass(tool_definition(def, pretty = FALSE)), simplifyVector = FALSE)
  expect_equal(d$name, "weather")
  expect_equal(d$annotations, list(readOnlyHint = TRUE))
  expect_equal(d$inputSchema$required, list("city"))
  expect_null(d$outputSchema)
})

test_that("ellmer results become tool results", {
  text <- s7("ContentText", parents = "ellmer::Content", text = "hello")
  image <- s7("ContentImageInline", parents = "ellmer::Content", type = "image/png", data = "AAAA")
  r <- mcpserver:::from_ellmer_value(text)
  expect_equal(r$content[[1]]$text, "hello")
  r <- mcpserver:::from_ellmer_value(list(text, image))
  expect_equal(vapply(r$content, `[[`, "", "type"), c("text", "image"))
  expect_equal(r$content[[2]]$mime_type, "image/png")
  failed <- s7("ContentToolResult", parents = "ellmer::Content", value = NULL, error = simpleError("no data"))
  r <- mcpserver:::from_ellmer_value(failed)
  expect_true(r$is_error)
  expect_equal(r$content[[1]]$text, "no data")
  ok <- s7("ContentToolResult", parents = "ellmer::Content", value = 42, error = NULL)
  expect_equal(mcpserver:::from_ellmer_value(ok), 42)
  pdf <- s7("ContentPDF", parents = "ellmer::Content")
  expect_error(mcpserver:::from_ellmer_value(pdf), "Unsupported ellmer content `ellmer::ContentPDF`")
  expect_error(mcpserver:::from_ellmer_value(list(text, 1)), "made entirely of supported ellmer content")
  expect_equal(mcpserver:::from_ellmer_value(list(1, 2)), list(1, 2))
})

test_that("real ellmer objects work", {
  skip_if_not_installed("ellmer")
  get_weather <- function(city) paste("Sunny in", city)
  def <- ellmer::tool(get_weather, "Weather for a city",
    arguments = list(city = ellmer::type_string("A city")))
  d <- jsonlite::fromJSON(unclass(tool_definition(def, pretty = FALSE)), simplifyVector = FALSE)
  expect_equal(d$name, "get_weather")
  expect_equal(d$inputSchema$properties$city$type, "string")
  expect_equal(schema_json(ellmer::type_array(ellmer::type_integer())), '{"type":"array","items":{"type":"integer"}}')
})

test_that("error text with % signs reaches R intact", {
  expect_error(
    tool_result(structured_content = list(`%s%n%d` = 1, `%s%n%d` = 2)),
    "`structured_content` must be a named JSON object.", fixed = TRUE
  )
  out <- mcpserver:::json_encode_(list(`%s %n` = list(`%d` = new.env())), FALSE)
  expect_equal(out$message, "cannot convert an environment to JSON (at `$%s %n$%d`)")
  expect_error(type_from_schema('{"type": "%s%n%s"}'), "%s%n%s", fixed = TRUE)
})
