# Interoperability with ellmer (https://ellmer.tidyverse.org): its tool
# definitions, type objects and content values, read through their
# documented S7 classes. ellmer stores S7 properties as attributes, so no
# ellmer or S7 code is needed to read them.

ellmer_class <- function(x, class) inherits(x, paste0("ellmer::", class))

prop <- function(x, name) attr(x, name, exact = TRUE)

is_ellmer_tool <- function(x) ellmer_class(x, "ToolDef")

# An ellmer type object as an mcpserver type helper; anything else is
# returned as it is (and checked by the caller).
as_mcp_type <- function(x) {
  if (is.null(x) || inherits(x, "mcpserver_type") || !ellmer_class(x, "Type")) return(x)
  description <- prop(x, "description")
  required <- prop(x, "required") %||% TRUE
  if (ellmer_class(x, "TypeBasic")) {
    switch(prop(x, "type"),
      boolean = type_boolean(description, required),
      integer = type_integer(description, required),
      number = type_number(description, required),
      string = type_string(description, required),
      abort("Unsupported ellmer tool type.")
    )
  } else if (ellmer_class(x, "TypeEnum")) {
    type_enum(prop(x, "values"), description, required)
  } else if (ellmer_class(x, "TypeArray")) {
    type_array(as_mcp_type(prop(x, "items")), description, required)
  } else if (ellmer_class(x, "TypeObject")) {
    properties <- lapply(prop(x, "properties"), as_mcp_type)
    do.call(type_object, c(
      list(.description = description), properties,
      list(.required = required, .additional_properties = isTRUE(prop(x, "additional_properties")))
    ))
  } else if (ellmer_class(x, "TypeJsonSchema")) {
    type_from_schema(prop(x, "json"))
  } else if (ellmer_class(x, "TypeIgnore")) {
    type_ignore()
  } else {
    abort("Unsupported ellmer tool type.")
  }
}

# An ellmer::ToolDef as a tool. ellmer tools never advertise an output schema.
tool_from_ellmer <- function(x) {
  arguments <- prop(x, "arguments")
  properties <- if (is.null(arguments)) list() else prop(arguments, "properties")
  fun <- x
  attributes(fun) <- NULL
  tool(fun, prop(x, "description") %||% "",
    arguments = lapply(properties, as_mcp_type),
    name = prop(x, "name"),
    annotations = prop(x, "annotations") %||% list()
  )
}

is_ellmer_content <- function(x) ellmer_class(x, "Content")

# What an ellmer tool returned, as a tool result (or the value itself when
# it is not ellmer content).
from_ellmer_value <- function(value) {
  # ellmer content is S7: a list of it is recognised by its first element, so
  # this costs nothing on other results (it runs on every call). An S7 value
  # further into a list is refused by the JSON mapper, which names its path.
  s7_list <- is.list(value) && !is.object(value) && length(value) > 0 &&
    inherits(value[[1L]], "S7_object")
  if (!s7_list && !inherits(value, "S7_object")) return(value)
  if (ellmer_class(value, "ContentToolResult")) {
    error <- prop(value, "error")
    if (!is.null(error)) {
      message <- if (inherits(error, "condition")) conditionMessage(error) else as.character(error)[[1]]
      return(tool_result(content_text(message), is_error = TRUE))
    }
    return(prop(value, "value"))
  }
  if (is_ellmer_content(value)) {
    return(tool_result(list(ellmer_block(value))))
  }
  if (s7_list) {
    is_content <- vapply(value, is_ellmer_content, logical(1))
    if (!any(is_content)) return(value)
    if (!all(is_content)) {
      abort("Lists containing ellmer content must be made entirely of supported ellmer content values.")
    }
    return(tool_result(lapply(value, ellmer_block)))
  }
  value
}

ellmer_block <- function(x) {
  if (ellmer_class(x, "ContentText")) return(content_text(prop(x, "text")))
  if (ellmer_class(x, "ContentImageInline")) return(content_image(prop(x, "data"), prop(x, "type")))
  class <- class(x)[[1]]
  abort(sprintf(
    "Unsupported ellmer content `%s`. Return an explicit mcpserver::tool_result() using content_text(), content_image(), content_resource_link(), or content_resource() as appropriate.",
    class
  ))
}
