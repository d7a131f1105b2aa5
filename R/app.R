#' Show a tool's results in the chat as an interactive app
#'
#' `mcp_app()` makes an MCP App (the `io.modelcontextprotocol/ui` extension,
#' SEP-1865): an HTML document that hosts such as Claude, VS Code, ChatGPT
#' and Goose show inside the conversation, in a sandboxed frame, when a tool
#' that has it is called. Give it to [tool()]'s `app`. The document is
#' self-contained: the JavaScript and CSS of htmlwidgets and of htmltools
#' dependencies are inlined into it, so it needs no network (hosts allow
#' none unless `csp` asks for it).
#'
#' One exception: plotly charts load plotly.js from plotly's CDN
#' (`https://cdn.plot.ly`, which the app then declares in its `csp`). The
#' build R's plotly package installs compiles code from strings as it loads,
#' which hosts forbid (no `csp` can allow it), so the app uses plotly.js's
#' strict build of the same version, which does not. To serve it yourself,
#' attach a copy of that build as an htmltools dependency named
#' `"plotly-main"` of a higher version to the sample widget.
#'
#' The app receives the tool's result from the host. A tool whose function
#' returns an htmlwidget (a plotly chart, a DT table, a leaflet map, ...) or
#' an [app_result()] has it drawn by the app: the widget's data travels in
#' the result's `_meta`, which models do not read. Pages of your own read
#' the result in JavaScript through `window.mcpApp` (below).
#'
#' Only hosts that declared the extension (with the MIME type
#' `text/html;profile=mcp-app`) on protocol revisions from 2025-06-18 on
#' are sent the app: others get the plain tool, without `_meta.ui`, and its
#' text (and structured) result as if it had no app; tools only an app may
#' call (`tool(visibility = "app")`) are not listed for them. The server
#' declares the extension in its capabilities (`initialize` and
#' `server/discover`). The document is served by `resources/read` at its
#' `ui://` URI with MIME type `text/html;profile=mcp-app` and is left out of
#' `resources/list`: hosts find it through the tool.
#'
#' @section The page's JavaScript: `window.mcpApp`:
#' Every app document starts with a small script of this package that
#' speaks the extension's protocol with the host (its `ui/initialize`
#' handshake, the tool's input and result, size changes). Scripts of your
#' page use it through `window.mcpApp`:
#' * `mcpApp.on(event, fn)`: `fn` is called with the tool's `"result"` (a
#'   `CallToolResult`: `content`, `structuredContent`, `_meta`), its
#'   `"input"` (the arguments), `"cancelled"`, the host's `"context"`
#'   (theme, sizes, locale), `"render"` (a view was drawn) or
#'   `"teardown"`. A handler added after the event still gets the latest one.
#' * `mcpApp.callTool(name, arguments)`: calls a tool of this server
#'   through the host (a tool the app may call: `visibility` includes
#'   `"app"`, the default); a promise of the `CallToolResult`. Pass it to
#'   `mcpApp.render` to draw the view it carries, e.g.
#'   `mcpApp.callTool("next_page", {page: 2}).then(mcpApp.render)`.
#' * `mcpApp.sendMessage(text)` asks the host to add a message to the
#'   conversation; `mcpApp.openLink(url)` to open a link.
#'
#' Views are drawn into the element of class `mcpserver-view`: where an
#' htmlwidget stood in `ui`, or one added at the end of the page.
#'
#' @param ui What the app shows. `NULL` (the default): a page that draws
#'   the htmlwidget or HTML the tool returns (the widget's scripts then come
#'   with each result), or else shows the result's text. An htmlwidget: a
#'   sample of the widgets the tool returns (`plotly::plot_ly()`,
#'   `DT::datatable(data.frame())`): its scripts and styles are inlined into
#'   the page, and each result's widget is drawn in its place (the sample
#'   itself is not shown). htmltools tags (`htmltools::tagList()`), which
#'   may hold htmlwidgets (each stands for where results are drawn) and
#'   scripts that use `window.mcpApp`. Or HTML: a string of HTML
#'   (a whole document or a fragment), or the path of an `.html` file whose
#'   local scripts and stylesheets (`<script src>`, `<link rel="stylesheet">`)
#'   are inlined.
#' @param ... Not used; named options go after it.
#' @param uri The app's `ui://` URI, or `NULL` for `ui://<tool name>/app.html`.
#'   Tools sharing one app give it the same URI.
#' @param name,title,description The resource's name (by default the
#'   tool's), human-readable title and description, or `NULL`.
#' @param csp The origins the app may reach, or `NULL` for none (the
#'   extension's restrictive default): a named list of character vectors
#'   `connect_domains` (`fetch()`, WebSockets), `resource_domains` (scripts,
#'   styles, images, fonts), `frame_domains` (nested frames) and
#'   `base_uri_domains`, e.g. `list(resource_domains = "https://cdn.jsdelivr.net")`.
#' @param permissions Browser features the app asks for, or `NULL`: any of
#'   `"camera"`, `"microphone"`, `"geolocation"`, `"clipboard_write"`.
#'   Hosts may refuse them.
#' @param domain A dedicated origin for the app, in the form the host
#'   documents (say, for an API that allows only that origin), or `NULL`.
#' @param prefers_border `TRUE` or `FALSE` to ask for a visible border and
#'   background around the app, or `NULL` to leave it to the host.
#' @return An app definition, of class `mcpserver_app`.
#' @seealso [app_result()] to send the model data and the user a chart;
#'   `vignette("tools-and-results")`, section "Interactive output: MCP Apps";
#'   the example server in `system.file("examples", "apps", package =
#'   "mcpserver")`.
#' @examples
#' # A page of your own: it shows the result's structured content.
#' page <- mcp_app('<pre id="out">waiting...</pre>
#'   <script>mcpApp.on("result", function (r) {
#'     document.getElementById("out").textContent =
#'       JSON.stringify(r.structuredContent, null, 2);
#'   });</script>')
#' stats <- function(column = "mpg") as.list(summary(mtcars[[column]]))
#' tool(stats, "Summary statistics of a column of mtcars",
#'   arguments = list(column = type_enum(names(mtcars))),
#'   output_schema = type_from_schema('{"type": "object"}'),
#'   app = page
#' )
#' \donttest{
#' if (requireNamespace("plotly", quietly = TRUE)) {
#'   # A chart: the tool returns a plotly widget, the app draws it.
#'   ozone <- function(month = 5L) {
#'     days <- airquality[airquality$Month == month, ]
#'     plotly::plot_ly(days, x = ~Day, y = ~Ozone, type = "scatter", mode = "lines+markers")
#'   }
#'   tool(ozone, "Chart of daily ozone in New York in one month of 1973",
#'     arguments = list(month = type_integer()),
#'     app = mcp_app(plotly::plot_ly())
#'   )
#' }
#' }
#' @export
mcp_app <- function(ui = NULL, ..., uri = NULL, name = NULL, title = NULL, description = NULL,
                    csp = NULL, permissions = NULL, domain = NULL, prefers_border = NULL) {
  check_dots_empty(..., what = "mcp_app()", fun = mcp_app)
  if (!is.null(uri) && !(is_string(uri) && grepl("^ui://[^/?#]+", uri))) {
    abort("`uri` must be NULL or a ui:// URI, such as \"ui://charts/ozone.html\".")
  }
  for (arg in c("name", "title", "description", "domain")) {
    value <- get(arg, inherits = FALSE)
    if (!is.null(value) && !(is_string(value) && nzchar(value))) {
      abort(sprintf("`%s` must be NULL or a non-empty string.", arg))
    }
  }
  if (!is.null(prefers_border) && !is_flag(prefers_border)) {
    abort("`prefers_border` must be NULL, TRUE or FALSE.")
  }
  document <- app_document(ui)
  ui_meta <- drop_null(list(
    csp = with_origins(app_csp(csp), document$origins), permissions = app_permissions(permissions),
    domain = domain, prefersBorder = prefers_border
  ))
  structure(
    list(
      uri = uri, name = name, title = title, description = description,
      html = document$html, inlined = document$inlined, generic = is.null(ui),
      meta = if (length(ui_meta) > 0) list(ui = ui_meta)
    ),
    class = "mcpserver_app"
  )
}

#' A tool result for the model and a view for the user
#'
#' In a tool that has an app ([tool()]'s `app`), returns `value` as the
#' tool's result, for the model and for hosts that show no apps, exactly as
#' if the tool had returned `value` itself (text, or structured content with
#' an `output_schema`); hosts that show the app also receive `view`, which
#' the app draws. So the model reads the numbers while the user sees the
#' chart.
#'
#' A tool may also return an htmlwidget alone: the model then reads a line
#' saying that an interactive view is shown.
#'
#' @param value What the tool returns for the model: any value a tool may
#'   return (see [mcpserver-values]), or a [tool_result()]. If missing, a
#'   line of text saying a view is shown.
#' @param view An htmlwidget, htmltools tags or a string of HTML. Scripts in
#'   HTML given as a string do not run when it is drawn; the widgets'
#'   scripts do (those the app's page lacks come with the result).
#' @return An object of class `mcpserver_app_result`.
#' @examples
#' show_cars <- function(n = 5L) {
#'   cars <- head(mtcars[order(-mtcars$mpg), c("mpg", "hp", "wt")], n)
#'   app_result(cars, "<b>The most frugal cars</b>")
#' }
#' show_cars()
#' @export
app_result <- function(value, view) {
  if (missing(view)) abort("`view` is required: an htmlwidget, htmltools tags or a string of HTML.")
  if (!is_view(view)) abort("`view` must be an htmlwidget, htmltools tags or a string of HTML.")
  if (missing(value)) value <- view_summary(view)
  structure(list(value = value, view = view), class = "mcpserver_app_result")
}

#' @export
format.mcpserver_app <- function(x, ...) {
  kb <- nchar(x$html, type = "bytes") / 1024
  c(
    sprintf("<mcpserver_app> %s, %s kB", x$uri %||% "ui://<tool name>/app.html", format(round(kb, 1))),
    if (length(x$inlined) > 0) paste0("  inlines: ", paste(x$inlined, collapse = ", "))
  )
}

#' @export
print.mcpserver_app <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}

#' @export
format.mcpserver_app_result <- function(x, ...) {
  kind <- if (inherits(x$view, "htmlwidget")) class(x$view)[1] else "HTML"
  value <- utils::capture.output(utils::str(x$value, max.level = 1, give.attr = FALSE))
  c(sprintf("<mcpserver_app_result> a %s view, and for the model:", kind), paste0("  ", value))
}

#' @export
print.mcpserver_app_result <- function(x, ...) {
  cat(format(x), sep = "\n")
  invisible(x)
}

# --- internals --------------------------------------------------------------

app_extension <- "io.modelcontextprotocol/ui"
app_mime_type <- "text/html;profile=mcp-app"
# Where a result's view travels: `_meta`, which models do not read.
view_key <- "mcpserver/view"

is_view <- function(x) {
  inherits(x, c("htmlwidget", "shiny.tag", "shiny.tag.list", "html")) || is_string(x)
}

view_summary <- function(view) {
  kind <- if (inherits(view, "htmlwidget")) class(view)[1] else "HTML"
  sprintf("An interactive %s view of this result is shown in hosts that display MCP Apps.", kind)
}

app_csp <- function(csp) {
  if (is.null(csp)) return(NULL)
  fields <- c(
    connect_domains = "connectDomains", resource_domains = "resourceDomains",
    frame_domains = "frameDomains", base_uri_domains = "baseUriDomains"
  )
  if (!is.list(csp) || length(csp) == 0 || is.null(names(csp)) || !all(names(csp) %in% names(fields))) {
    abort(sprintf(
      "`csp` must be NULL or a named list of %s.",
      paste0("`", names(fields), "`", collapse = ", ")
    ))
  }
  for (field in names(csp)) {
    origins <- csp[[field]]
    if (!is.character(origins) || anyNA(origins) || !all(nzchar(origins))) {
      abort(sprintf("`csp$%s` must be a character vector of origins.", field))
    }
  }
  stats::setNames(lapply(csp, function(origins) I(unname(origins))), fields[names(csp)])
}

app_permissions <- function(permissions) {
  if (is.null(permissions)) return(NULL)
  known <- c(camera = "camera", microphone = "microphone", geolocation = "geolocation", clipboard_write = "clipboardWrite")
  if (!is.character(permissions) || length(permissions) == 0 || !all(permissions %in% names(known))) {
    abort(sprintf("`permissions` must be NULL or some of %s.", paste0("\"", names(known), "\"", collapse = ", ")))
  }
  empty <- stats::setNames(list(), character())
  stats::setNames(rep(list(empty), length(unique(permissions))), known[unique(permissions)])
}

# --- the document -------------------------------------------------------------

# The self-contained document of `ui`, and the dependencies it inlines.
app_document <- function(ui) {
  if (is.null(ui)) {
    # Results' widgets bring their own scripts, but htmlwidgets' runtime is
    # inlined here when it is installed (every widget needs it).
    deps <- if (requireNamespace("htmlwidgets", quietly = TRUE)) list(htmlwidgets_runtime())
    return(assemble_document(list(head = inline_dependencies(deps), body = "", full = NULL), deps, generic = TRUE))
  }
  if (inherits(ui, c("htmlwidget", "shiny.tag", "shiny.tag.list"))) {
    need_htmltools()
    rendered <- htmltools::renderTags(slot_views(ui))
    deps <- usable_dependencies(rendered$dependencies)
    parts <- list(head = paste0(inline_dependencies(deps), rendered$head), body = rendered$html, full = NULL)
    return(assemble_document(parts, rendered$dependencies, origins = remote_origins(deps)))
  }
  if (inherits(ui, "html") || (is_string(ui) && grepl("<", ui, fixed = TRUE))) {
    return(assemble_document(html_parts(paste(ui, collapse = "\n")), list()))
  }
  if (is_string(ui) && file.exists(ui) && !dir.exists(ui)) {
    text <- inline_file_assets(read_text(ui), dirname(normalizePath(ui)))
    return(assemble_document(html_parts(text), list()))
  }
  abort("`ui` must be NULL, an htmlwidget, htmltools tags, a string of HTML or the path of an HTML file.")
}

need_htmltools <- function() {
  if (!requireNamespace("htmltools", quietly = TRUE)) {
    abort("Apps made of htmlwidgets or tags need the htmltools package.")
  }
}

htmlwidgets_runtime <- function() {
  htmltools::htmlDependency("htmlwidgets", as.character(utils::packageVersion("htmlwidgets")),
    src = system.file("www", package = "htmlwidgets"), script = "htmlwidgets.js"
  )
}

# Each htmlwidget in a tag tree becomes the element results are drawn in,
# carrying the widget's dependencies (resolved as drawing it would: some
# widgets, such as plotly, add theirs while they are rendered).
slot_views <- function(x) {
  if (inherits(x, "htmlwidget")) {
    # A sample drawn only for its dependencies: what it says about its own
    # (often empty) data is noise.
    deps <- suppressMessages(suppressWarnings(htmltools::renderTags(x)$dependencies))
    return(htmltools::attachDependencies(htmltools::tags$div(class = "mcpserver-view"), deps))
  }
  if (inherits(x, "shiny.tag")) {
    x$children <- lapply(x$children, slot_views)
    return(x)
  }
  if (is.list(x) && (inherits(x, "shiny.tag.list") || !is.object(x))) {
    x[] <- lapply(x, slot_views)
  }
  x
}

# An HTML string: a whole document (the runtime goes at the start of its
# head) or a fragment (put in a document's body).
html_parts <- function(text) {
  if (grepl("<html[\\s>]|<!doctype", text, ignore.case = TRUE, perl = TRUE)) {
    return(list(full = text))
  }
  list(head = "", body = text, full = NULL)
}

# `deps` are the dependencies the page has (so results need not bring them),
# `origins` those its remote ones load from.
assemble_document <- function(parts, deps, generic = FALSE, origins = character()) {
  inlined <- unique(vapply(deps, function(d) d$name, character(1)))
  options <- list(name = "mcpserver app", version = as.character(utils::packageVersion("mcpserver")), generic = generic, inlined = I(inlined))
  runtime <- paste0(
    "<script>window.mcpAppOptions = ", escape_inline_script(rust(json_encode_(options, FALSE))), ";</script>\n",
    "<script>", escape_inline_script(runtime_script()), "</script>\n"
  )
  html <- if (is.null(parts$full)) {
    paste0(
      "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n",
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
      runtime, parts$head, "\n</head>\n<body>\n", parts$body, "\n</body>\n</html>\n"
    )
  } else {
    inject_head(parts$full, paste0("<meta charset=\"utf-8\">\n", runtime))
  }
  Encoding(html) <- "UTF-8"
  list(html = html, inlined = inlined, origins = origins)
}

# Puts `block` first in the document's head (making one if it has none).
inject_head <- function(text, block) {
  at <- regexpr("<head(\\s[^>]*)?>", text, ignore.case = TRUE, perl = TRUE)
  if (at > 0) return(insert_at(text, at + attr(at, "match.length"), paste0("\n", block)))
  at <- regexpr("<html(\\s[^>]*)?>", text, ignore.case = TRUE, perl = TRUE)
  if (at > 0) return(insert_at(text, at + attr(at, "match.length"), paste0("\n<head>\n", block, "</head>\n")))
  paste0(block, text)
}

insert_at <- function(text, at, what) paste0(substr(text, 1, at - 1), what, substring(text, at))

runtime_script <- function() {
  path <- system.file("apps", "mcpserver-app.js", package = "mcpserver")
  if (!nzchar(path)) abort("internal: the app runtime (inst/apps/mcpserver-app.js) is missing.")
  read_text(path)
}

read_text <- function(path) {
  text <- rawToChar(readBin(path, "raw", file.size(path)))
  Encoding(text) <- "UTF-8"
  text
}

# Text inside <script> ends at the first "</script" and is parsed in an
# escaped state after "<!--"; both are written so that JavaScript reads the
# same string (`<\/` and `<\!` are identity escapes) and HTML sees neither.
escape_inline_script <- function(js) {
  js <- gsub("</(script)", "<\\\\/\\1", js, ignore.case = TRUE, perl = TRUE)
  gsub("<!--", "<\\!--", js, fixed = TRUE)
}

escape_inline_style <- function(css) gsub("</(style)", "<\\\\/\\1", css, ignore.case = TRUE, perl = TRUE)

# --- dependencies -------------------------------------------------------------

plotly_cdn <- "https://cdn.plot.ly"

# The dependencies an app page uses for `deps`. Two of plotly's cannot work
# there as R installs them: plotly.js's full build compiles code from
# strings when it loads (`new Function`), which hosts forbid (the
# extension's CSP has no way to allow 'unsafe-eval'), so its strict build
# of the same version, which does not, is loaded from plotly's CDN (whose
# origin the app then declares); and the typedarray polyfill, for browsers
# without typed arrays, only throws in browsers that have them.
usable_dependencies <- function(deps) {
  usable <- lapply(deps, function(dep) {
    scripts <- unlist(dependency_scripts(dep))
    if (identical(dep$name, "typedarray") && any(basename(scripts) == "typedarray.min.js")) return(NULL)
    if (identical(dep$name, "plotly-main") && !is.null(dep$src$file) &&
        any(basename(scripts) %in% c("plotly-latest.min.js", "plotly.min.js"))) {
      return(htmltools::htmlDependency("plotly-main", dep$version,
        src = c(href = plotly_cdn), script = sprintf("plotly-strict-%s.min.js", dep$version)
      ))
    }
    dep
  })
  Filter(Negate(is.null), usable)
}

is_remote <- function(dep) is.null(dep$src$file) && !is.null(dep$src$href)

# The URLs of `files` (none for none: paste0() would make one of the folder).
remote_url <- function(dep, files) {
  if (length(files) == 0) return(character())
  paste0(sub("/+$", "", dep$src$href), "/", files)
}

# The origins the remote dependencies load from.
remote_origins <- function(deps) {
  hrefs <- unlist(lapply(Filter(is_remote, deps), function(d) d$src$href))
  unique(sub("^([a-z][a-z0-9+.-]*://[^/]+).*$", "\\1", hrefs, ignore.case = TRUE))
}

# A CSP (wire form) that also allows scripts and styles from `origins`.
with_origins <- function(csp, origins) {
  if (length(origins) == 0) return(csp)
  csp <- csp %||% list()
  csp$resourceDomains <- I(unique(c(unclass(csp$resourceDomains), origins)))
  csp
}

# The folder of a dependency's files, or an error for one only on the web
# (a self-contained app cannot load it; a CSP could allow its origin, but
# then it is not an R dependency to inline).
dependency_dir <- function(dep) {
  dir <- dep$src$file
  if (is.null(dir)) {
    abort(sprintf(
      "The view needs \"%s\", which the app's page has not got and which cannot come with the result (it is loaded from %s): make the app with a sample of this widget, mcp_app(<widget>).",
      dep$name, dep$src$href %||% "a URL"
    ))
  }
  if (!is.null(dep$package)) dir <- system.file(dir, package = dep$package)
  dir
}

dependency_scripts <- function(dep) {
  lapply(dep$script, function(s) if (is.list(s)) s$src else s)
}

# One dependency as text: its stylesheets (with the files they refer to
# made data: URIs) and its scripts, in order.
dependency_payload <- function(dep) {
  dir <- dependency_dir(dep)
  stylesheets <- lapply(dep$stylesheet, function(s) if (is.list(s)) s$href else s)
  drop_null(list(
    name = dep$name, version = as.character(dep$version),
    stylesheets = I(vapply(as.character(unlist(stylesheets)), function(file) {
      path <- file.path(dir, file)
      inline_css_urls(read_text(path), dirname(path))
    }, character(1), USE.NAMES = FALSE)),
    scripts = I(vapply(as.character(unlist(dependency_scripts(dep))), function(file) {
      read_text(file.path(dir, file))
    }, character(1), USE.NAMES = FALSE)),
    head = dep$head
  ))
}

inline_dependencies <- function(deps) {
  parts <- lapply(deps, function(dep) {
    if (is_remote(dep)) {
      styles <- unlist(lapply(dep$stylesheet, function(s) if (is.list(s)) s$href else s))
      scripts <- unlist(dependency_scripts(dep))
      return(c(
        sprintf("<!-- %s %s, from %s -->", dep$name, dep$version, dep$src$href),
        sprintf("<link rel=\"stylesheet\" href=\"%s\">", remote_url(dep, styles)),
        sprintf("<script src=\"%s\"></script>", remote_url(dep, scripts))
      ))
    }
    payload <- dependency_payload(dep)
    c(
      sprintf("<!-- %s %s -->", payload$name, payload$version),
      sprintf("<style>\n%s\n</style>", escape_inline_style(payload$stylesheets)),
      sprintf("<script>\n%s\n</script>", escape_inline_script(payload$scripts)),
      payload$head
    )
  })
  paste(unlist(parts), collapse = "\n")
}

image_types <- c(
  png = "image/png", gif = "image/gif", jpg = "image/jpeg", jpeg = "image/jpeg", svg = "image/svg+xml",
  webp = "image/webp", woff = "font/woff", woff2 = "font/woff2", ttf = "font/ttf", otf = "font/otf",
  eot = "application/vnd.ms-fontobject"
)

# url(...) references of a stylesheet to local files become data: URIs
# (the extension's default CSP allows images from data:, and nothing from
# elsewhere). Remote and missing ones are left as they are.
inline_css_urls <- function(css, dir) {
  pattern <- "url\\(\\s*(['\"]?)([^'\")]+)\\1\\s*\\)"
  found <- gregexpr(pattern, css, perl = TRUE)[[1]]
  if (found[1] == -1) return(css)
  matches <- regmatches(css, list(found))[[1]]
  replaced <- vapply(matches, function(m) {
    ref <- sub(pattern, "\\2", m, perl = TRUE)
    file <- sub("[?#].*$", "", ref)
    if (grepl("^(data:|[a-z][a-z0-9+.-]*:|//|#)", ref, ignore.case = TRUE) || !nzchar(file)) return(m)
    path <- file.path(dir, file)
    if (!file.exists(path) || dir.exists(path)) return(m)
    type <- image_types[tolower(tools::file_ext(path))]
    if (is.na(type)) type <- "application/octet-stream"
    bytes <- readBin(path, "raw", file.size(path))
    sprintf("url(\"data:%s;base64,%s\")", type, base64_encode_(bytes))
  }, character(1), USE.NAMES = FALSE)
  regmatches(css, list(found)) <- list(replaced)
  css
}

# An HTML file's local <script src> and <link rel="stylesheet"> become
# inline elements.
inline_file_assets <- function(text, dir) {
  local_file <- function(ref) {
    if (grepl("^([a-z][a-z0-9+.-]*:|//)", ref, ignore.case = TRUE)) return(NULL)
    path <- file.path(dir, sub("[?#].*$", "", ref))
    if (file.exists(path) && !dir.exists(path)) path
  }
  replace_all <- function(text, pattern, make) {
    found <- gregexpr(pattern, text, perl = TRUE, ignore.case = TRUE)[[1]]
    if (found[1] == -1) return(text)
    matches <- regmatches(text, list(found))[[1]]
    regmatches(text, list(found)) <- list(vapply(matches, make, character(1), USE.NAMES = FALSE))
    text
  }
  attribute <- function(tag, name) {
    m <- regmatches(tag, regexec(sprintf("\\b%s\\s*=\\s*[\"']([^\"']+)[\"']", name), tag, ignore.case = TRUE))[[1]]
    if (length(m) == 2) m[2] else ""
  }
  text <- replace_all(text, "<script\\b[^>]*\\bsrc\\s*=[^>]*>\\s*</script>", function(tag) {
    path <- local_file(attribute(tag, "src"))
    if (is.null(path)) return(tag)
    type <- attribute(tag, "type")
    sprintf("<script%s>\n%s\n</script>", if (nzchar(type)) sprintf(" type=\"%s\"", type) else "", escape_inline_script(read_text(path)))
  })
  replace_all(text, "<link\\b[^>]*>", function(tag) {
    if (!grepl("stylesheet", attribute(tag, "rel"), ignore.case = TRUE)) return(tag)
    path <- local_file(attribute(tag, "href"))
    if (is.null(path)) return(tag)
    sprintf("<style>\n%s\n</style>", escape_inline_style(inline_css_urls(read_text(path), dirname(path))))
  })
}

# --- tools with an app --------------------------------------------------------

# The `_meta.ui` of a tool (`tool()`'s `app` and `visibility`), or NULL.
tool_ui_meta <- function(app, visibility, name) {
  if (!is.null(app) && !inherits(app, "mcpserver_app")) abort("`app` must be NULL or an app made with mcp_app().")
  if (!is.null(visibility)) {
    if (!is.character(visibility) || length(visibility) == 0 || !all(visibility %in% c("model", "app"))) {
      abort("`visibility` must be NULL, \"model\", \"app\" or c(\"model\", \"app\").")
    }
    visibility <- I(intersect(c("model", "app"), visibility))
  }
  if (is.null(app) && is.null(visibility)) return(NULL)
  drop_null(list(resourceUri = if (!is.null(app)) app$uri %||% sprintf("ui://%s/app.html", name), visibility = visibility))
}

# A tool's `meta` with the extension's keys added (the deprecated flat
# `ui/resourceUri` too, as the extension's own server helper writes it, for
# hosts that read only that).
with_ui_meta <- function(meta, ui) {
  if (is.null(ui)) return(meta)
  if (!is.null(meta$ui) || !is.null(meta[["ui/resourceUri"]])) {
    abort("`meta` must not hold `ui` or `ui/resourceUri` when `app` or `visibility` is given: they set it.")
  }
  c(meta, list(ui = ui), if (!is.null(ui$resourceUri)) list(`ui/resourceUri` = ui$resourceUri))
}

# The resources serving the apps of `tools`: one per URI (tools may share
# an app), left out of resources/list.
app_resources <- function(tools) {
  found <- list()
  for (t in tools) {
    spec <- tool_spec(t)
    app <- spec$app
    if (is.null(app)) next
    uri <- spec$meta$ui$resourceUri
    if (!is.null(found[[uri]])) {
      if (!identical(found[[uri]]$app[c("html", "meta")], app[c("html", "meta")])) {
        abort(sprintf("Two different apps have the URI \"%s\": give each its own `uri`.", uri))
      }
      next
    }
    found[[uri]] <- list(app = app, tool = spec$name)
  }
  lapply(names(found), function(uri) {
    app <- found[[uri]]$app
    contents <- content_resource(uri, text = app$html, mime_type = app_mime_type, meta = app$meta %||% list())
    r <- resource(uri, contents,
      name = app$name %||% found[[uri]]$tool, title = app$title,
      description = app$description, mime_type = app_mime_type
    )
    r$listed <- FALSE
    r
  })
}

# The function the server runs for a tool with an app: the tool, whose
# htmlwidget or app_result() becomes its value plus (for hosts that show
# apps) the view for the app. It keeps the tool's definition but not the
# app's document (a worker needs only the names of what it inlines).
app_handler <- function(tool) {
  spec <- tool_spec(tool)
  if (is.null(spec$app)) return(tool)
  app <- list(inlined = spec$app$inlined)
  fun <- tool
  handler <- function(...) app_value(fun(...), app)
  spec$app <- app
  attr(handler, "mcpserver_tool") <- spec
  class(handler) <- class(tool)
  handler
}

app_value <- function(value, app) {
  if (inherits(value, "mcpserver_app_result")) {
    view <- value$view
    value <- value$value
  } else if (inherits(value, "htmlwidget")) {
    view <- value
    value <- view_summary(view)
  } else {
    return(value)
  }
  if (!host_shows_apps()) return(value)
  structure(
    list(value = value, meta = stats::setNames(list(view_payload(view, app$inlined)), view_key)),
    class = "mcpserver_app_value"
  )
}

# Whether the client of the call running now declared the extension (and
# speaks a revision that carries it).
host_shows_apps <- function() {
  request <- mcp_request()
  if (is.null(request) || !is_string(request$protocol_version) || request$protocol_version < "2025-06-18") {
    return(FALSE)
  }
  settings <- request$capabilities$extensions[[app_extension]]
  app_mime_type %in% unlist(settings$mimeTypes)
}

# A view as the app draws it: its HTML, and the dependencies the app's
# document does not inline.
view_payload <- function(view, inlined) {
  if (is_string(view) && !inherits(view, "html") && !requireNamespace("htmltools", quietly = TRUE)) {
    return(list(html = view, dependencies = I(list())))
  }
  need_htmltools()
  if (is.character(view)) view <- htmltools::HTML(view)
  rendered <- htmltools::renderTags(view)
  missing <- Filter(function(d) !d$name %in% inlined, usable_dependencies(rendered$dependencies))
  list(html = as.character(rendered$html), dependencies = I(lapply(missing, dependency_payload)))
}
