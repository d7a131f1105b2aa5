# Attaching the package, as every server script starts: nothing printed (a
# client keeps the server's stderr in its log, and anything on stdout before
# serving corrupts the protocol), and no function of R masked.

rscript <- function(args, stdin = NULL) {
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  processx::run(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", args),
    stdin = stdin, env = c("current", R_LIBS = lib),
    error_on_status = FALSE, timeout = 60
  )
}

test_that("library(mcpserver) prints nothing", {
  out <- rscript(c("-e", "library(mcpserver)"))
  expect_equal(out$status, 0)
  expect_equal(out$stdout, "")
  expect_equal(out$stderr, "")
})

test_that("a server script whose client leaves at once prints nothing", {
  script <- server_script(c(
    "echo <- function(text) text",
    'mcp_server(tool(echo, "Echo", arguments = list(text = type_string())))'
  ))
  no_input <- withr::local_tempfile()
  file.create(no_input)
  out <- rscript(script, stdin = no_input)
  expect_equal(out$status, 0)
  expect_equal(out$stdout, "")
  expect_equal(out$stderr, "")
})

test_that("no export masks a function of base R or of a recommended package", {
  ours <- getNamespaceExports("mcpserver")
  shipped <- rownames(utils::installed.packages(priority = c("base", "recommended")))
  # tcltk needs a display to load, and exports only tcl*/tk* names. R CMD
  # check --as-cran hides the recommended packages the package does not
  # declare: those that cannot be loaded are left out.
  others <- setdiff(shipped, c("base", "tcltk", "mcpserver"))
  others <- Filter(function(pkg) suppressWarnings(requireNamespace(pkg, quietly = TRUE)), others)
  exports <- c(
    list(base = ls(baseenv(), all.names = TRUE)),
    lapply(stats::setNames(others, others), function(pkg) suppressWarnings(getNamespaceExports(pkg)))
  )
  masked <- Filter(length, lapply(exports, intersect, ours))
  expect_equal(masked, structure(list(), names = character()))
  # What was compared: base R's packages at least.
  expect_true(all(c("stats", "utils", "methods", "graphics", "grDevices") %in% names(exports)))
})
