# Scale-out: two server processes behind a real load balancer (HAProxy,
# started here), balancing request by request. 2026-07-28 needs no
# affinity once the replicas share `request_state_key`; handshake-era
# sessions need sticky routing on Mcp-Session-Id.
skip_on_cran()

haproxy <- function() {
  found <- Sys.which("haproxy")
  if (!nzchar(found) && file.exists("/usr/sbin/haproxy")) found <- "/usr/sbin/haproxy"
  if (!nzchar(found)) skip("haproxy is not installed (tools/install-deps.sh installs the Debian package)")
  found
}

# A replica: tools that say which replica ran them, one that asks a question.
start_replica <- function(replica, key, env = parent.frame(), extra = "") {
  key_option <- if (is.null(key)) "" else sprintf(", request_state_key = '%s'", key)
  server <- start_http_server(c(
    sprintf("replica <- '%s'", replica),
    "whoami <- tool(function() replica, 'Which replica answers', name = 'whoami')",
    "greet <- tool(function() {",
    "  a <- mcp_elicit('Your name?', list(name = type_string()))",
    "  paste0('Hello, ', a$content$name, '! (from ', replica, ')')",
    "}, 'Asks for a name', name = 'greet')",
    "nap <- tool(function() { Sys.sleep(0.2); replica }, 'A task that says where it ran', name = 'nap', task = 'optional')",
    sprintf("mcp_server(list(whoami, greet, nap), transport = 'http', port = 0%s%s)", key_option, extra)
  ), env = env)
  sub("^http://([^/]+)/mcp$", "\\1", server$url)
}

# HAProxy in front of `backends` (host:port), round robin per connection
# (the client opens one per request); `sticky` adds affinity on the
# Mcp-Session-Id header. Returns the balancer's URL.
start_balancer <- function(backends, sticky = FALSE, task_routes = FALSE, env = parent.frame()) {
  dir <- withr::local_tempdir(.local_envir = env)
  for (attempt in 1:20) {
    port <- sample(20000:60000, 1)
    config <- c(
      "defaults",
      "  mode http",
      "  timeout connect 5s",
      "  timeout client 60s",
      "  timeout server 60s",
      "frontend mcp",
      sprintf("  bind 127.0.0.1:%d", port),
      "  default_backend replicas",
      "backend replicas",
      "  balance roundrobin",
      if (sticky) c(
        "  stick-table type string len 128 size 10k expire 30m",
        "  stick on req.hdr(mcp-session-id)",
        "  stick store-response res.hdr(mcp-session-id)"
      ),
      # A task's requests name it in Mcp-Name; its id starts with the
      # prefix of the replica that holds it.
      if (task_routes) sprintf("  use-server r%d if { req.hdr(mcp-name) -m beg r%d- }", seq_along(backends), seq_along(backends)),
      sprintf("  server r%d %s", seq_along(backends), backends)
    )
    path <- file.path(dir, "haproxy.cfg")
    writeLines(config, path)
    proc <- processx::process$new(haproxy(), c("-db", "-f", path), stdout = "|", stderr = "|")
    withr::defer(if (proc$is_alive()) proc$kill(), envir = env)
    ready <- tryCatch({
      wait_for_port(port, timeout = 5)
      TRUE
    }, error = function(e) FALSE)
    if (ready && proc$is_alive()) return(sprintf("http://127.0.0.1:%d/mcp", port))
    if (proc$is_alive()) proc$kill()
  }
  stop("haproxy did not start: ", proc$read_all_error())
}

answers <- function(message, schema) list(action = "accept", content = list(name = "Ada"))

test_that("2026-07-28: calls and input_required retries succeed on either replica with a shared key", {
  haproxy()
  key <- "a-shared-secret-of-the-replicas-0123456789"
  url <- start_balancer(c(start_replica("A", key), start_replica("B", key)))
  client <- mcp_client(url, protocol_version = "2026-07-28", elicit = answers)
  withr::defer(mcp_close(client))
  seen <- vapply(1:6, function(i) mcp_call(client, "whoami")$text, "")
  expect_setequal(seen, c("A", "B"))
  # Each call is two requests (the question, then the retry with the
  # answer), and round robin sends them to different replicas: the
  # replica that answers verifies a state the other one signed.
  for (i in 1:4) {
    r <- mcp_call(client, "greet")
    expect_false(r$is_error)
    expect_match(r$text, "^Hello, Ada! \\(from [AB]\\)$")
  }
})

test_that("without a shared key, a retry that reaches the other replica is refused", {
  haproxy()
  url <- start_balancer(c(start_replica("A", NULL), start_replica("B", NULL)))
  client <- mcp_client(url, protocol_version = "2026-07-28", elicit = answers)
  withr::defer(mcp_close(client))
  outcomes <- vapply(1:4, function(i) {
    tryCatch({
      mcp_call(client, "greet")
      "answered"
    }, mcpserver_protocol_error = function(e) as.character(e$code))
  }, "")
  expect_true(all(outcomes == "-32602"))
})

test_that("handshake-era sessions work through the balancer with affinity on Mcp-Session-Id", {
  haproxy()
  url <- start_balancer(c(start_replica("A", NULL), start_replica("B", NULL)), sticky = TRUE)
  for (i in 1:2) {
    client <- mcp_client(url, protocol_version = "2025-11-25", elicit = answers)
    seen <- unique(vapply(1:4, function(i) mcp_call(client, "whoami")$text, ""))
    expect_length(seen, 1)
    expect_match(mcp_call(client, "greet")$text, sprintf("from %s", seen))
    mcp_close(client)
  }
})

test_that("2026-07-28 tasks reach the replica that holds them by the prefix of their id", {
  haproxy()
  skip_if(!nzchar(Sys.which("curl")), "the curl command is not installed")
  here <- environment()
  replicas <- vapply(1:2, function(i) {
    start_replica(LETTERS[i], NULL, env = here, extra = sprintf(", http = http_options(task_id_prefix = 'r%d-')", i))
  }, "")
  url <- start_balancer(replicas, task_routes = TRUE)
  empty <- setNames(list(), character())
  meta <- list(
    "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities" = list(extensions = list(`io.modelcontextprotocol/tasks` = empty))
  )
  post <- function(id, method, params, name) {
    params$`_meta` <- meta
    headers <- c("MCP-Protocol-Version" = "2026-07-28", "Mcp-Method" = method, "Mcp-Name" = name)
    reply <- curl_request(url, list(jsonrpc = "2.0", id = id, method = method, params = params), headers = headers)
    jsonlite::fromJSON(reply$body, simplifyVector = FALSE)
  }
  tasks <- vapply(1:4, function(i) post(i, "tools/call", list(name = "nap", arguments = empty), "nap")$result$taskId, "")
  # Round robin spreads the calls over both replicas...
  expect_setequal(substr(tasks, 1, 3), c("r1-", "r2-"))
  # ...and every later request of a task reaches the one that holds it.
  for (task in tasks) {
    for (i in 1:100) {
      got <- post(10, "tasks/get", list(taskId = task), task)
      expect_null(got$error)
      if (identical(got$result$status, "completed")) break
      Sys.sleep(0.05)
    }
    expect_equal(got$result$result$content[[1]]$text, if (startsWith(task, "r1-")) "A" else "B")
  }
})
