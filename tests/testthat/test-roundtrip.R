decode <- function(text) {
  out <- mcpserver:::json_decode_(text)
  if (inherits(out, "mcpserver_rust_error")) stop(out$message)
  out
}
encode <- function(x) unclass(mcpserver:::json_encode_(x, FALSE))

# A random JSON value whose numbers jsonlite also reads exactly.
random_json <- function(depth = 0) {
  kind <- if (depth > 3) sample(c("num", "int", "str", "bool", "null"), 1) else
    sample(c("num", "int", "str", "bool", "null", "array", "object"), 1)
  switch(kind,
    num = format(round(runif(1, -1e6, 1e6), sample(0:6, 1)), scientific = FALSE, digits = 15),
    int = as.character(sample(-1e6:1e6, 1)),
    str = jsonlite::toJSON(paste(sample(c(letters, "\u00e9", "\u4e2d", "\"", "\\", "\n", " "), sample(0:8, 1), TRUE), collapse = ""), auto_unbox = TRUE),
    bool = sample(c("true", "false"), 1),
    null = "null",
    array = paste0("[", paste(replicate(sample(0:4, 1), random_json(depth + 1)), collapse = ","), "]"),
    object = {
      n <- sample(0:4, 1)
      keys <- make.unique(sample(c("a", "b", "key", "\u00fc", "x y"), n, replace = TRUE), sep = "_")
      values <- replicate(n, random_json(depth + 1))
      paste0("{", paste(sprintf('"%s":%s', keys, values), collapse = ","), "}")
    }
  )
}

test_that("JSON arguments survive JSON -> R -> JSON in mcplite's raw shapes", {
  set.seed(2026)
  for (i in 1:300) {
    text <- random_json()
    back <- encode(decode(text))
    expect_identical(
      jsonlite::fromJSON(back, simplifyVector = FALSE),
      jsonlite::fromJSON(text, simplifyVector = FALSE),
      label = text
    )
  }
  expect_identical(encode(decode("[1]")), "[1]")
  expect_identical(encode(decode("{}")), "{}")
  expect_identical(encode(decode("[]")), "[]")
  expect_identical(encode(decode('{"a":null,"b":[null]}')), '{"a":null,"b":[null]}')
  expect_identical(encode(decode("12345678901")), "12345678901")
  expect_identical(encode(decode("0.1")), "0.1")
})

test_that("raw shapes are mcplite's", {
  expect_identical(decode("3"), 3L)
  expect_identical(decode("3.0"), 3)
  expect_identical(decode("3000000000"), 3e9)
  expect_identical(decode("[1, 2]"), list(1L, 2L))
  expect_identical(decode('{"a": [true]}'), list(a = list(TRUE)))
  expect_identical(decode("{}"), setNames(list(), character()))
  expect_identical(decode("null"), NULL)
  expect_identical(decode('"\\u00e9"'), "\u00e9")
  expect_identical(Encoding(decode('"\\u00e9"')), "UTF-8")
})

test_that("declared types shape arguments, and they map back", {
  f <- function(n, i, s, b, nums, ints, strs, flags, obj, objs, raw, e) NULL
  t <- tool(f, "d", arguments = list(
    n = type_number(), i = type_integer(), s = type_string(), b = type_boolean(),
    nums = type_array(type_number()), ints = type_array(type_integer()),
    strs = type_array(type_string()), flags = type_array(type_boolean()),
    obj = type_object(x = type_number(), tags = type_array(type_string())),
    objs = type_array(type_object(k = type_integer())),
    raw = type_from_schema('{"type":"array","items":{"type":"number"}}'),
    e = type_enum(c("a", "b"))
  ))
  spec <- list(attr(t, "mcpserver_tool"))
  args <- mcpserver:::arguments_for_test_(spec, 1L, paste0(
    '{"n":3,"i":4,"s":"x","b":true,"nums":[1,2.5,null],"ints":[],"strs":["p",null],',
    '"flags":[false],"obj":{"x":1,"tags":["t"],"extra":[1]},"objs":[{"k":1},{"k":2}],"raw":[1,2],"e":"b"}'
  ))
  expect_identical(args$n, 3)
  expect_identical(args$i, 4L)
  expect_identical(args$s, "x")
  expect_identical(args$b, TRUE)
  expect_identical(args$nums, c(1, 2.5, NA))
  expect_identical(args$ints, integer(0))
  expect_identical(args$strs, c("p", NA))
  expect_identical(args$flags, FALSE)
  expect_identical(args$obj, list(x = 1, tags = "t", extra = list(1L)))
  expect_identical(args$objs, list(list(k = 1L), list(k = 2L)))
  expect_identical(args$raw, list(1L, 2L))
  expect_identical(args$e, "b")
  expect_identical(sum(args$nums, na.rm = TRUE), 3.5)
  # Back to JSON: the same values (length-1 vectors become scalars, as in jsonlite).
  expect_identical(encode(args$nums), "[1,2.5,null]")
  expect_identical(encode(args$obj), '{"x":1,"tags":"t","extra":[1]}')
  untyped <- tool(function(nums) NULL, "d", name = "f", arguments = list(nums = type_array(type_number())), convert = FALSE)
  args <- mcpserver:::arguments_for_test_(list(attr(untyped, "mcpserver_tool")), 1L, '{"nums":[1,2]}')
  expect_identical(args$nums, list(1L, 2L))
})

test_that("JSON text R cannot hold (a NUL) is an error naming where it is", {
  out <- mcpserver:::json_decode_('{"a":["ok","b\\u0000"]}')
  expect_s3_class(out, "mcpserver_rust_error")
  expect_identical(out$message, "JSON that R cannot hold: $.a[1]: text with a NUL character (\\u0000), which R strings cannot hold")
  out <- mcpserver:::json_decode_('{"k\\u0000":1}')
  expect_match(out$message, "$.k\\u0000: a name with a NUL character", fixed = TRUE)
  expect_error(type_from_schema('{"type":"string","description":"a\\u0000"}'), "$.description: text with a NUL", fixed = TRUE)
  spec <- list(attr(tool(function(s) NULL, "d", name = "f", arguments = list(s = type_string())), "mcpserver_tool"))
  out <- mcpserver:::arguments_for_test_(spec, 1L, '{"s":"x\\u0000"}')
  expect_identical(out$message, "s: text with a NUL character (\\u0000), which R strings cannot hold")
})
