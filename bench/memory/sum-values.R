# The server bench/memory/large-message.py measures: one tool whose array
# argument invites a huge message (and, sent the wrong items, a huge number
# of validation problems).
library(mcpserver)
sum_values <- tool(
  function(values) sum(unlist(values)),
  "Sum the values",
  arguments = list(values = type_array(type_number())),
  name = "sum_values"
)
mcp_server(list(sum_values), name = "sum-values")
