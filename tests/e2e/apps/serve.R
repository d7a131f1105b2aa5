# Serves an example server over Streamable HTTP, as written, for the browser
# test (browser.mjs): its own mcp_server() call gets transport = "http" on
# a free port of 127.0.0.1, which it says on stderr.
#   Rscript tests/e2e/apps/serve.R inst/examples/apps/server.R
script <- commandArgs(trailingOnly = TRUE)[1]
example <- new.env()
example$mcp_server <- function(...) mcpserver::mcp_server(..., transport = "http", port = 0L)
sys.source(script, envir = example, toplevel.env = example)
