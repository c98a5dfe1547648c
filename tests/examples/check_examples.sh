#!/usr/bin/env bash
# tests/examples/check_examples.sh - builds nothing; runs every program of
# examples/ (built by `make` into $GPMDB_EXAMPLES, default build/examples)
# and checks that it exits 0 with "<name>: ok" as its last line.  Prints
# "ok - " / "not ok - " per program and "# passed P failed F" for
# tests/run.sh.
set -u
cd "$(dirname "$0")/../.."
dir=${GPMDB_EXAMPLES:-build/examples}
passed=0
failed=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for src in examples/*.c; do
	name=$(basename "$src" .c)
	prog=$dir/$name
	if [ ! -x "$prog" ]; then
		echo "not ok - $name: $prog not built"
		failed=$((failed + 1))
		continue
	fi
	"$prog" >"$tmp" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$(tail -n 1 "$tmp")" = "$name: ok" ]; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name (exit status $rc)"
		sed -e 's/^/    /' "$tmp" | tail -n 20
		failed=$((failed + 1))
	fi
done
echo "# passed $passed failed $failed"
[ "$failed" -eq 0 ]
