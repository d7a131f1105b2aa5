# session_tools(): what each tool shows of real objects, help and files,
# called as the R functions they are (the server calls them the same way),
# and run_r_code under each policy.

the <- mcpserver:::the

tools_by_name <- function(...) {
  tools <- session_tools(...)
  names(tools) <- vapply(tools, function(t) attr(t, "mcpserver_tool")$name, "")
  tools
}

local_global <- function(values, env = parent.frame()) {
  for (name in names(values)) assign(name, values[[name]], envir = globalenv())
  withr::defer(rm(list = names(values), envir = globalenv()), envir = env)
}

test_that("list_objects shows each object's class, size and dimensions", {
  local_global(list(
    st_df = data.frame(a = c(1, NA, 3), b = c("x", "y", "z")),
    st_fit = lm(mpg ~ wt, mtcars),
    st_list = list(p = 1, q = "a"),
    st_fun = function(x, y = 2) x + y
  ))
  text <- tools_by_name()$list_objects()
  expect_match(text, "st_df +data.frame +[0-9.]+ [kB]+ +3 x 2")
  expect_match(text, "st_fit +lm +[0-9.]+ kB +length 12")
  expect_match(text, "st_list +list +[0-9]+ B +length 2")
  expect_match(text, "st_fun +function +[0-9.]+ k?B +function\\(x, y\\)")
})

test_that("describe_object shows a data frame's columns, a model's summary, a list's and a function's structure", {
  local_global(list(
    st_df = data.frame(a = c(1, NA, 3), b = c("x", "y", "z"), f = factor(c("u", "v", "u"))),
    st_fit = lm(mpg ~ wt, mtcars),
    st_list = list(p = 1, q = "a"),
    st_fun = function(x, y = 2) x + y
  ))
  describe <- tools_by_name()$describe_object
  df <- describe("st_df")
  expect_match(df, "a data.frame with 3 rows and 3 columns")
  expect_match(df, "a +numeric +1 +min 1, mean 2, max 3")
  expect_match(df, "b +character +0 +3 distinct")
  expect_match(df, "f +factor +0 +2 levels: u, v")
  expect_match(df, "First 3 rows:")
  fit <- describe("st_fit")
  expect_match(fit, "summary\\(\\):")
  expect_match(fit, "Residual standard error")
  expect_match(describe("st_list"), "List of 2\n \\$ p: num 1\n \\$ q: chr \"a\"")
  fun <- describe("st_fun")
  expect_match(fun, "a function of function\\(x, y\\)")
  expect_match(fun, "x + y", fixed = TRUE)
  expect_error(describe("st_nothing_here"), "no object named `st_nothing_here`")
  makeActiveBinding("st_active", function() stop("read!"), globalenv())
  withr::defer(rm("st_active", envir = globalenv()))
  expect_match(describe("st_active"), "active binding: it is not read")
})

test_that("help tools read installed help and search it", {
  tools <- tools_by_name()
  page <- tools$help_page("lm")
  expect_match(page, "Fitting Linear Models")
  expect_match(tools$help_page("mtcars", "datasets"), "Motor Trend")
  expect_error(tools$help_page("no_such_topic_anywhere"), "No help page")
  found <- tools$search_help("linear model")
  expect_match(found, "stats::lm ")
  expect_match(tools$search_help("zzqqxx nothing"), "No help topics match")
})

test_that("packages, session info and the last error are shown", {
  tools <- tools_by_name()
  expect_match(tools$list_packages(), sprintf("stats %s", packageVersion("stats")))
  expect_match(tools$list_packages(TRUE), "Installed packages \\([0-9]+\\)")
  info <- tools$session_info()
  expect_match(info, "R version")
  expect_match(info, getwd(), fixed = TRUE)
  expect_type(tools$last_error(), "character")
})

test_that("current_plot returns the plot as a PNG and leaves the devices alone", {
  tools <- tools_by_name()
  grDevices::pdf(NULL)
  withr::defer(grDevices::dev.off())
  grDevices::dev.control("enable")
  plot(1:10)
  device <- grDevices::dev.cur()
  result <- tools$current_plot()
  expect_false(result$is_error)
  image <- result$content[[2]]
  png <- jsonlite::base64_dec(image$data)
  expect_equal(png[1:4], as.raw(c(0x89, 0x50, 0x4e, 0x47)))
  expect_equal(grDevices::dev.cur(), device)
})

test_that("read_file reads in the working directory only, and long output is cut with a note", {
  folder <- withr::local_tempdir()
  withr::local_dir(folder)
  writeLines(sprintf("line %d", 1:500), "data.txt")
  tools <- tools_by_name()
  text <- tools$read_file("data.txt", 10, 3)
  expect_match(text, "data.txt, lines 10 to 12")
  expect_match(text, "line 10\nline 11\nline 12$")
  expect_match(tools$read_file("."), "data.txt")
  expect_error(tools$read_file("/etc/passwd"), "outside the working directory")
  expect_error(tools$read_file("../x"), "no file|outside")
  small <- tools_by_name(max_output = 1000)
  cut <- small$read_file("data.txt", 1, 500)
  expect_lte(nchar(cut), 1100)
  expect_match(cut, "\\[\\.\\.\\. truncated: the first [0-9]+ of [0-9]+ characters are shown\\]$")
})

test_that("run_r_code is absent by default, and allowed it runs in a scratch environment", {
  expect_false("run_r_code" %in% names(tools_by_name(run_code = "off")))
  local_global(list(st_base = 40))
  withr::defer(the$scratch <- NULL)
  run <- tools_by_name(run_code = "allow")$run_r_code
  result <- run("st_new <- st_base + 2; st_new; message('hi'); warning('careful')")
  expect_false(result$is_error)
  text <- result$content[[1]]$text
  expect_equal(text, paste(
    "> st_new <- st_base + 2", "> st_new", "[1] 42", "> message('hi')", "hi",
    "> warning('careful')", "Warning: careful",
    sep = "\n"
  ))
  # Assignments stay out of the user's workspace, and later calls see them.
  expect_false(exists("st_new", envir = globalenv(), inherits = FALSE))
  expect_match(run("st_new * 2")$content[[1]]$text, "[1] 84", fixed = TRUE)
  expect_match(tools_by_name()$list_objects(), "scratch environment")
  failed <- run("stop('boom'); 1 + 1")
  expect_true(failed$is_error)
  expect_match(failed$content[[1]]$text, "> stop('boom')\nError: boom", fixed = TRUE)
  expect_match(run("f <- function() stop('deep'); f()")$content[[1]]$text, "Error in f(): deep", fixed = TRUE)
  expect_no_match(failed$content[[1]]$text, "[1] 2", fixed = TRUE)
  expect_true(run("(")$is_error)
})

test_that("run_in = 'global' changes the workspace, and plots come back as images", {
  withr::defer(if (exists("st_global", globalenv())) rm("st_global", envir = globalenv()))
  run <- tools_by_name(run_code = "allow", run_in = "global")$run_r_code
  result <- run("st_global <- 1; plot(1:3)")
  expect_true(exists("st_global", envir = globalenv(), inherits = FALSE))
  expect_equal(result$content[[2]]$mime_type, "image/png")
})

test_that("with run_code = 'ask' and nobody to ask, the code is refused and does not run", {
  skip_if(interactive())
  withr::defer(the$scratch <- NULL)
  run <- tools_by_name(run_code = "ask")$run_r_code
  result <- run("st_asked <- 1")
  expect_true(result$is_error)
  expect_match(result$content[[1]]$text, "no way to ask the user")
  expect_null(the$scratch$st_asked)
})
