# Run by ./configure: finds a Rust toolchain that is new enough, reports it in
# the install log, and writes src/Makevars from src/Makevars.in. All branching
# lives here so that the Makevars stays POSIX make.

msrv <- local({
  req <- read.dcf("DESCRIPTION", fields = "SystemRequirements")[[1]]
  m <- regmatches(req, regexpr("rustc >= [0-9.]+", req))
  if (length(m) == 0) stop("DESCRIPTION lacks `rustc >= <version>` in SystemRequirements")
  sub("rustc >= ", "", m, fixed = TRUE)
})

tool_version <- function(path) {
  out <- tryCatch(
    suppressWarnings(system2(path, "--version", stdout = TRUE, stderr = TRUE)),
    error = function(e) character()
  )
  status <- attr(out, "status")
  if (length(out) == 0 || (!is.null(status) && status != 0)) return(NA_character_)
  out[[1]]
}

parse_version <- function(line) {
  v <- regmatches(line, regexpr("[0-9]+\\.[0-9]+(\\.[0-9]+)?", line))
  if (length(v) == 0) NA_character_ else v
}

# Candidates in order: whatever is on PATH, then rustup's default location,
# which R sessions started from a desktop often lack on their PATH.
find_toolchain <- function() {
  home_bin <- file.path(Sys.getenv("HOME"), ".cargo", "bin")
  dirs <- unique(c(dirname(Sys.which("cargo")[[1]]), home_bin))
  dirs <- dirs[nzchar(dirs) & dirs != "."]
  seen <- character()
  for (dir in dirs) {
    cargo <- file.path(dir, "cargo")
    rustc <- file.path(dir, "rustc")
    if (!file.exists(cargo)) next
    rustc_line <- tool_version(if (file.exists(rustc)) rustc else "rustc")
    cargo_line <- tool_version(cargo)
    ver <- parse_version(rustc_line)
    seen <- c(seen, sprintf("%s (%s)", cargo, rustc_line))
    if (!is.na(ver) && utils::compareVersion(ver, msrv) >= 0) {
      return(list(dir = normalizePath(dir), cargo = cargo_line, rustc = rustc_line))
    }
  }
  msg <- c(
    "------------------------------------------------------------------",
    sprintf("mcpserver needs Rust (cargo and rustc >= %s) to build.", msrv),
    if (length(seen)) c("Found only:", paste0("  ", seen)) else "No cargo was found on PATH or in ~/.cargo/bin.",
    "Install or update it with rustup (https://rustup.rs):",
    "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh",
    "  rustup update stable",
    "Distribution packages of rustc are usually too old.",
    "------------------------------------------------------------------"
  )
  message(paste(msg, collapse = "\n"))
  quit(status = 1)
}

toolchain <- find_toolchain()
message("mcpserver: using ", toolchain$cargo)
message("mcpserver: using ", toolchain$rustc, " (minimum supported: ", msrv, ")")

# Flags for the final link of mcpserver.so. The static library carries the
# Rust standard library's debug information (2 MB of the 11 MB), which -S
# drops; panic messages and their source locations are data, not debug
# information, and stay. Section garbage collection with every symbol but
# R_init_mcpserver made local removes code nothing calls, and keeps the
# Rust symbols out of the process's symbol table. Each set is tried on a
# probe first, so a linker without them still builds the package.
link_flags <- function() {
  candidates <- if (identical(Sys.info()[["sysname"]], "Darwin")) {
    list(c("-Wl,-S", "-Wl,-dead_strip"), "-Wl,-S")
  } else {
    list(c("-Wl,-S", "-Wl,--gc-sections", "-Wl,--exclude-libs,ALL"), "-Wl,-S")
  }
  for (flags in candidates) {
    if (links_with(flags)) return(paste(flags, collapse = " "))
  }
  ""
}

r_config <- function(name) {
  out <- suppressWarnings(system2(file.path(R.home("bin"), "R"), c("CMD", "config", name), stdout = TRUE, stderr = FALSE))
  paste(out, collapse = " ")
}

links_with <- function(flags) {
  dir <- tempfile("mcpserver-link")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  probe <- file.path(dir, "probe.c")
  writeLines("int mcpserver_probe(void) { return 0; }", probe)
  command <- paste(
    r_config("SHLIB_LD"), r_config("CPICFLAGS"), r_config("SHLIB_LDFLAGS"),
    paste(flags, collapse = " "), "-o", shQuote(file.path(dir, "probe.so")), shQuote(probe)
  )
  status <- suppressWarnings(system(command, ignore.stdout = TRUE, ignore.stderr = TRUE))
  identical(status, 0L) && file.exists(file.path(dir, "probe.so"))
}

vendored <- file.exists("src/rust/vendor.tar.xz")
debug <- nzchar(Sys.getenv("DEBUG"))
keep_target <- debug || nzchar(Sys.getenv("MCPSERVER_KEEP_TARGET"))
if (vendored) {
  message("mcpserver: building offline from the crates in src/rust/vendor.tar.xz")
} else {
  message("mcpserver: src/rust/vendor.tar.xz is missing; cargo downloads the crates (run `make vendor`)")
  # Left behind by an interrupted offline build, these would make cargo
  # look for crates in a stale vendor directory.
  unlink(c("src/.cargo", "src/vendor"), recursive = TRUE)
}
linking <- if (debug) "" else link_flags()
message("mcpserver: link flags: ", if (nzchar(linking)) linking else "(none)")

values <- c(
  CARGO_DIR = toolchain$dir,
  # Offline builds from the vendored sources use a private CARGO_HOME, so
  # that nothing is written to ~/.cargo (a CRAN rule) and no configuration
  # there can redirect the build; online builds share the user's registry
  # cache. --locked: Cargo.lock is used as it is, never rewritten.
  CARGO_HOME_SETUP = if (vendored) "CARGO_HOME=$(CARGOTMP) && export CARGO_HOME &&" else "",
  CRAN_FLAGS = if (vendored) "-j 2 --offline --locked" else "-j 2 --locked",
  PROFILE = if (debug) "" else "--release",
  LIBDIR = if (debug) "debug" else "release",
  LINK_FLAGS = linking,
  CLEAN_TARGET = if (keep_target) "" else "$(TARGET_DIR)"
)

lines <- readLines("src/Makevars.in")
for (key in names(values)) {
  lines <- gsub(paste0("@", key, "@"), values[[key]], lines, fixed = TRUE)
}
writeLines(lines, "src/Makevars")
