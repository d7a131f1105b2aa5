# Middleware: R functions `function(request, call_next)` that run around each
# request that reaches R (tools/call, resources/read, prompts/get,
# completion/complete) and, when a server has middleware, around its list
# methods too (the engine then runs them as jobs of the catalog's list
# handler: src/rust/mcp-core/src/engine/middleware.rs). Without middleware
# none of this runs: the serving loop calls run_job() as before and lists
# are answered in Rust.
#
# An error raised by middleware (not by the handler inside it) fails the
# request with JSON-RPC -32603; the handler's own error stays what it
# always was (a tool error, `isError`), and middleware sees it as such a
# result from `call_next()`.

#' Middleware: code that runs around every request
#'
#' `mcp_server(middleware = )` takes a function, or a list of functions,
#' each of the form `function(request, call_next)`. They run in order around
#' every request R serves, the first outermost: each sees the `request`,
#' and calls `call_next(request)` to pass it on (to the next middleware, and
#' finally to the tool, resource, prompt or completion function), which
#' returns the result. A middleware may:
#'
#' * change `request$params$arguments` and pass the changed request on;
#' * return a value of its own without calling `call_next()` (a short-circuit):
#'   it is the result, as if the tool had returned it (a [tool_result()]
#'   with `is_error = TRUE` is a tool error the model reads);
#' * change the result `call_next()` returned, on its way out (for a tool,
#'   what its function returned; for `resources/read`, `prompts/get` and
#'   `completion/complete`, the [tool_result()] the server made of the
#'   function's value);
#' * filter and reorder list results (for `tools/list` and the other list
#'   methods `call_next()` returns `list(tools = <entries>)` and so on, each
#'   entry as the client would see it): the entries it keeps are sent, by
#'   their `name` (`uri` for resources, `uriTemplate` for templates);
#'   changes to an entry's fields are not sent, and an entry the server
#'   does not serve cannot be added;
#' * raise an R error: the request fails with JSON-RPC error -32603
#'   (internal error) carrying its message. That differs from an error in
#'   the tool itself, which is a tool result with `isError` (and which
#'   middleware sees as such a result from `call_next()`).
#'
#' `request` is a list with
#' * `method`: `"tools/call"`, `"resources/read"`, `"prompts/get"`,
#'   `"completion/complete"`, `"tools/list"`, `"resources/list"`,
#'   `"resources/templates/list"` or `"prompts/list"`;
#' * `params`: for `tools/call` and `prompts/get` the `name` and the
#'   `arguments` (as R values, as the function will get them); for
#'   `resources/read` the `uri` and the template's variables as
#'   `arguments`; for `completion/complete` the `ref` (prompt name or URI
#'   template), the `argument` being completed, and `arguments =
#'   list(value, context)`; for list methods nothing. Only `arguments` can
#'   be changed: the tool, prompt or resource is the one the client named;
#' * `annotations`: for `tools/call`, the tool's annotations (such as
#'   `readOnlyHint`), as [tool_annotations()] makes them;
#' * `caller`: who asks, as [mcp_request()] describes it (`client`, `auth`
#'   for a bearer token over HTTP, `protocol_version`, `meta`, ...).
#'
#' Middleware applies to both protocol eras and both transports. Requests
#' that need no R (`ping`, cancellations, `server/discover`, `tasks/*`)
#' never wait on it. Without middleware, list methods are answered by the
#' server's own threads even while R is busy; with middleware they run in
#' R, in turn with calls, as middleware may filter them per caller (on
#' 2026-07-28 such a list is marked `cacheScope: "private"`).
#'
#' Tools made with `tool(concurrent = TRUE)` run their middleware on R's
#' main thread before the call is sent to a worker: `call_next()` sends it and
#' returns at once, so the middleware can check, change or refuse the call,
#' but not see or change its result (what it returns after calling
#' `call_next()` is ignored; an error it raises then still fails the call).
#'
#' Ready-made middleware: [middleware_audit()], [middleware_rate_limit()],
#' [middleware_allow_tools()] and [middleware_cache()]; see
#' `vignette("middleware")`.
#'
#' @name middleware
#' @examples
#' # Time every tool call, and log it on stderr.
#' timing <- function(request, call_next) {
#'   started <- Sys.time()
#'   result <- call_next(request)
#'   if (request$method == "tools/call") {
#'     message(request$params$name, " took ", format(Sys.time() - started))
#'   }
#'   result
#' }
#' add <- tool(function(x, y) x + y, "Add two numbers",
#'   name = "add", arguments = list(x = type_number(), y = type_number())
#' )
#' if (FALSE) {
#'   mcp_server(list(add), middleware = list(timing))
#' }
NULL

# `middleware` as given to mcp_server(): NULL (none), one function, or a
# list of functions of two arguments. Returns NULL or the list.
check_middleware <- function(middleware) {
  if (is.null(middleware)) return(NULL)
  if (is.function(middleware)) middleware <- list(middleware)
  bad <- "`middleware` must be NULL, a function, or a list of functions of `(request, call_next)`."
  if (!is.list(middleware) || is.object(middleware)) abort(bad)
  for (f in middleware) {
    if (!is.function(f)) abort(bad)
    arguments <- names(formals(f))
    if (length(arguments) < 2 && !"..." %in% arguments) abort(bad)
  }
  if (length(middleware) == 0) return(NULL)
  unname(middleware)
}

# The serving loops' way in (R/server.R, R/background.R), only when the
# server has middleware: a concurrent call runs its middleware here and is
# sent to a worker from inside it; any other job runs as always, with a
# handler that runs the middleware around the entry's own function.
serve_through_middleware <- function(server, served, pool, job) {
  handler <- served$runnable[[job$tool]]
  route <- attr(handler, "mcpserver_route", exact = TRUE)
  if (identical(route$method, "token")) return(run_job(server, job, handler))
  if (is_worker_job(pool, job)) {
    return(dispatch_through_middleware(server, served, pool, job, handler))
  }
  # The entry's own errors become results inside (call_handler()), so any
  # R error reaching run_job() is the middleware's.
  run_job(server, job, function(...) {
    run_middleware(served, job, handler, call_handler(handler, job))
  }, middleware = TRUE)
}

# The message of the -32603 error an R error in middleware answers.
middleware_failure <- function(e) paste("Middleware failed:", condition_text(e))

# Runs the served middleware around `innermost` for `job`, and returns the
# result (for a list method, what the engine reads: the identities kept).
run_middleware <- function(served, job, handler, innermost) {
  route <- job_route(handler, job)
  request <- new_request(route, job$arguments)
  original <- request$params
  inner <- function(request) {
    if (!is.list(request) || !is.list(request$params)) {
      abort("`call_next()` must be given the request (a list with `params`).")
    }
    fixed <- original
    fixed$arguments <- NULL
    changed <- request$params
    changed$arguments <- NULL
    if (!identical(changed, fixed)) {
      abort("middleware may change only `request$params$arguments`.")
    }
    innermost(route, request$params$arguments %||% list())
  }
  result <- served_chain(served, inner)(request)
  if (identical(route$method, "list")) return(list_kept(result, route))
  result
}

# The served middleware around `inner`: made once per server, with the
# innermost step looked up at each request (R runs one at a time).
served_chain <- function(served, inner) {
  served$inner <- inner
  if (is.null(served$chain)) {
    served$chain <- chain(served$middleware, function(request) served$inner(request))
  }
  served$chain
}

# The middleware in order around `inner`, as one function of the request.
chain <- function(middleware, inner) {
  call <- inner
  for (f in rev(middleware)) {
    call <- local({
      f <- f
      rest <- call
      function(request) f(request, rest)
    })
  }
  call
}

# What request a job serves: a tool's call, or what its hidden handler
# was made for (see build_catalog()).
job_route <- function(handler, job) {
  route <- attr(handler, "mcpserver_route", exact = TRUE)
  if (is.null(route)) {
    spec <- tool_spec(handler)
    return(list(method = "tools/call", name = spec$name, annotations = spec$annotations))
  }
  if (identical(route$method, "list")) {
    shape <- list_shapes[[job$arguments$method]]
    route <- list(method = "list", list = job$arguments$method, key = shape[[1]],
                  identity = shape[[2]], items = job$arguments$items)
  }
  route
}

# Each list method's result key and the field naming an entry.
list_shapes <- list(
  "tools/list" = c("tools", "name"),
  "resources/list" = c("resources", "uri"),
  "resources/templates/list" = c("resourceTemplates", "uriTemplate"),
  "prompts/list" = c("prompts", "name")
)

new_request <- function(route, arguments) {
  params <- switch(route$method,
    "tools/call" = list(name = route$name, arguments = arguments),
    "prompts/get" = list(name = route$name, arguments = arguments),
    "resources/read" = list(uri = arguments[[".uri"]], arguments = arguments[names(arguments) != ".uri"]),
    "completion/complete" = list(ref = route$ref, argument = route$argument, arguments = arguments),
    list()
  )
  method <- if (identical(route$method, "list")) route$list else route$method
  request <- list(method = method, params = params, caller = mcp_request())
  if (!is.null(route$annotations)) request$annotations <- route$annotations
  request
}

# The innermost step on R's main thread: the entry's own function, whose
# R error becomes the tool error it would have been without middleware.
call_handler <- function(handler, job) {
  function(route, arguments) {
    switch(route$method,
      "list" = stats::setNames(list(rust(json_decode_(route$items))), route$key),
      {
        if (identical(route$method, "resources/read")) {
          arguments <- c(list(.uri = job$arguments[[".uri"]]), arguments)
        }
        tryCatch(
          do.call(handler, arguments),
          error = function(e) tool_result(content_text(condition_text(e)), is_error = TRUE)
        )
      }
    )
  }
}

# The identities of the entries a list middleware kept, for the engine.
list_kept <- function(result, route) {
  entries <- if (is.list(result)) result[[route$key]]
  if (!is.list(result) || !is.list(entries)) {
    abort(sprintf("a %s result must be a list with `%s`, a list of entries.", route$list, route$key))
  }
  keep <- vapply(entries, function(e) {
    id <- if (is.list(e)) e[[route$identity]]
    if (!is_string(id)) abort(sprintf("each entry of `%s` must keep its `%s`.", route$key, route$identity))
    id
  }, character(1))
  tool_result(structured_content = list(keep = I(unname(keep))))
}

# A concurrent call: its middleware runs here, on the main thread, and
# `call_next()` sends it to a worker. A short-circuit answers the call at once;
# an error fails it with -32603 (also after it was sent: the worker's
# result is then dropped).
dispatch_through_middleware <- function(server, served, pool, job, handler) {
  the$job <- job
  on.exit(the$job <- NULL)
  sent <- FALSE
  send <- function(route, arguments) {
    job$arguments <- arguments
    sent <<- TRUE
    the$job <- NULL
    worker_submit(server, pool, job, handler)
    structure(list(), class = "mcpserver_sent_to_worker")
  }
  tryCatch(
    {
      value <- run_middleware(served, job, handler, send)
      if (!sent) server$complete_value(job$id, job$tool, from_ellmer_value(value))
      "done"
    },
    error = function(e) {
      server$complete_failed(job$id, middleware_failure(e))
      "error"
    }
  )
}

# Ready-made middleware --------------------------------------------------

# Who is asking, for per-caller middleware: the identity the bearer-token
# function gave (its `sub`, `client_id`, `user` or `name`, else all of it),
# else the client's name, else "anonymous". Over stdio one process serves
# one client, so the client's name is enough there.
default_caller <- function(request) {
  caller <- request$caller
  auth <- caller$auth
  if (is.list(auth)) {
    for (field in c("sub", "client_id", "user", "name")) {
      if (is_string(auth[[field]])) return(paste0("auth:", auth[[field]]))
    }
  }
  if (!is.null(auth)) return(paste0("auth:", rust(json_encode_(auth, FALSE))))
  client <- caller$client
  if (is.list(client) && is_string(client$name)) return(paste0("client:", client$name))
  "anonymous"
}

check_by <- function(by) {
  if (is.null(by)) return(default_caller)
  if (!is.function(by)) abort("`by` must be NULL or a function of the request returning a string.")
  function(request) {
    key <- by(request)
    if (!is_string(key)) abort("`by` must return a single string.")
    key
  }
}

# The tool error a ready-made middleware refuses a call with: the model
# reads why, as it would a tool's own error.
refusal <- function(text) tool_result(content_text(text), is_error = TRUE)

#' Ready-made middleware
#'
#' Middleware for [mcp_server()]'s `middleware`, each a few lines on top of
#' [middleware]:
#'
#' * `middleware_audit()` writes one line per request: when, who, what,
#'   how it ended and how long it took, as JSON.
#' * `middleware_rate_limit()` lets each caller make at most `calls` tool
#'   calls in any `per` seconds; more are refused with a tool error saying
#'   when to retry.
#' * `middleware_allow_tools()` shows each caller only the tools it may use
#'   (in `tools/list`), and refuses calls of the others with a tool error.
#' * `middleware_cache()` keeps the results of read-only tools (annotated
#'   with `tool_annotations(read_only_hint = TRUE)`) for `ttl` seconds, per
#'   caller and arguments, and answers repeated calls from it.
#'
#' A caller is told apart by `by(request)`, a string; by default the
#' identity the HTTP bearer-token function returned for its token (its
#' `sub`, `client_id`, `user` or `name` field), else the client's name from
#' its `clientInfo`. Each keeps at most `max_callers` callers (or
#' `max_entries` results), forgetting the least recently seen first.
#'
#' @param to Where the audit lines go: a connection (default: stderr), a
#'   file path (appended to), or a function called with each entry (a list
#'   of `time`, `caller`, `method`, `name`, `outcome`, `seconds`).
#' @param calls,per At most `calls` calls per `per` seconds per caller.
#' @param tools The tools a caller may use: a character vector of tool
#'   names (the same for every caller), or a function of the caller (as
#'   [mcp_request()] describes it) returning one.
#' @param ttl Seconds a cached result is used.
#' @param max_entries,max_callers The most results, or callers, kept.
#' @param by A function of the request returning the caller's key, or
#'   `NULL` for the default described above.
#' @return A middleware function, `function(request, call_next)`.
#' @seealso [middleware] for writing your own, and `vignette("middleware")`.
#' @examples
#' add <- tool(function(x, y) x + y, "Add two numbers",
#'   name = "add", arguments = list(x = type_number(), y = type_number()),
#'   annotations = tool_annotations(read_only_hint = TRUE)
#' )
#' if (FALSE) {
#'   mcp_server(list(add), middleware = list(
#'     middleware_audit(),
#'     middleware_rate_limit(calls = 30, per = 60),
#'     middleware_allow_tools("add"),
#'     middleware_cache(ttl = 60)
#'   ))
#' }
#' @name middleware_ready_made
NULL

#' @rdname middleware_ready_made
#' @export
middleware_audit <- function(to = stderr(), by = NULL) {
  by <- check_by(by)
  write <- audit_writer(to)
  function(request, call_next) {
    started <- Sys.time()
    outcome <- "failed"
    on.exit(write(list(
      time = format(started, "%Y-%m-%dT%H:%M:%OS3Z", tz = "UTC"), caller = by(request),
      method = request$method, name = request$params$name %||% request$params$uri,
      outcome = outcome, seconds = round(as.numeric(difftime(Sys.time(), started, units = "secs")), 6)
    )))
    result <- call_next(request)
    outcome <- if (inherits(result, "mcpserver_tool_result") && isTRUE(result$is_error)) "tool error" else "ok"
    result
  }
}

audit_writer <- function(to) {
  if (is.function(to)) return(to)
  line <- function(entry) rust(json_encode_(drop_null(entry), FALSE))
  if (is_string(to)) return(function(entry) cat(line(entry), "\n", file = to, sep = "", append = TRUE))
  if (inherits(to, "connection")) return(function(entry) cat(line(entry), "\n", file = to, sep = ""))
  abort("`to` must be a connection, a file path or a function.")
}

#' @rdname middleware_ready_made
#' @export
middleware_rate_limit <- function(calls, per = 60, by = NULL, max_callers = 10000) {
  if (!is_positive_number(calls) || calls != round(calls)) abort("`calls` must be a positive whole number.")
  if (!is_positive_number(per)) abort("`per` must be a positive number of seconds.")
  by <- check_by(by)
  seen <- bounded_store(max_callers)
  function(request, call_next) {
    if (request$method != "tools/call") return(call_next(request))
    key <- by(request)
    now <- as.numeric(Sys.time())
    times <- seen$get(key)
    times <- times[times > now - per]
    if (length(times) >= calls) {
      seen$set(key, times)
      wait <- ceiling(times[[1]] + per - now)
      return(refusal(sprintf("Rate limit: at most %d calls per %g seconds; try again in %d seconds.", as.integer(calls), per, as.integer(wait))))
    }
    seen$set(key, c(times, now))
    call_next(request)
  }
}

#' @rdname middleware_ready_made
#' @export
middleware_allow_tools <- function(tools) {
  if (!is.function(tools) && !is.character(tools)) {
    abort("`tools` must be a character vector of tool names or a function of the caller.")
  }
  allowed <- function(request) {
    names <- if (is.function(tools)) tools(request$caller) else tools
    if (!is.null(names) && !is.character(names)) abort("`tools` must return a character vector of tool names.")
    names
  }
  function(request, call_next) {
    if (request$method == "tools/call") {
      if (!request$params$name %in% allowed(request)) {
        return(refusal(sprintf("Tool \"%s\" is not available to this caller.", request$params$name)))
      }
      return(call_next(request))
    }
    result <- call_next(request)
    if (request$method == "tools/list") {
      names <- allowed(request)
      result$tools <- Filter(function(t) t$name %in% names, result$tools)
    }
    result
  }
}

#' @rdname middleware_ready_made
#' @export
middleware_cache <- function(ttl = 60, max_entries = 1000, by = NULL) {
  if (!is_positive_number(ttl)) abort("`ttl` must be a positive number of seconds.")
  by <- check_by(by)
  cache <- bounded_store(max_entries)
  function(request, call_next) {
    read_only <- request$method == "tools/call" && isTRUE(request$annotations$readOnlyHint)
    if (!read_only) return(call_next(request))
    key <- paste(by(request), request$params$name, argument_key(request$params$arguments), sep = "\r")
    now <- as.numeric(Sys.time())
    hit <- cache$get(key)
    if (!is.null(hit) && hit$until > now) return(hit$value)
    value <- call_next(request)
    failed <- inherits(value, "mcpserver_tool_result") && isTRUE(value$is_error)
    if (!failed && !inherits(value, "mcpserver_sent_to_worker")) cache$set(key, list(value = value, until = now + ttl))
    value
  }
}

# The arguments as text, to key a cache by: JSON when they are plain
# values, else R's own serialisation.
argument_key <- function(arguments) {
  tryCatch(rust(json_encode_(arguments, FALSE)), error = function(e) {
    rawToChar(serialize(arguments, NULL, ascii = TRUE))
  })
}

# A map of at most `limit` keys that forgets the least recently used.
bounded_store <- function(limit) {
  if (!is_positive_number(limit)) abort("The limit of callers or entries must be a positive number.")
  store <- new.env(parent = emptyenv())
  used <- new.env(parent = emptyenv())
  tick <- 0
  list(
    get = function(key) {
      key <- paste0("k", key)
      if (!exists(key, envir = store, inherits = FALSE)) return(NULL)
      tick <<- tick + 1
      assign(key, tick, envir = used)
      get(key, envir = store, inherits = FALSE)
    },
    set = function(key, value) {
      key <- paste0("k", key)
      tick <<- tick + 1
      assign(key, value, envir = store)
      assign(key, tick, envir = used)
      if (length(store) > limit) {
        ticks <- unlist(as.list(used))
        oldest <- names(ticks)[which.min(ticks)]
        rm(list = oldest, envir = store)
        rm(list = oldest, envir = used)
      }
    }
  )
}

# The catalog's list handler (see build_catalog()): the serving loop runs
# it through the middleware (call_handler() lists the entries itself), so
# this body only keeps every entry, should anything run it directly.
list_handler <- function(method, items) {
  route <- list(method = "list", list = method, key = list_shapes[[method]][[1]],
                identity = list_shapes[[method]][[2]])
  list_kept(stats::setNames(list(rust(json_decode_(items))), route$key), route)
}
