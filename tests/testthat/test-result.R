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
