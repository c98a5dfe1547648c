#!/usr/bin/env bash
# tests/shell/run_golden.sh - the shell's golden tests.
#
# Usage: tests/shell/run_golden.sh SHELL [CASE.sql...]
# Runs SHELL (build/gpmdb, or the SQLite double build/tests/shell/gpmdb_sqlite)
# on each tests/shell/golden/*.sql in a fresh directory, as
#   SHELL -batch [ARGS] test.db < CASE.sql
# with stdout and stderr together, and compares with CASE.out byte for
# byte.  A first line "-- args: ..." gives ARGS; a non-zero exit status is
# appended as "[exit N]"; "Run Time:" figures are replaced by X.  Cases
# whose first lines say "-- derived: sqlite3" have outputs made by the
# sqlite3 shell (tests/shell/derive_golden.sh).  One case per file;
# prints "# passed P failed F" and a diff for each failure.
set -u
shell=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=("$here"/golden/*.sql)
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_case() { # SHELL CASE OUT: runs one case in a fresh directory
	local sh=$1 sql=$2 out=$3 dir args
	dir=$(mktemp -d "$tmp/run.XXXXXX")
	args=$(sed -n '1s/^-- args: //p' "$sql")
	(cd "$dir" && export HOME="$dir" GPMDB_HISTORY="$dir/hist" &&
		# shellcheck disable=SC2086
		timeout 20 "$sh" -batch $args test.db <"$sql" >"$out" 2>&1
		rc=$?
		[ $rc -ne 0 ] && echo "[exit $rc]" >>"$out"
		sed -i -E 's/Run Time: real [0-9.]+ user [0-9.]+ sys [0-9.]+/Run Time: real X user X sys X/' "$out"
		for f in "$dir"/*.txt "$dir"/*.csv "$dir"/*.sql; do
			[ -f "$f" ] || continue
			{ echo "== file ${f##*/}"; cat "$f"; } >>"$out"
		done)
	rm -rf "$dir"
}

for sql in "${cases[@]}"; do
	name=$(basename "$sql" .sql)
	want=${sql%.sql}.out
	run_case "$shell" "$sql" "$tmp/got"
	if [ -f "$want" ] && cmp -s "$want" "$tmp/got"; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		if [ -f "$want" ]; then
			diff -u "$want" "$tmp/got" | head -n 40 | sed -e 's/^/    /'
		else
			echo "    missing $want"
		fi
		failed=$((failed + 1))
	fi
done
echo "# passed $passed failed $failed"
[ "$failed" -eq 0 ]
