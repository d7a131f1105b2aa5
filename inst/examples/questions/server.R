# A tool that asks the user before it answers: it plans a trip budget and
# asks for what the model did not say (mcp_elicit()). The code is the same
# for every protocol revision; see vignette("long-running").
# Run by a client as: Rscript /path/to/server.R
library(mcpserver)

nightly_cost <- c(lisbon = 140, oslo = 210, kyoto = 180)

trip_budget <- function(city = NULL) {
  if (is.null(city)) {
    answer <- mcp_elicit("Where would you like to go?",
      list(city = type_enum(names(nightly_cost), "Destination")))
    if (answer$action != "accept") return("No destination chosen, so no budget.")
    city <- answer$content$city
  }
  details <- mcp_elicit(sprintf("Planning %s: how long, and with how many people?", city),
    list(
      nights = type_integer("Number of nights"),
      travellers = type_integer("Number of travellers"),
      breakfast = type_boolean("Include breakfast?")
    ))
  if (details$action != "accept") return("Budget cancelled.")
  with(details$content, {
    per_night <- nightly_cost[[city]] + if (isTRUE(breakfast)) 15 * travellers else 0
    total <- per_night * nights
    sprintf("%d nights in %s for %d: about %s (%s a night).",
            nights, city, travellers, format(total, big.mark = ","), per_night)
  })
}

mcp_server(
  tool(trip_budget, "Estimate the accommodation budget of a trip, asking the user for the details",
    arguments = list(city = type_enum(names(nightly_cost), "Destination, if known", required = FALSE))),
  name = "trip-budget"
)
