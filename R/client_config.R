# What MCP clients need to start a server script, and merging it into their
# configuration files (the files themselves: R/client_config_files.R).
# Internal helpers are prefixed `cfg_` (R/mcp_client.R is the R-side test
# client; its helpers are prefixed `client_`).

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
