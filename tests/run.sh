#!/usr/bin/env bash
# tests/run.sh - runs test programs and adds up their results.
#
# Usage: tests/run.sh PROGRAM...
# Each program prints "# passed P failed F" as its last summary line (see
# tests/harness.h).  A program that dies or exits non-zero without failing
# a case counts as one failure, so a crash is never a silent pass.  The
# last line is "N passed, N failed"; the exit status is 1 on any failure.
# GPMDB_TEST_LOGS=DIR: each program's whole output is also saved there.
# GPMDB_TEST_JOBS=N: up to N programs at once (default 1).  The results
# are still printed in the order given.  The GPU suite uses it on the
# device, whose 16 cores and one GPU would otherwise wait on one program
# at a time (one device call may last 10 minutes; serial, the suite takes
# 11).  The programs name their pools by process id, so they do not meet.
set -u
total_pass=0
total_fail=0
jobs=${GPMDB_TEST_JOBS:-1}
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
# the logs' folder made here (the device runs name a new one under $OUT;
# before, every program's "cannot create" message took its log's place)
[ -z "${GPMDB_TEST_LOGS:-}" ] || mkdir -p "$GPMDB_TEST_LOGS"

# runs program number $1 ($2), leaving its output, status and seconds
run_one() {
	local i=$1 prog=$2 start rc
	start=$EPOCHREALTIME
	"$prog" >"$tmpd/$i.out" 2>&1
	rc=$?
	awk -v a="$start" -v b="$EPOCHREALTIME" \
		'BEGIN { printf "%.1f", b - a }' >"$tmpd/$i.secs"
	# GPMDB_TEST_LOGS=DIR keeps every program's whole output (device
	# runs), as soon as it ends: a run cut short by the machine's command
	# limit still leaves the programs that finished (the report below
	# waits for the programs before it, in order)
	if [ -n "${GPMDB_TEST_LOGS:-}" ]; then
		{
			cat "$tmpd/$i.out"
			echo "# exit status $rc after $(cat "$tmpd/$i.secs") s"
		} >"$GPMDB_TEST_LOGS/$(basename "$prog").txt"
	fi
	echo "$rc" >"$tmpd/$i.rc"
}

# adds up and prints program number $1 ($2), once it has finished
report_one() {
	local i=$1 prog=$2 tmp=$tmpd/$1.out rc secs line p f
	rc=$(cat "$tmpd/$i.rc")
	secs=$(cat "$tmpd/$i.secs")
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
}

progs=("$@")
next=0 # the next program to report, in the order given
for i in "${!progs[@]}"; do
	if [ "$jobs" -le 1 ]; then
		run_one "$i" "${progs[$i]}"
	else
		while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
			wait -n
		done
		run_one "$i" "${progs[$i]}" &
	fi
	# report whatever has finished, in order
	while [ "$next" -lt "${#progs[@]}" ] && [ -e "$tmpd/$next.rc" ]; do
		report_one "$next" "${progs[$next]}"
		next=$((next + 1))
	done
done
wait
while [ "$next" -lt "${#progs[@]}" ]; do
	report_one "$next" "${progs[$next]}"
	next=$((next + 1))
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
