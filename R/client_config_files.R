# The configuration files of MCP clients (for mcp_client_install(), see
# R/client_config.R): reading and writing them safely, and merging a
# server's entry into JSON files and into Codex's TOML.

# ---- Reading and writing files -----------------------------------------------

# The file's text, or NULL if there is no file.
cfg_read <- function(path) {
  if (!file.exists(path)) return(NULL)
  bytes <- readBin(path, "raw", n = max(file.info(path)$size, 0))
  if (any(bytes == as.raw(0))) abort(sprintf("Cannot update %s: it is not a text file. It was left unchanged.", path))
  text <- rawToChar(bytes)
  Encoding(text) <- "UTF-8"
  if (!validUTF8(text)) abort(sprintf("Cannot update %s: it is not UTF-8 text. It was left unchanged.", path))
  text
}

# Writes `text` to `path` (in place, so the file keeps its permissions and
# symbolic links stay links), after copying an existing file to a
# timestamped backup. Returns the backup's path, or NULL.
cfg_write <- function(path, text, existed) {
  folder <- dirname(path)
  if (!dir.exists(folder) && !dir.create(folder, recursive = TRUE, showWarnings = FALSE)) {
    abort(sprintf("Cannot create the folder %s", folder))
  }
  backup <- if (existed) cfg_backup(path)
  failed <- function(e) abort(sprintf("Cannot write %s: %s", path, conditionMessage(e)))
  con <- tryCatch(file(path, open = "wb"), error = failed, warning = failed)
  on.exit(close(con))
  writeBin(charToRaw(enc2utf8(text)), con)
  backup
}

cfg_backup <- function(path) {
  stamp <- format(Sys.time(), "%Y%m%d-%H%M%S")
  backup <- paste0(path, ".", stamp, ".bak")
  i <- 1L
  while (file.exists(backup)) {
    backup <- paste0(path, ".", stamp, "-", i, ".bak")
    i <- i + 1L
  }
  if (!file.copy(path, backup, copy.mode = TRUE, copy.date = TRUE)) {
    abort(sprintf("Cannot write a backup of %s at %s; the file was left unchanged.", path, backup))
  }
  backup
}

# ---- JSON files ----------------------------------------------------------------

cfg_install_json <- function(path, config, key, overwrite) {
  old <- cfg_read(path)
  doc <- if (is.null(old) || !nzchar(trimws(old))) cfg_empty_object() else cfg_parse_json(old, path)
  servers <- if (key %in% names(doc) && !is.null(doc[[key]])) doc[[key]] else cfg_empty_object()
  if (!cfg_is_object(servers)) {
    abort(sprintf("Cannot update %s: its \"%s\" is not a JSON object. It was left unchanged.", path, key))
  }
  name <- config$name
  status <- "added"
  if (name %in% names(servers)) {
    same <- identical(
      tryCatch(cfg_json(servers[[name]], FALSE), error = function(e) NULL),
      cfg_json(config$entry, FALSE)
    )
    if (same) return(list(status = "unchanged", backup = NULL))
    if (!overwrite) cfg_refuse(path, name)
    status <- "replaced"
  }
  servers[[name]] <- config$entry
  doc[[key]] <- servers
  text <- tryCatch(cfg_json(doc), mcpserver_error = function(e) {
    abort(sprintf("Cannot update %s: %s. It was left unchanged.", path, conditionMessage(e)))
  })
  backup <- cfg_write(path, paste0(text, "\n"), existed = !is.null(old))
  list(status = status, backup = backup)
}

cfg_parse_json <- function(text, path) {
  doc <- json_decode_(sub("^\ufeff", "", text))
  if (inherits(doc, "mcpserver_rust_error")) {
    abort(sprintf(
      "Cannot update %s: it is not valid JSON (%s; comments and trailing commas are not allowed). It was left unchanged.",
      path, doc$message
    ))
  }
  if (!cfg_is_object(doc)) {
    abort(sprintf("Cannot update %s: it does not hold a JSON object. It was left unchanged.", path))
  }
  doc
}

cfg_refuse <- function(path, name) {
  abort(sprintf(
    "%s already has a server named \"%s\". Use `overwrite = TRUE` to replace it (a backup of the file is kept), or choose another `name`.",
    path, name
  ))
}

# ---- TOML (Codex) ------------------------------------------------------------

# The server's tables, as lines.
cfg_toml_block <- function(name, command, args, env, url = NULL) {
  table <- paste0("mcp_servers.", cfg_toml_key(name))
  if (!is.null(url)) return(c(sprintf("[%s]", table), paste("url =", cfg_toml_string(url))))
  c(
    sprintf("[%s]", table),
    paste("command =", cfg_toml_string(command)),
    paste0("args = [", paste(cfg_toml_string(args), collapse = ", "), "]"),
    if (length(env) > 0) {
      c("", sprintf("[%s.env]", table), paste(cfg_toml_key(names(env)), "=", cfg_toml_string(unname(env))))
    }
  )
}

# TOML basic strings: backslashes, quotes and control characters escaped.
cfg_toml_string <- function(x) {
  x <- enc2utf8(as.character(x))
  x <- gsub("\\", "\\\\", x, fixed = TRUE)
  x <- gsub("\"", "\\\"", x, fixed = TRUE)
  x <- gsub("\n", "\\n", x, fixed = TRUE)
  x <- gsub("\r", "\\r", x, fixed = TRUE)
  x <- gsub("\t", "\\t", x, fixed = TRUE)
  control <- gregexpr("[\001-\010\013\014\016-\037\177]", x)
  regmatches(x, control) <- lapply(regmatches(x, control), function(ch) {
    sprintf("\\u%04X", vapply(ch, utf8ToInt, 1L))
  })
  paste0("\"", x, "\"")
}

cfg_toml_key <- function(x) {
  bare <- grepl("^[A-Za-z0-9_-]+$", x)
  x[!bare] <- cfg_toml_string(x[!bare])
  x
}

cfg_install_toml <- function(path, config, overwrite) {
  name <- config$name
  block <- cfg_toml_block(name, config$command, config$args, config$env, config$url)
  old <- cfg_read(path)
  if (is.null(old) || !nzchar(old)) {
    backup <- cfg_write(path, paste0(paste(block, collapse = "\n"), "\n"), existed = !is.null(old))
    return(list(status = "added", backup = backup))
  }
  bom <- startsWith(old, "\ufeff")
  if (bom) old <- substring(old, 2L)
  ends_with_newline <- endsWith(old, "\n")
  lines <- strsplit(old, "\n", fixed = TRUE)[[1]]
  if (length(lines) == 0) lines <- ""
  crlf <- grepl("\r\n", old, fixed = TRUE)
  clean <- sub("\r$", "", lines)
  statements <- tryCatch(cfg_toml_statements(clean), mcpserver_error = function(e) {
    abort(sprintf(
      "Cannot update %s: it is not valid TOML (%s). It was left unchanged.",
      path, conditionMessage(e)
    ))
  })
  target <- c("mcp_servers", name)
  for (s in statements) {
    if (identical(s$path, "mcp_servers") && s$kind != "table") {
      abort(sprintf(
        "Cannot update %s: it defines `mcp_servers` in a form other than tables (line %d). Add the server by hand:\n%s",
        path, s$start, paste(block, collapse = "\n")
      ))
    }
  }
  # The server's own statements: its table, its env table, and keys that
  # define it from elsewhere with dotted keys (`stats.command = ...` under
  # [mcp_servers]). Its other tables, such as per-tool settings
  # ([mcp_servers.<name>.tools.<tool>]), are kept.
  of_server <- function(path) length(path) >= 2 && identical(path[1:2], target)
  own_table <- function(s) {
    s$kind != "keyval" && of_server(s$path) &&
      (length(s$path) == 2 || (length(s$path) == 3 && s$path[[3]] == "env"))
  }
  matched <- Filter(function(s) {
    if (s$kind != "keyval") return(own_table(s))
    of_server(s$path) && (s$table == 0L || !of_server(statements[[s$table]]$path))
  }, statements)
  if (crlf) block <- paste0(block, "\r")
  if (length(matched) == 0) {
    out <- lines
    if (length(clean) > 0 && nzchar(trimws(clean[length(clean)]))) out <- c(out, if (crlf) "\r" else "")
    out <- c(out, block)
    text <- paste0(paste(out, collapse = "\n"), "\n")
    status <- "added"
  } else {
    # The lines of every statement that defines the server, whole tables
    # from their header to their last value.
    removed <- sort(unique(unlist(lapply(matched, function(s) seq.int(s$start, s$end)))))
    # Runs of blank lines between two of them go too.
    gap <- setdiff(seq.int(min(removed), max(removed)), removed)
    for (run in split(gap, cumsum(c(1L, diff(gap) != 1L)))) {
      if (!any(nzchar(trimws(clean[run])))) removed <- c(removed, run)
    }
    removed <- sort(removed)
    existing <- sub("[[:space:]]+$", "", clean[removed])
    existing <- existing[nzchar(existing) & !startsWith(trimws(existing), "#")]
    wanted <- sub("\r$", "", block)
    if (identical(existing, wanted[nzchar(wanted)])) return(list(status = "unchanged", backup = NULL))
    if (!overwrite) cfg_refuse(path, name)
    first <- matched[[which.min(vapply(matched, `[[`, 1L, "start"))]]
    kept <- lines[-removed]
    if (first$kind != "keyval") {
      at <- first$start - sum(removed < first$start)
      out <- append(kept, block, after = at - 1L)
    } else {
      # Inside another table: the new table goes at the end of the file.
      out <- c(kept, if (length(kept) > 0 && nzchar(trimws(sub("\r$", "", kept[length(kept)])))) "", block)
    }
    text <- paste(out, collapse = "\n")
    if (ends_with_newline || first$kind == "keyval") text <- paste0(text, "\n")
    status <- "replaced"
  }
  if (bom) text <- paste0("\ufeff", text)
  backup <- cfg_write(path, text, existed = TRUE)
  list(status = status, backup = backup)
}

# Splits TOML lines into statements (table headers and key/value pairs), each
# with its full key path, kind ("table", "array" for `[[...]]`, "keyval")
# and first and last line; a table's last line is that of its last value,
# and a key/value pair's `table` is the index of its table (0 for none).
# Values are skipped, not parsed: this is as much of TOML as it takes to
# find where a table is defined. Errors are raised for what it cannot read.
cfg_toml_statements <- function(lines) {
  out <- list()
  table <- character()
  current <- 0L
  i <- 1L
  while (i <= length(lines)) {
    chars <- strsplit(lines[[i]], "")[[1]]
    n <- length(chars)
    p <- cfg_toml_ws(chars, 1L)
    if (p > n || chars[[p]] == "#") {
      i <- i + 1L
      next
    }
    if (chars[[p]] == "[") {
      array <- p < n && chars[[p + 1L]] == "["
      key <- cfg_toml_parse_key(chars, p + 1L + array, i)
      close <- if (array) c("]", "]") else "]"
      p <- key$end
      if (!identical(chars[p:(p + length(close) - 1L)], close)) cfg_toml_fail(i, "a table header that does not end with ]")
      p <- cfg_toml_ws(chars, p + length(close))
      if (p <= n && chars[[p]] != "#") cfg_toml_fail(i, "text after a table header")
      table <- key$parts
      out[[length(out) + 1L]] <- list(kind = if (array) "array" else "table", path = table, start = i, end = i)
      current <- length(out)
      i <- i + 1L
    } else {
      key <- cfg_toml_parse_key(chars, p, i)
      if (key$end > n || chars[[key$end]] != "=") cfg_toml_fail(i, "a key without =")
      end <- cfg_toml_skip_value(lines, i, key$end + 1L)
      out[[length(out) + 1L]] <- list(kind = "keyval", path = c(table, key$parts), start = i, end = end, table = current)
      if (current > 0L) out[[current]]$end <- end
      i <- end + 1L
    }
  }
  out
}

cfg_toml_fail <- function(line, problem) abort(sprintf("line %d: %s", line, problem))

cfg_toml_ws <- function(chars, p) {
  while (p <= length(chars) && chars[[p]] %in% c(" ", "\t")) p <- p + 1L
  p
}

cfg_toml_bare <- c(LETTERS, letters, 0:9, "_", "-")

# A dotted key from position `p`: its parts, and the position after it and
# the blanks that follow.
cfg_toml_parse_key <- function(chars, p, line) {
  n <- length(chars)
  parts <- character()
  repeat {
    p <- cfg_toml_ws(chars, p)
    if (p > n) cfg_toml_fail(line, "a missing key")
    if (chars[[p]] == "\"") {
      s <- cfg_toml_basic_string(chars, p, line)
      parts <- c(parts, s$value)
      p <- s$end
    } else if (chars[[p]] == "'") {
      close <- if (p < n) match("'", chars[(p + 1L):n]) else NA
      if (is.na(close)) cfg_toml_fail(line, "an unterminated quoted key")
      parts <- c(parts, paste(chars[seq_len(close - 1L) + p], collapse = ""))
      p <- p + close + 1L
    } else {
      q <- p
      while (q <= n && chars[[q]] %in% cfg_toml_bare) q <- q + 1L
      if (q == p) cfg_toml_fail(line, sprintf("an unexpected character %s", chars[[p]]))
      parts <- c(parts, paste(chars[p:(q - 1L)], collapse = ""))
      p <- q
    }
    p <- cfg_toml_ws(chars, p)
    if (p <= n && chars[[p]] == ".") {
      p <- p + 1L
      next
    }
    return(list(parts = parts, end = p))
  }
}

# A basic string starting at the quote at `p`, decoded.
cfg_toml_basic_string <- function(chars, p, line) {
  n <- length(chars)
  out <- character()
  q <- p + 1L
  while (q <= n) {
    ch <- chars[[q]]
    if (ch == "\"") return(list(value = paste(out, collapse = ""), end = q + 1L))
    if (ch != "\\") {
      out <- c(out, ch)
      q <- q + 1L
      next
    }
    if (q == n) break
    e <- chars[[q + 1L]]
    simple <- c("\"" = "\"", "\\" = "\\", b = "\b", t = "\t", n = "\n", f = "\f", r = "\r", e = "\033")
    if (e %in% names(simple)) {
      out <- c(out, simple[[e]])
      q <- q + 2L
    } else if (e %in% c("u", "U")) {
      width <- if (e == "u") 4L else 8L
      hex <- paste(chars[q + 1L + seq_len(width)], collapse = "")
      if (!grepl(sprintf("^[0-9A-Fa-f]{%d}$", width), hex)) cfg_toml_fail(line, "a bad \\u escape")
      out <- c(out, intToUtf8(strtoi(hex, 16L)))
      q <- q + 2L + width
    } else {
      cfg_toml_fail(line, sprintf("an unknown escape \\%s", e))
    }
  }
  cfg_toml_fail(line, "an unterminated string")
}

# Skips the value that starts at line `i`, position `p`, through strings,
# multi-line strings, arrays and inline tables; returns its last line.
cfg_toml_skip_value <- function(lines, i, p) {
  depth <- 0L
  mode <- "none"
  start <- i
  repeat {
    chars <- strsplit(lines[[i]], "")[[1]]
    n <- length(chars)
    triple <- function(q, ch) q + 2L <= n && all(chars[q:(q + 2L)] == ch)
    while (p <= n) {
      ch <- chars[[p]]
      if (mode == "none") {
        if (ch == "#") break
        if (ch == "\"" || ch == "'") {
          if (triple(p, ch)) {
            mode <- if (ch == "\"") "multi-basic" else "multi-literal"
            p <- p + 3L
            next
          }
          mode <- if (ch == "\"") "basic" else "literal"
        } else if (ch == "[" || ch == "{") {
          depth <- depth + 1L
        } else if (ch == "]" || ch == "}") {
          depth <- depth - 1L
          if (depth < 0L) cfg_toml_fail(i, sprintf("an unmatched %s", ch))
        }
        p <- p + 1L
      } else if (mode == "basic" || mode == "multi-basic") {
        if (ch == "\\") {
          p <- p + 2L
        } else if (ch == "\"" && mode == "basic") {
          mode <- "none"
          p <- p + 1L
        } else if (ch == "\"" && triple(p, "\"")) {
          # Up to two more quotes belong to the string.
          p <- p + 3L
          while (p <= n && chars[[p]] == "\"") p <- p + 1L
          mode <- "none"
        } else {
          p <- p + 1L
        }
      } else {
        if (ch == "'" && mode == "literal") {
          mode <- "none"
          p <- p + 1L
        } else if (ch == "'" && triple(p, "'")) {
          p <- p + 3L
          while (p <= n && chars[[p]] == "'") p <- p + 1L
          mode <- "none"
        } else {
          p <- p + 1L
        }
      }
    }
    if (mode == "basic" || mode == "literal") cfg_toml_fail(i, "an unterminated string")
    if (mode == "none" && depth == 0L) return(i)
    i <- i + 1L
    p <- 1L
    if (i > length(lines)) cfg_toml_fail(start, "a value that never ends")
  }
}
