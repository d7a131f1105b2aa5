#!/bin/sh
# `make check`: what a user or CRAN runs. `R CMD build .`, then
# `R CMD check --as-cran` of the tarball it made, with no variable pointing
# at anything outside the tarball: the crates come from its
# src/rust/vendor.tar.xz, the wire schemas from its tests/testthat/schemas.
# Only CRAN's reachability is switched off, because CRAN is out of reach
# here: the package index of CRAN (and of Bioconductor) is an empty local
# repository, and the incoming checks that ask CRAN's servers are off
# (_R_CHECK_CRAN_INCOMING_REMOTE_).
# A suggested package that cannot be installed here (btw and ellmer are
# only on CRAN) is not forced (_R_CHECK_FORCE_SUGGESTS_=false, set only
# then): its tests skip. Fails on any ERROR or WARNING; prints every NOTE.
#   tools/check.sh            # R CMD check --as-cran
#   tools/check.sh --plain    # plain R CMD check
# The PDF manual needs LaTeX; without pdflatex it is left out (--no-manual),
# and the script says so.
set -eu
cd "$(dirname "$0")/.."
# The Makefile's settings for development builds are not a user's.
unset MCPSERVER_KEEP_TARGET DEBUG NOT_CRAN

mode=--as-cran
[ "${1:-}" = --plain ] && mode=""
manual=""
if ! command -v pdflatex >/dev/null 2>&1; then
  manual=--no-manual
  echo "check: pdflatex is not installed, so the PDF manual is not checked (--no-manual)"
fi

unavailable=$(Rscript -e 'd <- read.dcf("DESCRIPTION", "Suggests")[[1]]' \
  -e 'p <- trimws(sub("[(].*", "", strsplit(d, ",")[[1]]))' \
  -e 'cat(p[!vapply(p, requireNamespace, TRUE, quietly = TRUE)])' 2>/dev/null)
if [ -n "$unavailable" ]; then
  echo "check: suggested but not installed here: $unavailable (not forced; their tests skip)"
  _R_CHECK_FORCE_SUGGESTS_=false
  export _R_CHECK_FORCE_SUGGESTS_
fi

rm -rf mcpserver.Rcheck mcpserver_*.tar.gz
R CMD build .
tarball=$(ls mcpserver_*.tar.gz)
echo "check: $tarball is $(wc -c <"$tarball") bytes"

empty_repo=$(mktemp -d)
profile=$(mktemp)
trap 'rm -rf "$empty_repo" "$profile"' EXIT
# As a CRAN mirror lays it out, with no package in it: the package index,
# and the database --as-cran reads for orphaned packages.
mkdir -p "$empty_repo/src/contrib" "$empty_repo/web/packages"
: >"$empty_repo/src/contrib/PACKAGES"
Rscript -e 'saveRDS(data.frame(Package = character(), Maintainer = character()), commandArgs(TRUE))' \
  "$empty_repo/web/packages/packages.rds"
# Two ways in, because R CMD check reads the repositories in two ways.
# The check itself reads options("repos"): a user profile sets it (after
# the site profile, which Debian's R uses to set CRAN to cloud.r-project.org).
echo "options(repos = c(CRAN = 'file://$empty_repo'))" >"$profile"
# The step "checking for unstated dependencies in 'tests'" runs in an
# R --vanilla subprocess (no profile, no utils): for a name the tests use
# but DESCRIPTION does not declare, tools:::.check_packages_used_in_tests()
# asks available.packages() of tools:::.get_standard_repository_URLs(),
# that is CRAN and Bioconductor's BioCsoft, BioCann and BioCexp, taken from
# the file R_REPOSITORIES names (else ~/.R/repositories, else R's own
# etc/repositories, with https://CRAN.R-project.org and bioconductor.org).
# Here the four are the empty repository. (With an empty index that step
# counts no undeclared name as a package, so here it cannot catch a CRAN
# package used by the tests but not declared; on CRAN it can.)
repositories="$empty_repo/repositories"
{
  printf 'menu_name\tURL\tdefault\tsource\twin.binary\tmac.binary\n'
  for r in CRAN BioCsoft BioCann BioCexp; do
    printf '%s\t%s\tfile://%s\t%s\tTRUE\tTRUE\tTRUE\n' \
      "$r" "$r" "$empty_repo" "$([ $r = CRAN ] && echo TRUE || echo FALSE)"
  done
} >"$repositories"
R_PROFILE_USER="$profile" R_REPOSITORIES="$repositories" \
  _R_CHECK_CRAN_INCOMING_REMOTE_=false \
  R CMD check $mode $manual "$tarball" || true

log=mcpserver.Rcheck/00check.log
echo
# Every NOTE, WARNING and ERROR with its explanation (indented lines); a
# slow step has its time before the verdict ("... [10s/11s] NOTE").
awk '/\.\.\. (\[[^]]*\] )?(NOTE|WARNING|ERROR)$/ {show = 1; print; next} /^\* / {show = 0} show' "$log"
status=$(grep '^Status:' "$log" || echo "Status: no result")
echo "$status"
if grep -q -E '^Status:.*(ERROR|WARNING)' "$log" || ! grep -q '^Status:' "$log"; then
  exit 1
fi
