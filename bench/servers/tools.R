# The tool functions both R peers serve (bench/servers/mcpserver.R and
# bench/servers/plain-r.R), so their values are the same by construction.

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

# Big arguments: each tool answers with the count it was sent, so the
# answer is small and the time is the server's reading of the message.
count_values <- function(values) length(values)

# Stands in for R computing for a while: the R thread is busy throughout.
slow <- function(seconds) {
  Sys.sleep(seconds)
  "done"
}
