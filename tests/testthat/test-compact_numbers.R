# Long arrays of small numbers in big arguments are held compactly
# (compact_numbers.rs): an ALTREP vector storing each item, scaled to a
# whole number, in one, two or four bytes. These tests check that R sees an ordinary vector whatever it
# does with it, and that the compact form is used where it should be.

spec_of <- function(...) list(attr(tool(function(...) NULL, "d", name = "t", arguments = list(...)), "mcpserver_tool"))
read_text <- function(spec, json) mcpserver:::arguments_from_text_for_test_(spec, 1L, json)$arguments
read_small <- function(spec, json) mcpserver:::arguments_for_test_(spec, 1L, json)
json_array <- function(x) paste0("[", paste(format(x, scientific = FALSE, trim = TRUE, digits = 15), collapse = ","), "]")
# What R's inspector says of a vector: our class names its state and store.
state_of <- function(x) paste(capture.output(.Internal(inspect(x))), collapse = "\n")

n <- 5000
small <- rep(c(0, 1, -99, 42), length.out = n)
spec <- spec_of(x = type_array(type_number()))
one <- function(values, spec = spec_of(x = type_array(type_number()))) {
  read_text(spec, sprintf('{"x":%s}', json_array(values)))$x
}

test_that("small numbers are stored in the narrowest integer type that holds them all", {
  expect_match(state_of(one(small)), "compact doubles stored as i8, 0 places \\(len=5000\\)")
  expect_match(state_of(one(c(small, -9999))), "compact doubles stored as i16, 0 places")
  expect_match(state_of(one(c(small, 999999999))), "compact doubles stored as i32, 0 places")
  expect_match(state_of(one(c(small, 0.5))), "compact doubles stored as i16, 1 places")
  expect_match(state_of(one(c(small / 100, 1234.5678))), "compact doubles stored as i32, 4 places")
  ints <- spec_of(x = type_array(type_integer()))
  expect_match(state_of(one(as.integer(small), ints)), "compact integers stored as i8")
  expect_match(state_of(one(c(as.integer(small), 1234L), ints)), "compact integers stored as i16")
  # Four-byte integers are what R's own integers take.
  expect_false(grepl("mcpserver", state_of(one(c(as.integer(small), 12345L), ints))))
})

test_that("what is not a long array of whole numbers stays a plain vector", {
  plain <- function(x) expect_false(grepl("mcpserver", state_of(x)))
  plain(one(small[1:1000]))
  plain(one(c(small, 1e10)))
  plain(one(c(small, 12345.12345)))
  plain(read_text(spec, sprintf('{"x":[1e2,%s]}', paste(small, collapse = ",")))$x)
  nullable <- spec_of(x = type_array(type_number(nullable = TRUE)))
  plain(read_text(nullable, sprintf('{"x":[null,%s]}', paste(small, collapse = ",")))$x)
  # -0 is not 0 to a double (1 / -0 is -Inf), so it is not stored as an integer.
  minus_zero <- read_text(spec, sprintf('{"x":[-0,%s]}', paste(small, collapse = ",")))$x
  plain(minus_zero)
  expect_identical(1 / minus_zero[[1]], -Inf)
})

test_that("a compact vector reads as the plain vector the small path makes", {
  json <- sprintf('{"x":%s, "k":[ %s ]}', json_array(small), paste(rev(as.integer(small)), collapse = " , "))
  both <- spec_of(x = type_array(type_number()), k = type_array(type_integer()))
  got <- read_text(both, json)
  expect_identical(got, read_small(both, json))
  expect_identical(typeof(got$x), "double")
  expect_identical(typeof(got$k), "integer")
  expect_identical(got$x[c(1:4, n)], small[c(1:4, n)])
  expect_identical(got$k[[1]], as.integer(small[[n]]))
})

test_that("decimals read back as the very doubles their text stands for", {
  set.seed(25)
  places <- sample(0:5, n, replace = TRUE)
  fractions <- vapply(places, function(k) paste(sample(0:9, k, replace = TRUE), collapse = ""), "")
  text <- paste0(sample(c("", "-"), n, replace = TRUE), sample(1:999, n, replace = TRUE), ifelse(places > 0, ".", ""), fractions)
  text <- c(text, "0.1", "0.2", "0.3", "2.675", "-0.001", "1.50", "0.10", "0", "0.00001")
  json <- sprintf('{"x":[%s]}', paste(text, collapse = ","))
  got <- read_text(spec, json)$x
  expect_match(state_of(got), "compact doubles stored as i32, 5 places")
  expect_identical(got, read_small(spec, json)$x)
  expect_identical(got, as.numeric(text))
})

test_that("summaries read the items without making a plain copy", {
  x <- one(small)
  expect_identical(c(sum(x), mean(x), max(x), min(x), length(x)), c(sum(small), mean(small), 42, -99, n))
  expect_identical(anyNA(x), FALSE)
  expect_identical(x[10:12], small[10:12])
  expect_match(state_of(x), "compact doubles")
})

test_that("arithmetic, writes, copies and attributes behave as on a plain vector", {
  x <- one(small)
  expect_identical(x * 2 + 1, small * 2 + 1)
  # The data pointer was asked for: from now on the plain copy is the vector.
  expect_match(state_of(x), "plain doubles")
  y <- one(small)
  z <- y
  z[2] <- 0.5
  expect_identical(z[1:3], c(0, 0.5, -99))
  expect_identical(y[1:3], c(0, 1, -99))
  names(y) <- paste0("n", seq_len(n))
  copy <- y
  copy[[1]] <- NA
  expect_identical(names(copy), names(y))
  expect_identical(unname(copy[1:2]), c(NA, 1))
  expect_identical(unname(y[[1]]), 0)
  k <- one(as.integer(small), spec_of(x = type_array(type_integer())))
  k[3] <- 7L
  expect_identical(k[1:4], c(0L, 1L, 7L, 42L))
  expect_identical(as.integer(one(small)), as.integer(small))
  expect_identical(sort(one(small))[c(1, n)], c(-99, 42))
})

test_that("base functions give on a compact vector what they give on the plain one", {
  ops <- list(
    rev = rev, drop_first = function(x) x[-1], append = function(x) c(x, 1), unique = unique,
    table = function(x) as.vector(table(x)), order = order, cumsum = cumsum, as_list = function(x) as.list(x)[1:5],
    vapply = function(x) vapply(x, function(v) v * 2, numeric(1)), matrix = function(x) matrix(x, ncol = 4)[2, ],
    dim = function(x) { dim(x) <- c(length(x) / 4, 4); x[2, 3] }, attr = function(x) { attr(x, "a") <- 1; attributes(x) },
    storage_mode = function(x) { storage.mode(x) <- "integer"; x }, set_na = function(x) { x[[2]] <- NA; c(anyNA(x), sum(is.na(x))) },
    grow = function(x) { x[length(x) + 1] <- 1; x }, shorten = function(x) { length(x) <- 10; x },
    split = function(x) lengths(split(x, x > 0)), format = function(x) format(x[1:5]), as_character = as.character,
    range = range, var = var, median = median, quantile = quantile, which_max = which.max, which = function(x) which(x > 10),
    ifelse = function(x) ifelse(x > 0, 1, 0), rle = function(x) rle(x)$lengths, decreasing = function(x) sort(x, decreasing = TRUE),
    cut = function(x) as.vector(table(cut(x, 3))), round = function(x) round(x, 1), trimmed_mean = function(x) mean(x, trim = 0.1),
    in_data_frame = function(x) { d <- data.frame(a = x); d$a[1] <- 7; d$a }, fill = function(x) { y <- x; y[] <- 0; c(sum(y), x[1]) },
    crossprod = function(x) crossprod(x)[1, 1], duplicated = function(x) sum(duplicated(x)), match = function(x) match(x[1:5], x),
    is_unsorted = is.unsorted, equal_to_first = function(x) sum(x == x[1]), xdr_free = function(x) unserialize(serialize(x, NULL, xdr = FALSE))
  )
  set.seed(37)
  decimals <- round(runif(n, -50, 50), 2)
  whole <- as.integer(round(runif(n, -5000, 5000)))
  expect_match(state_of(one(decimals)), "compact doubles stored as i16, 2 places")
  expect_match(state_of(one(whole, spec_of(x = type_array(type_integer())))), "compact integers stored as i16")
  for (name in names(ops)) {
    x <- one(decimals)
    k <- one(whole, spec_of(x = type_array(type_integer())))
    expect_identical(ops[[name]](x), ops[[name]](decimals), label = paste(name, "of compact doubles"))
    expect_identical(ops[[name]](k), ops[[name]](whole), label = paste(name, "of compact integers"))
  }
})

test_that("serialised, it is a plain vector a process without mcpserver reads", {
  skip_if_not_installed("processx")
  x <- one(small)
  file <- withr::local_tempfile(fileext = ".rds")
  saveRDS(list(x = x, k = one(as.integer(small), spec_of(x = type_array(type_integer())))), file)
  code <- sprintf(paste(
    'v <- readRDS("%s")',
    'inspected <- paste(capture.output(.Internal(inspect(v$x))), collapse = " ")',
    'cat(typeof(v$x), typeof(v$k), sum(v$x), sum(v$k), "mcpserver" %%in%% loadedNamespaces(), grepl("mcpserver", inspected))',
    sep = "; "
  ), file)
  out <- processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", code), error_on_status = FALSE)
  expect_identical(out$stderr, "")
  expect_identical(out$stdout, sprintf("double integer %s %s FALSE FALSE", sum(small), sum(small)))
  expect_identical(unserialize(serialize(x, NULL)), small)
})

test_that("a tool gets the compact vector, and a worker a plain one with the same items", {
  skip_on_cran()
  script <- server_script(c(
    "describe <- function(x) paste(sum(x), sum(x[1:4] * 10), grepl('compact', paste(capture.output(.Internal(inspect(x))), collapse = ' ')))",
    "on_worker <- nzchar(Sys.getenv('TEST_WORKERS'))",
    "tools <- list(tool(describe, 'Describe numbers', arguments = list(x = type_array(type_number())), concurrent = on_worker))",
    "mcp_server(tools, workers = if (on_worker) 1L)"
  ))
  expected <- paste(sum(small), sum(small[1:4] * 10))
  client <- start_server(script)
  initialize(client)
  r <- call_tool(client, 1, "describe", list(x = small))
  expect_identical(r$result$content[[1]]$text, paste(expected, "TRUE"))
  finish(client)

  skip_if_not_installed("future", minimum_version = "1.31.0")
  skip_if_not_installed("parallelly")
  client <- start_server(script, extra_env = c(TEST_WORKERS = "1"))
  initialize(client)
  send(client, list(jsonrpc = "2.0", id = 1, method = "tools/call", params = list(name = "describe", arguments = list(x = small))))
  r <- receive(client, timeout = 120)
  expect_identical(r$result$content[[1]]$text, paste(expected, "FALSE"))
  finish(client)
})
