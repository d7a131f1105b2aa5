# Client configuration: mcp_client_config() and mcp_client_install(). Every
# file written here is in a temporary folder; the real home folder is never
# touched (clients_install() always gets `path`).

# A server script at <tmp>/<folder>/<file>.
clients_script <- function(file = "server.R", folder = "mtcars", env = parent.frame()) {
  dir <- withr::local_tempdir(.local_envir = env)
  path <- file.path(dir, folder, file)
  dir.create(dirname(path), recursive = TRUE)
  writeLines("library(mcpserver)", path)
  normalizePath(path)
}

clients_json <- function(text) jsonlite::fromJSON(text, simplifyVector = FALSE)

clients_read <- function(path) jsonlite::fromJSON(path, simplifyVector = FALSE)

clients_bytes <- function(path) readBin(path, "raw", file.info(path)$size)

clients_write <- function(path, text) writeBin(charToRaw(enc2utf8(text)), path)

clients_backups <- function(path) {
  list.files(dirname(path), pattern = paste0("^", basename(path), "\\..*\\.bak$"), full.names = TRUE)
}

clients_install <- function(...) suppressMessages(mcp_client_install(...))

# TOML text parsed by Python's tomllib (3.11+), as R lists; skips without it.
clients_toml <- function(text) {
  python <- Sys.which("python3")
  if (!nzchar(python) || system2(python, c("-c", shQuote("import tomllib")), stdout = FALSE, stderr = FALSE) != 0) {
    skip("Python 3.11+ (tomllib) is not available to parse TOML")
  }
  file <- tempfile(fileext = ".toml")
  on.exit(unlink(file))
  clients_write(file, text)
  code <- "import sys, json, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))"
  out <- suppressWarnings(system2(python, c("-c", shQuote(code), shQuote(file)), stdout = TRUE, stderr = TRUE))
  if (!is.null(attr(out, "status"))) stop("not valid TOML: ", paste(out, collapse = "\n"))
  jsonlite::fromJSON(paste(out, collapse = ""), simplifyVector = FALSE)
}

clients_rscript <- function() file.path(R.home("bin"), if (.Platform$OS.type == "windows") "Rscript.exe" else "Rscript")

# ---- Names -----------------------------------------------------------------

test_that("the default name is the one mcp_server() gives the server", {
  dir <- withr::local_tempdir()
  cases <- c(
    "mtcars/server.R", "mtcars/mcp.R", "mtcars/MAIN.R", "mtcars/app.r",
    "tools/stats.R", "tools/mcp-server.R", "tools/index.R"
  )
  for (case in cases) {
    path <- file.path(dir, case)
    dir.create(dirname(path), showWarnings = FALSE)
    writeLines("", path)
    # default_server_name() with the script as the running one.
    running <- mcpserver:::default_server_name
    environment(running) <- list2env(list(script_path = function() path), parent = asNamespace("mcpserver"))
    expect_equal(server_name_for_script(path), running(), info = case)
    expect_equal(mcp_client_config(path)$name, running(), info = case)
  }
  expect_equal(server_name_for_script(file.path(dir, "mtcars", "server.R")), "mtcars")
  expect_equal(server_name_for_script(file.path(dir, "tools", "stats.R")), "stats")
})

test_that("default names are made to fit Claude Code and Codex", {
  script <- clients_script("server.R", folder = "My R tools!")
  expect_equal(mcp_client_config(script)$name, "My-R-tools")
  expect_equal(mcp_client_config(script, "codex")$name, "My-R-tools")
  script <- clients_script("model.v2.R")
  expect_equal(mcp_client_config(script)$name, "model-v2")
  script <- clients_script("%%.R")
  expect_equal(mcp_client_config(script)$name, "r-mcp-server")
  # An explicit name is kept as given where the client allows it.
  expect_equal(mcp_client_config(script, name = "My tools")$name, "My tools")
  expect_error(mcp_client_config(script, "claude-code", name = "My tools"), "letters, digits")
  expect_error(mcp_client_config(script, "codex", name = "a.b"), "letters, digits")
})

# ---- Formats -----------------------------------------------------------------

test_that("claude-desktop: mcpServers JSON with absolute paths", {
  script <- clients_script("server.R")
  config <- mcp_client_config(script)
  expect_s3_class(config, "mcpserver_client_config")
  expect_equal(config$client, "claude-desktop")
  expect_equal(config$command, clients_rscript())
  expect_equal(config$args, script)
  doc <- clients_json(config$text)
  expect_equal(doc, list(mcpServers = list(mtcars = list(command = clients_rscript(), args = list(script)))))
  # One argument is still an array, and no env object appears without env.
  expect_match(config$text, "\"args\": [", fixed = TRUE)
  expect_false(grepl("\"env\"", config$text))
  expect_true(grepl("^/|^[A-Za-z]:", config$command))
  expect_true(file.exists(config$command))

  config <- mcp_client_config(script, env = c(MCPSERVER_TRACE = "1", OTHER = "a b"), name = "cars")
  doc <- clients_json(config$text)
  expect_equal(names(doc$mcpServers), "cars")
  expect_equal(doc$mcpServers$cars$env, list(MCPSERVER_TRACE = "1", OTHER = "a b"))
  expect_equal(names(doc$mcpServers$cars), c("command", "args", "env"))
})

test_that("rscript_args go before the script: R starts without the user's profile", {
  script <- clients_script("server.R")
  config <- mcp_client_config(script, rscript_args = "--no-init-file")
  expect_equal(config$args, c("--no-init-file", script))
  expect_equal(clients_json(config$text)$mcpServers$mtcars$args, list("--no-init-file", script))
  code <- mcp_client_config(script, "claude-code", rscript_args = "--no-init-file")$text
  expect_match(code, paste("--no-init-file", script), fixed = TRUE)
  bridge <- mcp_client_config("http://127.0.0.1:8000/mcp", "claude-desktop", rscript_args = "--no-init-file")
  expect_equal(bridge$args[1:2], c("--no-init-file", "-e"))
  expect_error(mcp_client_config("http://127.0.0.1:8000/mcp", "claude-code", rscript_args = "--no-init-file"),
    "are for commands")
  expect_error(mcp_client_config(script, rscript_args = NA), "`rscript_args` must be NULL")
  config <- file.path(withr::local_tempdir(), "claude_desktop_config.json")
  clients_install(script, "claude-desktop", path = config, rscript_args = "--no-init-file")
  expect_equal(clients_read(config)$mcpServers$mtcars$args, list("--no-init-file", script))
})

test_that("vscode and positron: servers with type stdio", {
  script <- clients_script("server.R")
  for (client in c("vscode", "positron")) {
    config <- mcp_client_config(script, client, env = c(A = "1"))
    doc <- clients_json(config$text)
    expect_equal(names(doc), "servers", info = client)
    expect_equal(
      doc$servers$mtcars,
      list(type = "stdio", command = clients_rscript(), args = list(script), env = list(A = "1")),
      info = client
    )
    expect_equal(basename(config$path), "mcp.json")
    expect_equal(basename(dirname(config$path)), ".vscode")
  }
})

test_that("cursor, gemini and generic: mcpServers without type", {
  script <- clients_script("stats.R")
  for (client in c("cursor", "gemini", "generic")) {
    config <- mcp_client_config(script, client)
    doc <- clients_json(config$text)
    expect_equal(doc, list(mcpServers = list(stats = list(command = clients_rscript(), args = list(script)))), info = client)
  }
  expect_null(mcp_client_config(script, "generic")$path)
})

test_that("claude-code: a claude mcp add command, name before --env", {
  script <- clients_script("stats.R")
  config <- mcp_client_config(script, "claude-code")
  q <- function(x) mcpserver:::cfg_shell_quote(x, mcpserver:::cfg_os())
  expect_equal(config$text, paste("claude mcp add stats --", q(clients_rscript()), q(script)))
  config <- mcp_client_config(script, "claude-code", env = c(MCPSERVER_TRACE = "1", B = "x y"))
  expect_equal(
    config$text,
    paste("claude mcp add stats --env MCPSERVER_TRACE=1 --env", q("B=x y"), "--", q(clients_rscript()), q(script))
  )
  expect_equal(config$entry, list(type = "stdio", command = clients_rscript(), args = list(script), env = list(MCPSERVER_TRACE = "1", B = "x y")))
  expect_equal(basename(config$path), ".mcp.json")
})

test_that("command lines are quoted for POSIX shells and for Windows", {
  new <- mcpserver:::cfg_new
  posix <- new(
    "claude-code", "cars", "/opt/R/bin/Rscript", "/home/me/my tools/it's.R",
    c(TOKEN = "a$b"), "linux"
  )
  expect_equal(
    posix$text,
    "claude mcp add cars --env 'TOKEN=a$b' -- /opt/R/bin/Rscript '/home/me/my tools/it'\\''s.R'"
  )
  windows <- new(
    "claude-code", "cars", "C:\\Program Files\\R\\R-4.4.1\\bin\\x64\\Rscript.exe",
    "C:\\Users\\me\\mcp\\server.R", c(MCPSERVER_TRACE = "1"), "windows"
  )
  expect_equal(
    windows$text,
    paste(
      "claude mcp add cars --env \"MCPSERVER_TRACE=1\" --",
      "\"C:\\Program Files\\R\\R-4.4.1\\bin\\x64\\Rscript.exe\" C:\\Users\\me\\mcp\\server.R"
    )
  )
})

test_that("codex: a [mcp_servers.<name>] table and an env table", {
  script <- clients_script("stats.R")
  config <- mcp_client_config(script, "codex")
  toml <- mcpserver:::cfg_toml_string
  expect_equal(config$text, paste0(
    "[mcp_servers.stats]\n",
    "command = ", toml(clients_rscript()), "\n",
    "args = [", toml(script), "]"
  ))
  config <- mcp_client_config(script, "codex", env = c(MCPSERVER_TRACE = "1", `A B` = "x"))
  expect_equal(
    strsplit(config$text, "\n")[[1]][4:7],
    c("", "[mcp_servers.stats.env]", "MCPSERVER_TRACE = \"1\"", "\"A B\" = \"x\"")
  )
  expect_equal(
    clients_toml(config$text),
    list(mcp_servers = list(stats = list(
      command = clients_rscript(), args = list(script), env = list(MCPSERVER_TRACE = "1", `A B` = "x")
    )))
  )
})

test_that("Windows paths and odd characters are escaped in JSON and TOML", {
  command <- "C:\\Program Files\\R\\R-4.4.1\\bin\\x64\\Rscript.exe"
  script <- "C:\\Users\\me\\My \"mcp\" tools\\server.R"
  env <- c(PATTERN = "a\\b\tc\nd", QUOTE = "say \"hi\"", BELL = "\a")
  json <- mcpserver:::cfg_new("claude-desktop", "cars", command, script, env, "windows")
  expect_match(json$text, "\"C:\\\\Program Files\\\\R\\\\R-4.4.1\\\\bin\\\\x64\\\\Rscript.exe\"", fixed = TRUE)
  expect_match(json$text, "\"C:\\\\Users\\\\me\\\\My \\\"mcp\\\" tools\\\\server.R\"", fixed = TRUE)
  doc <- clients_json(json$text)
  expect_equal(doc$mcpServers$cars$command, command)
  expect_equal(doc$mcpServers$cars$args, list(script))
  expect_equal(doc$mcpServers$cars$env, as.list(env))

  toml <- mcpserver:::cfg_new("codex", "cars", command, script, env, "windows")
  lines <- strsplit(toml$text, "\n")[[1]]
  expect_equal(lines[2], "command = \"C:\\\\Program Files\\\\R\\\\R-4.4.1\\\\bin\\\\x64\\\\Rscript.exe\"")
  expect_equal(lines[3], "args = [\"C:\\\\Users\\\\me\\\\My \\\"mcp\\\" tools\\\\server.R\"]")
  expect_equal(lines[6], "PATTERN = \"a\\\\b\\tc\\nd\"")
  expect_equal(lines[8], "BELL = \"\\u0007\"")
  parsed <- clients_toml(toml$text)$mcp_servers$cars
  expect_equal(parsed$command, command)
  expect_equal(parsed$args, list(script))
  expect_equal(parsed$env, as.list(env))
})

test_that("configurations print what to paste and where", {
  script <- clients_script("server.R")
  config <- mcp_client_config(script)
  expect_output(print(config), "Claude Desktop: server \"mtcars\"", fixed = TRUE)
  expect_output(print(config), "claude_desktop_config.json", fixed = TRUE)
  expect_output(print(config), "\"mcpServers\"", fixed = TRUE)
  capture.output(printed <- withVisible(print(config)))
  expect_false(printed$visible)
  code <- mcp_client_config(script, "claude-code")
  expect_output(print(code), "claude mcp add mtcars", fixed = TRUE)
  expect_output(print(code), ".mcp.json", fixed = TRUE)
  expect_output(print(mcp_client_config(script, "codex")), "[mcp_servers.mtcars]", fixed = TRUE)
  expect_output(print(mcp_client_config(script, "generic")), "the client's configuration file", fixed = TRUE)
})

test_that("bad arguments are errors that say what is expected", {
  script <- clients_script("server.R")
  dir <- dirname(script)
  expect_error(mcp_client_config(file.path(dir, "nope.R")), "existing file")
  expect_error(mcp_client_config(dir), "existing file")
  expect_error(mcp_client_config(c(script, script)), "single string")
  other <- file.path(dir, "server.py")
  writeLines("", other)
  expect_error(mcp_client_config(other), "ends in .R")
  expect_error(mcp_client_config(script, "claude"), "`client` must be one of")
  expect_error(mcp_client_config(script, env = "1"), "named character vector")
  expect_error(mcp_client_config(script, env = c(A = NA)), "named character vector")
  expect_error(mcp_client_config(script, env = c(A = "1", A = "2")), "distinct names")
  expect_error(mcp_client_config(script, env = list(A = "1")), "named character vector")
  expect_error(mcp_client_config(script, name = ""), "non-empty string")
  expect_error(mcp_client_config(script, rscript = file.path(dir, "Rscript")), "no file at")
  expect_error(clients_install(script, "generic"), "`path`")
  expect_error(clients_install(script, path = dir), "folder")
  expect_error(clients_install(script, path = file.path(dir, "x.json"), overwrite = NA), "TRUE or FALSE")
  expect_null(mcp_client_config(script, env = character())$env)
})

test_that("rscript can be given; it is kept as an absolute path", {
  script <- clients_script("server.R")
  fake <- file.path(dirname(script), "Rscript")
  writeLines("", fake)
  windows <- .Platform$OS.type == "windows"
  expect_equal(mcp_client_config(script, rscript = fake)$command, if (windows) normalizePath(fake) else fake)
  withr::local_dir(dirname(script))
  expect_equal(mcp_client_config(script, rscript = "Rscript")$command, normalizePath(fake))
})

test_that("a symbolic link to Rscript is kept, not resolved to one version of R", {
  skip_on_os("windows")
  script <- clients_script("server.R")
  dir <- dirname(script)
  dir.create(file.path(dir, "R-4.9", "bin"), recursive = TRUE)
  writeLines("", file.path(dir, "R-4.9", "bin", "Rscript"))
  skip_if_not(file.symlink(file.path(dir, "R-4.9"), file.path(dir, "Current")))
  link <- file.path(dir, "Current", "bin", "Rscript")
  expect_equal(mcp_client_config(script, rscript = link)$command, link)
})

# ---- Default files -------------------------------------------------------------

test_that("each client's default file, per system", {
  home <- withr::local_tempdir()
  withr::local_envvar(
    HOME = home, USERPROFILE = home, XDG_CONFIG_HOME = "", CODEX_HOME = "",
    APPDATA = file.path(home, "AppData", "Roaming"), LOCALAPPDATA = file.path(home, "AppData", "Local")
  )
  path <- mcpserver:::cfg_default_path
  expect_equal(
    path("claude-desktop", "macos"),
    file.path(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
  )
  expect_equal(path("claude-desktop", "linux"), file.path(home, ".config", "Claude", "claude_desktop_config.json"))
  expect_equal(
    path("claude-desktop", "windows"),
    file.path(home, "AppData", "Roaming", "Claude", "claude_desktop_config.json")
  )
  expect_equal(path("cursor", "linux"), file.path(home, ".cursor", "mcp.json"))
  expect_equal(path("gemini", "windows"), file.path(home, ".gemini", "settings.json"))
  expect_equal(path("codex", "macos"), file.path(home, ".codex", "config.toml"))
  expect_equal(path("claude-code", "linux"), file.path(getwd(), ".mcp.json"))
  expect_equal(path("vscode", "linux"), file.path(getwd(), ".vscode", "mcp.json"))
  expect_equal(path("positron", "windows"), file.path(getwd(), ".vscode", "mcp.json"))
  expect_null(path("generic", "linux"))

  withr::local_envvar(XDG_CONFIG_HOME = file.path(home, "xdg"), CODEX_HOME = file.path(home, "codex"))
  expect_equal(path("claude-desktop", "linux"), file.path(home, "xdg", "Claude", "claude_desktop_config.json"))
  expect_equal(path("codex", "linux"), file.path(home, "codex", "config.toml"))

  # The packaged (MSIX) Claude Desktop on Windows reads its own copy.
  packaged <- file.path(home, "AppData", "Local", "Packages", "Claude_pzs8sxrjxfjjc", "LocalCache", "Roaming", "Claude")
  dir.create(packaged, recursive = TRUE)
  expect_equal(path("claude-desktop", "windows"), file.path(packaged, "claude_desktop_config.json"))
})

# ---- Installing into JSON files ---------------------------------------------------

test_that("install creates a missing file and its folders", {
  script <- clients_script("server.R")
  dir <- withr::local_tempdir()
  path <- file.path(dir, "a", "b", "claude_desktop_config.json")
  messages <- capture_messages(out <- withVisible(mcp_client_install(script, path = path)))
  expect_match(messages, "\"mtcars\" added to", all = FALSE)
  expect_match(messages, "Restart Claude Desktop", all = FALSE)
  expect_false(out$visible)
  expect_equal(out$value, normalizePath(path))
  expect_equal(clients_read(path), clients_json(mcp_client_config(script)$text))
  expect_length(clients_backups(path), 0)
  # An empty file counts as an empty object.
  empty <- file.path(dir, "empty.json")
  file.create(empty)
  clients_install(script, "vscode", path = empty)
  expect_equal(names(clients_read(empty)), "servers")
})

test_that("install keeps every other server and key, and backs up the file", {
  script <- clients_script("server.R")
  dir <- withr::local_tempdir()
  path <- file.path(dir, "claude_desktop_config.json")
  before <- paste0(
    '{"globalShortcut": "Ctrl+Space", "numbers": [1, 2.5, -3e-7, 12345678901, 0.1],',
    ' "nothing": null, "flags": {"on": true, "off": false}, "empty": {}, "none": [],',
    ' "one": ["x"], "unicode": "caf\\u00e9 \\ud83d\\ude00 \u00fc", "nested": {"a": [{"b": [[]]}]},',
    ' "mcpServers": {"other": {"command": "npx", "args": ["-y", "srv"], "env": {}},',
    ' "third": {"url": "https://example.com/mcp", "headers": {"X": "1"}}}}'
  )
  clients_write(path, before)
  messages <- capture_messages(mcp_client_install(script, path = path))
  expect_match(messages, "Previous file saved as", all = FALSE)
  after <- clients_read(path)
  old <- clients_json(before)
  expect_equal(names(after), names(old))
  expect_equal(after[names(after) != "mcpServers"], old[names(old) != "mcpServers"])
  expect_equal(names(after$mcpServers), c("other", "third", "mtcars"))
  expect_equal(after$mcpServers[c("other", "third")], old$mcpServers)
  expect_equal(after$mcpServers$mtcars, list(command = clients_rscript(), args = list(script)))
  # Empty objects and arrays keep their kind.
  text <- rawToChar(clients_bytes(path))
  expect_match(text, "\"empty\": {}", fixed = TRUE)
  expect_match(text, "\"none\": []", fixed = TRUE)
  expect_match(text, "\"env\": {}", fixed = TRUE)
  expect_match(text, "\"one\": [\n    \"x\"\n  ]", fixed = TRUE)
  # The backup is the file as it was, byte for byte.
  backup <- clients_backups(path)
  expect_length(backup, 1)
  expect_match(basename(backup), "^claude_desktop_config\\.json\\.[0-9]{8}-[0-9]{6}\\.bak$")
  expect_identical(clients_bytes(backup), charToRaw(enc2utf8(before)))
})

test_that("install adds the servers object where it is missing or null", {
  script <- clients_script("stats.R")
  path <- file.path(withr::local_tempdir(), "null.json")
  clients_write(path, '{"mcpServers": null, "x": 1}')
  clients_install(script, path = path)
  expect_equal(names(clients_read(path)), c("mcpServers", "x"))
  expect_equal(names(clients_read(path)$mcpServers), "stats")

  path <- file.path(withr::local_tempdir(), "settings.json")
  clients_write(path, '{"theme": "dark", "mcp": {"allowed": ["x"]}}')
  clients_install(script, "gemini", path = path)
  expect_equal(
    clients_read(path),
    list(theme = "dark", mcp = list(allowed = list("x")), mcpServers = list(stats = list(command = clients_rscript(), args = list(script))))
  )
  # VS Code's inputs are kept.
  path <- file.path(withr::local_tempdir(), "mcp.json")
  clients_write(path, '{"inputs": [{"type": "promptString", "id": "key"}], "servers": {}}')
  clients_install(script, "vscode", path = path, env = c(A = "1"))
  doc <- clients_read(path)
  expect_equal(doc$inputs, list(list(type = "promptString", id = "key")))
  expect_equal(doc$servers$stats$type, "stdio")
  expect_equal(doc$servers$stats$env, list(A = "1"))
})

test_that("install refuses to replace a server unless overwrite = TRUE", {
  script <- clients_script("server.R")
  path <- file.path(withr::local_tempdir(), "mcp.json")
  before <- '{"mcpServers": {"mtcars": {"command": "old"}, "z": {"command": "z"}}}'
  clients_write(path, before)
  expect_error(clients_install(script, "cursor", path = path), "already has a server named \"mtcars\"")
  expect_error(clients_install(script, "cursor", path = path), "overwrite = TRUE")
  expect_identical(clients_bytes(path), charToRaw(before))
  expect_length(clients_backups(path), 0)

  messages <- capture_messages(mcp_client_install(script, "cursor", path = path, overwrite = TRUE))
  expect_match(messages, "replaced in", all = FALSE)
  doc <- clients_read(path)
  expect_equal(names(doc$mcpServers), c("mtcars", "z"))
  expect_equal(doc$mcpServers$mtcars, list(command = clients_rscript(), args = list(script)))
  expect_equal(doc$mcpServers$z, list(command = "z"))
  expect_length(clients_backups(path), 1)
})

test_that("installing the same entry again changes nothing", {
  script <- clients_script("server.R")
  path <- file.path(withr::local_tempdir(), "mcp.json")
  clients_install(script, "claude-code", path = path, env = c(A = "1"))
  bytes <- clients_bytes(path)
  expect_message(mcp_client_install(script, "claude-code", path = path, env = c(A = "1")), "already registered")
  expect_identical(clients_bytes(path), bytes)
  expect_length(clients_backups(path), 0)
  # A different entry is refused.
  expect_error(clients_install(script, "claude-code", path = path, env = c(A = "2")), "already has")
})

test_that("a file that is not valid JSON is an error naming it, and is left alone", {
  script <- clients_script("server.R")
  dir <- withr::local_tempdir()
  cases <- list(
    "bad.json" = '{"mcpServers": {"a": 1,}}',
    "comments.json" = '// my servers\n{"servers": {}}',
    "array.json" = '[1, 2]',
    "servers-array.json" = '{"mcpServers": []}',
    "servers-string.json" = '{"mcpServers": "x"}'
  )
  for (file in names(cases)) {
    path <- file.path(dir, file)
    clients_write(path, cases[[file]])
    expect_error(clients_install(script, path = path), basename(path), fixed = TRUE, info = file)
    expect_error(clients_install(script, path = path), "left unchanged", info = file)
    expect_identical(clients_bytes(path), charToRaw(cases[[file]]), info = file)
    expect_length(clients_backups(path), 0)
  }
  expect_error(clients_install(script, path = file.path(dir, "bad.json")), "not valid JSON")
})

test_that("a JSON file that starts with a byte order mark can be updated", {
  script <- clients_script("server.R")
  path <- file.path(withr::local_tempdir(), "mcp.json")
  clients_write(path, '\ufeff{"mcpServers": {"a": {"command": "a"}}}')
  clients_install(script, path = path)
  expect_equal(names(clients_read(path)$mcpServers), c("a", "mtcars"))
})

# ---- Installing into Codex's TOML -----------------------------------------------

codex_before <- paste0(
  "# Codex settings\n",
  "model = \"gpt-5\"  # the model\n",
  "notify = [\"a\", \"]\", '[mcp_servers.stats]']\n",
  "multi = \"\"\"\n[mcp_servers.stats]\nnot a table \"\" \\\"\"\"\"\"\n",
  "lit = '''\n[x]\n'''\n",
  "nested = [\n  [1, 2],\n  { a = \"}\" },\n]\n",
  "\n",
  "[mcp_servers.other]\n",
  "command = \"npx\"\n",
  "args = [\"-y\", \"srv\"]\n",
  "\n",
  "[mcp_servers.other.env]\n",
  "KEY = \"v\"\n",
  "\n",
  "[profiles.fast]\n",
  "model = \"o4-mini\"\n"
)

test_that("codex: install adds the tables and keeps the rest byte for byte", {
  script <- clients_script("stats.R")
  path <- file.path(withr::local_tempdir(), "config.toml")
  clients_write(path, codex_before)
  clients_install(script, "codex", path = path, env = c(MCPSERVER_TRACE = "1"))
  after <- rawToChar(clients_bytes(path))
  block <- mcp_client_config(script, "codex", env = c(MCPSERVER_TRACE = "1"))$text
  expect_identical(after, paste0(codex_before, "\n", block, "\n"))
  expect_identical(clients_bytes(clients_backups(path)), charToRaw(codex_before))
  doc <- clients_toml(after)
  expect_equal(names(doc$mcp_servers), c("other", "stats"))
  expect_equal(doc$mcp_servers$other, list(command = "npx", args = list("-y", "srv"), env = list(KEY = "v")))
  expect_equal(doc$mcp_servers$stats$env, list(MCPSERVER_TRACE = "1"))
  expect_equal(doc$profiles, list(fast = list(model = "o4-mini")))
})

test_that("codex: install creates the file, and tolerates a missing final newline", {
  script <- clients_script("stats.R")
  dir <- withr::local_tempdir()
  path <- file.path(dir, ".codex", "config.toml")
  clients_install(script, "codex", path = path)
  expect_identical(rawToChar(clients_bytes(path)), paste0(mcp_client_config(script, "codex")$text, "\n"))
  path <- file.path(dir, "config.toml")
  clients_write(path, "model = \"x\"")
  clients_install(script, "codex", path = path)
  expect_identical(
    rawToChar(clients_bytes(path)),
    paste0("model = \"x\"\n\n", mcp_client_config(script, "codex")$text, "\n")
  )
})

test_that("codex: overwrite replaces the server's tables where they were", {
  script <- clients_script("stats.R")
  path <- file.path(withr::local_tempdir(), "config.toml")
  head <- "model = \"gpt-5\"\n\n"
  old <- paste0(
    "[mcp_servers.\"stats\"]\n",
    "command = \"old\"\n",
    "args = [\n  \"a\",\n]\n",
    "startup_timeout_sec = 20\n",
    "\n",
    "[mcp_servers.stats.env]\n",
    "OLD = \"1\"\n"
  )
  tools <- "\n[mcp_servers.stats.tools.search]\napproval_mode = \"prompt\"\n"
  tail <- "\n# other servers\n[mcp_servers.other]\ncommand = \"npx\"\n"
  clients_write(path, paste0(head, old, tools, tail))
  expect_error(clients_install(script, "codex", path = path), "already has a server named \"stats\"")
  expect_identical(rawToChar(clients_bytes(path)), paste0(head, old, tools, tail))
  expect_length(clients_backups(path), 0)

  clients_install(script, "codex", path = path, overwrite = TRUE)
  block <- mcp_client_config(script, "codex")$text
  # The per-tool settings stay.
  expect_identical(rawToChar(clients_bytes(path)), paste0(head, block, "\n", tools, tail))
  doc <- clients_toml(rawToChar(clients_bytes(path)))
  expect_equal(doc$mcp_servers$stats, list(
    command = clients_rscript(), args = list(script),
    tools = list(search = list(approval_mode = "prompt"))
  ))
  expect_equal(doc$mcp_servers$other, list(command = "npx"))
})

test_that("codex: a server defined with dotted keys is found and replaced", {
  script <- clients_script("stats.R")
  path <- file.path(withr::local_tempdir(), "config.toml")
  before <- "[mcp_servers]\nstats.command = \"old\"\nother = { command = \"x\" }\n"
  clients_write(path, before)
  expect_error(clients_install(script, "codex", path = path), "already has")
  clients_install(script, "codex", path = path, overwrite = TRUE)
  after <- rawToChar(clients_bytes(path))
  expect_identical(
    after,
    paste0("[mcp_servers]\nother = { command = \"x\" }\n\n", mcp_client_config(script, "codex")$text, "\n")
  )
  doc <- clients_toml(after)
  expect_equal(names(doc$mcp_servers), c("other", "stats"))
})

test_that("codex: the same entry again changes nothing; CRLF files stay CRLF", {
  script <- clients_script("stats.R")
  path <- file.path(withr::local_tempdir(), "config.toml")
  clients_write(path, "model = \"x\"\r\n")
  clients_install(script, "codex", path = path, env = c(A = "1"))
  after <- rawToChar(clients_bytes(path))
  block <- strsplit(mcp_client_config(script, "codex", env = c(A = "1"))$text, "\n")[[1]]
  expect_identical(after, paste0("model = \"x\"\r\n\r\n", paste0(block, "\r\n", collapse = "")))
  expect_message(
    mcp_client_install(script, "codex", path = path, env = c(A = "1")),
    "already registered"
  )
  expect_identical(rawToChar(clients_bytes(path)), after)
  expect_length(clients_backups(path), 1)
})

test_that("codex: a file that cannot be read as TOML is left alone", {
  script <- clients_script("stats.R")
  dir <- withr::local_tempdir()
  cases <- c(
    "string.toml" = "model = \"gpt-5\n",
    "array.toml" = "list = [1, 2\n",
    "header.toml" = "[mcp_servers.x\n",
    "inline.toml" = "mcp_servers = { x = { command = \"a\" } }\n",
    "array-of-tables.toml" = "[[mcp_servers]]\ncommand = \"a\"\n"
  )
  for (file in names(cases)) {
    path <- file.path(dir, file)
    clients_write(path, cases[[file]])
    expect_error(clients_install(script, "codex", path = path), file, fixed = TRUE, info = file)
    expect_identical(rawToChar(clients_bytes(path)), cases[[file]], info = file)
    expect_length(clients_backups(path), 0)
  }
  expect_error(clients_install(script, "codex", path = file.path(dir, "string.toml")), "not valid TOML")
})

test_that("TOML strings and keys are quoted as TOML requires", {
  toml <- mcpserver:::cfg_toml_string
  expect_equal(toml("C:\\R\\bin"), "\"C:\\\\R\\\\bin\"")
  expect_equal(toml("say \"hi\""), "\"say \\\"hi\\\"\"")
  expect_equal(toml("\001\037\177"), "\"\\u0001\\u001F\\u007F\"")
  expect_equal(toml("caf\u00e9"), "\"caf\u00e9\"")
  expect_equal(mcpserver:::cfg_toml_key(c("a-b_1", "a.b", "")), c("a-b_1", "\"a.b\"", "\"\""))
  statements <- mcpserver:::cfg_toml_statements(c(
    "[ mcp_servers . \"a \\\"b\\\"\" . 'c.d' ]", "x = 1", "", "[[arr]]", "y.z = 'q'"
  ))
  expect_equal(lapply(statements, `[[`, "path"), list(
    c("mcp_servers", "a \"b\"", "c.d"), c("mcp_servers", "a \"b\"", "c.d", "x"),
    "arr", c("arr", "y", "z")
  ))
  expect_equal(vapply(statements, `[[`, "", "kind"), c("table", "keyval", "array", "keyval"))
  expect_equal(statements[[1]]$end, 2L)
})

# ---- Servers over HTTP -----------------------------------------------------

test_that("a URL gives clients that speak HTTP an entry with the URL", {
  url <- "http://127.0.0.1:8000/mcp"
  expect_equal(mcp_client_config(url, "vscode")$entry, list(type = "http", url = url))
  expect_equal(clients_json(mcp_client_config(url, "positron")$text), list(servers = list(`r-127-0-0-1-8000` = list(type = "http", url = url))))
  expect_equal(mcp_client_config(url, "cursor")$entry, list(url = url))
  expect_equal(mcp_client_config(url, "gemini")$entry, list(httpUrl = url))
  config <- mcp_client_config(url, "claude-code", name = "live")
  expect_equal(config$text, "claude mcp add --transport http live http://127.0.0.1:8000/mcp")
  expect_equal(config$entry, list(type = "http", url = url))
  expect_equal(config$url, url)
  expect_null(config$command)
  config <- mcp_client_config(url, "codex", name = "live")
  expect_equal(clients_toml(config$text), list(mcp_servers = list(live = list(url = url))))
})

test_that("a URL gives clients that only start commands the bridge", {
  url <- "http://localhost:8000/mcp"
  for (client in c("claude-desktop", "generic")) {
    config <- mcp_client_config(url, client)
    expect_equal(config$name, "r-localhost-8000")
    expect_equal(config$command, clients_rscript())
    expect_equal(config$args, c("-e", 'mcpserver::mcp_bridge("http://localhost:8000/mcp")'))
    expect_equal(config$entry, list(command = clients_rscript(), args = list("-e", 'mcpserver::mcp_bridge("http://localhost:8000/mcp")')))
  }
  # Any client can have the bridge; the bridge's process gets `env`.
  config <- mcp_client_config(url, "vscode", bridge = TRUE, env = c(MCP_BEARER_TOKEN = "t"))
  expect_equal(config$entry$type, "stdio")
  expect_equal(config$entry$env, list(MCP_BEARER_TOKEN = "t"))
  # The bridge's command parses back to the call it names.
  expect_equal(
    parse(text = config$args[[2]])[[1]],
    quote(mcpserver::mcp_bridge("http://localhost:8000/mcp"))
  )
})

test_that("URL entries are checked and installed like any other", {
  url <- "http://127.0.0.1:8000/mcp"
  expect_error(mcp_client_config(url, "claude-desktop", bridge = FALSE), "starts servers as commands only")
  expect_error(mcp_client_config(url, "cursor", env = c(A = "1")), "`env`, `rscript` and `rscript_args` are for commands")
  expect_error(mcp_client_config(url, bridge = NA), "`bridge` must be NULL, TRUE or FALSE")
  expect_error(mcp_client_config("https://example.com/mcp"), "Only plain http:// URLs")
  expect_error(mcp_client_config("http://h/a\"b"), "percent-encode")
  expect_error(mcp_client_config(clients_script(), bridge = TRUE), "`bridge` is for a server given by its URL")
  dir <- withr::local_tempdir()
  path <- file.path(dir, ".vscode", "mcp.json")
  clients_install(url, "vscode", path = path)
  expect_equal(clients_read(path), list(servers = list(`r-127-0-0-1-8000` = list(type = "http", url = url))))
  path <- file.path(dir, "config.toml")
  clients_install(url, "codex", name = "live", path = path)
  expect_equal(clients_toml(paste(readLines(path), collapse = "\n")), list(mcp_servers = list(live = list(url = url))))
  expect_output(print(mcp_client_config(url, "cursor")), "\"url\": \"http://127.0.0.1:8000/mcp\"", fixed = TRUE)
})
