# A tool that may run as a task: a Monte Carlo simulation of a savings plan.
# Clients that support tasks (2025-11-25, or the 2026-07-28 tasks extension)
# get a task handle at once and poll for the result; others get the result
# directly. Progress is reported either way.
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

simulate_savings <- function(monthly = 500, years = 20L, paths = 20000L) {
  months <- years * 12L
  final <- numeric(paths)
  for (chunk in split(seq_len(paths), ceiling(seq_len(paths) / 1000))) {
    returns <- matrix(stats::rnorm(length(chunk) * months, 0.005, 0.04), ncol = months)
    balance <- numeric(length(chunk))
    for (m in seq_len(months)) balance <- (balance + monthly) * (1 + returns[, m])
    final[chunk] <- balance
    mcp_progress(max(chunk), total = paths, message = sprintf("%d of %d paths", max(chunk), paths))
  }
  q <- stats::quantile(final, c(0.1, 0.5, 0.9), names = FALSE)
  list(paid_in = monthly * months, p10 = round(q[1]), median = round(q[2]), p90 = round(q[3]))
}

mcp_server(
  tool(simulate_savings,
    "Simulate the value of a monthly savings plan (10th, 50th and 90th percentiles)",
    arguments = list(
      monthly = type_number("Amount saved each month", required = FALSE),
      years = type_integer("Length of the plan in years", required = FALSE),
      paths = type_integer("Number of simulated paths", required = FALSE)
    ),
    output_schema = type_object(
      paid_in = type_number(), p10 = type_number(), median = type_number(), p90 = type_number()
    ),
    task = "optional", timeout = 600
  ),
  name = "savings-simulator"
)
