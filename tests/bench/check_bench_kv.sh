#!/usr/bin/env bash
# tests/bench/check_bench_kv.sh - the key-value benchmark (tpc/kv) as a
# correctness smoke test in `make test`: bench_kv at 2000 rows and 200
# operations per workload, gpmdb and SQLite on /dev/shm (DuckDB too when
# .peers has it).  Every workload's checksum and the final count/sum must
# equal SQLite's (bench_kv exits non-zero otherwise), and the fresh-process
# INSERT must have run.
# GPMDB_BENCH_KV: the program (default build/bench_kv).
cd "$(dirname "$0")/../.." || exit 1
bin=${GPMDB_BENCH_KV:-build/bench_kv}
engines=gpmdb-shm,sqlite-shm
[ -f .peers/duckdb/libduckdb.so ] && engines=$engines,duckdb-shm
pass=0 fail=0
tmp=$(mktemp -d /dev/shm/check_bench_kv.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
out=$("$bin" --rows 2000 --ops 200 --shm "$tmp" --disk "$tmp" \
	--engines "$engines" --dat "$tmp/kv.dat" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "$out"
	echo "# bench_kv exited $rc"
fi
for e in gpmdb-shm sqlite-shm; do
	n=$(printf '%s\n' "$out" | grep -c "^| [a-z]* | $e | .* | ok |$")
	if [ "$n" -eq 5 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "# $e: $n of 5 workloads checked ok"
	fi
	if printf '%s\n' "$out" | grep -q "^| $e | [0-9.]* | [0-9.]* | [0-9.]*x |$"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "# $e: no fresh-process INSERT times"
	fi
done
if [ "$(grep -c '^# rows=2000$' "$tmp/kv.dat" 2>/dev/null)" = 1 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "# bench_kv --dat wrote no block for 2000 rows"
fi
echo "# passed $pass failed $fail"
[ $fail -eq 0 ]
