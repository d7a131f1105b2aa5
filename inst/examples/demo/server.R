# An MCP server exposing a few questions about R's built-in mtcars data.
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

column_summary <- function(column) {
  if (!column %in% names(mtcars)) {
    stop("No column named '", column, "'. Columns: ", paste(names(mtcars), collapse = ", "))
  }
  x <- mtcars[[column]]
  list(column = column, mean = mean(x), median = median(x), min = min(x), max = max(x))
}

fastest_cars <- function(n = 3L) {
  cars <- mtcars[order(mtcars$qsec), c("qsec", "hp", "mpg")]
  data.frame(car = rownames(cars), cars, row.names = NULL)[seq_len(n), ]
}

fuel_cost <- function(distance_km, price_per_litre, mpg) {
  litres_per_km <- 235.215 / mpg / 100
  round(distance_km * litres_per_km * price_per_litre, 2)
}

mcp_server(
  list(
    tool(column_summary, "Summary statistics of one column of the mtcars data",
      arguments = list(column = type_enum(names(mtcars), "The column to summarise")),
      output_schema = type_object(
        column = type_string(), mean = type_number(), median = type_number(),
        min = type_number(), max = type_number()
      ),
      annotations = tool_annotations(read_only_hint = TRUE)
    ),
    tool(fastest_cars, "The cars with the quickest quarter-mile times",
      arguments = list(n = type_integer("How many cars", required = FALSE)),
      annotations = tool_annotations(read_only_hint = TRUE)
    ),
    tool(fuel_cost, "Fuel cost of a trip for a car with the given fuel economy",
      arguments = list(
        distance_km = type_number("Trip length in kilometres"),
        price_per_litre = type_number("Fuel price per litre"),
        mpg = type_number("Fuel economy in miles per US gallon")
      )
    )
  ),
  instructions = "Answers questions about the mtcars data set (Motor Trend, 1974).",
  name = "mtcars-demo"
)
