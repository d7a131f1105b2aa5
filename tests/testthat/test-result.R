result_wire <- function(result, rev = "2025-11-25") {
  jsonlite::fromJSON(mcpserver:::result_json_for_test_(result, rev, FALSE), simplifyVector = FALSE)
}

test_that("tool_result() wraps a single block and keeps order", {
  r <- tool_result(content_text("one"))
  expect_s3_class(r, "mcpserver_tool_result")
  expect_named(r, c("content", "structured_content", "is_error", "meta"))
  expect_length(r$content, 1)
  r <- tool_result(list(a = content_text("one"), b = content_image("AA", "image/png")))
  expect_null(names(r$content))
  expect_equal(vapply(r$content, `[[`, "", "type"), c("text", "image"))
  expect_equal(result_wire(r)$isError, FALSE)
})

test_that("structured content gets a text copy when content is missing", {
  r <- tool_result(structured_content = list(count = 3L, names = c("a", "b")))
  expect_equal(r$content[[1]]$text, '{"count":3,"names":["a","b"]}')
  w <- result_wire(r)
  expect_equal(w$structuredContent, list(count = 3L, names = list("a", "b")))
  r <- tool_result(structured_content = list())
  expect_equal(r$content[[1]]$text, "{}")
  expect_equal(result_wire(r)$structuredContent, setNames(list(), character()))
  r <- tool_result(content_text("custom"), structured_content = list(a = 1))
  expect_length(r$content, 1)
  expect_equal(r$content[[1]]$text, "custom")
  # 2024-11-05 has no structured content: only the text remains.
  expect_null(result_wire(r, "2024-11-05")$structuredContent)
})

test_that("tool_result() checks its arguments in mcplite's order", {
  msg_required <- "`content` must contain at least one block created by a `content_*()` constructor."
  expect_error(tool_result(), msg_required, fixed = TRUE)
  expect_error(tool_result(list()), msg_required, fixed = TRUE)
  expect_error(tool_result(list(), structured_content = list(a = 1)), msg_required, fixed = TRUE)
  expect_error(tool_result("text"), msg_required, fixed = TRUE)
  msg_blocks <- "`content` must contain blocks created by `content_*()` constructors."
  expect_error(tool_result(list(list(type = "text", text = "forged"))), msg_blocks, fixed = TRUE)
  expect_error(tool_result(list(content_text("a"), NULL)), msg_blocks, fixed = TRUE)
  forged <- structure(list(type = "text", text = "x"), class = c("mcpserver_content_text", "mcpserver_content"))
  expect_error(tool_result(forged), "A `content_*()` block has invalid canonical fields.", fixed = TRUE)
  msg_object <- "`structured_content` must be a named JSON object."
  for (bad in list(1, "a", list(1, 2), data.frame(x = 1), I(list(a = 1)), list(a = 1, a = 2), structure(list(a = 1), class = "foo"))) {
    expect_error(tool_result(structured_content = bad), msg_object, fixed = TRUE)
  }
  expect_error(tool_result(structured_content = list(e = new.env())),
    "`structured_content` must be JSON serializable: cannot convert an environment to JSON (at `$e`)", fixed = TRUE)
  for (bad in list(NA, "yes", c(TRUE, TRUE))) {
    expect_error(tool_result(content_text("x"), is_error = bad), "`is_error` must be TRUE or FALSE.", fixed = TRUE)
  }
  expect_error(tool_result(content_text("x"), meta = list(1)), "`meta` must be a named JSON object.", fixed = TRUE)
  expect_error(tool_result(content_text("x"), meta = NULL), "`meta` must be a named JSON object.", fixed = TRUE)
})

test_that("results are checked again when a tool returns them", {
  r <- tool_result(content_text("fine"), meta = list(k = 1))
  expect_equal(result_wire(r)$`_meta`, list(k = 1L))
  edited <- r
  edited$is_error <- "no"
  expect_equal(result_wire(edited)$content[[1]]$text, "`is_error` must be TRUE or FALSE.")
  expect_true(result_wire(edited)$isError)
  extra <- r
  extra$surprise <- 1
  expect_equal(result_wire(extra)$content[[1]]$text, "Invalid canonical `mcpserver_tool_result` fields.")
  broken_block <- r
  broken_block$content[[1]]$text <- 42
  expect_equal(result_wire(broken_block)$content[[1]]$text, "`text` must be a single string.")
})

test_that("new block types are refused whole for old revisions", {
  r <- tool_result(list(content_text("a"), content_audio("AA", "audio/wav"), content_resource_link("u:x", "x")))
  expect_equal(
    result_wire(r, "2024-11-05")$content[[1]]$text,
    "MCP protocol 2024-11-05 does not support tool-result content type(s): audio, resource_link."
  )
  expect_true(result_wire(r, "2024-11-05")$isError)
  expect_equal(
    result_wire(r, "2025-03-26")$content[[1]]$text,
    "MCP protocol 2025-03-26 does not support tool-result content type(s): resource_link."
  )
  expect_length(result_wire(r, "2025-06-18")$content, 3)
})

test_that("results print", {
  expect_output(print(tool_result(content_text("hi"), is_error = TRUE)), "(error)", fixed = TRUE)
})

# An mcplite script may build a result, and even its blocks, by hand with
# mcplite's class names; mcplite checks such results when the tool returns
# them, and so do we.
mcplite_result <- function(content, structured_content = NULL, is_error = FALSE, meta = list()) {
  structure(
    list(content = content, structured_content = structured_content, is_error = is_error, meta = meta),
    class = "mcplite_tool_result"
  )
}
mcplite_text <- function(text) {
  structure(list(type = "text", text = text, annotations = list(), meta = list()),
    class = c("mcplite_content_text", "mcplite_content"))
}

test_that("results carry mcplite's class name, and hand-built mcplite results are accepted", {
  expect_s3_class(tool_result(content_text("a")), c("mcpserver_tool_result", "mcplite_tool_result"))
  w <- result_wire(mcplite_result(list(content_text("made by hand")), structured_content = list(n = 1L)))
  expect_equal(w$content, list(list(type = "text", text = "made by hand")))
  expect_equal(w$structuredContent, list(n = 1L))
  expect_false(w$isError)
  w <- result_wire(mcplite_result(list(mcplite_text("a"), content_text("b")), is_error = TRUE, meta = list(k = "v")))
  expect_equal(vapply(w$content, `[[`, "", "text"), c("a", "b"))
  expect_true(w$isError)
  expect_equal(w$`_meta`, list(k = "v"))
  # A hand-built block is a block for tool_result() too.
  expect_length(tool_result(mcplite_text("one"))$content, 1)
  # What mcplite refuses becomes a tool error, with mcplite's messages.
  extra <- unclass(mcplite_result(list(content_text("a"))))
  extra$surprise <- 1
  class(extra) <- "mcplite_tool_result"
  expect_equal(result_wire(extra)$content[[1]]$text, "Invalid canonical `mcplite_tool_result` fields.")
  raw_block <- mcplite_result(list(list(type = "text", text = "raw")))
  expect_equal(result_wire(raw_block)$content[[1]]$text, "`content` must contain blocks created by `content_*()` constructors.")
  short_block <- mcplite_result(list(structure(list(type = "text", text = "x"), class = "mcplite_content")))
  expect_equal(result_wire(short_block)$content[[1]]$text, "A `content_*()` block has invalid canonical fields.")
  expect_true(result_wire(short_block)$isError)
})

test_that("a server sends a hand-built mcplite result and an empty-properties schema as mcplite would", {
  skip_on_cran()
  script <- server_script(c(
    'by_hand <- function() structure(list(',
    '  content = list(structure(list(type = "text", text = "hand", annotations = list(), meta = list()),',
    '    class = c("mcplite_content_text", "mcplite_content"))),',
    '  structured_content = list(ok = TRUE), is_error = FALSE, meta = list()), class = "mcplite_tool_result")',
    'is_block <- function() inherits(content_text("x"), "mcplite_content")',
    'mcp_server(list(',
    '  tool(by_hand, "d", output_schema = type_from_schema(list(type = "object", properties = list()))),',
    '  tool(is_block, "d")',
    '))'
  ))
  client <- start_server(script)
  initialize(client, "2025-11-25")
  listed <- request(client, 1, "tools/list")
  expect_match(client$log[[2]]$line, '"outputSchema":{"type":"object","properties":{}}', fixed = TRUE)
  r <- call_tool(client, 2, "by_hand")
  expect_equal(r$result$content, list(list(type = "text", text = "hand")))
  expect_equal(r$result$structuredContent, list(ok = TRUE))
  expect_false(r$result$isError)
  expect_equal(call_tool(client, 3, "is_block")$result$content[[1]]$text, "true")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("a value JSON cannot hold says where it sits and what to return instead", {
  skip_on_cran()
  client <- mcp_client(list(
    tool(function() lm(mpg ~ hp, mtcars), "A whole model", name = "fit"),
    tool(function() list(n = 32, model = lm(mpg ~ hp, mtcars)), "A model inside", name = "nested"),
    tool(function() list(f = mean), "A function", name = "fun")
  ))
  withr::defer(mcp_close(client))
  whole <- mcp_call(client, "fit")
  expect_true(whole$is_error)
  expect_match(whole$text, "cannot convert a call to JSON (at `$call`)", fixed = TRUE)
  expect_match(whole$text, "The tool returned an object of class `lm`", fixed = TRUE)
  expect_match(whole$text, "`coef(fit)`, `broom::tidy(fit)`", fixed = TRUE)
  expect_match(whole$text, "capture.output(summary(fit))", fixed = TRUE)
  nested <- mcp_call(client, "nested")
  expect_match(nested$text, "(at `$model$call`)", fixed = TRUE)
  expect_match(nested$text, "holds an object of class `lm` at `$model`", fixed = TRUE)
  # No class, no model advice.
  fun <- mcp_call(client, "fun")
  expect_match(fun$text, "cannot convert a function to JSON (at `$f`)", fixed = TRUE)
  expect_no_match(fun$text, "coef")
})

# --- Structured results follow their output schema --------------------------

# The structured content a tool with `output_schema` sends for `value`, as
# JSON text (before the schema checks it), or the conversion's error.
structured <- function(output_schema, value) {
  t <- tool(function() NULL, "d", name = "t", output_schema = output_schema)
  rust_value <- mcpserver:::structured_json_for_test_(attr(t, "mcpserver_tool"), value)
  if (inherits(rust_value, "mcpserver_rust_error")) stop(rust_value$message, call. = FALSE)
  rust_value
}

# What the client receives: the CallToolResult, or the -32603 message.
sent <- function(output_schema, value, rev = "2025-11-25") {
  t <- tool(function() NULL, "d", name = "t", output_schema = output_schema)
  out <- mcpserver:::tool_result_for_test_(attr(t, "mcpserver_tool"), value, rev)
  if (is.list(out)) return(out)
  jsonlite::fromJSON(out, simplifyVector = FALSE)
}

test_that("a vector of any length is an array where the output schema says array", {
  schema <- type_object(cars = type_array(type_string()))
  cars <- function(hp) list(cars = rownames(mtcars)[mtcars$hp > hp])
  expect_equal(structured(schema, cars(250)), '{"cars":["Ford Pantera L","Maserati Bora"]}')
  expect_equal(structured(schema, cars(300)), '{"cars":["Maserati Bora"]}')
  expect_equal(structured(schema, cars(400)), '{"cars":[]}')
  expect_equal(structured(schema, list(cars = NULL)), '{"cars":[]}')
  for (rev in c("2025-06-18", "2025-11-25", "2026-07-28")) {
    r <- sent(schema, cars(300), rev)
    expect_false(r$isError)
    expect_equal(r$structuredContent$cars, list("Maserati Bora"))
  }
  # Deeper: lists of objects, list columns, atomic columns, a root array.
  rows <- type_array(type_object(name = type_string(), tags = type_array(type_string())))
  expect_equal(
    structured(type_object(rows = rows), list(rows = list(list(name = "a", tags = "x")))),
    '{"rows":[{"name":"a","tags":["x"]}]}'
  )
  df <- data.frame(name = c("a", "b"))
  df$tags <- list("x", c("y", "z"))
  expect_equal(structured(rows, df), '[{"name":"a","tags":["x"]},{"name":"b","tags":["y","z"]}]')
  each <- type_array(type_object(v = type_array(type_number())))
  expect_equal(structured(each, data.frame(v = 1:2)), '[{"v":[1]},{"v":[2]}]')
  expect_equal(structured(type_array(type_number()), 5), "[5]")
  # Where the schema leaves the shape open, values are written as without it.
  open <- type_from_schema('{"type": "object", "properties": {"v": {}}}')
  expect_equal(structured(open, list(v = 5)), '{"v":5}')
})

test_that("a vector of another length where the schema says one value is an error naming the field", {
  schema <- type_object(n = type_integer(), label = type_string(required = FALSE))
  expect_equal(structured(schema, list(n = 3L)), '{"n":3}')
  expect_equal(structured(schema, list(n = I(3L))), '{"n":3}')
  expect_error(structured(schema, list(n = integer(0))),
    "field `$n` is a zero-length vector where the output schema expects an integer", fixed = TRUE)
  expect_error(structured(schema, list(n = 1:3)),
    "field `$n` has 3 values where the output schema expects one (an integer)", fixed = TRUE)
  # The model reads it as a tool error.
  r <- sent(schema, list(n = 1L, label = character(0)))
  expect_true(r$isError)
  expect_equal(r$content[[1]]$text, paste(
    "The structured result does not fit the tool's output schema: field `$label` is a zero-length",
    "vector where the output schema expects a string: return one value (or NA, declaring the field nullable)."
  ))
})

test_that("NA is null where the schema allows null, left out of an optional field, an error elsewhere", {
  schema <- type_object(n = type_integer(), mean = type_number(nullable = TRUE), note = type_string(required = FALSE))
  expect_equal(structured(schema, list(n = 1L, mean = NA, note = NA)), '{"n":1,"mean":null}')
  expect_equal(structured(schema, list(n = 1L, mean = NaN, note = NULL)), '{"n":1,"mean":null}')
  expect_equal(structured(schema, list(n = 1L, mean = NULL, note = "x")), '{"n":1,"mean":null,"note":"x"}')
  expect_error(structured(schema, list(n = NA_integer_, mean = 1)), paste(
    "field `$n` is NA, which is sent as null, but the output schema does not allow null there:",
    "declare the field nullable (type_integer(nullable = TRUE)) to send null, or optional",
    "(`required = FALSE`) to leave it out, or replace the missing values"
  ), fixed = TRUE)
  expect_error(structured(schema, list(n = NULL, mean = 1)),
    "field `$n` is NULL, but the output schema does not allow null there", fixed = TRUE)
  expect_error(structured(type_array(type_number()), c(1, NA)),
    "field `[[2]]` is NA, which is sent as null, but the output schema does not allow null there: declare the items nullable (type_array(type_number(nullable = TRUE)))", fixed = TRUE)
  expect_error(structured(type_object(x = type_number()), list(x = Inf)), "field `$x` is infinite", fixed = TRUE)
  expect_equal(structured(type_array(type_number(nullable = TRUE)), c(1, NA, Inf)), "[1,null,null]")
  # Data frames with NA, the common case: airquality's Ozone and Solar.R.
  aq <- head(airquality, 6)
  rows <- function(ozone) {
    type_array(type_object(Ozone = ozone, Solar.R = type_integer(nullable = TRUE), Wind = type_number(),
      Temp = type_integer(), Month = type_integer(), Day = type_integer()))
  }
  nullable <- jsonlite::fromJSON(structured(rows(type_integer(nullable = TRUE)), aq), simplifyVector = FALSE)
  expect_true("Ozone" %in% names(nullable[[5]]))
  expect_null(nullable[[5]]$Ozone)
  expect_null(nullable[[5]]$Solar.R)
  optional <- jsonlite::fromJSON(structured(rows(type_integer(required = FALSE)), aq), simplifyVector = FALSE)
  expect_false("Ozone" %in% names(optional[[5]]))
  expect_equal(optional[[1]]$Ozone, 41L)
  expect_error(structured(rows(type_integer()), aq), "field `$Ozone[[5]]` is NA", fixed = TRUE)
  for (rev in c("2025-06-18", "2026-07-28")) {
    expect_false(sent(rows(type_integer(required = FALSE)), aq, rev)$isError)
    expect_false(sent(rows(type_integer(nullable = TRUE)), aq, rev)$isError)
  }
})

test_that("a mismatch the schema finds names the field and the fix", {
  missing <- sent(type_object(n = type_integer()), list(m = 1))
  expect_match(missing$error, 'missing required field "n"', fixed = TRUE)
  expect_match(missing$error, 'unexpected field "m"', fixed = TRUE)
  expect_false(grepl("argument", missing$error))
  # Schemas that leave the shape open: the advice for R.
  either <- type_from_schema('{"type": "object", "properties": {"v": {"type": ["array", "boolean"], "items": {"type": "number"}}}}')
  r <- sent(either, list(v = 1))
  expect_match(r$error, "v: expected a boolean or an array, got 1", fixed = TRUE)
  expect_match(r$error, "wrap it in I() to send an array", fixed = TRUE)
  expect_false(grepl("nullable", r$error))
  expect_false(sent(either, list(v = I(1)))$isError)
  r <- sent(either, list(v = NA))
  expect_match(r$error, "got null", fixed = TRUE)
  expect_match(r$error, "declare such a field nullable (type_number(nullable = TRUE)", fixed = TRUE)
})

test_that("a tool's structured results follow its schema through a real server", {
  cars <- function(hp) list(cars = rownames(mtcars)[mtcars$hp > hp])
  cars <- tool(cars, "Cars with more horsepower",
    arguments = list(hp = type_number()),
    output_schema = type_object(cars = type_array(type_string()))
  )
  ozone <- tool(function(month) airquality[airquality$Month == month, c("Day", "Ozone")],
    "Ozone by day", name = "ozone",
    arguments = list(month = type_integer()),
    output_schema = type_array(type_object(Day = type_integer(), Ozone = type_integer(nullable = TRUE)))
  )
  fastest <- tool(function(above) list(hp = mtcars$hp[mtcars$hp > above]),
    "The horsepower of the one car above a bound", name = "fastest",
    arguments = list(above = type_number()),
    output_schema = type_object(hp = type_number())
  )
  client <- mcp_client(list(cars, ozone, fastest))
  withr::defer(mcp_close(client))
  expect_equal(mcp_call(client, "cars", hp = 250)$structured$cars, list("Ford Pantera L", "Maserati Bora"))
  expect_equal(mcp_call(client, "cars", hp = 300)$structured$cars, list("Maserati Bora"))
  expect_equal(mcp_call(client, "cars", hp = 400)$structured$cars, list())
  # Before 2026-07-28 an array travels as `{"result": [...]}`.
  may <- mcp_call(client, "ozone", month = 5L)$structured$result
  expect_length(may, 31)
  expect_null(may[[5]]$Ozone)
  expect_equal(may[[1]]$Ozone, 41L)
  expect_equal(mcp_call(client, "fastest", above = 300)$structured$hp, 335)
  none <- mcp_call(client, "fastest", above = 400)
  expect_true(none$is_error)
  expect_match(none$text, "field `$hp` is a zero-length vector", fixed = TRUE)
})

test_that("a table is checked in R's memory, sent once with its text mirror, and misfits still fail as before", {
  schema <- type_array(type_object(id = type_integer(), x = type_number(nullable = TRUE), label = type_string(),
                                   ok = type_boolean(required = FALSE)))
  df <- data.frame(id = 1:3, x = c(0.5, NA, 1e300), label = c("a", "\u00e9 \"q\"\n", "c"), ok = c(TRUE, NA, FALSE))
  r <- sent(schema, df)
  expect_false(r$isError)
  expect_length(r$content, 1)
  # The text mirror is the structured content's own JSON.
  expect_equal(jsonlite::fromJSON(r$content[[1]]$text, simplifyVector = FALSE), r$structuredContent$result)
  expect_equal(r$structuredContent$result[[2]], list(id = 2L, x = NULL, label = "\u00e9 \"q\"\n"))
  # Integral doubles are integers; factors are strings; a vector is an array.
  r <- sent(schema, data.frame(id = c(1, 2), x = 1, label = factor(c("u", "v"))))
  expect_false(r$isError)
  expect_equal(r$structuredContent$result[[2]]$label, "v")
  expect_false(sent(type_array(type_integer(nullable = TRUE)), c(1L, NA, 3L))$isError)
  # Misfits the writer passes are caught by the schema, with its message.
  r <- sent(schema, data.frame(id = c(1.5, 2), x = 1, label = "a"))
  expect_match(r$error, "returned structured content that does not match its output schema", fixed = TRUE)
  expect_match(r$error, "1.5", fixed = TRUE)
  r <- sent(schema, data.frame(id = 1L, x = "not a number", label = "a"))
  expect_match(r$error, "x", fixed = TRUE)
  expect_match(r$error, "not a number", fixed = TRUE)
  r <- sent(schema, data.frame(id = 1L, x = 1, label = "a", extra = 2))
  expect_match(r$error, "extra", fixed = TRUE)
  r <- sent(type_array(type_integer()), c(1.5, 2))
  expect_match(r$error, "1.5", fixed = TRUE)
  # A schema the plan cannot vouch for (a minimum) is checked on the JSON.
  limited <- type_from_schema('{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","minimum":2}}}}')
  r <- sent(limited, data.frame(n = 1:3))
  expect_match(r$error, "minimum", ignore.case = TRUE)
  expect_false(sent(limited, data.frame(n = 2:3))$isError)
})

test_that("tool_result()'s own text block is sent as the mirror of its structured content, not written twice", {
  df <- data.frame(id = 1:3, x = c(0.5, NA, 1e300), label = c("a", "\u00e9 \"q\"\n", "c"))
  r <- tool_result(structured_content = list(result = df, n = 3L))
  expect_true(mcpserver:::result_mirrored_for_test_(r))
  # The same bytes as the same result built by hand (no mark, read and
  # written again), for every revision.
  by_hand <- r
  attr(by_hand, "mcpserver_mirror") <- NULL
  expect_false(mcpserver:::result_mirrored_for_test_(by_hand))
  for (rev in c("2024-11-05", "2025-06-18", "2025-11-25")) {
    expect_identical(mcpserver:::result_json_for_test_(r, rev, FALSE),
                     mcpserver:::result_json_for_test_(by_hand, rev, FALSE))
  }
  expect_identical(result_wire(r)$content[[1]]$text, r$content[[1]]$text)
  expect_length(result_wire(r)$content, 1)
  expect_null(result_wire(r, "2024-11-05")$structuredContent)
  expect_false(result_wire(r, "2024-11-05")$isError)
  # Edited after it was built: the mark no longer fits, and the result is
  # read as before (the text block as it was, the structured content as it is).
  edited <- r
  edited$structured_content$n <- 4L
  expect_false(mcpserver:::result_mirrored_for_test_(edited))
  expect_equal(result_wire(edited)$structuredContent$n, 4L)
  expect_match(result_wire(edited)$content[[1]]$text, '"n":3', fixed = TRUE)
  expect_identical(r$structured_content$n, 3L)
  texted <- r
  texted$content[[1]]$text <- "custom"
  expect_false(mcpserver:::result_mirrored_for_test_(texted))
  expect_equal(result_wire(texted)$content[[1]]$text, "custom")
  expect_equal(result_wire(texted)$structuredContent$n, 3L)
  extra <- r
  extra$content <- list(content_text("a"), content_text("b"))
  expect_false(mcpserver:::result_mirrored_for_test_(extra))
  expect_length(result_wire(extra)$content, 2)
  failed <- tool_result(structured_content = list(a = 1), is_error = TRUE)
  expect_true(mcpserver:::result_mirrored_for_test_(failed))
  expect_true(result_wire(failed)$isError)
  # Given content is never a mirror.
  expect_false(mcpserver:::result_mirrored_for_test_(tool_result(content_text("{}"), structured_content = list())))
})
