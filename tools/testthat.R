# Runs the testthat suite against the package installed in the library given
# as the first argument, and prints "COUNTS <passed> <failed> <skipped>"
# (counted per test) for tools/run-tests.sh.
lib <- commandArgs(TRUE)[1]
.libPaths(c(lib, .libPaths()))
# Run everything, including the slower server-process tests.
Sys.setenv(NOT_CRAN = "true")
library(testthat)
library(mcpserver)
results <- testthat::test_dir(
  "tests/testthat",
  package = "mcpserver",
  load_package = "installed",
  reporter = testthat::SummaryReporter$new(show_praise = FALSE),
  stop_on_failure = FALSE,
  stop_on_warning = FALSE
)
df <- as.data.frame(results)
bad <- df$failed > 0 | df$error
skip <- df$skipped & !bad
cat(sprintf("COUNTS %d %d %d\n", sum(!bad & !skip), sum(bad), sum(skip)))
