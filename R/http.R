#' Settings of a server over HTTP
#'
#' Security and limits of `mcp_server(transport = "http")`. The defaults
#' suit a server on the user's own machine: it listens on 127.0.0.1 only,
#' and answers only requests whose `Host` and `Origin` headers name the
#' machine itself (`localhost`, `127.0.0.1`, `[::1]`, any port), which is
#' what stops a web page in the user's browser from reaching it through a
#' DNS name it controls (DNS rebinding). A request with another `Origin` is
#' refused with 403, one with another `Host` with 421.
#'
#' To serve other machines, bind another `host` in [mcp_server()] and name
#' the host names clients use in `allowed_hosts`; the server refuses to
#' start on a non-loopback address without them. Web pages may then call it
#' from the machine itself only, unless `allowed_origins` names their
#' origins (clients that are not web pages send no `Origin`). Behind a
#' reverse proxy that checks them itself, `"*"` switches a check off.
#'
#' With `bearer_tokens`, every request to the endpoint must carry
#' `Authorization: Bearer <token>` with one of them; others get 401 with a
#' `WWW-Authenticate` challenge. Give `resource` (the endpoint's public
#' URL) and `authorization_servers` to also serve RFC 9728 protected-resource
#' metadata at `/.well-known/oauth-protected-resource` (and the same with
#' the endpoint's path appended) and name it in the challenge, for clients
#' that obtain tokens through OAuth.
#'
#' `bearer_tokens` may instead be a function of one argument, the token,
#' that says whether to accept it: `TRUE` or `FALSE`, or a named list
#' describing who holds it (a user name, scopes, ...), which accepts it and
#' which tools read as `mcp_request()$auth`. It runs in R's main thread,
#' like a tool, so it may query a database or an identity provider; its
#' verdict on each token is remembered for `bearer_cache` seconds (by the
#' token's hash; tokens are never stored or logged), so a client's later
#' requests are not held up by it. While the function has not answered,
#' requests with that token wait: at most `bearer_timeout` seconds (the
#' function is interrupted then, and the request gets 503 with
#' `Retry-After`), including time spent waiting for a tool call R is busy
#' with. An error in the function answers 500 (and is reported on stderr,
#' with the token, or any piece of it the message quotes, masked); neither
#' outcome is remembered. Return `FALSE` only for tokens known to be bad:
#' the refusal is remembered too. A session stays bound to the token that
#' opened it: a request with another token does not find it (404).
#'
#' Anyone can send a made-up token, so checks never hold up the callers
#' whose tokens are known: tool calls go first, checks run when no call
#' waits (or, while calls keep R busy, in at most a fifth of its time), a
#' check that holds R for more than a quarter of a second while calls wait
#' is interrupted (its client gets 503 and retries), R is given one check
#' at a time, taken in turn from each client address that has some
#' waiting, and one address has at most `bearer_checks_per_peer` new
#' tokens waiting or being checked at once (429 beyond).
#'
#' A 2026-07-28 task belongs to whoever created it: requests from anyone
#' else get what an unknown task id gets. With a function that returns a
#' named list, that list is the owner, so every token it describes the
#' same way (a refreshed token of the same user) reaches the same tasks:
#' return what names the holder, nothing that changes from token to token
#' (such as an expiry). With fixed tokens, or a function that returns
#' `TRUE`, each token is its own owner.
#'
#' @param allowed_hosts Host names (optionally with `:port`) accepted in the
#'   `Host` header, `"*"` for any, or `NULL` for the loopback names.
#' @param allowed_origins Origins (`https://app.example.com`) or host names
#'   accepted in the `Origin` header, `"*"` for any, or `NULL` for loopback
#'   origins. Requests without `Origin` (not sent from a web page) pass.
#' @param bearer_tokens Tokens accepted in `Authorization: Bearer`, a
#'   function `function(token)` that checks them (see above), or `NULL` for
#'   no authentication.
#' @param bearer_cache With a function in `bearer_tokens`, how many seconds
#'   its verdict on a token is remembered; `0` asks it on every request.
#' @param bearer_timeout With a function in `bearer_tokens`, how many
#'   seconds a request waits for its verdict.
#' @param bearer_checks_per_peer With a function in `bearer_tokens`, how
#'   many tokens it has not seen one client address may have checked at
#'   once (429 beyond). A client has one token at a time; raise this when
#'   many users share an address (behind NAT or a proxy that hides theirs).
#' @param resource The endpoint's canonical URL (e.g.
#'   `"https://mcp.example.com/mcp"`) for protected-resource metadata, or
#'   `NULL` to serve none.
#' @param authorization_servers URLs of the OAuth authorization servers
#'   that issue tokens for `resource`.
#' @param max_body_size Largest request body in bytes (413 beyond).
#' @param max_header_size Largest request head in bytes (431 beyond).
#' @param max_sessions Most handshake-era sessions open at once. When full,
#'   the least recently used idle session (no call running, no stream open)
#'   ends to make room (its client gets 404 and starts a new one); with none
#'   idle, another `initialize` gets 503 with `Retry-After`.
#' @param max_sessions_per_client With tokens required, most sessions one
#'   token holder keeps open: one more ends the holder's own least recently
#'   used idle session, or gets 429 if all are busy.
#' @param max_streams Most long-lived event streams open at once: GET
#'   streams (resumed ones included) and 2026-07-28 `subscriptions/listen`
#'   (503 beyond). Other requests end with their answer and are not
#'   counted.
#' @param max_streams_per_client Most long-lived streams one client keeps
#'   open (429 beyond): the token holder with tokens required, else the
#'   client's address (an IPv6 client's /64 network).
#' @param session_timeout Seconds after which a session with no request,
#'   no running call and no open stream ends (its client gets 404 and
#'   starts a new one).
#' @param task_id_prefix `NULL`, or a short name of this replica (up to 32
#'   letters, digits, `.`, `_` or `-`, such as `"r1-"`) that every task id
#'   starts with. Tasks live in the process that created them; clients name
#'   the task in the `Mcp-Name` header of `tasks/get`, `tasks/update` and
#'   `tasks/cancel`, so a load balancer can send those to the right replica
#'   by this prefix (see `vignette("http")`, "Scaling out").
#' @param max_connections Most connections open at once. When a new one
#'   comes, the connection that has waited longest (for a request, or for
#'   the rest of its body; half a second at least) is closed to make room, so
#'   idle connections or stalled bodies (hundreds of them) never keep a
#'   client out; only when no connection has waited that long does the new
#'   one wait. At most half the process's limit on open files (`ulimit -n`)
#'   is used, so that connections never take the files the rest of R needs.
#' @param idle_timeout Seconds a connection may stay open without sending a
#'   complete request head: after it opens, or after its last answer. Behind
#'   a reverse proxy that keeps connections to the server open, make it
#'   longer than the proxy's own keep-alive timeout.
#' @param body_timeout Seconds a request's body may take to arrive once its
#'   head is in, plus one second for every 64 KiB received (so a large body
#'   on a slow link gets the time it needs); a body not in by then gets 408
#'   and its connection is closed.
#' @return A list of settings for `mcp_server(http = )`.
#' @seealso `vignette("http")`
#' @examples
#' # A server for other machines on the network, behind a token:
#' opts <- http_options(
#'   allowed_hosts = "mcp.example.com",
#'   bearer_tokens = "a-long-random-secret"
#' )
#' # Tokens checked by a function (it could look them up in a database):
#' known <- c("token-of-ann" = "ann", "token-of-bob" = "bob")
#' opts <- http_options(bearer_tokens = function(token) {
#'   if (token %in% names(known)) list(user = known[[token]]) else FALSE
#' })
#' @export
http_options <- function(allowed_hosts = NULL, allowed_origins = NULL,
                         bearer_tokens = NULL, resource = NULL,
                         authorization_servers = NULL, bearer_cache = 60, bearer_timeout = 10,
                         bearer_checks_per_peer = 4,
                         max_body_size = 4 * 1024^2, max_header_size = 64 * 1024,
                         max_sessions = 100, max_sessions_per_client = 25,
                         max_streams = 256, max_streams_per_client = 32,
                         session_timeout = 30 * 60, task_id_prefix = NULL,
                         max_connections = 512, idle_timeout = 10, body_timeout = 10) {
  check_names <- function(x, arg) {
    if (!is.null(x) && !(is.character(x) && length(x) > 0 && !anyNA(x) && all(nzchar(x)))) {
      abort(sprintf("`%s` must be NULL or a character vector of non-empty strings.", arg))
    }
  }
  check_names(allowed_hosts, "allowed_hosts")
  check_names(allowed_origins, "allowed_origins")
  if (!is.function(bearer_tokens)) {
    check_names(bearer_tokens, "bearer_tokens")
  } else if (length(formals(bearer_tokens)) < 1 && !"..." %in% names(formals(bearer_tokens))) {
    abort("A function in `bearer_tokens` must take one argument, the token.")
  }
  if (!is_number(bearer_cache) || bearer_cache < 0) abort("`bearer_cache` must be a number of seconds, 0 or more.")
  if (!is_positive_number(bearer_timeout)) abort("`bearer_timeout` must be a positive number of seconds.")
  check_names(authorization_servers, "authorization_servers")
  if (!is.null(resource) && !(is_string(resource) && grepl("^https?://", resource))) {
    abort("`resource` must be NULL or the endpoint's URL (http:// or https://).")
  }
  if (!is.null(authorization_servers) && is.null(resource)) {
    abort("`authorization_servers` needs `resource`, the endpoint's URL they issue tokens for.")
  }
  check_count <- function(x, arg, min = 1) {
    if (!is_number(x) || x < min || x != round(x)) {
      abort(sprintf("`%s` must be a whole number, at least %s.", arg, format(min)))
    }
  }
  check_count(max_body_size, "max_body_size", 1024)
  check_count(max_header_size, "max_header_size", 8192)
  check_count(bearer_checks_per_peer, "bearer_checks_per_peer")
  check_count(max_sessions, "max_sessions")
  check_count(max_sessions_per_client, "max_sessions_per_client")
  check_count(max_streams, "max_streams")
  check_count(max_streams_per_client, "max_streams_per_client")
  if (!is_positive_number(session_timeout)) abort("`session_timeout` must be a positive number of seconds.")
  check_count(max_connections, "max_connections")
  if (!is_positive_number(idle_timeout)) abort("`idle_timeout` must be a positive number of seconds.")
  if (!is_positive_number(body_timeout)) abort("`body_timeout` must be a positive number of seconds.")
  if (!is.null(task_id_prefix) && !(is_string(task_id_prefix) && grepl("^[A-Za-z0-9._-]{1,32}$", task_id_prefix))) {
    abort("`task_id_prefix` must be NULL or up to 32 letters, digits, `.`, `_` or `-`, such as \"r1-\".")
  }
  structure(
    list(
      allowed_hosts = allowed_hosts, allowed_origins = allowed_origins,
      bearer_tokens = bearer_tokens, resource = resource,
      authorization_servers = authorization_servers,
      bearer_cache = bearer_cache, bearer_timeout = bearer_timeout,
      bearer_checks_per_peer = bearer_checks_per_peer,
      max_body_size = max_body_size, max_header_size = max_header_size,
      max_sessions = max_sessions, max_sessions_per_client = max_sessions_per_client,
      max_streams = max_streams, max_streams_per_client = max_streams_per_client,
      session_timeout = session_timeout, task_id_prefix = task_id_prefix,
      max_connections = max_connections, idle_timeout = idle_timeout,
      body_timeout = body_timeout
    ),
    class = "mcpserver_http_options"
  )
}

#' @export
print.mcpserver_http_options <- function(x, ...) {
  cat("<mcpserver HTTP options>\n")
  shown <- unclass(x)
  # Tokens are secrets: counted, never printed.
  if (is.function(shown$bearer_tokens)) {
    shown$bearer_tokens <- "<checked by a function>"
  } else if (!is.null(shown$bearer_tokens)) {
    shown$bearer_tokens <- sprintf("<%d token(s)>", length(shown$bearer_tokens))
  }
  for (name in names(shown)) {
    value <- if (is.null(shown[[name]])) "default" else paste(format(shown[[name]]), collapse = ", ")
    cat(sprintf("  %s: %s\n", name, value))
  }
  invisible(x)
}

# The listening address settings, checked; `http` merged in for Rust.
http_settings <- function(host, port, path, http) {
  if (!is_string(host) || !nzchar(host)) abort("`host` must be a host name or IP address.")
  if (!is_number(port) || port < 0 || port > 65535 || port != round(port)) {
    abort("`port` must be a whole number from 0 (any free port) to 65535.")
  }
  if (!is_string(path) || !grepl("^/[^?#[:space:]]*$", path)) {
    abort("`path` must start with `/`, without query, fragment or spaces, e.g. \"/mcp\".")
  }
  if (!inherits(http, "mcpserver_http_options")) abort("`http` must be made with http_options().")
  if (!is_loopback_host(host) && is.null(http$allowed_hosts)) {
    abort(sprintf(paste(
      "`host = \"%s\"` lets other machines reach the server, so it must know the names they reach",
      "it by (a check that stops DNS rebinding): give them with",
      "`http = http_options(allowed_hosts = \"mcp.example.com\")`, or `allowed_hosts = \"*\"` behind",
      "a reverse proxy that checks the Host header itself. See ?http_options."
    ), host))
  }
  settings <- c(list(host = host, port = port, path = path), unclass(http))
  # A function is run as a hidden handler (see token_check_entry()): Rust
  # gets its registry index instead, added by mcp_server().
  if (is.function(settings$bearer_tokens)) settings$bearer_tokens <- NULL
  settings
}

# Addresses only this machine can reach. Any other host, a name included
# (even one that resolves to 127.0.1.1), is reached by names the default
# Host check does not know.
is_loopback_host <- function(host) {
  tolower(host) %in% c("localhost", "::1", "[::1]") || grepl("^127\\.[0-9]+\\.[0-9]+\\.[0-9]+$", host)
}

# The hidden handler that runs a token-checking function: its verdict as
# the structured content Rust reads (`{allow, identity?}`, see
# src/rust/mcp-core/src/http/tokens.rs).
token_check_handler <- function(fun) {
  function(token) {
    verdict <- fun(token)
    if (is.list(verdict) && !is.object(verdict) && length(verdict) > 0 && !is.null(names(verdict)) && all(nzchar(names(verdict)))) {
      return(tool_result(structured_content = list(allow = TRUE, identity = verdict)))
    }
    if (!is_flag(verdict)) {
      abort("the bearer token function must return TRUE, FALSE or a named list describing the token's holder")
    }
    tool_result(structured_content = list(allow = verdict))
  }
}

# The hidden tool entry for `http`'s token function, or NULL.
token_check_entry <- function(http) {
  if (!is.function(http$bearer_tokens)) return(NULL)
  check <- tool(token_check_handler(http$bearer_tokens), "Handler of bearer tokens",
    arguments = list(token = type_string()), name = "handler-bearer-tokens",
    timeout = http$bearer_timeout
  )
  # Not a client's request: middleware never runs around it (R/middleware.R).
  attr(check, "mcpserver_route") <- list(method = "token")
  check
}

# The endpoint's URL, from the address the server bound.
http_url <- function(address, path) {
  sprintf("http://%s:%s%s", address[[1]], address[[2]], path)
}
