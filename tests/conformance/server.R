# The server the official MCP conformance suite tests (`make conformance`):
# one tool, resource or prompt per scenario of the suite, each doing what
# the scenario's description asks, written with mcpserver's public API only.
# What is left out is listed, with the reason, in the expected-failures
# baselines beside this file (see README.md).
#
#   Rscript tests/conformance/server.R
#
# Environment: MCP_CONFORMANCE_TRANSPORT ("http", the default, or "stdio",
# which the testthat tests of these tools use), MCP_CONFORMANCE_PORT (0, the
# default, lets the system choose a free port; the server reports its URL
# on stderr).
library(mcpserver)

# A 1x1 red PNG, made for this fixture (8-bit RGB, one zlib-compressed row).
red_pixel_png <- "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"

# A WAV file of `samples` silent 8-bit mono samples at 8 kHz, built byte by byte.
silent_wav <- function(samples = 8L) {
  le <- function(x, size) writeBin(as.integer(x), raw(), size = size, endian = "little")
  data <- as.raw(rep(0x80, samples))
  c(
    charToRaw("RIFF"), le(36L + samples, 4L), charToRaw("WAVE"),
    charToRaw("fmt "), le(16L, 4L), le(1L, 2L), le(1L, 2L), le(8000L, 4L),
    le(8000L, 4L), le(1L, 2L), le(8L, 2L),
    charToRaw("data"), le(samples, 4L), data
  )
}

`%||%` <- function(x, y) if (is.null(x)) y else x

# Each scenario waits a little between its notifications (~50 ms) so that a
# client sees them arrive one by one during the call.
pause <- function() Sys.sleep(0.06)

simple_text <- tool(
  function() "This is a simple text response for testing.",
  "Returns a simple text block (tools-call-simple-text).",
  name = "test_simple_text"
)

image_content <- tool(
  function() tool_result(content_image(red_pixel_png, "image/png")),
  "Returns a PNG image block (tools-call-image).",
  name = "test_image_content"
)

audio_content <- tool(
  function() tool_result(content_audio(silent_wav(), "audio/wav")),
  "Returns a WAV audio block (tools-call-audio).",
  name = "test_audio_content"
)

embedded_resource <- tool(
  function() {
    tool_result(content_resource("test://embedded-resource",
      text = "This is an embedded resource content.", mime_type = "text/plain"
    ))
  },
  "Returns an embedded text resource (tools-call-embedded-resource).",
  name = "test_embedded_resource"
)

multiple_content_types <- tool(
  function() {
    tool_result(list(
      content_text("Multiple content types test:"),
      content_image(red_pixel_png, "image/png"),
      content_resource("test://mixed-content-resource",
        text = '{"test":"data","value":123}', mime_type = "application/json"
      )
    ))
  },
  "Returns text, an image and an embedded resource together (tools-call-mixed-content).",
  name = "test_multiple_content_types"
)

tool_with_logging <- tool(
  function() {
    mcp_log("info", "Tool execution started")
    pause()
    mcp_log("info", "Tool processing data")
    pause()
    mcp_log("info", "Tool execution completed")
    "Logging test completed: three info messages sent."
  },
  "Sends three info log messages while it runs (tools-call-with-logging).",
  name = "test_tool_with_logging"
)

error_handling <- tool(
  function() stop("This tool intentionally returns an error for testing"),
  "Always fails with a tool error (tools-call-error).",
  name = "test_error_handling"
)

tool_with_progress <- tool(
  function() {
    for (step in c(0, 50, 100)) {
      mcp_progress(step, total = 100)
      if (step < 100) pause()
    }
    "Progress test completed: 0, 50 and 100 of 100 reported."
  },
  "Reports progress 0, 50 and 100 of 100 (tools-call-with-progress).",
  name = "test_tool_with_progress"
)

# A value of an answer as JSON text: strings quoted and escaped, numbers,
# true/false, named lists as objects, and vectors longer than one (or
# marked with I()) as arrays.
json_text <- function(x) {
  one <- function(v) {
    if (is.logical(v)) return(if (is.na(v)) "null" else tolower(as.character(v)))
    if (is.numeric(v)) return(if (is.na(v)) "null" else format(v, digits = 15))
    encodeString(as.character(v), quote = '"')
  }
  if (is.list(x)) {
    fields <- vapply(names(x), function(field) paste0(encodeString(field, quote = '"'), ":", json_text(x[[field]])), "")
    return(paste0("{", paste(fields, collapse = ","), "}"))
  }
  items <- vapply(x, one, "")
  if (length(x) == 1 && !inherits(x, "AsIs")) items else paste0("[", paste(items, collapse = ","), "]")
}

# Describes an elicitation answer as the scenarios ask: the action and, when
# accepted, the content as compact JSON-like text.
describe_answer <- function(answer) {
  fields <- vapply(names(answer$content), function(field) {
    sprintf('"%s":"%s"', field, format(answer$content[[field]]))
  }, "")
  sprintf("action: %s, content: {%s}", answer$action, paste(fields, collapse = ","))
}

elicitation <- tool(
  function(message) {
    answer <- mcp_elicit(message, list(
      username = type_string("User's response"),
      email = type_string("User's email address")
    ))
    paste0("User response: <", describe_answer(answer), ">")
  },
  "Asks the user for a username and an email address (tools-call-elicitation).",
  arguments = list(message = type_string("The message to show the user")),
  name = "test_elicitation"
)

# A field of each primitive type, each with its default (SEP-1034); the
# answer comes back as JSON text.
elicitation_defaults <- tool(
  function() {
    answer <- mcp_elicit("Please review and update the form fields with defaults", list(
      name = type_string("User name", default = "John Doe"),
      age = type_integer("User age", default = 30L),
      score = type_number("User score", default = 95.5),
      status = type_enum(c("active", "inactive", "pending"), "User status", default = "active"),
      verified = type_boolean("Verification status", default = TRUE)
    ))
    sprintf("Elicitation completed: action=%s, content=%s", answer$action, json_text(answer$content %||% list()))
  },
  "Asks for a form whose every field has a default (elicitation-sep1034-defaults).",
  name = "test_elicitation_sep1034_defaults"
)

# The five ways a form offers choices (SEP-1330): plain and labelled single
# choices, the legacy enumNames labels, plain and labelled multiple choices.
elicitation_enums <- tool(
  function() {
    answer <- mcp_elicit("Please select options from the enum fields", list(
      untitledSingle = type_enum(c("option1", "option2", "option3"), "Choose an option"),
      titledSingle = type_enum(c("value1", "value2", "value3"), "Choose a titled option",
        titles = c("First Option", "Second Option", "Third Option")
      ),
      legacyEnum = type_from_schema(list(
        type = "string", description = "Choose a legacy option",
        enum = c("opt1", "opt2", "opt3"), enumNames = c("Option One", "Option Two", "Option Three")
      )),
      untitledMulti = type_array(type_enum(c("option1", "option2", "option3")), "Choose multiple options"),
      titledMulti = type_array(
        type_enum(c("value1", "value2", "value3"), titles = c("First Choice", "Second Choice", "Third Choice")),
        "Choose multiple titled options"
      )
    ))
    content <- answer$content %||% list()
    # Multiple choices stay arrays, even of one choice.
    for (multi in intersect(c("untitledMulti", "titledMulti"), names(content))) content[[multi]] <- I(content[[multi]])
    sprintf("Elicitation completed: action=%s, content=%s", answer$action, json_text(content))
  },
  "Asks for a form with every kind of enum field (elicitation-sep1330-enums).",
  name = "test_elicitation_sep1330_enums"
)

sampling <- tool(
  function(prompt) {
    answer <- mcp_sample(prompt, max_tokens = 100)
    paste0("LLM response: ", answer$text)
  },
  "Asks the client's model to answer a prompt (tools-call-sampling).",
  arguments = list(prompt = type_string("The prompt to send to the model")),
  name = "test_sampling"
)

# Needs sampling: a 2026-07-28 request that does not declare it is refused
# with -32021 naming `sampling` (HTTP 400), and the tool never runs on.
missing_capability <- tool(
  function() {
    answer <- mcp_sample("Say anything.", max_tokens = 10)
    paste0("The client declared sampling and answered: ", answer$text)
  },
  "Needs the client's sampling capability: refused with -32021 without it (server-stateless).",
  name = "test_missing_capability"
)

# On 2026-07-28 the question comes back as an input_required result on the
# call's own stream, never as a request the server sends.
streaming_elicitation <- tool(
  function() {
    answer <- mcp_elicit("Anything to add?", list(note = type_string()))
    paste0("Streaming complete: ", describe_answer(answer))
  },
  "Asks the user a question within the call's response stream (server-stateless).",
  name = "test_streaming_elicitation"
)

logging_tool <- tool(
  function() {
    mcp_log("info", "Diagnostic trace logging activated")
    "Logging evaluated"
  },
  "Logs at info level; the log reaches only clients that asked for a log level (server-stateless).",
  name = "test_logging_tool"
)

# The input_required tools name each question with the key its scenario
# expects (user_name, confirm, step1, ...): mcp_ask() sends those keys.
ask_name <- function() ask_user("What is your name?", list(name = type_string()))

input_required_elicitation <- tool(
  function() {
    answer <- mcp_ask(user_name = ask_name())$user_name
    if (answer$action != "accept") return(paste0("No name given (", answer$action, ")."))
    paste0("Hello, ", answer$content$name, "!")
  },
  "Asks the user's name, then greets them (input-required-result-*).",
  name = "test_input_required_result_elicitation"
)

input_required_sampling <- tool(
  function() {
    answer <- mcp_ask(capital_question = ask_model("What is the capital of France?", max_tokens = 100))
    paste0("The model answered: ", answer$capital_question$text)
  },
  "Asks the client's model a question, then returns its answer (input-required-result-basic-sampling).",
  name = "test_input_required_result_sampling"
)

describe_roots <- function(roots) {
  if (nrow(roots) == 0) return("no roots")
  paste(sprintf("%s (%s)", roots$uri, ifelse(is.na(roots$name), "unnamed", roots$name)), collapse = ", ")
}

input_required_list_roots <- tool(
  function() {
    roots <- mcp_ask(client_roots = ask_roots())$client_roots
    paste0("The client's roots: ", describe_roots(roots), ".")
  },
  "Asks the client for its roots, then lists them (input-required-result-basic-list-roots).",
  name = "test_input_required_result_list_roots"
)

# Three questions of three kinds in one round; the state that carries them
# to the retry is signed.
input_required_multiple_inputs <- tool(
  function() {
    got <- mcp_ask(
      user_name = ask_name(),
      greeting = ask_model("Generate a greeting", max_tokens = 50),
      client_roots = ask_roots()
    )
    sprintf("%s %s! Your roots: %s.",
      got$greeting$text, format(got$user_name$content$name %||% NA), describe_roots(got$client_roots))
  },
  "Asks the user, the model and the client at once (input-required-result-multiple-input-requests).",
  name = "test_input_required_result_multiple_inputs"
)

# Asks only what this request's client capabilities allow: a client with
# sampling alone is asked through sampling, never through elicitation.
input_required_capabilities <- tool(
  function() {
    capabilities <- names(mcp_request()$capabilities)
    requests <- list()
    if ("elicitation" %in% capabilities) requests$user_name <- ask_name()
    if ("sampling" %in% capabilities) requests$greeting <- ask_model("Generate a greeting", max_tokens = 50)
    if ("roots" %in% capabilities) requests$client_roots <- ask_roots()
    if (length(requests) == 0) return("The client declared no capability to ask with.")
    got <- do.call(mcp_ask, requests)
    paste0("Asked through: ", paste(names(got), collapse = ", "), ".")
  },
  "Asks for input only through the capabilities the client declared (input-required-result-capability-check).",
  name = "test_input_required_result_capabilities"
)

ask_confirmation <- function() ask_user("Please confirm", list(ok = type_boolean()))

# mcp_ask() returns only once the server has verified the state the client
# echoed, so reaching the end proves the state round-tripped.
input_required_request_state <- tool(
  function() {
    answer <- mcp_ask(confirm = ask_confirmation())$confirm
    sprintf("state-ok: the request state was verified (confirmed: %s)", format(answer$content$ok %||% NA))
  },
  "Asks for a confirmation; the answer comes back with a signed request state (input-required-result-request-state).",
  name = "test_input_required_result_request_state"
)

input_required_multi_round <- tool(
  function() {
    name <- mcp_ask(step1 = ask_user("Step 1: What is your name?", list(name = type_string())))$step1
    color <- mcp_ask(step2 = ask_user("Step 2: What is your favorite color?", list(color = type_string())))$step2
    sprintf("Multi-round complete: name %s, favorite color %s.",
      format(name$content$name %||% NA), format(color$content$color %||% NA))
  },
  "Asks two questions, one per round (input-required-result-multi-round).",
  name = "test_input_required_result_multi_round"
)

input_required_tampered_state <- tool(
  function() {
    answer <- mcp_ask(confirm = ask_confirmation())$confirm
    paste0("Confirmed: ", describe_answer(answer))
  },
  "Asks for a confirmation; a tampered request state is refused (input-required-result-tampered-state).",
  name = "test_input_required_result_tampered_state"
)

# An argument the 2026-07-28 client also sends as the header Mcp-Param-Region
# (x-mcp-header), which the server checks against the body.
custom_header <- tool(
  function(region) paste0("Region: ", region),
  "Echoes an argument that also travels in an Mcp-Param header (http-custom-header-server-validation).",
  arguments = list(region = type_from_schema('{"type": "string", "x-mcp-header": "Region"}')),
  name = "test_custom_header"
)

# A whole input schema in JSON Schema 2020-12, sent as it is: $schema, $defs
# with an $anchor, $ref, allOf/anyOf, if/then/else, additionalProperties.
contact_schema <- list(
  `$schema` = "https://json-schema.org/draft/2020-12/schema",
  type = "object",
  `$defs` = list(address = list(
    `$anchor` = "addressDef", type = "object",
    properties = list(street = list(type = "string"), city = list(type = "string"))
  )),
  properties = list(
    name = list(type = "string"),
    address = list(`$ref` = "#/$defs/address"),
    contactMethod = list(type = "string", enum = c("phone", "email")),
    phone = list(type = "string"),
    email = list(type = "string")
  ),
  allOf = list(list(anyOf = list(list(required = I("phone")), list(required = I("email"))))),
  `if` = list(properties = list(contactMethod = list(const = "phone")), required = I("contactMethod")),
  then = list(required = I("phone")),
  `else` = list(required = I("email")),
  additionalProperties = FALSE
)

json_schema_2020_12 <- tool(
  function(name = NULL, address = NULL, contactMethod = NULL, phone = NULL, email = NULL) {
    how <- if (identical(contactMethod, "phone")) paste("phone", phone) else paste("email", email)
    paste0("Contact ", name %||% "(no name)", " by ", how, ".")
  },
  "Tool with JSON Schema 2020-12 features (json-schema-2020-12).",
  arguments = type_from_schema(contact_schema),
  name = "json_schema_2020_12_tool"
)

# The tasks extension (io.modelcontextprotocol/tasks, the tasks-* scenarios
# of the 2026-07-28 run). A task is created when the client declares the
# extension on its tools/call; a client without it gets a plain result (or,
# for a tool that only runs as a task, -32021).
greet <- tool(
  function(name) paste0("Hello, ", name, "!"),
  "Greets someone by name, at once and never as a task (tasks-*).",
  arguments = list(name = type_string()),
  name = "greet"
)

slow_compute <- tool(
  function(seconds, label = "") {
    # Sys.sleep() is interrupted by tasks/cancel, so the task ends cancelled.
    Sys.sleep(seconds)
    sprintf("Computed %s after %s seconds.", label, format(seconds))
  },
  "Waits `seconds` seconds, then answers; runs as a task when the client supports tasks (tasks-*).",
  arguments = list(seconds = type_number(), label = type_string(required = FALSE)),
  task = "optional",
  name = "slow_compute"
)

failing_job <- tool(
  function() {
    Sys.sleep(1)
    stop("The job failed, as it always does (a tool error, not a protocol error).")
  },
  "Fails with a tool error after a second; runs only as a task (tasks-lifecycle, tasks-required-task-error).",
  task = "required",
  name = "failing_job"
)

# Its result breaks its own output schema: the server answers -32603, a
# protocol error, so the task ends failed (not completed with isError).
protocol_error_job <- tool(
  function() list(value = "not a number"),
  "Ends in a protocol error (a result that breaks its output schema); runs as a task (tasks-lifecycle).",
  output_schema = type_object(value = type_number()),
  task = "optional",
  name = "protocol_error_job"
)

confirm_delete <- tool(
  function(filename) {
    answer <- mcp_elicit(paste0("Delete ", filename, "?"), list(confirm = type_boolean()))
    confirmed <- identical(answer$action, "accept") && isTRUE(answer$content$confirm)
    if (confirmed) paste0("Deleted ", filename, ".") else paste0("Kept ", filename, ".")
  },
  "Asks the user to confirm, then deletes (pretends to); in a task the question waits in tasks/get (tasks-mrtr-input).",
  arguments = list(filename = type_string()),
  task = "optional",
  name = "confirm_delete"
)

# Two questions at once: the task lists both, and goes on once both are
# answered, in one tasks/update or several.
multi_input <- tool(
  function() {
    form <- list(name = type_string(required = FALSE), confirm = type_boolean(required = FALSE))
    got <- mcp_ask(
      first = ask_user("First: your name?", form),
      second = ask_user("Second: your name again?", form)
    )
    sprintf("Got %s and %s.", format(got$first$content$name %||% NA), format(got$second$content$name %||% NA))
  },
  "Asks two questions at once; in a task they may be answered one at a time (tasks-mrtr-input).",
  task = "optional",
  name = "multi_input"
)

# Input first, by input_required rounds of the call itself, then a task:
# the call is answered with the task's handle once the name is in, and the
# task's result carries the name (tasks-mrtr-composition).
tool_with_task <- tool(
  function() {
    got <- mcp_ask(user_name = ask_user("What is your name?", list(name = type_string())))
    mcp_task()
    Sys.sleep(0.2)
    paste0("Hello, ", got$user_name$content$name %||% "stranger", "! (from the task)")
  },
  "Asks the user's name by input_required rounds, then goes on as a task (tasks-mrtr-composition).",
  task = "deferred",
  name = "test_tool_with_task"
)

# --- server-sse-polling (SSE resumability, issue [11]) ---
# The 2025-11-25 polling pattern: the server lets the call's connection go
# at once (after the priming event), and the client comes back with GET and
# Last-Event-ID for the result. Over stdio, mcp_close_stream() does nothing.
reconnection <- tool(
  function() {
    mcp_close_stream()
    Sys.sleep(0.3)
    "Reconnection test completed"
  },
  "Closes its event stream mid-call; the result arrives after the client reconnects (server-sse-polling).",
  name = "test_reconnection"
)
# --- end server-sse-polling ---

conformance_tools <- list(
  simple_text, image_content, audio_content, embedded_resource,
  multiple_content_types, tool_with_logging, error_handling, tool_with_progress,
  elicitation, elicitation_defaults, elicitation_enums, sampling,
  missing_capability, streaming_elicitation, logging_tool,
  input_required_elicitation, input_required_sampling, input_required_list_roots,
  input_required_multiple_inputs, input_required_capabilities,
  input_required_request_state, input_required_multi_round,
  input_required_tampered_state, custom_header, json_schema_2020_12,
  greet, slow_compute, failing_job, protocol_error_job, confirm_delete,
  multi_input, tool_with_task, reconnection
)

# --- Resources (resources-*, sep-2164-resource-not-found, caching) ----------

conformance_resources <- list(
  resource("test://static-text", "This is the content of the static text resource.",
    name = "static-text", title = "Static Text Resource",
    description = "A static text resource for testing", mime_type = "text/plain"
  ),
  resource("test://static-binary",
    function() content_resource("test://static-binary", blob = red_pixel_png, mime_type = "image/png"),
    name = "static-binary", title = "Static Binary Resource",
    description = "A static binary resource (a PNG image) for testing", mime_type = "image/png"
  ),
  resource("test://watched-resource", "Watched resource content",
    name = "watched-resource", title = "Watched Resource",
    description = "A resource clients can subscribe to", mime_type = "text/plain"
  ),
  resource_template("test://template/{id}/data",
    function(id) list(id = id, templateTest = TRUE, data = paste0("Data for ID: ", id)),
    name = "template", title = "Template Resource",
    description = "A resource template with an id parameter", mime_type = "application/json"
  )
)

# --- Prompts and completion (prompts-*, completion-complete) ----------------

# Suggestions for arg1 of test_prompt_with_arguments: the words starting
# with what the user typed, in this order.
arg1_suggestions <- c("paris", "park", "party", "test", "testing", "testValue1")

conformance_prompts <- list(
  prompt_template(function() "This is a simple prompt for testing.",
    name = "test_simple_prompt", title = "Simple Prompt",
    description = "A simple prompt without arguments"
  ),
  prompt_template(function(arg1, arg2) sprintf("Prompt with arguments: arg1='%s', arg2='%s'", arg1, arg2),
    name = "test_prompt_with_arguments", title = "Prompt With Arguments",
    description = "A prompt with two required arguments",
    arguments = list(arg1 = "First test argument", arg2 = "Second test argument"),
    complete = list(arg1 = function(value) arg1_suggestions[startsWith(arg1_suggestions, value)])
  ),
  prompt_template(function(resourceUri) {
    list(
      content_resource(resourceUri, text = "Embedded resource content for testing.", mime_type = "text/plain"),
      "Please process the embedded resource above."
    )
  },
    name = "test_prompt_with_embedded_resource", title = "Prompt With Embedded Resource",
    description = "A prompt that embeds the resource it is given",
    arguments = list(resourceUri = "URI of the resource to embed")
  ),
  prompt_template(function() list(content_image(red_pixel_png, "image/png"), "Please analyze the image above."),
    name = "test_prompt_with_image", title = "Prompt With Image",
    description = "A prompt with an image"
  ),
  # Asks the user for the context first (2026-07-28: an input_required result).
  prompt_template(function() {
    answer <- mcp_ask(user_context = ask_user("What context should the prompt use?", list(context = type_string())))
    paste0("Prompt with context: ", answer$user_context$content$context %||% "(none given)")
  },
    name = "test_input_required_result_prompt", title = "Prompt Asking For Context",
    description = "A prompt that asks the user for context before it is built (input-required-result-non-tool-request)"
  )
)

# --- List changes (issue [12]: mcp_add(), mcp_remove()) --------------------
# server-stateless's sep-2575-server-sends-{tools,prompts}-list-changed-on-
# subscription call these on one request while a subscriptions/listen stream
# waits on another: each call adds its entry if it is not served and
# removes it if it is, so every call changes the list.
dynamic_tool <- tool(
  function() "A tool that comes and goes.",
  "Added and removed by test_trigger_tool_change.",
  name = "test_dynamic_tool"
)
dynamic_prompt <- prompt_template(
  function() "A prompt that comes and goes.",
  name = "test_dynamic_prompt",
  description = "Added and removed by test_trigger_prompt_change."
)
served_now <- new.env()
served_now$tool <- FALSE
served_now$prompt <- FALSE

toggle <- function(kind, definition, name) {
  if (served_now[[kind]]) mcp_remove(definition) else mcp_add(definition)
  served_now[[kind]] <- !served_now[[kind]]
  sprintf("%s %s.", name, if (served_now[[kind]]) "added" else "removed")
}

trigger_tool_change <- tool(
  function() toggle("tool", dynamic_tool, "test_dynamic_tool"),
  "Adds test_dynamic_tool, or removes it if served, so the tool list changes.",
  name = "test_trigger_tool_change"
)
trigger_prompt_change <- tool(
  function() toggle("prompt", dynamic_prompt, "test_dynamic_prompt"),
  "Adds test_dynamic_prompt, or removes it if served, so the prompt list changes.",
  name = "test_trigger_prompt_change"
)

# The triggers join the tools; prompts are declared (if no other fixture
# serves any) so that clients know to listen for them.
with_list_change_fixtures <- function(options) {
  options[[1]] <- c(options[[1]], list(trigger_tool_change, trigger_prompt_change))
  if (is.null(options$prompts)) options$prompts <- list()
  options
}
# --- end of list changes ------------------------------------------------------

serve_conformance <- function(transport = Sys.getenv("MCP_CONFORMANCE_TRANSPORT", "http"),
                              port = as.integer(Sys.getenv("MCP_CONFORMANCE_PORT", "0"))) {
  options <- list(conformance_tools,
    name = "mcpserver-conformance", version = "1.0.0",
    resources = conformance_resources, prompts = conformance_prompts
  )
  options <- with_list_change_fixtures(options)
  if (identical(transport, "stdio")) return(do.call(mcp_server, options))
  do.call(mcp_server, c(options, list(transport = "http", host = "127.0.0.1", port = port)))
}

if (!interactive()) serve_conformance()
