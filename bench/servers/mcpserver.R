# The benchmark's mcpserver peer: the same three tools every peer serves.
# Started by the driver as `Rscript bench/servers/mcpserver.R` with R_LIBS
# pointing at the copy of the package that bench/run.sh installed.
library(mcpserver)

add <- function(x, y) x + y

# The 100,000-row, 10-column table (same values in every peer). Built on the
# first call and kept, so start-up does not pay for it and the timed calls
# measure serialisation and transport only.
table_cache <- NULL
make_table <- function(n = 100000L) {
  i <- seq_len(n)
  data.frame(
    id = i, x1 = i / 3, x2 = i / 7, x3 = sqrt(i), x4 = i * 0.001,
    x5 = (i %% 97L) / 97, x6 = i * 1.5, x7 = 1 / i, x8 = log(i),
    label = paste0("row-", i)
  )
}
big_table <- function() {
  if (is.null(table_cache)) table_cache <<- make_table()
  table_cache
}

# Stands in for R computing for a while: the R thread is busy throughout.
slow <- function(seconds) {
  Sys.sleep(seconds)
  "done"
}

mcp_server(
  list(
    tool(add, "Add two numbers", arguments = list(x = type_number(), y = type_number())),
    tool(big_table, "A 100,000-row table", output_schema = type_array(type_object(
      id = type_integer(), x1 = type_number(), x2 = type_number(), x3 = type_number(),
      x4 = type_number(), x5 = type_number(), x6 = type_number(), x7 = type_number(),
      x8 = type_number(), label = type_string()
    ))),
    tool(slow, "Sleep for a number of seconds", arguments = list(seconds = type_number()))
  ),
  name = "bench-mcpserver"
)
