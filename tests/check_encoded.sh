#!/usr/bin/env bash
# tests/check_encoded.sh - TPC-H against SQLite (tests/tpch) and the
# differential random tests (tests/diff) on encoded storage: with
# GPMDB_AUTO_ENCODE=1 every commit encodes the tables it wrote
# (storage/encode.c), so the loads leave frame-of-reference and
# dictionary tablets (and compressed TEXT) and the random writes widen
# them.  The programs come from GPMDB_ENC_TPCHQ and GPMDB_ENC_DIFF (make
# test sets them).
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
# the last pass: every TEXT column compressed, smaller or not
# (GPMDB_ZTEXT_ALWAYS=1), so that every statement reads compressed TEXT
tpchq=${GPMDB_ENC_TPCHQ:-build/tests/tpch/test_tpch_queries}
diff=${GPMDB_ENC_DIFF:-build/tests/diff/test_diff_sqlite}
for run in "0 $tpchq" "0 $diff" "1 $diff"; do
	zt=${run%% *}
	prog=${run#* }
	what="on encoded storage"
	[ "$zt" = 1 ] && what="on encoded storage, all TEXT compressed"
	out=$(GPMDB_AUTO_ENCODE=1 GPMDB_ZTEXT_ALWAYS=$zt "$prog" 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ]; then
		echo "ok - $(basename "$prog") $what"
		echo "$out" | tail -n 1 | sed -e 's/^/    /'
		passed=$((passed + 1))
	else
		echo "$out" | tail -n 40 | sed -e 's/^/    /'
		echo "not ok - $(basename "$prog") $what (status $rc)"
		failed=$((failed + 1))
	fi
done
echo "# passed $passed failed $failed"
