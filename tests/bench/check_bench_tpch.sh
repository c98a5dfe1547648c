#!/usr/bin/env bash
# tests/bench/check_bench_tpch.sh - the TPC-H benchmark as a smoke test in
# `make test`: tpchgen at SF 0.01, bench_tpch over Q1 and Q6 on gpmdb's CPU
# backend and SQLite (answers checked equal by bench_tpch, which exits
# non-zero otherwise), and --partial: the file written after every query
# holds the same rows as the final table.
# GPMDB_BENCH_TPCH, GPMDB_TPCHGEN: the programs (default build/...).
cd "$(dirname "$0")/../.." || exit 1
bin=${GPMDB_BENCH_TPCH:-build/bench_tpch}
gen=${GPMDB_TPCHGEN:-build/tpchgen}
tmp=$(mktemp -d /tmp/gpmdb_bench_tpch.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { # name, condition result
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "# FAILED: $1"
	fi
}
"$gen" -s 0.01 -o "$tmp/data" -q
check "tpchgen -s 0.01" $?
"$bin" --data "$tmp/data" --sf 0.01 --dir "$tmp" --reps 1 \
	--engines cpu,sqlite --only 1,6 --partial "$tmp/partial.md" \
	>"$tmp/full.md" 2>"$tmp/err"
rc=$?
[ $rc -ne 0 ] && cat "$tmp/err" "$tmp/full.md"
check "bench_tpch exited $rc" $rc
for q in Q1 Q6; do
	grep -q "^| $q | .* | ok (2 engines) |$" "$tmp/full.md"
	check "$q answered by both engines, equal" $?
done
# the partial file: the same query rows as the final table (times and all)
diff <(grep "^| Q" "$tmp/full.md") <(grep "^| Q" "$tmp/partial.md") >/dev/null
check "--partial holds the final table's rows" $?
grep -q "^(partial" "$tmp/partial.md"
check "--partial says it is partial" $?
[ ! -e "$tmp/partial.md.tmp" ]
check "--partial leaves no .tmp" $?
echo "# passed $pass failed $fail"
[ "$fail" -eq 0 ]
