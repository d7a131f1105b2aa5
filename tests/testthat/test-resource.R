# Resources and resource templates: definitions checked in R, and a real
# server process reading each kind of value on every revision.

test_that("resource definitions are checked when they are made", {
  expect_error(resource("no-scheme", "x"), "absolute URI")
  expect_error(resource("a://b", function(x) x), "needs `x`")
  expect_error(resource("a://b", NULL), "function or the contents")
  expect_error(resource("a://b", "x", size = -1), "size")
  expect_error(resource("a://b", "x", annotations = list(priority = 2)), "priority")
  expect_error(resource("a://b", "x", "x", "d", "text/plain", "extra"), "must be named")
  expect_error(resource_template("a://{x}{y}", function(x, y) x), "separated")
  expect_error(resource_template("a://{?q}", function(q) q), "not supported")
  expect_error(resource_template("a://{x}", function(y) y), "must take the variable")
  expect_error(resource_template("a://{x}", function(x, y) x), "needs `y`")
  expect_error(resource_template("a://{x}", function(x) x, complete = list(z = identity)), "`z`")
  expect_error(resource_template("a://{x}", function(x) x, complete = list(x = "no")), "function")
  r <- resource("data://mtcars/table", function() mtcars)
  expect_equal(r$name, "table")
  expect_output(print(r), "<mcpserver_resource> data://mtcars/table")
  t <- resource_template("f:///{+path}", function(path) path)
  expect_equal(t$variables, "path")
  expect_equal(resource_file("x.csv")$mime_type, "text/csv")
  expect_equal(resource_file("x.unknown")$mime_type, "application/octet-stream")
  expect_equal(resource_file("x.bin", "image/png")$mime_type, "image/png")
})

test_that("mcp_server() refuses bad catalogs before serving", {
  r <- resource("a://b", "x")
  expect_error(mcp_server(resources = list(r, r)), "given twice")
  expect_error(mcp_server(resources = list("a://b")), "`resources` must be")
  expect_error(mcp_server(prompts = r), "`prompts` must be")
  expect_error(mcp_server(), "`tools` is required")
})

test_that("mcp_resource_updated() outside a server does nothing", {
  expect_null(mcp_resource_updated("a://b"))
  expect_error(mcp_resource_updated(1), "single string")
})

test_that("resources are listed and read on every revision", {
  client <- start_server(fixture("resources.R"))
  for (rev in schema_revisions) {
    on_revision(client, rev)
    listed <- rpc(client, 1, "resources/list", result_type = "ListResourcesResult")$result
    uris <- vapply(listed$resources, `[[`, "", "uri")
    expect_equal(uris[1:3], c("test://static-text", "test://static-binary", "notes://all"))
    expect_equal(listed$resources[[1]]$annotations$audience, list("user"))
    expect_equal(is.null(listed$resources[[1]]$title), rev < "2025-06-18")
    expect_equal(is.null(listed$resources[[1]]$annotations$lastModified), rev < "2025-06-18")
    expect_equal(is.null(listed$ttlMs), rev < "2026-07-28")
    templates <- rpc(client, 2, "resources/templates/list", result_type = "ListResourceTemplatesResult")$result
    expect_equal(templates$resourceTemplates[[1]]$uriTemplate, "test://template/{id}/data")

    r <- read(client, 3, "test://static-text")$result
    expect_equal(r$contents, list(list(
      uri = "test://static-text", mimeType = "text/plain",
      text = "This is the content of the static text resource."
    )))
    r <- read(client, 4, "test://static-binary")$result
    expect_equal(r$contents[[1]]$mimeType, "image/png")
    expect_equal(r$contents[[1]]$blob, "iVBORw0KGgoAAQ==")
    r <- read(client, 5, "data://mtcars-head")$result
    expect_equal(r$contents[[1]]$mimeType, "application/json")
    expect_equal(jsonlite::fromJSON(r$contents[[1]]$text)$mpg, c(21, 21))
    r <- read(client, 6, "file:///data.csv")$result
    expect_equal(r$contents[[1]][c("mimeType", "text")], list(mimeType = "text/csv", text = "a,b\n1,2\n"))
    r <- read(client, 7, "test://template/123/data")$result
    expect_equal(r$contents[[1]]$uri, "test://template/123/data")
    expect_equal(r$contents[[1]]$mimeType, "application/json")
    expect_equal(jsonlite::fromJSON(r$contents[[1]]$text)$id, "123")
    r <- read(client, 8, "datasets://iris")$result
    expect_equal(jsonlite::fromJSON(r$contents[[1]]$text)$Species, c("setosa", "setosa"))
    if (rev >= "2026-07-28") {
      expect_equal(r$ttlMs, 0)
      expect_equal(r$cacheScope, "private")
    }
  }
  expect_equal(finish(client), 0)
})

test_that("a plot is read as a PNG image", {
  client <- start_server(fixture("resources.R"))
  initialize(client)
  r <- read(client, 1, "test://plot")$result
  expect_equal(r$contents[[1]]$mimeType, "image/png")
  png <- jsonlite::base64_dec(r$contents[[1]]$blob)
  expect_equal(png[2:4], charToRaw("PNG"))
  expect_equal(finish(client), 0)
})

test_that("unknown URIs, failures and time limits are errors, and serving goes on", {
  client <- start_server(fixture("resources.R"))
  for (rev in c("2025-06-18", "2026-07-28")) {
    on_revision(client, rev)
    missing <- "test://nonexistent-resource-for-conformance-testing"
    e <- read(client, 1, missing)$error
    expect_equal(e$code, if (rev >= "2026-07-28") -32602 else -32002)
    expect_equal(e$data$uri, missing)
    e <- read(client, 2, "test://fails")$error
    expect_equal(e$code, -32603)
    expect_match(e$message, "disk on fire")
    e <- read(client, 3, "test://template/..%2Fetc/data")$error
    expect_equal(e$code, -32602)
    e <- rpc(client, 4, "resources/read", list(uri = 5))$error
    expect_equal(e$code, -32602)
  }
  e <- read(client, 5, "test://slow")$error
  expect_equal(e$code, -32603)
  expect_match(e$message, "timed out after 1 second")
  expect_equal(read(client, 6, "notes://all")$result$contents[[1]]$text, "first")
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("subscribers learn that a tool changed a resource", {
  client <- start_server(fixture("resources.R"))
  initialize(client, "2025-11-25")
  expect_equal(rpc(client, 1, "resources/subscribe", list(uri = "notes://all"), "EmptyResult")$result,
               setNames(list(), character()))
  send(client, list(jsonrpc = "2.0", id = 2, method = "tools/call",
                    params = list(name = "add_note", arguments = list(text = "second"))))
  note <- receive(client)
  expect_equal(note$method, "notifications/resources/updated")
  expect_equal(note$params$uri, "notes://all")
  expect_wire_valid(client$log[[length(client$log)]]$line, "2025-11-25")
  expect_equal(receive(client)$result$content[[1]]$text, "Noted.")
  expect_equal(read(client, 3, "notes://all")$result$contents[[1]]$text, "first\nsecond")
  rpc(client, 4, "resources/unsubscribe", list(uri = "notes://all"))
  call_tool(client, 5, "add_note", list(text = "third"))
  expect_true(quiet_for(client, 0.3))

  # 2026-07-28: on a listen stream that asked for the URI.
  client$rev <- "2026-07-28"
  send(client, list(jsonrpc = "2.0", id = "s1", method = "subscriptions/listen", params = list(
    notifications = list(resourceSubscriptions = list("notes://all")), `_meta` = catalog_meta
  )))
  ack <- receive(client)
  expect_equal(ack$params$notifications$resourceSubscriptions, list("notes://all"))
  send(client, list(jsonrpc = "2.0", id = 6, method = "tools/call", params = list(
    name = "add_note", arguments = list(text = "fourth"), `_meta` = catalog_meta
  )))
  note <- receive(client)
  expect_equal(note$params[["_meta"]][["io.modelcontextprotocol/subscriptionId"]], "s1")
  expect_equal(receive(client)$id, 6)
  expect_equal(finish(client), 0)
  expect_log_valid(client)
})

test_that("resources are read beside concurrent tools on workers", {
  skip_if_not_installed("future")
  script <- server_script(c(
    "slow <- function(x) x * 2",
    "mcp_server(tool(slow, 'Doubles', arguments = list(x = type_number()), concurrent = TRUE),",
    "  workers = 1, resources = resource('a://b', function() 'read on the main thread'))"
  ))
  client <- start_server(script)
  initialize(client)
  expect_equal(read(client, 1, "a://b")$result$contents[[1]]$text, "read on the main thread")
  expect_equal(call_tool(client, 2, "slow", list(x = 2))$result$content[[1]]$text, "4")
  expect_equal(read(client, 3, "a://b")$result$contents[[1]]$text, "read on the main thread")
  expect_equal(finish(client, timeout = 30), 0)
})
