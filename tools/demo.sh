#!/bin/sh
# `make demo`: the example server in inst/examples/demo, driven by the
# official Python MCP client over real stdio.
set -eu
cd "$(dirname "$0")/.."
python=$(tools/python-clients.sh mcp2)
echo "== mcpserver demo: $python drives 'Rscript inst/examples/demo/server.R'"
echo
R_LIBS="$PWD/.lib${R_LIBS:+:$R_LIBS}" "$python" tests/e2e/python/demo.py inst/examples/demo/server.R
