#' Reach an HTTP MCP server from a client that only starts commands
#'
#' Some MCP clients (Claude Desktop among them) can only start a server as a
#' command and talk to it over the command's stdin and stdout. `mcp_bridge()`
#' is such a command for a server that speaks Streamable HTTP instead, such
#' as one served from your R session with `mcp_server(transport = "http")`,
#' or deployed on a server: it passes every message the client writes to the
#' server, and writes every message the server sends back (answers,
#' progress, logs, the server's own questions) to stdout, one per line,
#' until the client closes stdin. Point the client at
#'
#' ```
#' Rscript -e 'mcpserver::mcp_bridge("http://127.0.0.1:8000/mcp")'
#' ```
#'
#' (with `Rscript`'s absolute path; [mcp_client_config()] writes this entry
#' for you when given a URL).
#'
#' The bridge keeps the session the server assigns (`Mcp-Session-Id`) and
#' sends it, with the protocol version the client and server agreed on, on
#' every request; it opens the session's GET stream for messages the server
#' sends outside any request, if the server offers one; and it resumes a
#' stream that breaks before its answer when the server's event ids allow
#' it. Requests of the 2026-07-28 revision get the routing headers that
#' revision requires (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) and are
#' cancelled, when the client cancels them, by closing their stream. An
#' HTTP failure (the server is down, a 404 for an expired session, a 401)
#' becomes a JSON-RPC error answering the request that met it, so the
#' client is never left waiting.
#'
#' Nothing but the protocol reaches stdout while the bridge runs; problems
#' that answer no request (a notification the server refused) are written
#' to stderr, which clients show in their logs.
#'
#' When stdin ends, the bridge waits up to `grace` seconds for the answers
#' to requests already sent, writes them, ends the session with an HTTP
#' `DELETE` and returns. It returns at once if the client stops reading
#' stdout, and on Ctrl-C.
#'
#' Only plain `http://` URLs are supported: the bridge is meant for servers
#' on the same machine (or reached through an SSH tunnel or a local proxy
#' that adds TLS). Clients that speak HTTP themselves can be given the URL
#' directly.
#'
#' @section Without a URL:
#' `mcp_bridge()` with no `url` connects to an R session you opened that
#' serves with [mcp_session()], found in your session registry: the one
#' whose working directory is the bridge's (the folder the client starts it
#' in) or the nearest ancestor of it, else the newest. It says on stderr
#' which session it reached; the session's instructions and its
#' `session_info` tool tell the model. The bridge adds two tools of its own
#' (answered in its own process, from the registry): `list_r_sessions`, the
#' sessions running with the connected one marked, and `select_r_session`,
#' which connects the client to another session by its process id. The
#' switch starts the new session as the client started the first (its own
#' `initialize`, replayed), lists its tools, and only then sends the
#' client's messages there; its result names the session the tools now work
#' in, and the client is sent `notifications/tools/list_changed` when the
#' new session's tools differ (the answer to `initialize` declares
#' `tools.listChanged` for this). A switch that fails leaves the client
#' where it was. When no session runs, the bridge
#' serves [session_tools()] itself, in its own fresh R process, with a
#' `list_r_sessions` tool and instructions saying that no session was found
#' (so the model learns it from the first answer, not from a hang).
#'
#' @param url The server's MCP endpoint, such as
#'   `"http://127.0.0.1:8000/mcp"`, or `NULL` (the default) for the R
#'   session found in the registry (see Without a URL).
#' @param token A bearer token to send as `Authorization: Bearer <token>`
#'   on every request, or `NULL`. An empty string counts as none. By default
#'   the environment variable `MCP_BEARER_TOKEN`, which a client's
#'   configuration can set for the bridge's process (the `env` of
#'   [mcp_client_config()]), so the token is not written in the command.
#' @param headers More HTTP headers for every request, as a named character
#'   vector, or `NULL`.
#' @param grace At the end of input, how long to wait for answers still due,
#'   in seconds.
#' @param max_message_size The longest message accepted from either side,
#'   in bytes. A longer line from the client is answered with an error and
#'   not sent.
#' @return `NULL`, invisibly, when the client has gone.
#' @seealso [mcp_client_config()] to register the bridge with a client,
#'   [mcp_client()] to call an HTTP server's tools from R.
#' @examples
#' if (FALSE) {
#'   # The command a client starts (in its configuration, with absolute paths):
#'   # Rscript -e 'mcpserver::mcp_bridge("http://127.0.0.1:8000/mcp")'
#'   mcp_bridge("http://127.0.0.1:8000/mcp", token = Sys.getenv("MCP_TOKEN"))
#' }
#' @export
mcp_bridge <- function(url = NULL, token = Sys.getenv("MCP_BEARER_TOKEN"), headers = NULL, grace = 10,
                       max_message_size = 32 * 1024^2) {
  if (is.null(url)) {
    check_bridge_limits(grace, max_message_size)
    dir <- session_dir(create = FALSE)
    session <- session_choose(session_entries(dir))
    if (is.null(session)) return(serve_without_session())
    message(sprintf(
      "mcp_bridge(): reaching the R session of process %d in %s (R %s, started %s).",
      session$pid, session$wd, session$r_version, format(session$started)
    ))
    return(session_bridge(session, dir, max_message_size, grace))
  }
  http <- check_http_options(url, token, headers)
  check_bridge_limits(grace, max_message_size)
  end <- rust(bridge_run_(
    http$url, http$token, http$header_names, http$header_values,
    max_message_size, grace
  ))
  if (identical(end[1], "unanswered")) {
    message(sprintf("mcp_bridge(): %s request(s) still unanswered %s s after the end of input.", end[2], grace))
  } else if (identical(end, "interrupted")) {
    message("mcp_bridge() stopped by an interrupt.")
  }
  invisible(NULL)
}

check_bridge_limits <- function(grace, max_message_size) {
  if (!is_number(grace) || grace < 0) abort("`grace` must be a number of seconds, 0 or more.")
  if (!is_positive_number(max_message_size) || max_message_size < 1024) {
    abort("`max_message_size` must be a number of bytes, at least 1024.")
  }
}
