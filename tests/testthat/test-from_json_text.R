# Large arguments are checked against the input schema without a tree and
# read straight from their JSON text into R values (from_json_text.rs).
# These tests drive that path through its test hook and compare it with the
# path small arguments take (arguments_for_test_): same values, same errors.

spec_of <- function(...) list(attr(tool(function(...) NULL, "d", name = "t", arguments = list(...)), "mcpserver_tool"))

read_text <- function(spec, json) mcpserver:::arguments_from_text_for_test_(spec, 1L, json)
read_small <- function(spec, json) mcpserver:::arguments_for_test_(spec, 1L, json)

test_that("big arrays of numbers, integers, strings and booleans become atomic vectors, null as NA", {
  spec <- spec_of(
    nums = type_array(type_number(nullable = TRUE)), ints = type_array(type_integer(nullable = TRUE)),
    strs = type_array(type_string(nullable = TRUE)), flags = type_array(type_boolean(nullable = TRUE))
  )
  n <- 100000
  json <- paste0(
    '{"nums":[', paste(c(rep("0.5", n), "null", "1e300", "-3"), collapse = ","), "],",
    '"ints":[', paste(c(rep("7", n), "null", "2147483647", "-2147483647", "5.0"), collapse = ","), "],",
    '"strs":[', paste(c(rep('"a"', n), "null", '"\\u00e9\\n\\"q\\"\\\\"', '"\\ud83d\\ude00"'), collapse = ","), "],",
    '"flags":[', paste(c(rep("true", n), "null", "false"), collapse = ","), "]}"
  )
  out <- read_text(spec, json)
  expect_identical(out$read, "text")
  args <- out$arguments
  expect_identical(args$nums, c(rep(0.5, n), NA, 1e300, -3))
  expect_identical(args$ints, c(rep(7L, n), NA, 2147483647L, -2147483647L, 5L))
  expect_identical(args$strs, c(rep("a", n), NA, "\u00e9\n\"q\"\\", "\U0001F600"))
  expect_identical(Encoding(args$strs[[n + 2]]), "UTF-8")
  expect_identical(args$flags, c(rep(TRUE, n), NA, FALSE))
  expect_identical(args, read_small(spec, json))
})

test_that("arrays of objects and nested objects are read as the small path reads them", {
  spec <- spec_of(
    rows = type_array(type_object(x = type_number(), tags = type_array(type_string(), required = FALSE),
                                  more = type_object(y = type_array(type_number(nullable = TRUE)), .required = FALSE))),
    obj = type_object(inner = type_object(k = type_integer()), list = type_array(type_array(type_number())))
  )
  json <- paste0(
    '{"rows":[', paste(rep('{"x":1,"tags":["a","b"]}', 1000), collapse = ","), ',{"x":2.5,"tags":[]}, {"x":3,"more":{"y":[1,null]}}],',
    '"obj":{"inner":{"k":4},"list":[[1,2],[],[3]]}}'
  )
  out <- read_text(spec, json)
  expect_identical(out$read, "text")
  expect_identical(out$arguments, read_small(spec, json))
  expect_identical(out$arguments$rows[[1001]], list(x = 2.5, tags = character(0)))
  expect_identical(out$arguments$rows[[1002]]$more, list(y = c(1, NA)))
  expect_identical(out$arguments$obj$list, list(c(1, 2), numeric(0), 3))
})

test_that("optional nulls are left out, required nullable ones arrive as NA", {
  spec <- spec_of(
    a = type_number(nullable = TRUE), b = type_array(type_number(), required = FALSE), c = type_string(nullable = TRUE)
  )
  json <- '{"a":null,"b":null,"c":"x"}'
  out <- read_text(spec, json)
  # As the engine leaves them out (the small path's hook does not).
  expect_identical(out$arguments, list(a = NA_real_, c = "x"))
})

test_that("integers beyond R's range and NUL characters give up the text path and fail as before", {
  spec <- spec_of(ints = type_array(type_integer()), strs = type_array(type_string()))
  big <- '{"ints":[1,3000000000],"strs":["a"]}'
  out <- read_text(spec, big)
  expect_s3_class(out, "mcpserver_rust_error")
  expect_identical(out$message, "ints[1]: 3000000000 does not fit in an R integer")
  expect_identical(out$message, read_small(spec, big)$message)
  nul <- '{"ints":[1],"strs":["a","b\\u0000"]}'
  out <- read_text(spec, nul)
  expect_identical(out$message, "strs[1]: text with a NUL character (\\u0000), which R strings cannot hold")
  # Beyond 2^31 is fine for numbers: doubles hold it.
  spec <- spec_of(nums = type_array(type_number()))
  out <- read_text(spec, '{"nums":[4294967296,9007199254740993,-1e20]}')
  expect_identical(out$arguments$nums, c(4294967296, 9007199254740992, -1e20))
})

test_that("a name given twice is read whole, the later value winning as before", {
  spec <- spec_of(nums = type_array(type_number()))
  json <- '{"nums":[1],"nums":[2,3]}'
  out <- read_text(spec, json)
  expect_identical(out$read, "whole")
  expect_identical(out$arguments, read_small(spec, json))
  expect_identical(out$arguments$nums, c(2, 3))
})

test_that("wrong types are still refused with the schema's messages", {
  spec <- spec_of(nums = type_array(type_number()), rows = type_array(type_object(x = type_number())))
  out <- read_text(spec, paste0('{"nums":[1,"two",3', strrep(",4", 5000), '],"rows":[{"x":1}]}'))
  expect_s3_class(out, "mcpserver_rust_error")
  expect_match(out$message, "nums[1]: expected a number, got \"two\"", fixed = TRUE)
  out <- read_text(spec, '{"nums":[1],"rows":[{"x":1},{"y":2}]}')
  expect_match(out$message, "rows[1]", fixed = TRUE)
  expect_match(out$message, "x", fixed = TRUE)
  out <- read_text(spec, '{"rows":[]}')
  expect_match(out$message, "nums", fixed = TRUE)
})

test_that("over stdio a large call reaches the tool as an atomic vector, ping answered beside it", {
  skip_on_cran()
  client <- start_server(server_script(c(
    "sum_values <- function(values) c(class(values), sum(values, na.rm = TRUE))",
    "mcp_server(list(tool(sum_values, 'Sum', arguments = list(values = type_array(type_number(nullable = TRUE))))))"
  )))
  initialize(client)
  n <- 300000
  values <- paste(rep(c("1.5", "null", "2"), length.out = n), collapse = ",")
  line <- sprintf(
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sum_values","arguments":{"values":[%s]}}}\n', values
  )
  # A pipe takes a large line in parts.
  rest <- charToRaw(line)
  while (length(rest) > 0) {
    rest <- client$proc$write_input(rest)
    if (length(rest) > 0) Sys.sleep(0.01)
  }
  send(client, list(jsonrpc = "2.0", id = 8, method = "ping"))
  answers <- list(receive(client, timeout = 60), receive(client, timeout = 60))
  ids <- vapply(answers, function(a) a$id, numeric(1))
  expect_setequal(ids, c(7, 8))
  result <- answers[[which(ids == 7)]]$result
  expect_false(isTRUE(result$isError))
  expected <- sum(rep(c(1.5, NA, 2), length.out = n), na.rm = TRUE)
  expect_identical(result$content[[1]]$text, paste("numeric", as.character(expected), sep = "\n"))
  finish(client)
})

test_that("the objects of a big array share one names vector, and changing one changes no other", {
  spec <- spec_of(rows = type_array(type_object(x = type_integer(), y = type_string(required = FALSE))))
  json <- paste0('{"rows":[', paste(rep('{"x":1,"y":"a"}', 2000), collapse = ","), ',{"y":"b","x":2},{"x":3}]}')
  out <- read_text(spec, json)
  expect_identical(out$read, "text")
  rows <- out$arguments$rows
  expect_identical(rows, read_small(spec, json)$rows)
  expect_identical(rows[[2002]], list(x = 3L))
  expect_identical(names(rows[[2001]]), c("y", "x"))
  names(rows[[1]])[1] <- "renamed"
  rows[[2]]$z <- TRUE
  expect_identical(names(rows[[1]]), c("renamed", "y"))
  expect_identical(rows[[2]], list(x = 1L, y = "a", z = TRUE))
  expect_identical(rows[[3]], list(x = 1L, y = "a"))
  expect_identical(names(out$arguments$rows[[1]]), c("x", "y"))
})
