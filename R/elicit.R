#' Ask the user for input while a tool runs
#'
#' `mcp_elicit()` asks the person using the client a question, with a small
#' form, and returns the answer. Write the tool as straight-line R code; the
#' package makes it work with every protocol revision that can:
#'
#' * 2025-06-18 and 2025-11-25: the server sends the client an
#'   `elicitation/create` request and the tool waits for the answer.
#' * 2026-07-28: the call is answered with an `input_required` result; the
#'   client asks the user and calls the tool again with the answer, and the
#'   tool runs again from the start. `mcp_elicit()` then returns the answer
#'   at once, so code before it runs once per round: keep it free of side
#'   effects (or check [mcp_request()]). The state carried between rounds is
#'   signed, bound to the tool and its arguments, expires after ten minutes
#'   and is accepted once by each server process. Without a
#'   `request_state_key` only the process that issued it accepts it; with a
#'   key shared by several processes, each of them (or the server after a
#'   restart) accepts it once unless they share a `request_state_store` (see
#'   [mcp_server()]).
#' * In a task (see `task` in [tool()]), the question waits in the task's
#'   status until the client answers it.
#' * In a tool made with `tool(concurrent = TRUE)`, the worker's run ends at
#'   `mcp_elicit()`; the server asks the client in the revision's way (as
#'   above) and, once answered, runs the tool again from the start on a
#'   worker, where `mcp_elicit()` returns the answer at once. While the
#'   user thinks, the call holds no worker and no R thread (see
#'   `vignette("concurrency")`). As on 2026-07-28, code before each
#'   question runs once per question.
#'
#' A client that cannot ask (it did not declare the elicitation capability,
#' or speaks 2024-11-05 or 2025-03-26) makes `mcp_elicit()` raise an error,
#' which becomes a tool error the model can read. On 2026-07-28, where the
#' capability is declared on each request, a request without it is refused
#' instead: the tool stops at `mcp_elicit()` (an R `tryCatch(error = )` does
#' not see this) and the call is answered with the JSON-RPC error -32021
#' naming `elicitation` in `requiredCapabilities`, so the client can retry
#' declaring it. In a task, the task fails with that error.
#'
#' @param message The question, for the user.
#' @param schema The form: a [type_object()] whose properties are
#'   [type_string()], [type_number()], [type_integer()], [type_boolean()] or
#'   [type_enum()] of strings, or a named list of such helpers.
#' @return A list with `action` (`"accept"`, `"decline"` or `"cancel"`) and,
#'   when accepted, `content`: a named list of the answers. An answer
#'   holding text R cannot (a NUL character) raises an error naming the
#'   field.
#' @examples
#' greet <- function() {
#'   answer <- mcp_elicit("What is your name?", list(name = type_string()))
#'   if (answer$action != "accept") return("No name given.")
#'   paste0("Hello, ", answer$content$name, "!")
#' }
#' if (FALSE) {
#'   mcp_server(tool(greet, "Greet the user by name"))
#' }
#' @export
mcp_elicit <- function(message, schema = list()) {
  if (!is_string(message)) abort("`message` must be a single string.")
  if (!inherits(schema, "mcpserver_type")) {
    if (!is.list(schema) || (length(schema) > 0 && is.null(names(schema)))) {
      abort("`schema` must be a type_object() or a named list of type helpers.")
    }
    schema <- do.call(type_object, lapply(schema, as_mcp_type))
  }
  if (in_worker()) return(worker_elicit(message, schema))
  if (is.null(current_call())) abort("`mcp_elicit()` can only be used while a tool call runs.")
  the$asked <- the$asked + 1L
  key <- paste0("input-", the$asked)
  input_answer(rust(the$server$elicit(key, message, schema)))
}

# What mcp_elicit() makes of the server's `list(status, value)`.
input_answer <- function(answer) {
  switch(answer$status,
    answer = answer$value,
    needs_input = stop(structure(
      class = c("mcpserver_input_required", "condition"),
      list(message = "the tool needs input from the user", call = NULL)
    )),
    interrupted = stop(structure(class = c("interrupt", "condition"), list(message = "", call = NULL))),
    unavailable = abort(paste0("Cannot ask the user for input: ", answer$value, ".")),
    unusable = abort(paste0("The user's answer cannot be used: ", answer$value, ".")),
    invalid = abort(answer$value),
    abort(paste0("The user could not be asked: ", answer$value))
  )
}
