# Helpers for the resource and prompt tests: requests of either era,
# checked against the wire schema of the revision in use.

catalog_meta <- list(
  "io.modelcontextprotocol/protocolVersion" = "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities" = setNames(list(), character())
)

# A request of `rev` (after initialize for the handshake era), its result
# type checked against the wire schema.
rpc <- function(client, id, method, params = setNames(list(), character()), result_type = NULL) {
  if (client$rev >= "2026-07-28") params[["_meta"]] <- catalog_meta
  msg <- request(client, id, method, params)
  expect_wire_valid(client$log[[length(client$log)]]$line, client$rev, if (is.null(msg$error)) result_type)
  msg
}

on_revision <- function(client, rev) {
  if (rev < "2026-07-28") initialize(client, rev) else client$rev <- rev
}

read <- function(client, id, uri) rpc(client, id, "resources/read", list(uri = uri), "ReadResourceResult")
