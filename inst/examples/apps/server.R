# Interactive R output inside the chat (MCP Apps): a plotly chart of the
# ozone in New York in one month of 1973, and a DT table of a data set that
# the user pages through from inside the table. Hosts that show MCP Apps
# (Claude, VS Code, ChatGPT, Goose, ...) draw them in the conversation; the
# model, and clients that show no apps, get the data themselves.
# Needs the plotly and DT packages.
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

# The chart: the model reads the month's numbers, the user sees them drawn.
ozone_chart <- function(month = 5L) {
  if (!month %in% 5:9) stop("The data cover May (5) to September (9) only.")
  days <- airquality[airquality$Month == month, c("Day", "Ozone", "Temp")]
  chart <- plotly::plot_ly(days,
    x = ~Day, y = ~Ozone, type = "scatter", mode = "lines+markers",
    name = "Ozone (ppb)", hovertemplate = "Day %{x}: %{y} ppb"
  )
  chart <- plotly::layout(chart,
    title = sprintf("Ozone in New York, %s 1973", month.name[month]),
    xaxis = list(title = "Day"), yaxis = list(title = "Ozone (ppb)")
  )
  app_result(days, chart)
}

# The table, ten rows at a time. Its page has buttons that call
# `table_page`, a tool only the app may call, and draw the page it returns.
datasets <- c("mtcars", "iris", "airquality", "faithful", "quakes", "USArrests", "swiss", "trees")
rows_per_page <- 10L

table_page <- function(dataset = "mtcars", page = 1L) {
  data <- get(dataset, envir = asNamespace("datasets"))
  pages <- as.integer(ceiling(nrow(data) / rows_per_page))
  page <- max(1L, min(as.integer(page), pages))
  rows <- data[seq((page - 1L) * rows_per_page + 1L, min(page * rows_per_page, nrow(data))), , drop = FALSE]
  table <- DT::datatable(rows, options = list(dom = "t", pageLength = rows_per_page))
  # Row names are part of the data (mtcars' are the cars): the model gets them too.
  for_model <- cbind(row = rownames(rows), rows)
  app_result(list(dataset = dataset, page = page, pages = pages, rows = for_model), table)
}

table_app <- mcp_app(
  htmltools::tagList(
    htmltools::tags$p(
      htmltools::tags$button(id = "previous", "Previous"),
      htmltools::tags$span(id = "where", "Loading..."),
      htmltools::tags$button(id = "next", "Next")
    ),
    # Where the tool's tables are drawn: DT's scripts are inlined in the page.
    DT::datatable(mtcars[0, ]),
    htmltools::tags$script(htmltools::HTML("
      var shown = null;
      function show(result) {
        shown = result.structuredContent;
        document.getElementById('where').textContent =
          ' ' + shown.dataset + ', page ' + shown.page + ' of ' + shown.pages + ' ';
        document.getElementById('previous').disabled = shown.page <= 1;
        document.getElementById('next').disabled = shown.page >= shown.pages;
      }
      function turn(step) {
        mcpApp.callTool('table_page', {dataset: shown.dataset, page: shown.page + step})
          .then(function (result) { mcpApp.render(result); show(result); });
      }
      mcpApp.on('result', show);
      document.getElementById('previous').onclick = function () { turn(-1); };
      document.getElementById('next').onclick = function () { turn(1); };
    "))
  ),
  uri = "ui://datasets/table.html", title = "Data set table", prefers_border = TRUE
)

page_schema <- type_from_schema('{
  "type": "object",
  "properties": {
    "dataset": {"type": "string"}, "page": {"type": "integer"},
    "pages": {"type": "integer"}, "rows": {"type": "array", "items": {"type": "object"}}
  },
  "required": ["dataset", "page", "pages", "rows"]
}')

mcp_server(
  list(
    tool(ozone_chart, "Chart of the daily ozone (ppb) in New York in one month of 1973, with the data",
      arguments = list(month = type_integer("Month: 5 (May) to 9 (September)", required = FALSE)),
      annotations = tool_annotations(read_only_hint = TRUE),
      app = mcp_app(plotly::plot_ly(), uri = "ui://airquality/ozone.html", title = "Ozone chart")
    ),
    tool(table_page, "A data set of R's datasets package as a table the user can page through (its first ten rows)",
      name = "dataset_table",
      arguments = list(dataset = type_enum(datasets, "The data set")),
      output_schema = page_schema, annotations = tool_annotations(read_only_hint = TRUE),
      app = table_app
    ),
    tool(table_page, "Another page of a data set's table (the table's own buttons call it)",
      arguments = list(dataset = type_enum(datasets), page = type_integer("Page, from 1")),
      output_schema = page_schema, annotations = tool_annotations(read_only_hint = TRUE),
      visibility = "app", app = table_app
    )
  ),
  name = "r-apps",
  instructions = "ozone_chart and dataset_table show their results to the user as an interactive chart and table."
)
