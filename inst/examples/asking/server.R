# Tools that ask the client for help while they run: the user (a form with
# defaults and choices), the client's model (sampling), the folders the
# user opened (roots), or all three at once. The code is the same for every
# protocol revision; see vignette("long-running"), "Asking the user".
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

order_pizza <- function() {
  answer <- mcp_elicit("Your pizza", list(
    size = type_enum(c("s", "m", "l"), "Size", titles = c("Small", "Medium", "Large"), default = "m"),
    toppings = type_array(type_enum(c("olives", "ham", "basil", "chili")), "Toppings", default = "basil"),
    name = type_string("Name for the order", default = "Guest"),
    extra_cheese = type_boolean("Extra cheese?", default = FALSE)
  ))
  if (answer$action != "accept") return("No order placed.")
  with(answer$content, sprintf(
    "Order for %s: a %s pizza with %s%s.", name, c(s = "small", m = "medium", l = "large")[[size]],
    if (length(toppings)) paste(toppings, collapse = ", ") else "no toppings",
    if (isTRUE(extra_cheese)) " and extra cheese" else ""
  ))
}

describe_dataset <- function(dataset = "mtcars") {
  data <- get(dataset, envir = asNamespace("datasets"))
  facts <- utils::capture.output(summary(data))
  answer <- mcp_sample(
    c(paste("Describe this data set in two sentences for a newcomer:", dataset), facts),
    max_tokens = 300, system_prompt = "You are a statistician who writes plainly."
  )
  answer$text
}

workspace_files <- function() {
  roots <- mcp_roots()
  if (nrow(roots) == 0) return("The client shared no folders.")
  folders <- sub("^file://", "", roots$uri)
  files <- unlist(lapply(folders, list.files, pattern = "\\.(R|Rmd|qmd|csv)$", recursive = FALSE))
  sprintf("%d R and data files in %s: %s", length(files), paste(folders, collapse = ", "),
    paste(utils::head(files, 20), collapse = ", "))
}

welcome <- function() {
  # One round on 2026-07-28: the client asks the user and the model together.
  got <- mcp_ask(
    user_name = ask_user("What is your name?", list(name = type_string())),
    greeting = ask_model("Write a one-line greeting for an R user.", max_tokens = 50)
  )
  name <- if (got$user_name$action == "accept") got$user_name$content$name else "friend"
  paste0(got$greeting$text, " Welcome, ", name, "!")
}

mcp_server(list(
  tool(order_pizza, "Order a pizza, asking the user for size and toppings"),
  tool(describe_dataset, "Describe an R data set in plain words, with the client's model",
    arguments = list(dataset = type_enum(c("mtcars", "iris", "airquality"), required = FALSE))),
  tool(workspace_files, "List the R and data files in the folders the user opened"),
  tool(welcome, "Greet the user by name")
), name = "asking")
