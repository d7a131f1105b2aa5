#!/bin/sh
# Regenerates R/extendr-wrappers.R and the roxygen2 files from the installed
# package and fails if they differ from what is committed.
set -eu
lib=$1
Rscript tools/make-wrappers.R "$lib"
Rscript -e 'roxygen2::roxygenise(load_code = roxygen2::load_source)' >/dev/null
git diff --exit-code -- R/extendr-wrappers.R NAMESPACE man/
untracked=$(git ls-files --others --exclude-standard -- man/ R/)
if [ -n "$untracked" ]; then
  echo "generated files not committed: $untracked"
  exit 1
fi
