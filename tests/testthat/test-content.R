# The wire form of a block, as the server sends it to a 2025-11-25 client.
wire <- function(block, rev = "2025-11-25") {
  echo <- function() NULL
  result <- tool_result(block)
  json <- mcpserver:::result_json_for_test_(result, rev, FALSE)
  jsonlite::fromJSON(json, simplifyVector = FALSE)$content[[1]]
}

test_that("text blocks", {
  b <- content_text("hi")
  expect_s3_class(b, c("mcpserver_content_text", "mcpserver_content"))
  expect_equal(wire(b), list(type = "text", text = "hi"))
  expect_equal(wire(content_text("")), list(type = "text", text = ""))
  for (bad in list(NA_character_, c("a", "b"), 1, NULL)) {
    expect_error(content_text(bad), "`text` must be a single string.", fixed = TRUE)
  }
  expect_output(print(b), '<content_text> "hi"', fixed = TRUE)
})

test_that("image and audio blocks need data and a media type", {
  expect_equal(
    wire(content_image("AAAA", "image/png")),
    list(type = "image", data = "AAAA", mimeType = "image/png")
  )
  expect_equal(wire(content_audio("UklG", "audio/wav"))$type, "audio")
  # Raw vectors are encoded (an improvement on mcplite, which takes text only).
  expect_equal(content_image(as.raw(c(1, 255)), "image/png")$data, "Af8=")
  expect_equal(content_resource("u:b", blob = charToRaw("hi"))$blob, "aGk=")
  expect_error(content_image(1, "image/png"), "`data` must be a single string.", fixed = TRUE)
  expect_error(content_image("AAAA", NULL), "`mime_type` must be a single string.", fixed = TRUE)
  expect_error(content_image("AAAA", ""), "`mime_type` must be a non-empty string.", fixed = TRUE)
  expect_error(content_audio("AAAA"), 'argument "mime_type" is missing', fixed = TRUE)
})

test_that("resource links", {
  b <- content_resource_link("file:///a.csv", "a.csv", title = "A", description = "Data", mime_type = "text/csv", size = 10)
  expect_equal(wire(b), list(
    type = "resource_link", uri = "file:///a.csv", name = "a.csv", title = "A",
    description = "Data", mimeType = "text/csv", size = 10L
  ))
  expect_equal(names(wire(content_resource_link("u:x", "x"))), c("type", "uri", "name"))
  expect_error(content_resource_link("", "x"), "`uri` must be a non-empty string.", fixed = TRUE)
  expect_error(content_resource_link("u:x", ""), "`name` must be a non-empty string.", fixed = TRUE)
  expect_error(content_resource_link("u:x", "x", title = 2), "`title` must be a single string.", fixed = TRUE)
  expect_error(content_resource_link("u:x", "x", description = NA_character_), "`description` must be a single string.", fixed = TRUE)
  for (bad in list(-1, 1.5, Inf, "1")) {
    expect_error(content_resource_link("u:x", "x", size = bad), "`size` must be a non-negative whole number or NULL.", fixed = TRUE)
  }
})

test_that("embedded resources hold text or a blob", {
  expect_equal(
    wire(content_resource("file:///n.txt", text = "note", mime_type = "text/plain")),
    list(type = "resource", resource = list(uri = "file:///n.txt", mimeType = "text/plain", text = "note"))
  )
  expect_equal(wire(content_resource("file:///b", blob = "AAAA"))$resource$blob, "AAAA")
  expect_error(content_resource("file:///b"), "Supply exactly one of `text` or `blob`.", fixed = TRUE)
  expect_error(content_resource("file:///b", text = "a", blob = "b"), "Supply exactly one of `text` or `blob`.", fixed = TRUE)
  expect_error(content_resource("file:///b", blob = 1), "`blob` must be a single string.", fixed = TRUE)
})

test_that("annotations and meta are checked and sent in wire form", {
  b <- content_text("hi",
    annotations = list(audience = "user", priority = 0.5, last_modified = "2025-01-01T00:00:00Z", custom = TRUE),
    meta = list(source = "r")
  )
  expect_equal(wire(b), list(
    type = "text", text = "hi",
    annotations = list(audience = list("user"), priority = 0.5, custom = TRUE, lastModified = "2025-01-01T00:00:00Z"),
    `_meta` = list(source = "r")
  ))
  # 2024-11-05 has no lastModified and no block _meta.
  expect_equal(wire(b, "2024-11-05"), list(
    type = "text", text = "hi", annotations = list(audience = list("user"), priority = 0.5, custom = TRUE)
  ))
  expect_error(content_text("x", annotations = NULL), "`annotations` must be a named JSON object.", fixed = TRUE)
  expect_error(content_text("x", annotations = list(1)), "`annotations` must be a named JSON object.", fixed = TRUE)
  expect_error(content_text("x", annotations = list(lastModified = "x")),
    "Use the R-facing annotation name `last_modified`, not `lastModified`.", fixed = TRUE)
  for (bad in list(character(), "robot", list("user"), c("user", NA))) {
    expect_error(content_text("x", annotations = list(audience = bad)),
      "`annotations$audience` must contain only `user` and `assistant`.", fixed = TRUE)
  }
  for (bad in list(-0.1, 1.5, "1", c(0.1, 0.2), NA_real_)) {
    expect_error(content_text("x", annotations = list(priority = bad)),
      "`annotations$priority` must be a number from 0 to 1.", fixed = TRUE)
  }
  expect_error(content_text("x", annotations = list(last_modified = 1)),
    "`annotations$last_modified` must be a single string.", fixed = TRUE)
  expect_error(content_text("x", annotations = list(f = function() 1)), "`annotations` must be JSON serializable")
  expect_error(content_text("x", meta = NULL), "`meta` must be a named JSON object.", fixed = TRUE)
  expect_error(content_text("x", meta = list(e = new.env())), "`meta` must be JSON serializable")
})

test_that("blocks carry mcplite's class names too", {
  blocks <- list(
    text = content_text("hi"), image = content_image("AA", "image/png"),
    audio = content_audio("AA", "audio/wav"), resource_link = content_resource_link("u:x", "x"),
    resource = content_resource("u:x", text = "t")
  )
  for (type in names(blocks)) {
    expect_true(inherits(blocks[[type]], "mcplite_content"))
    expect_true(inherits(blocks[[type]], paste0("mcplite_content_", type)))
    expect_true(inherits(blocks[[type]], paste0("mcpserver_content_", type)))
  }
  expect_output(print(blocks$text), '<content_text> "hi"', fixed = TRUE)
})
