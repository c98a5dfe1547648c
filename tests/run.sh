#!/usr/bin/env bash
# tests/run.sh - runs test programs and adds up their results.
#
# Usage: tests/run.sh PROGRAM...
# Each program prints "# passed P failed F" as its last summary line (see
# tests/harness.h).  A program that dies or exits non-zero without failing
# a case counts as one failure, so a crash is never a silent pass.  The
# last line is "N passed, N failed"; the exit status is 1 on any failure.
# GPMDB_TEST_LOGS=DIR: each program's whole output is also saved there.
set -u
total_pass=0
total_fail=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for prog in "$@"; do
	start=$EPOCHREALTIME
	"$prog" >"$tmp" 2>&1
	rc=$?
	# GPMDB_TEST_LOGS=DIR keeps every program's whole output (device runs)
	if [ -n "${GPMDB_TEST_LOGS:-}" ]; then
		cp "$tmp" "$GPMDB_TEST_LOGS/$(basename "$prog").txt"
	fi
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	line=$(grep -E '^# passed [0-9]+ failed [0-9]+$' "$tmp" | tail -n 1)
	if [ -n "$line" ]; then
		p=$(echo "$line" | awk '{print $3}')
		f=$(echo "$line" | awk '{print $5}')
	else
		p=0
		f=0
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "  $prog exited with status $rc without a failed case" >>"$tmp"
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	printf '%-48s %4d passed %3d failed  %6ss\n' "$prog" "$p" "$f" "$secs"
	if [ "$f" -ne 0 ]; then
		sed -e 's/^/    /' "$tmp" | grep -v '^    ok - ' | tail -n 60
	fi
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
