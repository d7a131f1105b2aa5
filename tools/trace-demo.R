# What a tracing backend receives from a real run, printed as a tree.
#
#   Rscript tools/trace-demo.R [lib] [python]
#
# Starts the test suite's OTLP receiver (tests/testthat/fixtures/
# otlp_receiver.py, which decodes with the official opentelemetry-proto
# package), runs a small server with telemetry on, drives it over stdio
# with the official Python SDK client sending its own `traceparent`, and
# prints the spans received, children under parents, as Jaeger would lay
# them out. vignettes/telemetry.Rmd shows its output. `lib` is where
# mcpserver is installed (`make install`: .lib); `python` has the SDK and
# opentelemetry-proto (`tools/python-clients.sh mcp2`).

`%||%` <- function(x, y) if (is.null(x)) y else x
args <- commandArgs(trailingOnly = TRUE)
lib <- normalizePath(if (length(args) >= 1) args[[1]] else ".lib")
python <- if (length(args) >= 2) args[[2]] else ".cache/clients/python-mcp2/bin/python"
.libPaths(c(lib, .libPaths()))
stopifnot(requireNamespace("mcpserver", quietly = TRUE), file.exists(python))

dir <- tempfile("trace-demo-")
dir.create(dir)
spans_file <- file.path(dir, "spans.jsonl")
env <- c("current", LD_LIBRARY_PATH = "", R_LIBS = paste(.libPaths(), collapse = ":"))
receiver <- processx::process$new(python,
  c("tests/testthat/fixtures/otlp_receiver.py", spans_file, file.path(dir, "metrics.jsonl")),
  stdout = "|", stderr = "|", env = env
)
on.exit(receiver$kill(), add = TRUE)
invisible(receiver$poll_io(10000))
endpoint <- sprintf("http://127.0.0.1:%s", trimws(receiver$read_output_lines(1)))

server <- file.path(dir, "server.R")
writeLines(c(
  "library(mcpserver)",
  "summarise <- tool(function(n) {",
  "  mcp_span_attributes(`app.rows` = n)",
  "  x <- mcp_span('simulate', rnorm(n))",
  "  mcp_span('fit', attributes = list(`app.method` = 'lm'), {",
  "    model <- lm(x ~ 1)",
  "    mcp_span_event('fitted', `app.df` = df.residual(model))",
  "    round(coef(model)[[1]], 4)",
  "  })",
  "}, 'Mean of n normal draws, by lm()', arguments = list(n = type_integer()), name = 'summarise')",
  "fail <- tool(function() stop('no data today'), 'Fails', name = 'fail')",
  sprintf("mcp_server(list(summarise, fail), name = 'demo',
    telemetry = mcp_telemetry(endpoint = '%s', capture = 'arguments'))", endpoint)
), server)

client <- file.path(dir, "client.py")
writeLines(c(
  "import os, sys",
  "import anyio",
  "from mcp import Client, StdioServerParameters",
  "async def main(rscript, script, traceparent):",
  "    server = StdioServerParameters(command=rscript, args=[script], env=dict(os.environ))",
  "    async with Client(server, mode='legacy', read_timeout_seconds=30) as client:",
  "        await client.list_tools()",
  "        meta = {'traceparent': traceparent}",
  "        await client.call_tool('summarise', {'n': 100000}, meta=meta)",
  "        await client.call_tool('fail', {}, meta=meta)",
  "anyio.run(main, *sys.argv[1:])"
), client)

# The client's own span: the parent of the server's spans in one trace.
traceparent <- "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
rscript <- file.path(R.home("bin"), "Rscript")
run <- processx::run(python, c(client, rscript, server, traceparent),
  env = env, error_on_status = FALSE, timeout = 60
)
if (run$status != 0) stop("the client failed:\n", run$stderr)

read_spans <- function() {
  if (!file.exists(spans_file)) return(list())
  lapply(readLines(spans_file, warn = FALSE), jsonlite::fromJSON, simplifyVector = FALSE)
}
deadline <- Sys.time() + 10
repeat {
  spans <- read_spans()
  names <- vapply(spans, function(s) s$name %||% "", "")
  if ("tools/call fail" %in% names || Sys.time() > deadline) break
  Sys.sleep(0.2)
}
kinds <- c("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT")
describe <- function(s, depth) {
  ms <- (as.numeric(s$end_ns) - as.numeric(s$start_ns)) / 1e6
  attrs <- s$attributes
  shown <- vapply(names(attrs), function(k) paste0(k, "=", format(attrs[[k]])), "")
  status <- if (identical(s$status_code, 2L)) paste0("  ERROR: ", s$status_message) else ""
  pad <- strrep("  ", depth)
  cat(sprintf("%s%s  [%s, %.2f ms]%s\n", pad, s$name, kinds[s$kind + 1], ms, status))
  if (length(shown)) for (line in strwrap(paste(shown, collapse = "  "), width = 76)) cat(pad, "    ", line, "\n", sep = "")
  if (length(s$events)) cat(pad, "    events: ", paste(unlist(s$events), collapse = ", "), "\n", sep = "")
}
print_tree <- function(parent, depth) {
  children <- Filter(function(s) identical(s$parent_span_id, parent), spans)
  children <- children[order(vapply(children, function(s) as.numeric(s$start_ns), 0))]
  for (s in children) {
    describe(s, depth)
    print_tree(s$span_id, depth + 1)
  }
}
ids <- vapply(spans, function(s) s$span_id, "")
roots <- unique(vapply(
  Filter(function(s) !(s$parent_span_id %in% ids), spans),
  function(s) s$parent_span_id, ""
))
service <- spans[[1]]$resource[["service.name"]]
cat(sprintf("%d spans received from service %s\n\n", length(spans), service))
for (root in roots) {
  trace <- spans[[match(root, vapply(spans, function(s) s$parent_span_id, ""))]]$trace_id
  cat(sprintf("trace %s, under %s\n", trace,
    if (nzchar(root)) sprintf("the client's span %s", root) else "no parent (a trace of its own)"))
  print_tree(root, 1)
  cat("\n")
}
