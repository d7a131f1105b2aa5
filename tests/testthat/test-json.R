to_json <- function(x) {
  out <- mcpserver:::json_encode_(x, FALSE)
  if (inherits(out, "mcpserver_rust_error")) stop(out$message, call. = FALSE)
  out
}

test_that("R values map to JSON as the documented table says", {
  cases <- list(
    list(NULL, "null"),
    list(3.5, "3.5"),
    list(pi, "3.141592653589793"),
    list(1 / 3, "0.3333333333333333"),
    list(0.1 + 0.2, "0.30000000000000004"),
    list(12345678.123456, "12345678.123456"),
    list(1e10, "10000000000"),
    list(2^53 + 2, "9007199254740994"),
    list(1e300, "1e300"),
    list(1e-10, "1e-10"),
    list(-0.5, "-0.5"),
    list(2^31, "2147483648"),
    list(NA, "null"),
    list(NA_real_, "null"),
    list(NA_integer_, "null"),
    list(NA_character_, "null"),
    list(NaN, "null"),
    list(c(1, NA, Inf, -Inf), "[1,null,null,null]"),
    list(TRUE, "true"),
    list(c(TRUE, NA, FALSE), "[true,null,false]"),
    list(1:3, "[1,2,3]"),
    list(integer(0), "[]"),
    list(numeric(0), "[]"),
    list(character(0), "[]"),
    list(c(a = 1, b = 2), "[1,2]"),
    list(I(1), "[1]"),
    list(I("a"), '["a"]'),
    list(list(), "[]"),
    list(setNames(list(), character()), "{}"),
    list(list(a = 1, b = NULL), '{"a":1,"b":null}'),
    list(list(a = NA), '{"a":null}'),
    list(list(1, "a"), '[1,"a"]'),
    list(list(label = "x", values = list(1L, 2L)), '{"label":"x","values":[1,2]}'),
    list(factor(c("x", "y", NA)), '["x","y",null]'),
    list(factor("x"), '"x"'),
    list(as.Date("2024-01-02"), '"2024-01-02"'),
    list(as.Date(c("1969-12-31", NA)), '["1969-12-31",null]'),
    list(as.POSIXct("2024-01-02 03:04:05", tz = "UTC"), '"2024-01-02T03:04:05Z"'),
    list(as.POSIXct("2024-01-02 03:04:05.5", tz = "UTC"), '"2024-01-02T03:04:05.5Z"'),
    list(as.POSIXct("2024-07-02 03:04:05", tz = "Europe/Paris"), '"2024-07-02T03:04:05+02:00"'),
    list(as.POSIXlt("2024-01-02 03:04:05", tz = "UTC"), '"2024-01-02T03:04:05Z"'),
    list(as.POSIXlt("2024-01-02 03:04:05", tz = "Etc/UTC"), '"2024-01-02T03:04:05Z"'),
    list(matrix(1:4, 2), "[[1,3],[2,4]]"),
    list(matrix(c("a", "b"), 1), '[["a","b"]]'),
    list(array(1:8, c(2, 2, 2)), "[[[1,5],[3,7]],[[2,6],[4,8]]]"),
    list(data.frame(x = 1:2), '[{"x":1},{"x":2}]'),
    list(data.frame(x = c(1, NA), y = c("a", NA)), '[{"x":1,"y":"a"},{"x":null,"y":null}]'),
    list(data.frame(), "[]"),
    list(data.frame(x = integer(0)), "[]"),
    list(as.raw(c(1, 255)), '"Af8="'),
    list(1 + 2i, '"1+2i"'),
    list("a\"b\\c\nd\te\001", '"a\\"b\\\\c\\nd\\te\\u0001"'),
    list("\u00e9\u4e2d\U0001f600", '"\u00e9\u4e2d\U0001f600"'),
    list(structure('{"already":"json"}', class = "json"), '{"already":"json"}')
  )
  for (case in cases) {
    expect_identical(unclass(to_json(case[[1]])), case[[2]], label = deparse(case[[1]])[1])
  }
})

test_that("the mapper agrees with jsonlite where the design says it should", {
  skip_if_not_installed("jsonlite")
  same <- list(
    NULL, 1L, 1:5, c(0.5, 0.25, -2), "text", c("a", "b"), TRUE, c(TRUE, FALSE),
    list(a = 1L, b = list(c = "x", d = list())), list(1, "a", TRUE), letters,
    factor(c("lo", "hi", "lo")), as.Date(c("2024-01-01", "2025-06-30")),
    matrix(1:6, 2), matrix(c(0.5, 1.5), 1), data.frame(n = 1:3, s = c("a", "b", "c")),
    list(df = data.frame(a = 1:2, b = c(TRUE, FALSE))), as.raw(0:10), I(3L), list(),
    setNames(list(), character()), list(x = NULL), c(x = 1L, y = 2L)
  )
  for (x in same) {
    expected <- as.character(jsonlite::toJSON(x, auto_unbox = TRUE, null = "null", na = "null", digits = NA))
    expect_identical(unclass(to_json(x)), expected, label = deparse(x)[1])
  }
})

test_that("values JSON cannot hold are errors that say where they are", {
  expect_error(to_json(new.env()), "cannot convert an environment to JSON", fixed = TRUE)
  expect_error(to_json(list(model = list(env = new.env()))), "cannot convert an environment to JSON (at `$model$env`)", fixed = TRUE)
  expect_error(to_json(list(1, list(2, mean))), "cannot convert a function to JSON (at `[[2]][[2]]`)", fixed = TRUE)
  expect_error(to_json(y ~ x), "cannot convert a formula to JSON", fixed = TRUE)
  expect_error(to_json(quote(f(x))), "cannot convert a call to JSON", fixed = TRUE)
  expect_error(to_json(list(a = 1, 2)), "has no name")
  expect_error(to_json(list(a = 1, a = 2)), "the name `a` is used twice")
  expect_error(to_json(structure("{oops", class = "json")), "not valid JSON")
  fit <- lm(mpg ~ wt, data = mtcars)
  expect_error(to_json(fit), "cannot convert")
  # An S7 object (ellmer content is S7) is named by its class.
  Thing <- methods::setClass("mcpserverTestThing", representation(x = "numeric"), where = environment())
  s7 <- Thing(x = 1)
  attr(s7, "class") <- c("ellmer::ContentText", "S7_object")
  expect_error(to_json(list(1, s7)), "cannot convert an S7 object (`ellmer::ContentText`) to JSON (at `[[2]]`)", fixed = TRUE)
})

test_that("integer64 values keep every digit", {
  # bit64 stores 64-bit integers in the bits of doubles.
  bits <- function(i) readBin(writeBin(as.integer(c(i, 0L)), raw()), "double")
  x <- structure(bits(7L), class = "integer64")
  expect_identical(unclass(to_json(x)), "7")
})

test_that("large values convert", {
  n <- 1e5
  df <- data.frame(id = seq_len(n), value = seq_len(n) / 7, name = rep(c("a", "b"), n / 2))
  json <- to_json(df)
  back <- jsonlite::fromJSON(json)
  expect_equal(nrow(back), n)
  expect_equal(back$value, df$value)
  expect_length(jsonlite::fromJSON(to_json(rnorm(1000))), 1000)
})

test_that("doubles round-trip exactly through their JSON text", {
  set.seed(1)
  x <- c(rnorm(500), runif(500) * 10^sample(-300:300, 500, replace = TRUE), .Machine$double.xmax, .Machine$double.xmin)
  back <- as.numeric(strsplit(gsub("\\[|\\]", "", to_json(x)), ",")[[1]])
  expect_identical(back, x)
})

test_that("text results follow mcplite's rules", {
  text_of <- function(value) {
    r <- jsonlite::fromJSON(mcpserver:::result_json_for_test_(value, "2025-11-25", FALSE), simplifyVector = FALSE)
    r$content[[1]]$text
  }
  expect_equal(text_of(c("a", "b")), "a\nb")
  expect_equal(text_of(character(0)), "")
  expect_equal(text_of(NA_character_), "NA")
  expect_equal(text_of(NULL), "{}")
  expect_equal(text_of(invisible(NULL)), "{}")
  expect_equal(text_of('{"pre":"serialised"}'), '{"pre":"serialised"}')
  expect_equal(text_of(pi), "3.141592653589793")
  expect_equal(text_of(list(a = 1)), '{"a":1}')
  r <- jsonlite::fromJSON(mcpserver:::result_json_for_test_(new.env(), "2025-11-25", FALSE), simplifyVector = FALSE)
  expect_true(r$isError)
  expect_equal(r$content[[1]]$text, "Failed to convert tool result to text: cannot convert an environment to JSON")
})

test_that("plain values of tools with an output schema become structured content", {
  r <- jsonlite::fromJSON(mcpserver:::result_json_for_test_(list(mean = 2.5, n = 4L), "2025-11-25", TRUE), simplifyVector = FALSE)
  expect_equal(r$structuredContent, list(mean = 2.5, n = 4L))
  expect_equal(r$content[[1]]$text, '{"mean":2.5,"n":4}')
})
