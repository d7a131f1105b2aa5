library(mcpserver)

# The fixture server every end-to-end client drives (tests/e2e/run.sh).
# Clients start it as a user's client would: `Rscript tests/e2e/server.R`.
# Each tool exercises one part of the API; the drivers assert on exactly
# what these return, so keep the two in step.

# Plain text in, plain text out.
echo <- function(text) paste("echo:", text)

# Typed arguments: reports the R class each one arrived as, so a client
# can see that numbers became a double vector, `count` an integer, etc.
typed <- function(numbers, count, flag, unit, options) {
  paste0(
    "numbers=", class(numbers), ":", sum(numbers),
    " count=", class(count), ":", count,
    " flag=", class(flag), ":", flag,
    " unit=", unit,
    " label=", options$label, " scale=", options$scale
  )
}

# An object output schema: the named list becomes structured content.
stats <- function(values) {
  list(mean = mean(values), n = length(values), label = "stats")
}

# An array-rooted output schema: sent as an array on 2026-07-28, wrapped as
# {"result": [...]} for earlier revisions.
squares <- function(n) as.numeric(seq_len(n)^2)

# Every content block type in one result.
everything <- function() {
  tool_result(list(
    content_text("plain text"),
    content_image("iVBORw0KGgo=", "image/png"),
    content_audio("UklGRg==", "audio/wav"),
    content_resource_link("file:///tmp/data.csv", "data.csv", mime_type = "text/csv"),
    content_resource("file:///tmp/note.txt", text = "a note", mime_type = "text/plain")
  ))
}

# An R error must become an `isError` result, not a protocol error.
fail <- function() stop("deliberate failure")

# Output to R's stdout, through print() and from a child process must all go
# to stderr while serving, never into the protocol stream.
noisy <- function() {
  cat("cat() to stdout\n")
  print(list(printed = TRUE))
  system("echo hi from a child process")
  "still talking JSON"
}

# Progress. mcp_progress() is being added to the package; until this build
# has it, the tool sends nothing (and says so), so the drivers' progress
# checks fail while the rest of the suite still runs.
has_progress <- exists("mcp_progress", asNamespace("mcpserver"))
progress <- function(steps = 4) {
  if (!has_progress) return("progress: mcp_progress() is missing from this build")
  report <- get("mcp_progress", asNamespace("mcpserver"))
  for (i in seq_len(steps)) {
    Sys.sleep(0.1) # the server thins reports closer than 50 ms
    report(i, total = steps, message = sprintf("step %d of %d", i, steps))
  }
  sprintf("progress: %d steps", steps)
}

# Long enough that only a working cancellation lets the next call through.
slow <- function() {
  Sys.sleep(30)
  "slow finished"
}

# Asks the user one question. Handshake-era clients get an
# `elicitation/create` request while the tool waits; 2026-07-28 clients get
# an `input_required` result and call again with the answer (the function
# then runs again from the start). It may also run as a task: on 2025-11-25
# the question then comes as an `elicitation/create` tied to the task, which
# is `input_required` until the client answers.
greet <- function() {
  answer <- mcp_elicit("What is your name?", list(name = type_string("Your name")))
  if (answer$action != "accept") return(paste("No name given:", answer$action))
  paste0("Hello, ", answer$content$name, "!")
}

# Runs as a task when the client asks for one (2025-11-25 `params.task`, or
# the 2026-07-28 tasks extension declared on the request), directly
# otherwise. Called with 30 seconds to test cancelling a task.
background <- function(seconds = 0.2) {
  Sys.sleep(seconds)
  list(waited = seconds)
}

# Runs only as a task: a client that cannot make one gets an error.
task_only <- function() "ran as a task"

mcp_server(
  list(
    tool(echo, "Echo the text back",
      arguments = list(text = type_string("Text to echo")),
      title = "Echo", meta = list(fixture = TRUE),
      icons = list(list(src = "data:image/png;base64,iVBORw0KGgo=", mime_type = "image/png", sizes = "16x16"))
    ),
    tool(typed, "Report the R classes of typed arguments", arguments = list(
      numbers = type_array(type_number()),
      count = type_integer(),
      flag = type_boolean(),
      unit = type_enum(c("cm", "in")),
      options = type_object(label = type_string(), scale = type_number())
    )),
    tool(stats, "Mean and count of numbers, as structured content",
      arguments = list(values = type_array(type_number())),
      output_schema = type_object(mean = type_number(), n = type_integer(), label = type_string()),
      annotations = tool_annotations(read_only_hint = TRUE)
    ),
    tool(squares, "The squares of 1..n, as an array",
      arguments = list(n = type_integer()),
      output_schema = type_array(type_number())
    ),
    tool(everything, "One block of every content type"),
    tool(fail, "Always fails with an R error"),
    tool(noisy, "Prints to stdout from R and from a child process"),
    tool(progress, "Reports progress while it works",
      arguments = list(steps = type_integer(required = FALSE))
    ),
    tool(slow, "Sleeps for 30 seconds (to be cancelled)"),
    tool(greet, "Asks the user for their name and greets them", task = "optional"),
    tool(background, "Waits, as a task if the client wants one",
      arguments = list(seconds = type_number("Seconds to wait", required = FALSE)),
      output_schema = type_object(waited = type_number()),
      task = "optional"
    ),
    tool(task_only, "Runs only as a task", task = "required")
  ),
  name = "e2e-fixture", version = "1.0.0",
  instructions = "Fixture server for the mcpserver end-to-end tests.",
  # E2E_TRANSPORT=http serves Streamable HTTP on a free port instead
  # (python/http_client.py reads the URL from stderr).
  transport = Sys.getenv("E2E_TRANSPORT", "stdio"), port = 0L
)
