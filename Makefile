# The project's commands. See README.md.
R_LIB := .lib
export MCPSERVER_KEEP_TARGET := 1
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: all deps install-deps install wrappers document demo test conformance check vendor bench clean

all: install

## Install R, the R packages the tests use, and check for Rust (and Node >= 20).
deps:
	@tools/install-deps.sh
install-deps: deps

## Build and install the package into ./.lib (kept out of your library).
install: deps
	@mkdir -p $(R_LIB)
	R CMD INSTALL --no-test-load -l $(R_LIB) .

## Regenerate R/extendr-wrappers.R from the built library.
wrappers: install
	Rscript tools/make-wrappers.R $(R_LIB)

## Regenerate the wrappers, NAMESPACE and man/ pages.
document: wrappers
	Rscript -e 'roxygen2::roxygenise(load_code = roxygen2::load_source)'

## Install everything and run the example server with a real client.
demo: install
	@tools/demo.sh

## Every test: Rust, generated files, R and end-to-end. Ends "N passed, N failed".
# No `deps` prerequisite: run-tests.sh installs them as a counted step, so a
# failure there still ends with the counts.
test:
	@tools/run-tests.sh

## The official MCP conformance suite against tests/conformance/server.R over HTTP
## (also a step of `make test`). See tests/conformance/README.md.
conformance: install
	@python3 -m unittest tests/conformance/test_verdicts.py
	@R_LIB=$(R_LIB) tools/conformance.sh

## R CMD build, then R CMD check --as-cran of the tarball as CRAN runs it
## (no errors or warnings allowed). See tools/check.sh.
check: deps
	@tools/check.sh

## Benchmarks against the official Python and TypeScript SDK servers; rewrites bench/README.md.
bench: deps
	@bench/run.sh

## Vendor the Rust crates of Cargo.lock into src/rust/vendor.tar.xz (committed;
## rerun after changing Cargo.lock, `make test` checks it). Needs the network.
vendor:
	@tools/vendor.sh

clean:
	rm -rf $(R_LIB) .cache src/rust/target src/vendor src/.cargo mcpserver.Rcheck mcpserver_*.tar.gz
