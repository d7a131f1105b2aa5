#!/bin/sh
# Regenerates R/extendr-wrappers.R and the roxygen2 files from the installed
# package and fails if they differ from what is committed.
set -eu
lib=$1
# The Makefile's own `wrappers` and `document` recipes, so the two cannot
# drift; -o install skips reinstalling (the caller installed into $lib).
make --no-print-directory -o install R_LIB="$lib" wrappers document >/dev/null
git diff --exit-code -- R/extendr-wrappers.R NAMESPACE man/
untracked=$(git ls-files --others --exclude-standard -- man/ R/)
if [ -n "$untracked" ]; then
  echo "generated files not committed: $untracked"
  exit 1
fi
