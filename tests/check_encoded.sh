#!/usr/bin/env bash
# tests/check_encoded.sh - TPC-H against SQLite (tests/tpch) and the
# differential random tests (tests/diff) on encoded storage: with
# GPMDB_AUTO_ENCODE=1 every commit encodes the tables it wrote
# (storage/encode.c), so the loads leave frame-of-reference and
# dictionary tablets and the random writes widen them.  The programs
# come from GPMDB_ENC_TPCHQ and GPMDB_ENC_DIFF (make test sets them).
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
for prog in "${GPMDB_ENC_TPCHQ:-build/tests/tpch/test_tpch_queries}" \
	"${GPMDB_ENC_DIFF:-build/tests/diff/test_diff_sqlite}"; do
	out=$(GPMDB_AUTO_ENCODE=1 "$prog" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok - $(basename "$prog") on encoded storage"
		echo "$out" | tail -n 1 | sed -e 's/^/    /'
		passed=$((passed + 1))
	else
		echo "$out" | tail -n 40 | sed -e 's/^/    /'
		echo "not ok - $(basename "$prog") on encoded storage (status $rc)"
		failed=$((failed + 1))
	fi
done
echo "# passed $passed failed $failed"
