#!/usr/bin/env bash
# tests/gpu/tpch_gpu.sh - the TPC-H test in its GPU mode (see
# tests/tpch/test_tpch_queries.c, GPMDB_TPCH_GPU); run by run_gpu_suite.sh.
#
# Then the queries that ran with nothing falling back (and so again under
# gpu_strict: "strict passed") are listed, and those of GPMDB_TPCH_STRICT
# (default: the queries that did so in the last device run, docs/gpu.md)
# must be among them: a query that starts falling back again fails the
# test.  GPMDB_TPCH_STRICT= (empty) checks nothing.  Without a GPU no
# query runs under gpu_strict and the check is skipped (said so).
#
# It runs twice: with the whole device, and with gpmdb's device memory
# limited to GPMDB_TPCH_LIMIT_MIB (default 4 MiB, far less than the
# tables' columns: scans in row windows, joins, sorts and DISTINCT in
# passes over parts of their inputs; docs/gpu.md "Past the device's
# memory"), where the same queries must pass under gpu_strict.
set -u
strict_want=${GPMDB_TPCH_STRICT-1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
for limit in 0 "${GPMDB_TPCH_LIMIT_MIB:-4}"; do
	echo "# gpu_memory_limit: $limit MiB (0: the whole device)"
	GPMDB_GPU_MEMORY_LIMIT=$limit GPMDB_TPCH_GPU=1 \
		"${GPMDB_SUITE_BUILD:-build}/tests/tpch/test_tpch_queries" |
		tee "$out"
	r=${PIPESTATUS[0]}
	[ "$r" -eq 0 ] || rc=$r
	got=$(sed -n 's/^# q\([0-9]*\) gpu: .*strict passed;.*/\1/p' "$out" | tr '\n' ' ')
	echo "# no fallback, passed under gpu_strict ($limit MiB): ${got:-none}"
	if [ -z "$got" ]; then
		echo "# no query ran under gpu_strict (no GPU?): GPMDB_TPCH_STRICT not checked"
		exit "$rc"
	fi
	for q in $strict_want; do
		case " $got " in
		*" $q "*) ;;
		*)
			echo "# FAILED: q$q was expected to run with no fallback (GPMDB_TPCH_STRICT, $limit MiB)"
			rc=1
			;;
		esac
	done
done
exit "$rc"
