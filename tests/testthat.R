library(testthat)
library(mcpserver)

test_check("mcpserver")
