# Concurrent tools: calls of `simulate_power` run in worker R processes
# (through the future package), several at once, while the server's own R
# thread answers `dataset_info` straight away. With no future::plan() set,
# the server starts two background R sessions and stops them when it ends.
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

# A helper defined in this script: future ships it to the workers with the tool.
one_trial <- function(n, effect) {
  x <- stats::rnorm(n)
  y <- stats::rnorm(n, mean = effect)
  stats::t.test(x, y)$p.value < 0.05
}

simulate_power <- function(n = 30L, effect = 0.5, trials = 500L) {
  mcp_log("info", "simulating ", trials, " trials with n = ", n)
  hits <- 0
  for (i in seq_len(trials)) {
    hits <- hits + one_trial(n, effect)
    if (i %% 100 == 0) mcp_progress(i, total = trials)
  }
  list(n = n, effect = effect, trials = trials, power = hits / trials)
}

dataset_info <- function() paste("mtcars:", nrow(mtcars), "rows,", ncol(mtcars), "columns")

mcp_server(
  list(
    tool(simulate_power,
      "Estimate the power of a two-sample t-test by simulation",
      arguments = list(
        n = type_integer("Observations per group", required = FALSE),
        effect = type_number("True difference in means, in standard deviations", required = FALSE),
        trials = type_integer("Simulated experiments", required = FALSE)
      ),
      output_schema = type_object(
        n = type_integer(), effect = type_number(), trials = type_integer(), power = type_number()
      ),
      concurrent = TRUE, timeout = 120
    ),
    tool(dataset_info, "Describe the mtcars data set")
  ),
  name = "concurrent", workers = 2
)
