#!/usr/bin/env bash
# tests/shell/derive_golden.sh - remakes the expected outputs of the golden
# cases marked "-- derived: sqlite3" (in their first two lines) by running
# the sqlite3 shell on them exactly as run_golden.sh runs ours.  Review the
# diff before keeping it: these outputs define "the same as sqlite3".
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for sql in "$here"/golden/*.sql; do
	head -n 2 "$sql" | grep -q '^-- derived: sqlite3' || continue
	dir=$(mktemp -d "$tmp/d.XXXXXX")
	args=$(sed -n '1s/^-- args: //p' "$sql")
	(cd "$dir" && export HOME="$dir" &&
		# shellcheck disable=SC2086
		sqlite3 -batch $args test.db <"$sql" >"${sql%.sql}.out" 2>&1
		rc=$?
		[ $rc -ne 0 ] && echo "[exit $rc]" >>"${sql%.sql}.out"
		for f in "$dir"/*.txt "$dir"/*.csv "$dir"/*.sql; do
			[ -f "$f" ] || continue
			{ echo "== file ${f##*/}"; cat "$f"; } >>"${sql%.sql}.out"
		done)
	echo "derived ${sql##*/}"
done
