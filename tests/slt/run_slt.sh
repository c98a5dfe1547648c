#!/usr/bin/env bash
# tests/slt/run_slt.sh - runs a sqllogictest runner over our SQL tests and
# the sqllogictest corpus.
#
# Usage: tests/slt/run_slt.sh [--corpus-only] PROGRAM [RUNNER-OPTION...]
#
# Files: tests/sql/*.test (unless --corpus-only), then, when the corpus is
# there, its select1-5.test.gz, evidence/, index/ and random/ files.  The
# corpus is ../shared/sqllogictest from the repository root, or
# $GPMDB_SLT_DIR; without it a note says so and only tests/sql runs.  The
# exit status is the runner's (0 when nothing failed).
set -u
cd "$(dirname "$0")/../.."
local_tests=1
if [ "${1:-}" = "--corpus-only" ]; then
	local_tests=0
	shift
fi
if [ $# -lt 1 ]; then
	echo "usage: $0 [--corpus-only] PROGRAM [RUNNER-OPTION...]" >&2
	exit 2
fi
prog=$1
shift
files=()
if [ "$local_tests" = 1 ]; then
	for f in tests/sql/*.test; do
		[ -e "$f" ] && files+=("$f")
	done
fi
dir=${GPMDB_SLT_DIR:-../shared/sqllogictest}
if [ -d "$dir" ]; then
	while IFS= read -r f; do
		files+=("$f")
	done < <(find "$dir" -maxdepth 1 -name 'select*.test.gz' | sort
		 find "$dir/evidence" "$dir/index" "$dir/random" \
			 -name '*.test.gz' 2>/dev/null | sort)
else
	echo "note: no sqllogictest corpus at $dir (set GPMDB_SLT_DIR); not run"
fi
if [ ${#files[@]} -eq 0 ]; then
	echo "no test files"
	echo "0 passed, 0 failed"
	exit 0
fi
exec "$prog" "$@" "${files[@]}"
