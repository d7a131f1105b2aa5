# Helpers for the tests of the HTTP client side (mcp_client(url),
# mcp_bridge()): HTTP servers to talk to.

# The python of the official Python SDK's environment (mcp 2.x), made by
# tools/python-clients.sh; `make test` names it in $MCPSERVER_TEST_PYTHON.
python_sdk <- function() {
  python <- Sys.getenv("MCPSERVER_TEST_PYTHON")
  if (!nzchar(python)) {
    python <- test_path("..", "..", ".cache", "clients", "python-mcp2", "bin", "python")
  }
  if (!file.exists(python)) {
    skip("the Python MCP SDK is not installed: run tools/python-clients.sh mcp2 (make test does)")
  }
  # The venv's python is a symbolic link: resolving it would leave the venv.
  file.path(normalizePath(dirname(python)), basename(python))
}

# Reads the port a server process prints on its first line of stdout.
read_port <- function(proc, timeout = 30) {
  deadline <- Sys.time() + timeout
  while (Sys.time() < deadline) {
    proc$poll_io(200)
    line <- proc$read_output_lines(n = 1)
    if (length(line) == 1 && grepl("^[0-9]+$", line)) return(as.integer(line))
    if (!proc$is_alive()) stop("the server exited: ", proc$read_all_error())
  }
  stop("the server printed no port within ", timeout, " seconds")
}

# Waits until `port` accepts connections.
wait_for_port <- function(port, timeout = 30) {
  deadline <- Sys.time() + timeout
  while (Sys.time() < deadline) {
    con <- tryCatch(
      suppressWarnings(socketConnection("127.0.0.1", port, open = "r+b", blocking = TRUE, timeout = 1)),
      error = function(e) NULL
    )
    if (!is.null(con)) {
      close(con)
      return(invisible(TRUE))
    }
    Sys.sleep(0.05)
  }
  stop("nothing listens on port ", port)
}

# Starts the Python SDK's Streamable HTTP server (fixtures/
# python_http_server.py); returns its URL. Killed when `env` ends.
start_python_http_server <- function(json = FALSE, env = parent.frame()) {
  args <- c(fixture("python_http_server.py"), if (json) "--json")
  # R's LD_LIBRARY_PATH would make this python load the system's libpython.
  proc <- processx::process$new(python_sdk(), args,
    stdout = "|", stderr = "|", env = c("current", LD_LIBRARY_PATH = "")
  )
  withr::defer(if (proc$is_alive()) proc$kill(), envir = env)
  port <- read_port(proc)
  wait_for_port(port)
  sprintf("http://127.0.0.1:%d/mcp", port)
}

# Starts `Rscript -e 'mcpserver::mcp_bridge(url, ...)'` as a client would;
# returns a client object for the helpers of helper-server.R.
start_bridge <- function(url, args = "", env = parent.frame()) {
  lib <- paste(.libPaths(), collapse = .Platform$path.sep)
  code <- sprintf("mcpserver::mcp_bridge(%s%s)", deparse(url), args)
  proc <- processx::process$new(
    file.path(R.home("bin"), "Rscript"), c("-e", code),
    stdin = "|", stdout = "|", stderr = "|",
    env = c("current", R_LIBS = lib)
  )
  withr::defer(if (proc$is_alive()) proc$kill(), envir = env)
  new_client(proc)
}
