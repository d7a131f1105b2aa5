# A plotting tool: draws a scatter plot of two mtcars columns and returns it
# as a PNG image, with a short text description for clients that show no
# images.
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

scatter_plot <- function(x = "wt", y = "mpg", width = 640L, height = 480L) {
  for (column in c(x, y)) {
    if (!column %in% names(mtcars)) stop("No column named '", column, "' in mtcars.")
  }
  path <- tempfile(fileext = ".png")
  on.exit(unlink(path))
  grDevices::png(path, width = width, height = height, type = "cairo")
  graphics::plot(mtcars[[x]], mtcars[[y]], xlab = x, ylab = y, pch = 19,
                 main = sprintf("mtcars: %s against %s", y, x))
  graphics::abline(stats::lm(mtcars[[y]] ~ mtcars[[x]]), col = "firebrick")
  grDevices::dev.off()
  r <- stats::cor(mtcars[[x]], mtcars[[y]])
  tool_result(list(
    content_image(readBin(path, "raw", file.size(path)), "image/png"),
    content_text(sprintf("Scatter plot of %s against %s (correlation %.2f).", y, x, r))
  ))
}

mcp_server(
  tool(scatter_plot, "Scatter plot of two columns of the mtcars data, as a PNG image",
    arguments = list(
      x = type_enum(names(mtcars), "Column for the horizontal axis", required = FALSE),
      y = type_enum(names(mtcars), "Column for the vertical axis", required = FALSE),
      width = type_integer("Width in pixels", required = FALSE),
      height = type_integer("Height in pixels", required = FALSE)
    ),
    annotations = tool_annotations(read_only_hint = TRUE)
  ),
  name = "mtcars-plots"
)
