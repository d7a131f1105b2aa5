# What MCP clients need to start a server script, and merging it into their
# configuration files. Internal helpers are prefixed `cfg_` (R/client.R is
# the R-side test client; its helpers are prefixed `client_`).

#' Register a server with an MCP client
#'
#' @description
#' MCP clients start a server themselves, as a command. `mcp_client_config()`
#' gives the exact configuration a client needs to start the server in
#' `script`, ready to paste. `mcp_client_install()` merges it into the
#' client's configuration file for you, leaving every other entry and setting
#' in that file as it was.
#'
#' The configuration names `Rscript` and the script by their absolute paths.
#' Clients do not read your shell's startup files, so they do not see the
#' `PATH` you see in a terminal (an app started from the macOS Dock or the
#' Windows Start menu sees hardly any of it): a bare `Rscript` may not be
#' found, or may be another installation of R without your packages. They
#' also start servers in a working directory of their own choosing, so a
#' relative path to the script would not resolve.
#'
#' @section Clients:
#' Each client's format, and the file `mcp_client_install()` writes unless
#' `path` is given (`~` is your home folder; project files are looked for in
#' the current working directory, so run it from the project's root folder):
#'
#' - `"claude-desktop"`: Claude Desktop, JSON with an `mcpServers` object.
#'   `~/Library/Application Support/Claude/claude_desktop_config.json` on
#'   macOS; on Windows
#'   `%LOCALAPPDATA%/Packages/Claude_<id>/LocalCache/Roaming/Claude/claude_desktop_config.json`
#'   when that folder exists (current installers package the app, which then
#'   reads its configuration there), otherwise
#'   `%APPDATA%/Claude/claude_desktop_config.json`; on Linux, which has only
#'   unofficial builds, `~/.config/Claude/claude_desktop_config.json`.
#' - `"claude-code"`: Claude Code. `mcp_client_config()` gives a
#'   `claude mcp add` command to run in the project's folder (local scope;
#'   add `--scope user` for every project). `mcp_client_install()` writes the
#'   project's shared `.mcp.json` (`mcpServers`, with `"type": "stdio"`);
#'   Claude Code asks before it starts servers from that file.
#' - `"vscode"`: VS Code, the workspace's `.vscode/mcp.json`, with a
#'   `servers` object whose entries have `"type": "stdio"`.
#' - `"positron"`: Positron, which is built on VS Code and, as far as its
#'   documentation goes, takes MCP servers in VS Code's `mcp.json` format:
#'   the same as `"vscode"`, in the workspace's `.vscode/mcp.json`.
#' - `"cursor"`: Cursor, `~/.cursor/mcp.json` (every project), with an
#'   `mcpServers` object; pass `path = ".cursor/mcp.json"` for one project.
#' - `"codex"`: OpenAI Codex, TOML in `~/.codex/config.toml` (or
#'   `$CODEX_HOME/config.toml`): a `[mcp_servers.<name>]` table with `command`
#'   and `args`, and a `[mcp_servers.<name>.env]` table for `env`.
#' - `"gemini"`: Gemini CLI, `~/.gemini/settings.json`, with an `mcpServers`
#'   object.
#' - `"generic"`: the `mcpServers` JSON most other clients accept; there is
#'   no default file, so `mcp_client_install()` needs `path`.
#'
#' Claude Code and Codex accept only server names made of letters, digits,
#' `-` and `_`; the default name is made to fit (other characters become
#' `-`), for every client alike.
#'
#' @section Servers over HTTP:
#' Give the URL of a Streamable HTTP endpoint instead of a script (such as
#' `"http://127.0.0.1:8000/mcp"`, served by `mcp_server(transport =
#' "http")`, from a live R session or deployed elsewhere). Clients that speak
#' HTTP themselves get an entry with the URL: Claude Code (`"type": "http"`,
#' or `claude mcp add --transport http`), VS Code and Positron (`"type":
#' "http"`), Cursor (`url`), Codex (`url` in the server's table) and Gemini
#' CLI (`httpUrl`). Claude Desktop, and the `"generic"` entry, start commands
#' only: they get the command that runs [mcp_bridge()] for the URL,
#' `Rscript -e 'mcpserver::mcp_bridge("<url>")'`. `bridge = TRUE` gives the
#' bridge command to any client. The default name is made from the URL's
#' host and port (`r-127-0-0-1-8000`). `env` goes to the bridge's process
#' (a bearer token for it in `MCP_BEARER_TOKEN`, say, which [mcp_bridge()]
#' reads by default); clients reaching the URL themselves take tokens in
#' their own settings.
#'
#' @section What `mcp_client_install()` changes:
#' Only the entry for `name`. For JSON files, the file is read, the entry
#' added (or replaced, with `overwrite = TRUE`) under the client's servers
#' object, and the whole file written back indented, with every other key and
#' value kept (formatting and number spelling such as `1.0` may change;
#' comments, which JSON does not allow, make the file invalid and it is left
#' alone). For Codex's TOML, the server's `[mcp_servers.<name>]` and
#' `[mcp_servers.<name>.env]` tables are written as text and the rest of the
#' file is kept byte for byte, including other tables of the server such as
#' per-tool settings (`[mcp_servers.<name>.tools.<tool>]`). Before changing an existing file,
#' a copy is saved next to it as `<file>.<date>-<time>.bak`. A missing file
#' (and its folders) is created. An existing entry of the same name is
#' replaced only with `overwrite = TRUE`; an identical one is left as is. A
#' file that cannot be parsed is an error and is never overwritten.
#'
#' Restart the client (or reload its MCP servers) to start the server.
#'
#' @param script The path of the server script (a file ending in `.R`). It
#'   is made absolute. Or the `http://` URL of a server's Streamable HTTP
#'   endpoint: see the section Servers over HTTP.
#' @param client The client to configure: one of `"claude-desktop"`,
#'   `"claude-code"`, `"vscode"`, `"positron"`, `"cursor"`, `"codex"`,
#'   `"gemini"` or `"generic"`. See the Clients section.
#' @param name The server's name in the client's configuration. Defaults to
#'   the name [mcp_server()] gives the server: the script's file name without
#'   `.R`, or its folder's name for a generic file name such as `server.R`,
#'   `mcp.R` or `main.R`.
#' @param env Environment variables for the server, as a named character
#'   vector, e.g. `c(MCPSERVER_TRACE = "1")` to log every message to stderr
#'   (see [mcp_server()]), or `NULL` for none.
#' @param rscript The path of the `Rscript` program that runs the server.
#'   Defaults to the one of the running R, `file.path(R.home("bin"),
#'   "Rscript")` (`Rscript.exe` on Windows).
#' @param session `TRUE` for the command that reaches your R session
#'   serving with [mcp_session()], `Rscript -e 'mcpserver::mcp_bridge()'`
#'   (give no `script` then): the bridge finds the session when the client
#'   starts it. The default name is `r-session`.
#' @param bridge For a URL: `TRUE` for the command that runs [mcp_bridge()],
#'   `FALSE` for an entry with the URL, or `NULL` for the client's best (the
#'   URL for clients that speak HTTP, the bridge for the others).
#' @param rscript_args Options for `Rscript` itself, put before the script
#'   (or the bridge's `-e`), or `NULL`. `"--no-init-file"` starts R without
#'   your `.Rprofile`, whose output would corrupt the protocol stream (see
#'   "Troubleshooting" in the README).
#' @return `mcp_client_config()`: an object of class `mcpserver_client_config`
#'   that prints the snippet and where it goes: a list with `client`, `name`,
#'   `command` (the path of `Rscript`), `args`, `env`, `url` (for an entry
#'   with a URL, else `NULL`), `entry` (the server's entry as an R list),
#'   `text` (the snippet to paste or run) and `path` (the client's default
#'   configuration file, or `NULL`).
#' @seealso [mcp_server()] for writing the script.
#' @examples
#' script <- file.path(tempdir(), "mtcars.R")
#' writeLines("library(mcpserver)", script)
#' mcp_client_config(script)
#' mcp_client_config(script, "claude-code", env = c(MCPSERVER_TRACE = "1"))
#' mcp_client_config(script, "codex")
#' # Without your .Rprofile, which might print before the server starts:
#' mcp_client_config(script, rscript_args = "--no-init-file")
#'
#' # A server over HTTP, such as mcp_server(transport = "http") serves:
#' mcp_client_config("http://127.0.0.1:8000/mcp", "claude-code")
#' mcp_client_config("http://127.0.0.1:8000/mcp") # Claude Desktop: the bridge
#'
#' # Your own R session, serving with mcp_session():
#' mcp_client_config(client = "claude-code", session = TRUE)
#'
#' # Merge it into a configuration file (here a temporary one):
#' config <- file.path(tempdir(), "claude_desktop_config.json")
#' mcp_client_install(script, "claude-desktop", path = config)
#' cat(readLines(config), sep = "\n")
#' @export
mcp_client_config <- function(script, client = "claude-desktop", name = NULL,
                              env = NULL, rscript = NULL, bridge = NULL, session = FALSE,
                              rscript_args = NULL) {
  client <- cfg_check_client(client)
  rscript_args <- cfg_rscript_args(rscript_args)
  if (!is_flag(session)) abort("`session` must be TRUE or FALSE.")
  if (session) {
    if (!missing(script) || !is.null(bridge)) abort("`session = TRUE` takes no `script` and no `bridge`: the bridge finds the session.")
    name <- if (is.null(name)) "r-session" else cfg_name(name, NULL, client)
    os <- cfg_os()
    return(cfg_new(client, name, cfg_rscript(rscript, os), c(rscript_args, "-e", "mcpserver::mcp_bridge()"), cfg_env(env), os))
  }
  if (is_url(script)) return(cfg_url_config(script, client, name, env, rscript, bridge, rscript_args))
  if (!is.null(bridge)) abort("`bridge` is for a server given by its URL.")
  script <- cfg_script(script)
  name <- cfg_name(name, script, client)
  env <- cfg_env(env)
  os <- cfg_os()
  cfg_new(client, name, cfg_rscript(rscript, os), c(rscript_args, script), env, os)
}

# ---- Servers given by their URL --------------------------------------------

# Clients that reach a Streamable HTTP server themselves, and the key of the
# URL in their entry. The others only start commands: they get the bridge.
cfg_url_keys <- c(
  "claude-code" = "url", "vscode" = "url", "positron" = "url",
  "cursor" = "url", "codex" = "url", "gemini" = "httpUrl"
)

cfg_url_config <- function(url, client, name, env, rscript, bridge, rscript_args = NULL) {
  url <- check_http_options(url, NULL, NULL)$url
  if (grepl("[[:space:]\"'\\\\]", url)) abort("`script` is a URL with spaces, quotes or backslashes in it; percent-encode them.")
  if (!is.null(bridge) && !is_flag(bridge)) abort("`bridge` must be NULL, TRUE or FALSE.")
  speaks_http <- client %in% names(cfg_url_keys)
  bridge <- bridge %||% !speaks_http
  if (!bridge && !speaks_http) {
    abort(sprintf(
      "%s starts servers as commands only; use `bridge = TRUE` (the default for it) to reach the URL through mcp_bridge().",
      cfg_clients[[client]]$label
    ))
  }
  name <- if (is.null(name)) cfg_url_name(url) else cfg_name(name, NULL, client)
  env <- cfg_env(env)
  os <- cfg_os()
  if (bridge) {
    code <- sprintf("mcpserver::mcp_bridge(\"%s\")", url)
    return(cfg_new(client, name, cfg_rscript(rscript, os), c(rscript_args, "-e", code), env, os))
  }
  if (!is.null(env) || !is.null(rscript) || !is.null(rscript_args)) {
    abort("`env`, `rscript` and `rscript_args` are for commands: a client that reaches the URL itself starts nothing.")
  }
  cfg_new(client, name, NULL, NULL, NULL, os, url = url)
}

# A name from the URL's host and port, such as `r-127-0-0-1-8000`.
cfg_url_name <- function(url) {
  authority <- sub("^http://([^/?#]+).*$", "\\1", url)
  name <- gsub("[^A-Za-z0-9_-]+", "-", authority)
  name <- gsub("^-+|-+$", "", name)
  paste0("r-", name)
}

#' @rdname mcp_client_config
#' @param path The configuration file to update, instead of the client's
#'   default (see the Clients section). Required for `"generic"`.
#' @param overwrite Replace an existing server of the same `name`? If
#'   `FALSE` (the default), an existing entry that differs is an error.
#' @return `mcp_client_install()`: the path of the file, invisibly.
#' @export
mcp_client_install <- function(script, client = "claude-desktop", name = NULL,
                               env = NULL, rscript = NULL, path = NULL,
                               overwrite = FALSE, bridge = NULL, session = FALSE,
                               rscript_args = NULL) {
  config <- if (isTRUE(session)) {
    mcp_client_config(
      client = client, name = name, env = env, rscript = rscript,
      session = TRUE, rscript_args = rscript_args
    )
  } else {
    mcp_client_config(script, client,
      name = name, env = env, rscript = rscript, bridge = bridge,
      rscript_args = rscript_args
    )
  }
  if (!isTRUE(overwrite) && !isFALSE(overwrite)) abort("`overwrite` must be TRUE or FALSE.")
  if (is.null(path)) {
    path <- config$path
    if (is.null(path)) abort("Give the `path` of the client's configuration file: the \"generic\" client has no default.")
  } else if (!is_string(path) || !nzchar(path)) {
    abort("`path` must be NULL or the path of a configuration file.")
  }
  path <- path.expand(path)
  if (dir.exists(path)) abort(sprintf("`path` is a folder, not a file: %s", path))
  info <- cfg_clients[[config$client]]
  outcome <- if (info$format == "toml") {
    cfg_install_toml(path, config, overwrite)
  } else {
    cfg_install_json(path, config, info$key, overwrite)
  }
  path <- normalizePath(path, mustWork = FALSE)
  verb <- switch(outcome$status,
    unchanged = "is already registered, unchanged, in",
    added = "added to",
    replaced = "replaced in"
  )
  message(sprintf("Server \"%s\" %s %s", config$name, verb, path))
  if (!is.null(outcome$backup)) {
    message(sprintf("Previous file saved as %s", normalizePath(outcome$backup, mustWork = FALSE)))
  }
  if (outcome$status != "unchanged") {
    message(sprintf("Restart %s (or reload its MCP servers) to start it.", info$label))
  }
  invisible(path)
}

#' @export
format.mcpserver_client_config <- function(x, ...) {
  info <- cfg_clients[[x$client]]
  header <- sprintf("<mcpserver_client_config> %s: server \"%s\"", info$label, x$name)
  if (x$client == "claude-code") {
    project <- cfg_json(list(mcpServers = cfg_named(list(x$entry), x$name)))
    return(c(
      header, "Run in a terminal, in the project's folder:", "", x$text, "",
      "Or add to the project's .mcp.json (mcp_client_install() does this):", "",
      project
    ))
  }
  where <- if (is.null(x$path)) {
    "Add to the client's configuration file:"
  } else {
    sprintf("Add to %s (mcp_client_install() does this):", x$path)
  }
  c(header, where, "", x$text)
}

#' @export
print.mcpserver_client_config <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}

# The name mcp_server() gives a server run from the script `file`: the
# script's name, or its folder's name for a generic name such as `server.R`
# (default_server_name() in R/server.R uses it for the running script).
server_name_for_script <- function(file) {
  stem <- sub("\\.[Rr]$", "", basename(file))
  generic <- c("server", "mcp", "main", "app", "run", "index", "mcp-server", "mcp_server")
  if (tolower(stem) %in% generic) {
    folder <- basename(dirname(normalizePath(file, mustWork = FALSE)))
    if (nzchar(folder) && !folder %in% c(".", "/")) return(folder)
  }
  stem
}

# ---- The clients -----------------------------------------------------------

# `key`: the JSON object holding the servers; `type`: whether entries carry
# "type": "stdio".
cfg_clients <- list(
  "claude-desktop" = list(label = "Claude Desktop", format = "json", key = "mcpServers", type = FALSE),
  "claude-code" = list(label = "Claude Code", format = "json", key = "mcpServers", type = TRUE),
  "vscode" = list(label = "VS Code", format = "json", key = "servers", type = TRUE),
  "positron" = list(label = "Positron", format = "json", key = "servers", type = TRUE),
  "cursor" = list(label = "Cursor", format = "json", key = "mcpServers", type = FALSE),
  "codex" = list(label = "Codex", format = "toml", key = "mcp_servers", type = FALSE),
  "gemini" = list(label = "Gemini CLI", format = "json", key = "mcpServers", type = FALSE),
  "generic" = list(label = "MCP client", format = "json", key = "mcpServers", type = FALSE)
)

cfg_check_client <- function(client) {
  if (!is_string(client) || !client %in% names(cfg_clients)) {
    abort(sprintf(
      "`client` must be one of %s.",
      paste0("\"", names(cfg_clients), "\"", collapse = ", ")
    ))
  }
  client
}

cfg_os <- function() {
  if (.Platform$OS.type == "windows") return("windows")
  if (identical(Sys.info()[["sysname"]], "Darwin")) "macos" else "linux"
}

# The configuration for `client`, from checked values. `os` decides the
# default file and the shell quoting of Claude Code's command.
cfg_new <- function(client, name, command, args, env, os, url = NULL) {
  info <- cfg_clients[[client]]
  entry <- if (is.null(url)) {
    cfg_entry(command, args, env, type = info$type)
  } else {
    cfg_url_entry(url, client, type = info$type)
  }
  text <- if (client == "claude-code") {
    if (is.null(url)) cfg_claude_command(name, command, args, env, os) else cfg_claude_url_command(name, url, os)
  } else if (info$format == "toml") {
    paste(cfg_toml_block(name, command, args, env, url), collapse = "\n")
  } else {
    cfg_json(cfg_named(list(cfg_named(list(entry), name)), info$key))
  }
  structure(
    list(
      client = client, name = name, command = command, args = args, env = env,
      url = url, entry = entry, text = text, path = cfg_default_path(client, os)
    ),
    class = "mcpserver_client_config"
  )
}

# One server's entry. `args` stays a JSON array and `env` an object whatever
# their lengths.
cfg_entry <- function(command, args, env, type = FALSE) {
  entry <- list()
  if (type) entry$type <- "stdio"
  entry$command <- command
  entry$args <- as.list(unname(args))
  if (length(env) > 0) entry$env <- as.list(env)
  entry
}

# The entry of a client that reaches the server's URL itself.
cfg_url_entry <- function(url, client, type = FALSE) {
  entry <- list()
  if (type) entry$type <- "http"
  entry[[cfg_url_keys[[client]]]] <- url
  entry
}

cfg_named <- function(x, names) {
  names(x) <- names
  x
}

cfg_empty_object <- function() cfg_named(list(), character())

cfg_json <- function(x, pretty = TRUE) rust(json_encode_(x, pretty))

# JSON objects decode to named lists (`{}` to a list with empty names);
# arrays to unnamed lists.
cfg_is_object <- function(x) is.list(x) && !is.object(x) && !is.null(names(x))

# ---- Checking arguments ----------------------------------------------------

cfg_script <- function(script) {
  if (!is_string(script) || !nzchar(script)) {
    abort("`script` must be the path of a server script (a single string).")
  }
  if (!file.exists(script) || dir.exists(script)) {
    abort(sprintf("`script` must be an existing file; there is none at %s", script))
  }
  if (!grepl("\\.[Rr]$", script)) {
    abort(sprintf("`script` must be an R script whose name ends in .R: %s", script))
  }
  normalizePath(script, mustWork = TRUE)
}

cfg_name <- function(name, script, client) {
  if (is.null(name)) return(cfg_default_name(script))
  if (!is_string(name) || !nzchar(name)) abort("`name` must be NULL or a non-empty string.")
  if (client %in% c("claude-code", "codex") && !grepl("^[A-Za-z0-9_-]+$", name)) {
    abort(sprintf(
      "%s accepts server names made of letters, digits, `-` and `_` only, not \"%s\".",
      cfg_clients[[client]]$label, name
    ))
  }
  name
}

# The server's name, made to fit every client (Claude Code and Codex accept
# letters, digits, `-` and `_` only).
cfg_default_name <- function(script) {
  name <- gsub("[^A-Za-z0-9_-]+", "-", server_name_for_script(script))
  name <- gsub("^-+|-+$", "", name)
  if (nzchar(name)) name else "r-mcp-server"
}

# Options for Rscript itself, before the script (`--no-init-file`, ...).
cfg_rscript_args <- function(args) {
  if (is.null(args) || (is.character(args) && length(args) == 0)) return(NULL)
  if (!is.character(args) || anyNA(args) || !all(grepl("^--?[A-Za-z]", args))) {
    abort("`rscript_args` must be NULL or a character vector of options for Rscript, such as \"--no-init-file\".")
  }
  unname(args)
}

cfg_env <- function(env) {
  if (is.null(env) || (is.character(env) && length(env) == 0)) return(NULL)
  keys <- names(env)
  if (!is.character(env) || anyNA(env) || is.null(keys) || anyNA(keys) ||
    !all(grepl("^[^=]+$", keys)) || anyDuplicated(keys)) {
    abort("`env` must be NULL or a named character vector of environment variables, such as `c(MCPSERVER_TRACE = \"1\")`, with distinct names.")
  }
  c(env)
}

# Rscript's absolute path. On macOS and Linux symbolic links are kept: on
# macOS R.home() goes through R.framework's Versions/Current link, which
# survives upgrades of R, whereas its target names one version. On Windows
# the path is normalized, which also expands R.home()'s short (8.3) names.
cfg_rscript <- function(rscript, os) {
  if (is.null(rscript)) {
    rscript <- file.path(R.home("bin"), if (os == "windows") "Rscript.exe" else "Rscript")
  } else if (!is_string(rscript) || !nzchar(rscript)) {
    abort("`rscript` must be NULL or the path of the Rscript program.")
  }
  rscript <- path.expand(rscript)
  if (!file.exists(rscript) || dir.exists(rscript)) {
    abort(sprintf(
      "`rscript` must be the path of the Rscript program; there is no file at %s",
      rscript
    ))
  }
  if (os == "windows" || !grepl("^/", rscript)) rscript <- normalizePath(rscript, mustWork = TRUE)
  rscript
}

# ---- Where clients keep their configuration --------------------------------

cfg_home <- function(os) {
  home <- Sys.getenv(if (os == "windows") "USERPROFILE" else "HOME")
  if (nzchar(home)) home else path.expand("~")
}

cfg_default_path <- function(client, os) {
  home <- cfg_home(os)
  switch(client,
    "claude-desktop" = file.path(cfg_claude_desktop_dir(home, os), "claude_desktop_config.json"),
    "claude-code" = file.path(getwd(), ".mcp.json"),
    "vscode" = ,
    "positron" = file.path(getwd(), ".vscode", "mcp.json"),
    "cursor" = file.path(home, ".cursor", "mcp.json"),
    "codex" = {
      codex_home <- Sys.getenv("CODEX_HOME")
      file.path(if (nzchar(codex_home)) codex_home else file.path(home, ".codex"), "config.toml")
    },
    "gemini" = file.path(home, ".gemini", "settings.json"),
    NULL
  )
}

# Claude Desktop keeps its configuration in Electron's user-data folder. On
# Windows, the packaged (MSIX) app, which current installers install, sees
# %APPDATA% redirected into its package folder.
cfg_claude_desktop_dir <- function(home, os) {
  if (os == "macos") return(file.path(home, "Library", "Application Support", "Claude"))
  if (os == "windows") {
    local <- Sys.getenv("LOCALAPPDATA")
    if (nzchar(local)) {
      packaged <- Sys.glob(file.path(local, "Packages", "Claude_*", "LocalCache", "Roaming", "Claude"))
      configured <- packaged[file.exists(file.path(packaged, "claude_desktop_config.json"))]
      if (length(configured) > 0) return(configured[[1]])
      if (length(packaged) > 0) return(packaged[[1]])
    }
    appdata <- Sys.getenv("APPDATA")
    if (!nzchar(appdata)) appdata <- file.path(home, "AppData", "Roaming")
    return(file.path(appdata, "Claude"))
  }
  config <- Sys.getenv("XDG_CONFIG_HOME")
  file.path(if (nzchar(config)) config else file.path(home, ".config"), "Claude")
}

# ---- Claude Code's command line ----------------------------------------------

# The name goes before `--env`: `--env` takes several values and would take
# a name that follows it for one (anthropics/claude-code#46121).
cfg_claude_command <- function(name, command, args, env, os) {
  sh <- function(x) cfg_shell_quote(x, os)
  flags <- if (length(env) > 0) paste("--env", sh(paste0(names(env), "=", env)))
  paste(c("claude mcp add", sh(name), flags, "--", sh(command), sh(args)), collapse = " ")
}

cfg_claude_url_command <- function(name, url, os) {
  sh <- function(x) cfg_shell_quote(x, os)
  paste("claude mcp add --transport http", sh(name), sh(url))
}

# Quotes words for a POSIX shell (macOS, Linux) or for cmd and PowerShell
# (Windows), only where needed.
cfg_shell_quote <- function(x, os) {
  vapply(x, function(word) {
    if (os == "windows") {
      if (nzchar(word) && !grepl("[[:space:]\"&|<>^%!(),;=']", word)) return(word)
      return(paste0("\"", gsub("\"", "\\\"", word, fixed = TRUE), "\""))
    }
    if (grepl("^[A-Za-z0-9_./:=@%+,-]+$", word)) return(word)
    paste0("'", gsub("'", "'\\''", word, fixed = TRUE), "'")
  }, "", USE.NAMES = FALSE)
}

# ---- Reading and writing files -----------------------------------------------

# The file's text, or NULL if there is no file.
cfg_read <- function(path) {
  if (!file.exists(path)) return(NULL)
  bytes <- readBin(path, "raw", n = max(file.info(path)$size, 0))
  if (any(bytes == as.raw(0))) abort(sprintf("Cannot update %s: it is not a text file. It was left unchanged.", path))
  text <- rawToChar(bytes)
  Encoding(text) <- "UTF-8"
  if (!validUTF8(text)) abort(sprintf("Cannot update %s: it is not UTF-8 text. It was left unchanged.", path))
  text
}

# Writes `text` to `path` (in place, so the file keeps its permissions and
# symbolic links stay links), after copying an existing file to a
# timestamped backup. Returns the backup's path, or NULL.
cfg_write <- function(path, text, existed) {
  folder <- dirname(path)
  if (!dir.exists(folder) && !dir.create(folder, recursive = TRUE, showWarnings = FALSE)) {
    abort(sprintf("Cannot create the folder %s", folder))
  }
  backup <- if (existed) cfg_backup(path)
  failed <- function(e) abort(sprintf("Cannot write %s: %s", path, conditionMessage(e)))
  con <- tryCatch(file(path, open = "wb"), error = failed, warning = failed)
  on.exit(close(con))
  writeBin(charToRaw(enc2utf8(text)), con)
  backup
}

cfg_backup <- function(path) {
  stamp <- format(Sys.time(), "%Y%m%d-%H%M%S")
  backup <- paste0(path, ".", stamp, ".bak")
  i <- 1L
  while (file.exists(backup)) {
    backup <- paste0(path, ".", stamp, "-", i, ".bak")
    i <- i + 1L
  }
  if (!file.copy(path, backup, copy.mode = TRUE, copy.date = TRUE)) {
    abort(sprintf("Cannot write a backup of %s at %s; the file was left unchanged.", path, backup))
  }
  backup
}

# ---- JSON files ----------------------------------------------------------------

cfg_install_json <- function(path, config, key, overwrite) {
  old <- cfg_read(path)
  doc <- if (is.null(old) || !nzchar(trimws(old))) cfg_empty_object() else cfg_parse_json(old, path)
  servers <- if (key %in% names(doc) && !is.null(doc[[key]])) doc[[key]] else cfg_empty_object()
  if (!cfg_is_object(servers)) {
    abort(sprintf("Cannot update %s: its \"%s\" is not a JSON object. It was left unchanged.", path, key))
  }
  name <- config$name
  status <- "added"
  if (name %in% names(servers)) {
    same <- identical(
      tryCatch(cfg_json(servers[[name]], FALSE), error = function(e) NULL),
      cfg_json(config$entry, FALSE)
    )
    if (same) return(list(status = "unchanged", backup = NULL))
    if (!overwrite) cfg_refuse(path, name)
    status <- "replaced"
  }
  servers[[name]] <- config$entry
  doc[[key]] <- servers
  text <- tryCatch(cfg_json(doc), mcpserver_error = function(e) {
    abort(sprintf("Cannot update %s: %s. It was left unchanged.", path, conditionMessage(e)))
  })
  backup <- cfg_write(path, paste0(text, "\n"), existed = !is.null(old))
  list(status = status, backup = backup)
}

cfg_parse_json <- function(text, path) {
  doc <- json_decode_(sub("^\ufeff", "", text))
  if (inherits(doc, "mcpserver_rust_error")) {
    abort(sprintf(
      "Cannot update %s: it is not valid JSON (%s; comments and trailing commas are not allowed). It was left unchanged.",
      path, doc$message
    ))
  }
  if (!cfg_is_object(doc)) {
    abort(sprintf("Cannot update %s: it does not hold a JSON object. It was left unchanged.", path))
  }
  doc
}

cfg_refuse <- function(path, name) {
  abort(sprintf(
    "%s already has a server named \"%s\". Use `overwrite = TRUE` to replace it (a backup of the file is kept), or choose another `name`.",
    path, name
  ))
}

# ---- TOML (Codex) ------------------------------------------------------------

# The server's tables, as lines.
cfg_toml_block <- function(name, command, args, env, url = NULL) {
  table <- paste0("mcp_servers.", cfg_toml_key(name))
  if (!is.null(url)) return(c(sprintf("[%s]", table), paste("url =", cfg_toml_string(url))))
  c(
    sprintf("[%s]", table),
    paste("command =", cfg_toml_string(command)),
    paste0("args = [", paste(cfg_toml_string(args), collapse = ", "), "]"),
    if (length(env) > 0) {
      c("", sprintf("[%s.env]", table), paste(cfg_toml_key(names(env)), "=", cfg_toml_string(unname(env))))
    }
  )
}

# TOML basic strings: backslashes, quotes and control characters escaped.
cfg_toml_string <- function(x) {
  x <- enc2utf8(as.character(x))
  x <- gsub("\\", "\\\\", x, fixed = TRUE)
  x <- gsub("\"", "\\\"", x, fixed = TRUE)
  x <- gsub("\n", "\\n", x, fixed = TRUE)
  x <- gsub("\r", "\\r", x, fixed = TRUE)
  x <- gsub("\t", "\\t", x, fixed = TRUE)
  control <- gregexpr("[\001-\010\013\014\016-\037\177]", x)
  regmatches(x, control) <- lapply(regmatches(x, control), function(ch) {
    sprintf("\\u%04X", vapply(ch, utf8ToInt, 1L))
  })
  paste0("\"", x, "\"")
}

cfg_toml_key <- function(x) {
  bare <- grepl("^[A-Za-z0-9_-]+$", x)
  x[!bare] <- cfg_toml_string(x[!bare])
  x
}

cfg_install_toml <- function(path, config, overwrite) {
  name <- config$name
  block <- cfg_toml_block(name, config$command, config$args, config$env, config$url)
  old <- cfg_read(path)
  if (is.null(old) || !nzchar(old)) {
    backup <- cfg_write(path, paste0(paste(block, collapse = "\n"), "\n"), existed = !is.null(old))
    return(list(status = "added", backup = backup))
  }
  bom <- startsWith(old, "\ufeff")
  if (bom) old <- substring(old, 2L)
  ends_with_newline <- endsWith(old, "\n")
  lines <- strsplit(old, "\n", fixed = TRUE)[[1]]
  if (length(lines) == 0) lines <- ""
  crlf <- grepl("\r\n", old, fixed = TRUE)
  clean <- sub("\r$", "", lines)
  statements <- tryCatch(cfg_toml_statements(clean), mcpserver_error = function(e) {
    abort(sprintf(
      "Cannot update %s: it is not valid TOML (%s). It was left unchanged.",
      path, conditionMessage(e)
    ))
  })
  target <- c("mcp_servers", name)
  for (s in statements) {
    if (identical(s$path, "mcp_servers") && s$kind != "table") {
      abort(sprintf(
        "Cannot update %s: it defines `mcp_servers` in a form other than tables (line %d). Add the server by hand:\n%s",
        path, s$start, paste(block, collapse = "\n")
      ))
    }
  }
  # The server's own statements: its table, its env table, and keys that
  # define it from elsewhere with dotted keys (`stats.command = ...` under
  # [mcp_servers]). Its other tables, such as per-tool settings
  # ([mcp_servers.<name>.tools.<tool>]), are kept.
  of_server <- function(path) length(path) >= 2 && identical(path[1:2], target)
  own_table <- function(s) {
    s$kind != "keyval" && of_server(s$path) &&
      (length(s$path) == 2 || (length(s$path) == 3 && s$path[[3]] == "env"))
  }
  matched <- Filter(function(s) {
    if (s$kind != "keyval") return(own_table(s))
    of_server(s$path) && (s$table == 0L || !of_server(statements[[s$table]]$path))
  }, statements)
  if (crlf) block <- paste0(block, "\r")
  if (length(matched) == 0) {
    out <- lines
    if (length(clean) > 0 && nzchar(trimws(clean[length(clean)]))) out <- c(out, if (crlf) "\r" else "")
    out <- c(out, block)
    text <- paste0(paste(out, collapse = "\n"), "\n")
    status <- "added"
  } else {
    # The lines of every statement that defines the server, whole tables
    # from their header to their last value.
    removed <- sort(unique(unlist(lapply(matched, function(s) seq.int(s$start, s$end)))))
    # Runs of blank lines between two of them go too.
    gap <- setdiff(seq.int(min(removed), max(removed)), removed)
    for (run in split(gap, cumsum(c(1L, diff(gap) != 1L)))) {
      if (!any(nzchar(trimws(clean[run])))) removed <- c(removed, run)
    }
    removed <- sort(removed)
    existing <- sub("[[:space:]]+$", "", clean[removed])
    existing <- existing[nzchar(existing) & !startsWith(trimws(existing), "#")]
    wanted <- sub("\r$", "", block)
    if (identical(existing, wanted[nzchar(wanted)])) return(list(status = "unchanged", backup = NULL))
    if (!overwrite) cfg_refuse(path, name)
    first <- matched[[which.min(vapply(matched, `[[`, 1L, "start"))]]
    kept <- lines[-removed]
    if (first$kind != "keyval") {
      at <- first$start - sum(removed < first$start)
      out <- append(kept, block, after = at - 1L)
    } else {
      # Inside another table: the new table goes at the end of the file.
      out <- c(kept, if (length(kept) > 0 && nzchar(trimws(sub("\r$", "", kept[length(kept)])))) "", block)
    }
    text <- paste(out, collapse = "\n")
    if (ends_with_newline || first$kind == "keyval") text <- paste0(text, "\n")
    status <- "replaced"
  }
  if (bom) text <- paste0("\ufeff", text)
  backup <- cfg_write(path, text, existed = TRUE)
  list(status = status, backup = backup)
}

# Splits TOML lines into statements (table headers and key/value pairs), each
# with its full key path, kind ("table", "array" for `[[...]]`, "keyval")
# and first and last line; a table's last line is that of its last value,
# and a key/value pair's `table` is the index of its table (0 for none).
# Values are skipped, not parsed: this is as much of TOML as it takes to
# find where a table is defined. Errors are raised for what it cannot read.
cfg_toml_statements <- function(lines) {
  out <- list()
  table <- character()
  current <- 0L
  i <- 1L
  while (i <= length(lines)) {
    chars <- strsplit(lines[[i]], "")[[1]]
    n <- length(chars)
    p <- cfg_toml_ws(chars, 1L)
    if (p > n || chars[[p]] == "#") {
      i <- i + 1L
      next
    }
    if (chars[[p]] == "[") {
      array <- p < n && chars[[p + 1L]] == "["
      key <- cfg_toml_parse_key(chars, p + 1L + array, i)
      close <- if (array) c("]", "]") else "]"
      p <- key$end
      if (!identical(chars[p:(p + length(close) - 1L)], close)) cfg_toml_fail(i, "a table header that does not end with ]")
      p <- cfg_toml_ws(chars, p + length(close))
      if (p <= n && chars[[p]] != "#") cfg_toml_fail(i, "text after a table header")
      table <- key$parts
      out[[length(out) + 1L]] <- list(kind = if (array) "array" else "table", path = table, start = i, end = i)
      current <- length(out)
      i <- i + 1L
    } else {
      key <- cfg_toml_parse_key(chars, p, i)
      if (key$end > n || chars[[key$end]] != "=") cfg_toml_fail(i, "a key without =")
      end <- cfg_toml_skip_value(lines, i, key$end + 1L)
      out[[length(out) + 1L]] <- list(kind = "keyval", path = c(table, key$parts), start = i, end = end, table = current)
      if (current > 0L) out[[current]]$end <- end
      i <- end + 1L
    }
  }
  out
}

cfg_toml_fail <- function(line, problem) abort(sprintf("line %d: %s", line, problem))

cfg_toml_ws <- function(chars, p) {
  while (p <= length(chars) && chars[[p]] %in% c(" ", "\t")) p <- p + 1L
  p
}

cfg_toml_bare <- c(LETTERS, letters, 0:9, "_", "-")

# A dotted key from position `p`: its parts, and the position after it and
# the blanks that follow.
cfg_toml_parse_key <- function(chars, p, line) {
  n <- length(chars)
  parts <- character()
  repeat {
    p <- cfg_toml_ws(chars, p)
    if (p > n) cfg_toml_fail(line, "a missing key")
    if (chars[[p]] == "\"") {
      s <- cfg_toml_basic_string(chars, p, line)
      parts <- c(parts, s$value)
      p <- s$end
    } else if (chars[[p]] == "'") {
      close <- if (p < n) match("'", chars[(p + 1L):n]) else NA
      if (is.na(close)) cfg_toml_fail(line, "an unterminated quoted key")
      parts <- c(parts, paste(chars[seq_len(close - 1L) + p], collapse = ""))
      p <- p + close + 1L
    } else {
      q <- p
      while (q <= n && chars[[q]] %in% cfg_toml_bare) q <- q + 1L
      if (q == p) cfg_toml_fail(line, sprintf("an unexpected character %s", chars[[p]]))
      parts <- c(parts, paste(chars[p:(q - 1L)], collapse = ""))
      p <- q
    }
    p <- cfg_toml_ws(chars, p)
    if (p <= n && chars[[p]] == ".") {
      p <- p + 1L
      next
    }
    return(list(parts = parts, end = p))
  }
}

# A basic string starting at the quote at `p`, decoded.
cfg_toml_basic_string <- function(chars, p, line) {
  n <- length(chars)
  out <- character()
  q <- p + 1L
  while (q <= n) {
    ch <- chars[[q]]
    if (ch == "\"") return(list(value = paste(out, collapse = ""), end = q + 1L))
    if (ch != "\\") {
      out <- c(out, ch)
      q <- q + 1L
      next
    }
    if (q == n) break
    e <- chars[[q + 1L]]
    simple <- c("\"" = "\"", "\\" = "\\", b = "\b", t = "\t", n = "\n", f = "\f", r = "\r", e = "\033")
    if (e %in% names(simple)) {
      out <- c(out, simple[[e]])
      q <- q + 2L
    } else if (e %in% c("u", "U")) {
      width <- if (e == "u") 4L else 8L
      hex <- paste(chars[q + 1L + seq_len(width)], collapse = "")
      if (!grepl(sprintf("^[0-9A-Fa-f]{%d}$", width), hex)) cfg_toml_fail(line, "a bad \\u escape")
      out <- c(out, intToUtf8(strtoi(hex, 16L)))
      q <- q + 2L + width
    } else {
      cfg_toml_fail(line, sprintf("an unknown escape \\%s", e))
    }
  }
  cfg_toml_fail(line, "an unterminated string")
}

# Skips the value that starts at line `i`, position `p`, through strings,
# multi-line strings, arrays and inline tables; returns its last line.
cfg_toml_skip_value <- function(lines, i, p) {
  depth <- 0L
  mode <- "none"
  start <- i
  repeat {
    chars <- strsplit(lines[[i]], "")[[1]]
    n <- length(chars)
    triple <- function(q, ch) q + 2L <= n && all(chars[q:(q + 2L)] == ch)
    while (p <= n) {
      ch <- chars[[p]]
      if (mode == "none") {
        if (ch == "#") break
        if (ch == "\"" || ch == "'") {
          if (triple(p, ch)) {
            mode <- if (ch == "\"") "multi-basic" else "multi-literal"
            p <- p + 3L
            next
          }
          mode <- if (ch == "\"") "basic" else "literal"
        } else if (ch == "[" || ch == "{") {
          depth <- depth + 1L
        } else if (ch == "]" || ch == "}") {
          depth <- depth - 1L
          if (depth < 0L) cfg_toml_fail(i, sprintf("an unmatched %s", ch))
        }
        p <- p + 1L
      } else if (mode == "basic" || mode == "multi-basic") {
        if (ch == "\\") {
          p <- p + 2L
        } else if (ch == "\"" && mode == "basic") {
          mode <- "none"
          p <- p + 1L
        } else if (ch == "\"" && triple(p, "\"")) {
          # Up to two more quotes belong to the string.
          p <- p + 3L
          while (p <= n && chars[[p]] == "\"") p <- p + 1L
          mode <- "none"
        } else {
          p <- p + 1L
        }
      } else {
        if (ch == "'" && mode == "literal") {
          mode <- "none"
          p <- p + 1L
        } else if (ch == "'" && triple(p, "'")) {
          p <- p + 3L
          while (p <= n && chars[[p]] == "'") p <- p + 1L
          mode <- "none"
        } else {
          p <- p + 1L
        }
      }
    }
    if (mode == "basic" || mode == "literal") cfg_toml_fail(i, "an unterminated string")
    if (mode == "none" && depth == 0L) return(i)
    i <- i + 1L
    p <- 1L
    if (i > length(lines)) cfg_toml_fail(start, "a value that never ends")
  }
}
