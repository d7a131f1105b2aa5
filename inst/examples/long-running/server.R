# A long-running tool: bootstrap confidence intervals for a regression on
# mtcars. It reports progress as it goes (clients that show progress, or
# reset their timeout on it, stay happy), logs what it does, stops when the
# client cancels, and is bounded by a timeout.
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

bootstrap_slope <- function(formula = "mpg ~ wt", replicates = 2000L) {
  model <- stats::as.formula(formula)
  slopes <- numeric(replicates)
  mcp_log("info", "bootstrapping ", formula, " with ", replicates, " replicates")
  for (i in seq_len(replicates)) {
    rows <- sample(nrow(mtcars), replace = TRUE)
    slopes[i] <- stats::coef(stats::lm(model, data = mtcars[rows, ]))[[2]]
    if (i %% 100 == 0) {
      mcp_progress(i, total = replicates, message = sprintf("%d of %d replicates", i, replicates))
    }
  }
  interval <- stats::quantile(slopes, c(0.025, 0.975), names = FALSE)
  list(formula = formula, replicates = replicates, estimate = mean(slopes),
       lower = interval[[1]], upper = interval[[2]])
}

mcp_server(
  list(
    tool(bootstrap_slope,
      "Bootstrap a 95% confidence interval for the slope of a one-predictor regression on mtcars",
      arguments = list(
        formula = type_string("A formula such as 'mpg ~ wt'", required = FALSE),
        replicates = type_integer("Number of bootstrap replicates", required = FALSE)
      ),
      output_schema = type_object(
        formula = type_string(), replicates = type_integer(),
        estimate = type_number(), lower = type_number(), upper = type_number()
      ),
      timeout = 120
    )
  ),
  name = "bootstrap"
)
