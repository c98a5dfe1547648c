#!/usr/bin/env bash
# tests/gpu/encoded_gpu.sh - the GPU on encoded tablets (docs/gpu.md "The
# column cache", docs/ARCHITECTURE.md "Encodings"); run by
# run_gpu_suite.sh.
#   1. TPC-H against the CPU and SQLite with every commit encoding
#      (GPMDB_AUTO_ENCODE=1, tests/gpu/tpch_gpu.sh): the GPU column
#      cache expands FOR and dictionary tablets in HBM (cache_dec.cu).
#   2. A GPU UPDATE under gpu_strict of a VACUUMed (encoded) TPC-H pool:
#      the host widens the table, the kernels write; the sums move by the
#      rows updated, the check is clean, and a VACUUM encodes it again.
set -u
B=${GPMDB_SUITE_BUILD:-build}
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; fail=$((fail + 1)); }

if GPMDB_AUTO_ENCODE=1 "$(dirname "$0")/tpch_gpu.sh" >/tmp/encoded_gpu.$$ 2>&1; then
	ok "TPC-H on encoded storage, backend gpu against cpu and SQLite"
else
	bad "TPC-H on encoded storage"
	tail -20 /tmp/encoded_gpu.$$
fi
rm -f /tmp/encoded_gpu.$$

db=/dev/shm/gpmdb_encoded_gpu_$$.db
rm -f "$db"*
"$B/tpchgen" -s 0.05 --pool "$db" >/dev/null 2>&1 || bad "tpchgen --pool"
enc=$("$B/gpmdb" "$db" "PRAGMA storage_info(lineitem)" | cut -d'|' -f4 |
	grep -c -E '^(for|dict)')
[ "$enc" -ge 10 ] && ok "the loaded pool is encoded ($enc of lineitem's columns)" ||
	bad "the loaded pool is not encoded ($enc columns)"
where="l_orderkey % 10 = 0"
s0=$("$B/gpmdb" "$db" "SELECT sum(l_quantity), count(*) FROM lineitem WHERE $where")
out=$("$B/gpmdb" "$db" "PRAGMA backend=gpu" "PRAGMA gpu_strict=on" \
	"UPDATE lineitem SET l_quantity = l_quantity + 1 WHERE $where" \
	"PRAGMA gpu_write_stats" 2>&1)
s1=$("$B/gpmdb" "$db" "SELECT sum(l_quantity), count(*) FROM lineitem WHERE $where")
want=$(echo "$s0" | awk -F'|' '{ printf "%.2f|%d", $1 + $2, $2 }')
got=$(echo "$s1" | awk -F'|' '{ printf "%.2f|%d", $1, $2 }')
[ "$got" = "$want" ] && ok "GPU UPDATE of an encoded table: $s0 -> $s1" ||
	bad "GPU UPDATE of an encoded table: $s0 -> $s1, want $want ($out)"
echo "$out" | grep -q -E '^last_write_gpu\|1' &&
	ok "the UPDATE ran on the GPU" ||
	bad "the UPDATE did not run on the GPU: $(echo "$out" | grep -E 'last_write_gpu|fallback' | head -3)"
[ "$("$B/gpmdb" "$db" "PRAGMA integrity_check")" = ok ] &&
	"$B/gpmdb_check" "$db" >/dev/null 2>&1 &&
	ok "integrity_check and gpmdb_check after the widening" ||
	bad "integrity_check or gpmdb_check after the widening"
"$B/gpmdb" "$db" "VACUUM" >/dev/null 2>&1
s2=$("$B/gpmdb" "$db" "PRAGMA backend=gpu" "PRAGMA gpu_strict=on" \
	"SELECT sum(l_quantity), count(*) FROM lineitem WHERE $where" 2>&1)
[ "$s2" = "$s1" ] && ok "encoded again by VACUUM, read by the GPU: $s2" ||
	bad "after VACUUM the GPU reads $s2, want $s1"
rm -f "$db"*
echo "# passed $pass failed $fail"
[ "$fail" -eq 0 ]
