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
#'   and is accepted once by each server process (a retry that brings
#'   answers but no state answers the first round). Without a
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
#' declaring it. In a task, the task fails with that error. To ask only
#' clients that can answer, look at `mcp_request()$capabilities` first.
#'
#' @section Forms:
#' A form is a flat list of fields, each one of:
#'
#' | Field | Helper | Answer in R |
#' |---|---|---|
#' | text | `type_string(default = "John")` | a string |
#' | number | `type_number(default = 95.5)`, `type_integer(default = 30)` | a double, an integer |
#' | yes/no | `type_boolean(default = TRUE)` | `TRUE`/`FALSE` |
#' | one choice | `type_enum(c("a", "b"), default = "a")` | a string |
#' | one choice, labelled | `type_enum(c("a", "b"), titles = c("Alpha", "Beta"))` | a string (the value) |
#' | several choices | `type_array(type_enum(c("a", "b")), default = "a")`, with `titles =` for labels | a character vector |
#' | any other form field | `type_from_schema('{"type": "string", "format": "email"}')` | by its type |
#'
#' `type_from_schema()` takes any field of the protocol's restricted form
#' schema (string with `minLength`/`maxLength`/`format`, number with
#' `minimum`/`maximum`, the legacy `enum` with `enumNames`, `title`s, ...);
#' the form is checked when `mcp_elicit()` runs, and a field the protocol
#' does not allow is an error naming it. Clients of the 2025-06-18 revision
#' get labelled choices as `enumNames` and no defaults but on yes/no fields,
#' and cannot be asked for several choices (the tool gets an error saying
#' so).
#'
#' @param message The question, for the user.
#' @param schema The form: a [type_object()] whose properties are fields
#'   (see Forms), or a named list of such helpers.
#' @return A list with `action` (`"accept"`, `"decline"` or `"cancel"`) and,
#'   when accepted, `content`: a named list of the answers. An answer
#'   holding text R cannot (a NUL character) raises an error naming the
#'   field.
#' @seealso [mcp_sample()] to ask the model, [mcp_roots()] for the client's
#'   roots, and [mcp_ask()] to ask several questions at once.
#' @examples
#' greet <- function() {
#'   answer <- mcp_elicit("What is your name?", list(name = type_string()))
#'   if (answer$action != "accept") return("No name given.")
#'   paste0("Hello, ", answer$content$name, "!")
#' }
#' order_pizza <- function() {
#'   answer <- mcp_elicit("Your pizza", list(
#'     size = type_enum(c("s", "m", "l"), titles = c("Small", "Medium", "Large"), default = "m"),
#'     toppings = type_array(type_enum(c("olives", "ham", "basil")), required = FALSE),
#'     extra_cheese = type_boolean(default = FALSE)
#'   ))
#'   if (answer$action != "accept") return("No order.")
#'   paste(answer$content$size, paste(answer$content$toppings, collapse = ", "))
#' }
#' if (FALSE) {
#'   mcp_server(list(tool(greet, "Greet the user by name"), tool(order_pizza, "Order a pizza")))
#' }
#' @export
mcp_elicit <- function(message, schema = list()) {
  request <- ask_user(message, schema)
  # A worker call ends with the question; the main thread asks (R/workers.R).
  if (in_worker()) return(worker_elicit(message, request$form))
  mcp_ask(request)[[1]]
}

#' Ask the client's model for a completion while a tool runs
#'
#' `mcp_sample()` asks the language model behind the client
#' (`sampling/createMessage`) and returns its answer; the client may show
#' the request to the user first. It needs a client that declared the
#' `sampling` capability, and works as [mcp_elicit()] does: a request to the
#' client while the tool waits (2024-11-05 to 2025-11-25), or an
#' `input_required` round (2026-07-28; the tool runs again from the start
#' with the answer). Without the capability it raises an error that becomes
#' a tool error, or, on 2026-07-28, the call is answered with -32021 naming
#' `sampling`. The protocol deprecates sampling in 2026-07-28 (clients may
#' drop it): prefer returning what the model needs in the tool's result.
#'
#' @param messages The conversation so far: a character vector (each
#'   element one user message), or a list of messages, each
#'   `list(role = "user" or "assistant", content = <a string or a content
#'   block such as content_text(), content_image() or content_audio()>)`.
#'   Clients of 2024-11-05 cannot be sent audio: the call then raises an
#'   error saying so.
#' @param max_tokens Most tokens the model may produce.
#' @param system_prompt A system prompt, or `NULL`.
#' @param temperature A sampling temperature, or `NULL`.
#' @param stop_sequences A character vector of stop sequences, or `NULL`.
#' @param model_preferences `NULL` or a named list: `hints` (a character
#'   vector of model names, best first), `cost_priority`, `speed_priority`,
#'   `intelligence_priority` (numbers from 0 to 1).
#' @param metadata `NULL` or a named list passed to the client as it is.
#' @return A list: `text` (the text of the answer, its text blocks joined by
#'   newlines; `NA` when it holds none), `role`, `model` (the model that
#'   answered), `stop_reason` (`NULL` if the client gave none) and
#'   `content` (the answer's content as the client sent it).
#' @examples
#' capital <- function(country) {
#'   answer <- mcp_sample(paste("What is the capital of", country, "?"), max_tokens = 100)
#'   answer$text
#' }
#' @export
mcp_sample <- function(messages, max_tokens = 1000, system_prompt = NULL,
                       temperature = NULL, stop_sequences = NULL,
                       model_preferences = NULL, metadata = NULL) {
  mcp_ask(ask_model(messages,
    max_tokens = max_tokens, system_prompt = system_prompt,
    temperature = temperature, stop_sequences = stop_sequences,
    model_preferences = model_preferences, metadata = metadata
  ))[[1]]
}

#' The client's roots: the directories and files it lets the server see
#'
#' `mcp_roots()` asks the client for its roots (`roots/list`), the
#' `file://` locations the user opened in it (a workspace, a project). It
#' needs a client that declared the `roots` capability and works as
#' [mcp_elicit()] does (a request while the tool waits before 2026-07-28, an
#' `input_required` round on 2026-07-28, -32021 naming `roots` when a
#' 2026-07-28 request lacks it). Roots are advice about where to work, not
#' a sandbox. The protocol deprecates roots in 2026-07-28: prefer paths as
#' tool arguments.
#'
#' @return A data frame with one row per root: `uri` and `name` (`NA` where
#'   the client gave none).
#' @examples
#' list_workspace <- function() {
#'   roots <- mcp_roots()
#'   paste(roots$uri, collapse = "\n")
#' }
#' @export
mcp_roots <- function() {
  mcp_ask(ask_roots())[[1]]
}

#' Ask several questions at once
#'
#' `mcp_ask()` sends several requests for input together, each under its
#' own key, and returns their answers by key. On 2026-07-28 they all go in
#' one `input_required` round (so the user answers once, and keys such as
#' `user_name` are what the client sees). Before, and in a task, they are
#' all sent at once while the tool waits, and the tool goes on once every
#' one has its answer: a client may answer them in any order, and in a task
#' of the 2026-07-28 tasks extension it may answer some in one
#' `tasks/update` and the rest later (the task stays `input_required`,
#' listing only the requests still unanswered). The requests are made with `ask_user()`
#' (a form, as [mcp_elicit()]), `ask_model()` (as [mcp_sample()]) and
#' `ask_roots()` (as [mcp_roots()]), and each answer has the form the
#' matching single function returns.
#'
#' Keys name the requests on the wire: they must be unique within one tool
#' call (asking the same key twice in a call is an error), and keys of the
#' form `input-<number>` are kept for unnamed requests.
#'
#' @param ... Requests, named by their keys (unnamed ones get `input-1`,
#'   `input-2`, ... in the order the call asks them).
#' @param message,schema For `ask_user()`: as in [mcp_elicit()].
#' @param messages,max_tokens,system_prompt,temperature,stop_sequences,model_preferences,metadata
#'   For `ask_model()`: as in [mcp_sample()].
#' @return `mcp_ask()`: a named list of the answers. `ask_*()`: a request
#'   for `mcp_ask()`.
#' @examples
#' welcome <- function() {
#'   got <- mcp_ask(
#'     user_name = ask_user("What is your name?", list(name = type_string())),
#'     greeting = ask_model("Generate a greeting", max_tokens = 50),
#'     client_roots = ask_roots()
#'   )
#'   paste(got$greeting$text, got$user_name$content$name, "- roots:", nrow(got$client_roots))
#' }
#' @export
mcp_ask <- function(...) {
  requests <- list(...)
  if (length(requests) == 0L) abort("`mcp_ask()` needs at least one request.")
  if (!all(vapply(requests, inherits, logical(1), "mcpserver_input_request"))) {
    abort("Each request must be made with ask_user(), ask_model() or ask_roots().")
  }
  if (in_worker()) {
    abort("In a concurrent tool (`concurrent = TRUE`) only `mcp_elicit()` can ask the client yet: ask for the rest on the main thread.")
  }
  job <- current_call()
  if (is.null(job)) abort("Input can only be asked for while a tool call runs.")
  keys <- input_keys(names(requests) %||% rep("", length(requests)), job)
  answers <- vector("list", length(requests))
  names(answers) <- keys
  waiting <- FALSE
  # One round: what the client is asked while the tool waits goes out
  # together, and comes back once every request has its answer.
  replies <- rust(the$server$ask_inputs(keys, lapply(requests, unclass)))
  for (i in seq_along(requests)) {
    reply <- replies[[i]]
    if (identical(reply$status, "needs_input")) {
      waiting <- TRUE
    } else if (!identical(reply$status, "not_asked")) {
      answers[i] <- list(input_answer(reply, requests[[i]]))
    }
  }
  # Every request of this round is registered before the call stops.
  if (waiting) {
    stop(structure(
      class = c("mcpserver_input_required", "condition"),
      list(message = "the tool needs input from the client", call = NULL)
    ))
  }
  answers
}

# The keys of one round: given names, or `input-<n>` counting per call;
# each used once per call.
input_keys <- function(given, job) {
  if (!identical(the$keys_call, job$id)) {
    the$keys_call <- job$id
    the$keys <- character()
  }
  keys <- character()
  for (name in given) {
    if (is.na(name) || name == "") {
      the$asked <- the$asked + 1L
      name <- paste0("input-", the$asked)
    } else if (grepl("^input-[0-9]+$", name)) {
      abort(paste0("The key `", name, "` is kept for unnamed requests: choose another name."))
    }
    if (name %in% c(the$keys, keys)) {
      abort(paste0("The key `", name, "` was already asked in this tool call: each key may be asked once."))
    }
    keys <- c(keys, name)
  }
  the$keys <- c(the$keys, keys)
  keys
}

# What a request's `list(status, value)` from the server means for R: the
# answer, or the error. Without `request`, an elicitation's (as a worker
# call gets them, R/workers.R).
input_answer <- function(reply, request = NULL) {
  value <- reply$value
  method <- request$method %||% "elicitation/create"
  # Elicitation asks the user; sampling and roots ask the client.
  who <- if (identical(method, "elicitation/create")) "user" else "client"
  switch(reply$status,
    answer = switch(method,
      `sampling/createMessage` = sampled_answer(value),
      `roots/list` = roots_frame(value),
      value
    ),
    interrupted = stop(structure(class = c("interrupt", "condition"), list(message = "", call = NULL))),
    unavailable = abort(paste0("Cannot ask the ", who, " for input: ", value, ".")),
    unusable = abort(paste0("The ", who, "'s answer cannot be used: ", value, ".")),
    invalid = abort(value),
    abort(paste0("The ", who, " could not be asked: ", value))
  )
}

sampled_answer <- function(x) {
  blocks <- if (!is.null(x$content$type)) list(x$content) else x$content
  texts <- unlist(lapply(blocks, function(b) if (identical(b$type, "text")) b$text))
  list(
    text = if (length(texts)) paste(texts, collapse = "\n") else NA_character_,
    role = x$role,
    model = x$model,
    stop_reason = x$stopReason,
    content = x$content
  )
}

roots_frame <- function(x) {
  field <- function(name) {
    vapply(x$roots, function(r) if (is_string(r[[name]])) r[[name]] else NA_character_, character(1))
  }
  data.frame(uri = field("uri"), name = field("name"), stringsAsFactors = FALSE)
}

new_input_request <- function(method, params = NULL, form = NULL) {
  structure(list(method = method, params = params, form = form), class = "mcpserver_input_request")
}

#' @rdname mcp_ask
#' @export
ask_user <- function(message, schema = list()) {
  if (!is_string(message)) abort("`message` must be a single string.")
  if (!inherits(schema, "mcpserver_type")) {
    if (!is.list(schema) || (length(schema) > 0 && is.null(names(schema)))) {
      abort("`schema` must be a type_object() or a named list of type helpers.")
    }
    schema <- do.call(type_object, lapply(schema, as_mcp_type))
  }
  new_input_request("elicitation/create", list(message = message), form = schema)
}

#' @rdname mcp_ask
#' @export
ask_model <- function(messages, max_tokens = 1000, system_prompt = NULL,
                      temperature = NULL, stop_sequences = NULL,
                      model_preferences = NULL, metadata = NULL) {
  if (!(is_number(max_tokens) && max_tokens >= 1 && max_tokens == round(max_tokens))) {
    abort("`max_tokens` must be a positive whole number.")
  }
  if (!is.null(system_prompt) && !is_string(system_prompt)) abort("`system_prompt` must be NULL or a single string.")
  if (!is.null(temperature) && !is_number(temperature)) abort("`temperature` must be NULL or a single number.")
  if (!is.null(stop_sequences) && !(is.character(stop_sequences) && !anyNA(stop_sequences))) {
    abort("`stop_sequences` must be NULL or a character vector.")
  }
  if (!is.null(metadata) && !is_named_list(metadata)) abort("`metadata` must be NULL or a named list.")
  params <- list(messages = sampling_messages(messages), maxTokens = as.integer(max_tokens))
  params$systemPrompt <- system_prompt
  params$temperature <- temperature
  if (!is.null(stop_sequences)) params$stopSequences <- I(stop_sequences)
  params$modelPreferences <- model_preferences_json(model_preferences)
  params$metadata <- metadata
  new_input_request("sampling/createMessage", params)
}

#' @rdname mcp_ask
#' @export
ask_roots <- function() new_input_request("roots/list")

is_named_list <- function(x) {
  is.list(x) && !is.null(names(x)) && all(names(x) != "") && !anyNA(names(x))
}

sampling_messages <- function(messages) {
  if (is.character(messages)) {
    if (length(messages) == 0L || anyNA(messages)) abort("`messages` must hold at least one message, none NA.")
    return(lapply(messages, function(text) list(role = "user", content = list(type = "text", text = text))))
  }
  if (!is.list(messages) || length(messages) == 0L) {
    abort("`messages` must be a character vector or a list of `list(role, content)` messages.")
  }
  lapply(seq_along(messages), function(i) {
    m <- messages[[i]]
    if (!is.list(m) || !is_string(m$role) || !m$role %in% c("user", "assistant")) {
      abort(sprintf("`messages[[%d]]` must be a list with `role` \"user\" or \"assistant\" and `content`.", i))
    }
    content <- m$content
    if (is_string(content)) content <- content_text(content)
    if (!inherits(content, "mcpserver_content") || !content$type %in% c("text", "image", "audio")) {
      abort(sprintf("`messages[[%d]]$content` must be a string or a content_text(), content_image() or content_audio() block.", i))
    }
    list(role = m$role, content = sampling_content(content))
  })
}

# A content block in its wire form (the fields sampling messages carry).
sampling_content <- function(block) {
  if (identical(block$type, "text")) return(list(type = "text", text = block$text))
  list(type = block$type, data = block$data, mimeType = block$mime_type)
}

model_preferences_json <- function(prefs) {
  if (is.null(prefs)) return(NULL)
  known <- c("hints", "cost_priority", "speed_priority", "intelligence_priority")
  if (!is_named_list(prefs) || !all(names(prefs) %in% known)) {
    abort(paste0("`model_preferences` must be a named list of ", paste0("`", known, "`", collapse = ", "), "."))
  }
  out <- list()
  if (!is.null(prefs$hints)) {
    if (!is.character(prefs$hints) || anyNA(prefs$hints)) abort("`model_preferences$hints` must be a character vector.")
    out$hints <- lapply(prefs$hints, function(name) list(name = name))
  }
  for (name in setdiff(known, "hints")) {
    value <- prefs[[name]]
    if (is.null(value)) next
    if (!is_number(value) || value < 0 || value > 1) abort(paste0("`model_preferences$", name, "` must be a number from 0 to 1."))
    out[[sub("_priority$", "Priority", name)]] <- value
  }
  out
}
