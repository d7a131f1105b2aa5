# A data-set server: R's datasets package as resources, with a template for
# any data set, prompts for analysis recipes, and completions of data set
# and column names.
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

dataset_names <- function() {
  names <- ls("package:datasets")
  names[vapply(names, function(n) is.data.frame(get(n, "package:datasets")), logical(1))]
}

get_dataset <- function(name) {
  if (!name %in% dataset_names()) stop("No data frame named '", name, "' in the datasets package.")
  get(name, "package:datasets")
}

complete_dataset <- function(value) {
  names <- dataset_names()
  names[startsWith(tolower(names), tolower(value))]
}

complete_column <- function(value, context) {
  dataset <- context$dataset
  if (is.null(dataset) || !dataset %in% dataset_names()) return(character())
  columns <- names(get_dataset(dataset))
  columns[startsWith(tolower(columns), tolower(value))]
}

catalog <- function() {
  data.frame(
    name = dataset_names(),
    rows = vapply(dataset_names(), function(n) nrow(get_dataset(n)), integer(1)),
    columns = vapply(dataset_names(), function(n) ncol(get_dataset(n)), integer(1)),
    row.names = NULL
  )
}

explore <- function(dataset, focus = "distributions") {
  sprintf(paste(
    "Explore the %s data set (read the resource data://datasets/%s).",
    "Describe its columns, then look at %s, and suggest two questions worth a model."
  ), dataset, dataset, focus)
}

compare <- function(dataset, x, y) {
  data <- get_dataset(dataset)
  if (!all(c(x, y) %in% names(data))) stop("Both columns must be in ", dataset, ".")
  path <- tempfile(fileext = ".png")
  on.exit(unlink(path))
  grDevices::png(path, width = 480, height = 360)
  graphics::plot(data[[x]], data[[y]], xlab = x, ylab = y, main = dataset)
  grDevices::dev.off()
  list(
    prompt_message(content_image(readBin(path, "raw", file.size(path)), "image/png")),
    prompt_message(sprintf(
      "This is %s against %s in %s (correlation %.2f). What does the relation suggest?",
      y, x, dataset, stats::cor(data[[x]], data[[y]], use = "complete.obs")
    ))
  )
}

mcp_server(
  tool(function(dataset) summary(get_dataset(dataset)),
    "Summary statistics of a data set's columns",
    name = "summarise_dataset",
    arguments = list(dataset = type_string("A data frame of the datasets package")),
    annotations = tool_annotations(read_only_hint = TRUE)
  ),
  name = "datasets",
  instructions = "Data sets of R's datasets package: list the resources, read data://datasets/{name}.",
  resources = list(
    resource("data://datasets", catalog,
      name = "catalog", title = "Data set catalog",
      description = "Every data frame in R's datasets package, with its size"
    ),
    resource("data://datasets/mtcars/description", function() {
      "Motor Trend car road tests (1974): fuel consumption and 10 aspects of design for 32 cars."
    }, name = "mtcars-description", mime_type = "text/plain"),
    resource_template("data://datasets/{name}", get_dataset,
      name = "dataset", title = "A data set",
      description = "A data frame of the datasets package, as JSON rows",
      mime_type = "application/json",
      complete = list(name = complete_dataset)
    )
  ),
  prompts = list(
    prompt_template(explore,
      description = "Explore a data set step by step",
      arguments = list(
        dataset = prompt_argument("A data frame of the datasets package", title = "Data set"),
        focus = "What to look at first (default: distributions)"
      ),
      complete = list(dataset = complete_dataset)
    ),
    prompt_template(compare,
      description = "Plot two columns of a data set against each other and discuss them",
      arguments = list(dataset = "A data frame of the datasets package", x = "Column on the x axis", y = "Column on the y axis"),
      complete = list(dataset = complete_dataset, x = complete_column, y = complete_column)
    )
  )
)
