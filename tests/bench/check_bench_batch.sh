#!/usr/bin/env bash
# tests/bench/check_bench_batch.sh - the batch benchmark as a correctness
# smoke test in `make test`: bench_batch at 20000 rows with the
# configurations that need no GPU and no network (gpmdb CPU with its crash
# recovery, SQLite; DuckDB only when .peers has it).  Every configuration's
# checksums must match (bench_batch exits non-zero otherwise), and each
# gpmdb operation has its row of write phases.
# GPMDB_BENCH_BATCH: the program (default build/bench_batch).
cd "$(dirname "$0")/../.." || exit 1
bin=${GPMDB_BENCH_BATCH:-build/bench_batch}
pass=0 fail=0
out=$("$bin" --rows 20000 --smoke --disk-dir /dev/shm 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "$out"
	echo "# bench_batch --smoke exited $rc"
fi
# every configuration that ran has its three checksums, all ok
for conf in "gpmdb CPU" "SQLite /dev/shm"; do
	n=$(printf '%s\n' "$out" | grep -c "^| .* | $conf.* | ok |$")
	if [ "$n" -eq 3 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "# $conf: $n of 3 operations checked ok"
	fi
done
# the crash recovery of gpmdb ran (a percentage, not "not measured")
n=$(printf '%s\n' "$out" | grep "^| .* | gpmdb CPU" | grep -c " ms (")
if [ "$n" -eq 3 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "# gpmdb CPU: $n of 3 recoveries measured"
fi
# where the time went: a phase row (11 phases and the total) per operation
n=$(printf '%s\n' "$out" | grep -cE "^\| .* \| gpmdb CPU .* \| CPU (\| [0-9]+\.[0-9]{3} ){12}\|$")
if [ "$n" -eq 3 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "# gpmdb CPU: $n of 3 operations with their write phases"
fi
echo "# passed $pass failed $fail"
[ $fail -eq 0 ]
