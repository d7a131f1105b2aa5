# MCP Apps (the io.modelcontextprotocol/ui extension): app documents made
# from HTML and htmlwidgets, tools that name them, and what a real server
# process sends hosts that declared the extension and hosts that did not.
# Wire messages are checked against the revision's schema, and the
# extension's fields against the extension's own schema (schemas/ext-apps).

ui_caps <- list(extensions = list(`io.modelcontextprotocol/ui` = list(mimeTypes = list("text/html;profile=mcp-app"))))
no_caps <- setNames(list(), character())

ext_schema <- function(name) {
  path <- test_path("schemas", "ext-apps", "schema.json")
  if (!file.exists(path)) stop("the extension's schema is missing: ", path, call. = FALSE)
  doc <- jsonlite::fromJSON(path, simplifyVector = FALSE)
  # Each definition is a schema of its own (with its own `$schema` and `$defs`).
  definition <- doc[["$defs"]][[name]]
  stopifnot(!is.null(definition))
  as.character(jsonlite::toJSON(definition, auto_unbox = TRUE, null = "null", digits = NA))
}

expect_ext_valid <- function(name, value) {
  json <- as.character(jsonlite::toJSON(value, auto_unbox = TRUE, null = "null", digits = NA))
  problems <- mcpserver:::json_schema_problems_(ext_schema(name), json)
  expect(length(problems) == 0, sprintf("%s rejects %s:\n%s", name, json, paste(problems, collapse = "\n")))
}

definition <- function(x, ...) jsonlite::fromJSON(tool_definition(x, ...), simplifyVector = FALSE)

# --- documents --------------------------------------------------------------

test_that("mcp_app() checks its arguments when the app is defined", {
  expect_error(mcp_app("<p>x</p>", uri = "https://x"), "ui:// URI")
  expect_error(mcp_app("<p>x</p>", uri = "ui://"), "ui:// URI")
  expect_error(mcp_app("<p>x</p>", csp = list(connect = "https://x")), "connect_domains")
  expect_error(mcp_app("<p>x</p>", csp = list(connect_domains = 1)), "character vector")
  expect_error(mcp_app("<p>x</p>", permissions = "bluetooth"), "clipboard_write")
  expect_error(mcp_app("<p>x</p>", prefers_border = "yes"), "prefers_border")
  expect_error(mcp_app("<p>x</p>", domain = ""), "domain")
  expect_error(mcp_app(42), "`ui` must be")
  expect_error(mcp_app("no-such-file.html"), "`ui` must be")
  expect_error(mcp_app("<p>x</p>", "ui://a/b"), "must be named")
})

test_that("an HTML fragment becomes a whole document that starts with the runtime", {
  app <- mcp_app("<p id='hello'>Hello</p>")
  expect_s3_class(app, "mcpserver_app")
  html <- app$html
  expect_match(html, "^<!DOCTYPE html>")
  expect_match(html, "<body>\n<p id='hello'>Hello</p>", fixed = TRUE)
  runtime <- regexpr("window.mcpApp = api", html, fixed = TRUE)
  expect_true(runtime > 0 && runtime < regexpr("<body>", html, fixed = TRUE))
  expect_match(html, "ui/initialize", fixed = TRUE)
  # The runtime's text is inlined whole, and never closes its script early.
  expect_false(grepl("<script src", html, fixed = TRUE))
  expect_identical(lengths(regmatches(html, gregexpr("</script>", html, fixed = TRUE))), 2L)
})

test_that("a whole HTML document keeps its own markup, with the runtime first in its head", {
  doc <- "<!doctype html><html lang='en'><head><title>Mine</title></head><body>B</body></html>"
  html <- mcp_app(doc)$html
  expect_match(html, "<html lang='en'><head>\n<meta charset", fixed = TRUE)
  expect_match(html, "</script>\n<title>Mine</title>", fixed = TRUE)
  expect_match(mcp_app("<html><body>B</body></html>")$html, "<html>\n<head>\n<meta charset", fixed = TRUE)
})

test_that("an HTML file's local scripts and stylesheets are inlined, remote ones left", {
  dir <- withr::local_tempdir()
  writeLines("window.fromFile = '</script> inside';", file.path(dir, "app.js"))
  writeLines("body { background: url('dot.png'); }", file.path(dir, "app.css"))
  writeBin(as.raw(c(0x89, 0x50, 0x4e, 0x47)), file.path(dir, "dot.png"))
  writeLines(c(
    "<html><head>",
    "<link rel=\"stylesheet\" href=\"app.css\">",
    "<script src=\"app.js\"></script>",
    "<script src=\"https://cdn.example.com/lib.js\"></script>",
    "</head><body>File</body></html>"
  ), file.path(dir, "index.html"))
  html <- mcp_app(file.path(dir, "index.html"))$html
  expect_match(html, "window.fromFile = '<\\/script> inside';", fixed = TRUE)
  expect_match(html, "url(\"data:image/png;base64,iVBORw==\")", fixed = TRUE)
  expect_false(grepl("href=\"app.css\"", html, fixed = TRUE))
  expect_match(html, "<script src=\"https://cdn.example.com/lib.js\"></script>", fixed = TRUE)
})

test_that("text that would end an inline script early is escaped, as JavaScript reads the same", {
  expect_identical(mcpserver:::escape_inline_script("a = '</SCRIPT>'; b = '<!--'"), "a = '<\\/SCRIPT>'; b = '<\\!--'")
})

test_that("an htmlwidget app inlines the widget's scripts and styles, not its sample data", {
  skip_if_not_installed("DT")
  app <- mcp_app(DT::datatable(data.frame(sample_column = 1)))
  expect_true(all(c("htmlwidgets", "jquery", "dt-core", "datatables-binding") %in% app$inlined))
  html <- app$html
  expect_false(grepl("<script src=|<link ", html))
  expect_false(grepl("sample_column", html, fixed = TRUE))
  expect_match(html, "<div class=\"mcpserver-view\"></div>", fixed = TRUE)
  # The stylesheet's sort icons are data: URIs, which the default CSP allows.
  expect_false(grepl("url(\"../images/", html, fixed = TRUE))
  expect_match(html, "url(\"data:image/png;base64,", fixed = TRUE)
  expect_match(format(app)[1], "<mcpserver_app> ui://<tool name>/app.html, [0-9.]+ kB")
})

test_that("plotly charts load plotly.js's strict build from its CDN, declared in the app's CSP", {
  skip_if_not_installed("plotly")
  app <- mcp_app(plotly::plot_ly(), csp = list(connect_domains = "https://api.example.com"))
  version <- Filter(function(d) d$name == "plotly-main", suppressWarnings(suppressMessages(
    htmltools::renderTags(plotly::plot_ly())$dependencies
  )))[[1]]$version
  html <- app$html
  expect_match(html, sprintf("<script src=\"https://cdn.plot.ly/plotly-strict-%s.min.js\"></script>", version), fixed = TRUE)
  # plotly.js has no stylesheet: nothing else is asked of the CDN.
  expect_identical(lengths(regmatches(html, gregexpr("(src|href)=\"https://cdn\\.plot\\.ly", html))), 1L)
  # The full build, which compiles code from strings, is not in the page;
  # nor is the typedarray polyfill, which only throws in today's browsers.
  expect_false(grepl("new Function", html, fixed = TRUE))
  expect_false(grepl("GLOBAL.WebModule", html, fixed = TRUE))
  expect_true(all(c("plotly-main", "typedarray", "plotly-binding") %in% app$inlined))
  expect_identical(app$meta$ui$csp$connectDomains, I("https://api.example.com"))
  expect_identical(unclass(app$meta$ui$csp$resourceDomains), "https://cdn.plot.ly")
  expect_ext_valid("McpUiResourceMeta", app$meta$ui)
  # A page without the chart's scripts cannot be sent them: the tool says what to do.
  expect_error(mcpserver:::view_payload(plotly::plot_ly(x = 1:2, y = 1:2, type = "bar"), "htmlwidgets"), "mcp_app\\(<widget>\\)")
})

test_that("the generic page inlines the htmlwidgets runtime only", {
  skip_if_not_installed("htmlwidgets")
  app <- mcp_app()
  expect_identical(app$inlined, "htmlwidgets")
  expect_true(app$generic)
  expect_match(app$html, '"generic":true', fixed = TRUE)
})

test_that("app_result() holds the value and the view", {
  r <- app_result(list(a = 1), "<b>view</b>")
  expect_s3_class(r, "mcpserver_app_result")
  expect_identical(r$value, list(a = 1))
  expect_match(format(r)[1], "a HTML view")
  expect_match(app_result(view = "<b>x</b>")$value, "interactive HTML view")
  expect_error(app_result(1), "`view` is required")
  expect_error(app_result(1, 2), "`view` must be")
})

# --- tool definitions -------------------------------------------------------

test_that("a tool with an app names it in _meta.ui for hosts that show apps only", {
  page <- mcp_app("<p>x</p>")
  chart <- tool(function(x) x, "Chart", name = "chart", arguments = list(x = type_number()), app = page, meta = list(owner = "r"))
  for (rev in c("2025-06-18", "2025-11-25", "2026-07-28")) {
    with_apps <- definition(chart, rev, apps = TRUE)
    expect_identical(with_apps[["_meta"]], list(owner = "r", ui = list(resourceUri = "ui://chart/app.html"), `ui/resourceUri` = "ui://chart/app.html"))
    expect_ext_valid("McpUiToolMeta", with_apps[["_meta"]]$ui)
    expect_identical(definition(chart, rev)[["_meta"]], list(owner = "r"))
  }
  # Revisions without _meta on tools carry no apps.
  expect_null(definition(chart, "2025-03-26", apps = TRUE)[["_meta"]])
  shared <- mcp_app("<p>x</p>", uri = "ui://shared/page.html")
  expect_identical(definition(tool(function() 1, "One", name = "one", app = shared), apps = TRUE)[["_meta"]]$ui$resourceUri, "ui://shared/page.html")
})

test_that("visibility is sent as the extension says, and app-only tools are not sent to other clients", {
  only_app <- tool(function(n) n, "Next page", name = "next_page", arguments = list(n = type_integer()), visibility = "app")
  ui <- definition(only_app, apps = TRUE)[["_meta"]]$ui
  expect_identical(ui, list(visibility = list("app")))
  expect_ext_valid("McpUiToolMeta", ui)
  expect_error(tool_definition(only_app), "only for apps")
  both <- tool(function() 1, "Both", name = "both", visibility = c("app", "model"))
  expect_identical(definition(both, apps = TRUE)[["_meta"]]$ui$visibility, list("model", "app"))
  expect_null(definition(both)[["_meta"]])
  expect_error(tool(function() 1, "Bad", name = "bad", visibility = "user"), "`visibility` must be")
  expect_error(tool(function() 1, "Bad", name = "bad", app = "ui://x/y"), "`app` must be")
  expect_error(
    tool(function() 1, "Bad", name = "bad", visibility = "app", meta = list(ui = list())),
    "must not hold `ui`"
  )
  expect_error(tool_definition(both, apps = NA), "`apps` must be")
})

# --- served -----------------------------------------------------------------

skip_on_cran()

start_apps <- function(env = parent.frame()) start_server(fixture("apps.R"), env = env)

initialize_caps <- function(client, version, caps) {
  client$rev <- version
  response <- request(client, 0, "initialize", list(
    protocolVersion = version, capabilities = caps, clientInfo = list(name = "testthat", version = "1")
  ))
  send(client, list(jsonrpc = "2.0", method = "notifications/initialized"))
  response
}

# A request of the client's revision (2026-07-28 with `caps` in its
# envelope), its message checked against the wire schema.
app_rpc <- function(client, id, method, params, caps, result_type = NULL) {
  if (client$rev >= "2026-07-28") {
    params[["_meta"]] <- list(
      `io.modelcontextprotocol/protocolVersion` = "2026-07-28",
      `io.modelcontextprotocol/clientCapabilities` = caps
    )
  }
  msg <- request(client, id, method, params)
  expect_wire_valid(client$log[[length(client$log)]]$line, client$rev, if (is.null(msg$error)) result_type)
  msg
}

tool_names <- function(msg) vapply(msg$result$tools, function(t) t$name, character(1))

test_that("the extension is declared in initialize and server/discover, from 2025-06-18 on", {
  client <- start_apps()
  for (version in c("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")) {
    caps <- initialize_caps(client, version, ui_caps)$result$capabilities
    if (version >= "2025-06-18") {
      expect_identical(caps$extensions, list(`io.modelcontextprotocol/ui` = setNames(list(), character())))
    } else {
      expect_null(caps$extensions)
    }
  }
  client$rev <- "2026-07-28"
  discover <- app_rpc(client, 1, "server/discover", setNames(list(), character()), no_caps, "DiscoverResult")
  expect_true("io.modelcontextprotocol/ui" %in% names(discover$result$capabilities$extensions))
  expect_log_valid(client)
})

test_that("hosts that declared the extension get the UI metadata; other clients the plain tools", {
  client <- start_apps()
  for (version in c("2025-11-25", "2026-07-28")) {
    if (version < "2026-07-28") initialize_caps(client, version, ui_caps) else client$rev <- version
    listed <- app_rpc(client, 2, "tools/list", setNames(list(), character()), ui_caps, "ListToolsResult")
    names <- tool_names(listed)
    expect_true(all(c("echo", "double", "plain") %in% names))
    tools <- stats::setNames(listed$result$tools, names)
    expect_identical(tools$echo[["_meta"]]$ui, list(resourceUri = "ui://fixture/page.html"))
    expect_identical(tools$echo[["_meta"]][["ui/resourceUri"]], "ui://fixture/page.html")
    expect_identical(tools$double[["_meta"]]$ui$visibility, list("app"))
    for (t in tools) if (!is.null(t[["_meta"]]$ui)) expect_ext_valid("McpUiToolMeta", t[["_meta"]]$ui)
    expect_null(tools$plain[["_meta"]])

    # The same server, to a client that did not declare it: as if no tool had an app.
    if (version < "2026-07-28") initialize_caps(client, version, no_caps)
    plain <- app_rpc(client, 3, "tools/list", setNames(list(), character()), no_caps, "ListToolsResult")
    expect_false("double" %in% tool_names(plain))
    for (t in plain$result$tools) {
      expect_null(t[["_meta"]]$ui)
      expect_null(t[["_meta"]][["ui/resourceUri"]])
    }
  }
  expect_log_valid(client)
})

test_that("the app document is read as text/html;profile=mcp-app with its _meta.ui, and not listed", {
  client <- start_apps()
  for (version in c("2025-11-25", "2026-07-28")) {
    if (version < "2026-07-28") initialize_caps(client, version, ui_caps) else client$rev <- version
    read <- app_rpc(client, 4, "resources/read", list(uri = "ui://fixture/page.html"), ui_caps, "ReadResourceResult")
    content <- read$result$contents[[1]]
    expect_identical(content$uri, "ui://fixture/page.html")
    expect_identical(content$mimeType, "text/html;profile=mcp-app")
    expect_match(content$text, "^<!DOCTYPE html>")
    expect_match(content$text, "mcpApp.on(\"result\"", fixed = TRUE)
    ui <- content[["_meta"]]$ui
    expect_identical(ui, list(
      csp = list(connectDomains = list("https://api.example.com"), resourceDomains = list("https://cdn.example.com", "https://*.example.org")),
      permissions = list(clipboardWrite = setNames(list(), character())),
      domain = "fixture.example.com", prefersBorder = TRUE
    ))
    expect_ext_valid("McpUiResourceMeta", ui)
    listed <- app_rpc(client, 5, "resources/list", setNames(list(), character()), ui_caps, "ListResourcesResult")
    uris <- vapply(listed$result$resources, function(r) r$uri, character(1))
    expect_identical(uris, "data://note")
  }
  expect_log_valid(client)
})

view_of <- function(msg) msg$result[["_meta"]][["mcpserver/view"]]

test_that("a widget result carries its view to hosts that show apps, and the same value to all", {
  skip_if_not_installed("DT")
  client <- start_apps()
  for (version in c("2025-11-25", "2026-07-28")) {
    if (version < "2026-07-28") initialize_caps(client, version, ui_caps) else client$rev <- version
    shown <- app_rpc(client, 6, "tools/call", list(name = "cars", arguments = list(n = 2L)), ui_caps, "CallToolResult")
    view <- view_of(shown)
    expect_match(view$html, "class=\"datatables html-widget", fixed = TRUE)
    expect_match(view$html, "Mazda RX4 Wag", fixed = TRUE)
    # Everything the table needs is inlined in the app's page already.
    expect_identical(view$dependencies, list())
    rows <- jsonlite::fromJSON(shown$result$content[[1]]$text)
    expect_equal(rows$mpg, c(21, 21))

    # The generic page inlines none of DT: its scripts come with the result.
    generic <- app_rpc(client, 7, "tools/call", list(name = "cars_generic", arguments = list(n = 2L)), ui_caps, "CallToolResult")
    shipped <- vapply(view_of(generic)$dependencies, function(d) d$name, character(1))
    expect_true(all(c("jquery", "dt-core", "datatables-binding") %in% shipped))
    expect_false("htmlwidgets" %in% shipped)
    dt_core <- view_of(generic)$dependencies[[which(shipped == "dt-core")]]
    expect_match(dt_core$scripts[[1]], "DataTables", fixed = TRUE)

    # A bare widget: the model reads a line about it.
    bare <- app_rpc(client, 8, "tools/call", list(name = "iris_table", arguments = setNames(list(), character())), ui_caps, "CallToolResult")
    expect_match(bare$result$content[[1]]$text, "interactive datatables view", fixed = TRUE)
    expect_match(view_of(bare)$html, "setosa", fixed = TRUE)

    # A client without the extension: the same content, and no view.
    if (version < "2026-07-28") initialize_caps(client, version, no_caps)
    plain <- app_rpc(client, 9, "tools/call", list(name = "cars", arguments = list(n = 2L)), no_caps, "CallToolResult")
    expect_null(plain$result[["_meta"]][["mcpserver/view"]])
    expect_identical(plain$result$content, shown$result$content)
  }
  expect_log_valid(client)
})

test_that("an app's own tool still answers a direct call", {
  client <- start_apps()
  initialize_caps(client, "2025-11-25", no_caps)
  msg <- app_rpc(client, 10, "tools/call", list(name = "double", arguments = list(n = 21)), no_caps, "CallToolResult")
  expect_identical(msg$result$content[[1]]$text, "42")
  expect_log_valid(client)
})

test_that("two different apps may not share a URI, and a resource may not take an app's", {
  a <- tool(function() 1, "A", name = "a", app = mcp_app("<p>a</p>", uri = "ui://same/app.html"))
  b <- tool(function() 2, "B", name = "b", app = mcp_app("<p>b</p>", uri = "ui://same/app.html"))
  expect_error(mcpserver:::build_catalog(list(a, b), NULL, NULL), "Two different apps")
  same <- tool(function() 3, "C", name = "c", app = mcp_app("<p>a</p>", uri = "ui://same/app.html"))
  built <- mcpserver:::build_catalog(list(a, same), NULL, NULL)
  expect_length(jsonlite::fromJSON(built$catalog, simplifyVector = FALSE)$resources, 1L)
  script <- server_script(c(
    "a <- tool(function() 1, 'A', name = 'a', app = mcp_app('<p>a</p>', uri = 'ui://same/app.html'))",
    "mcp_server(list(a), resources = list(resource('ui://same/app.html', 'mine')))"
  ))
  client <- start_server(script)
  expect_error(initialize(client), "Resource URIs must be unique", fixed = TRUE)
})
