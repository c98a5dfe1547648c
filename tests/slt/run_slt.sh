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
# GPMDB_SLT_JOBS=N: N runner processes over shares of the files (the
# largest first, each to the share with the fewest bytes so far), their
# outputs one after the other; the status is the first failing one's.
# For the GPU suite, where one process ran the corpus for most of a
# device call.
jobs=${GPMDB_SLT_JOBS:-1}
if [ "$jobs" -le 1 ] || [ ${#files[@]} -lt 2 ]; then
	exec "$prog" "$@" "${files[@]}"
fi
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
declare -a load share
for ((j = 0; j < jobs; j++)); do
	load[j]=0
	share[j]=""
done
while read -r sz f; do
	best=0
	for ((j = 1; j < jobs; j++)); do
		[ "${load[j]}" -lt "${load[best]}" ] && best=$j
	done
	load[best]=$((load[best] + sz))
	share[best]+="$f"$'\n'
done < <(for f in "${files[@]}"; do echo "$(stat -c %s "$f") $f"; done |
	sort -k1,1nr)
for ((j = 0; j < jobs; j++)); do
	[ -n "${share[j]}" ] || continue
	mapfile -t mine < <(printf '%s' "${share[j]}")
	("$prog" "$@" "${mine[@]}" >"$tmpd/$j.out" 2>&1
	 echo $? >"$tmpd/$j.rc") &
done
wait
rc=0
for ((j = 0; j < jobs; j++)); do
	[ -e "$tmpd/$j.rc" ] || continue
	cat "$tmpd/$j.out"
	r=$(cat "$tmpd/$j.rc")
	[ "$rc" -eq 0 ] && [ "$r" -ne 0 ] && rc=$r
done
exit "$rc"
