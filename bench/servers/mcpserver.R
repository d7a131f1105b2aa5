# The benchmark's mcpserver peer: the same three tools every peer serves.
# Started by the driver as `Rscript bench/servers/mcpserver.R` with R_LIBS
# pointing at the copy of the package that bench/run.sh installed.
library(mcpserver)

source(file.path("bench", "servers", "tools.R"))  # add(), big_table(), slow()

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
