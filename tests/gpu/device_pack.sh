#!/usr/bin/env bash
# tests/gpu/device_pack.sh - packs a GPU build for the device machine
# (docs/gpu.md "The whole suite on the device"; ../shared/device/README.md).
#
# Usage: tests/gpu/device_pack.sh BUILD DEST [NAME]
#   BUILD  a build made here with nvcc (make BUILD=/tmp/bg all)
#   DEST   an ignored folder of the checkout (.dev*), carried by the device
#          tool; NAME.tar.xz (default "new") is written there
# The archive holds the programs the GPU suite and the benchmarks run
# (stripped), the shared libraries they need (bundle-libs) and the data
# the suite reads (../shared's sqllogictest corpus and TPC-H queries), so
# that on the device:
#   tar xJf DEST/NAME.tar.xz -C /tmp && . /tmp/NAME/env.sh
#   GPMDB_TEST_LOGS=$OUT/logs tests/gpu/run_gpu_suite.sh /tmp/NAME/build
# The tool carries at most 64 MiB: the programs shrink about 8x with xz.
# A DuckDB library for the peers' rows is added when GPMDB_DUCKDB_LIB names
# one (env.sh then points GPMDB_DUCKDB_LIB at the copy).
set -euo pipefail
[ $# -ge 2 ] || {
	echo "usage: device_pack.sh BUILD DEST [NAME]" >&2
	exit 2
}
build=$1 dest=$2 name=${3:-new}
root=$(cd "$(dirname "$0")/../.." && pwd)
shared=${GPMDB_SHARED:-$root/../shared}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
w=$stage/$name
mkdir -p "$w/build/tests/gpu" "$w/build/tests/tpch" "$w/libs" "$w/data"
progs=()
for p in "$build"/tests/gpu/test_* "$build"/tests/gpu/crash_*; do
	[ -x "$p" ] && [ "${p%.d}" = "$p" ] || continue
	cp "$p" "$w/build/tests/gpu/"
	progs+=("$w/build/tests/gpu/$(basename "$p")")
done
[ ${#progs[@]} -gt 0 ] || {
	echo "device_pack.sh: no GPU test programs in $build/tests/gpu (a build with nvcc?)" >&2
	exit 1
}
cp "$build/tests/tpch/test_tpch_queries" "$w/build/tests/tpch/"
progs+=("$w/build/tests/tpch/test_tpch_queries")
for p in gpmdb gpmdb_slt gpmdb_check tpchgen bench_tpch bench_gpu bench_batch \
	bench_backup bench_index; do
	[ -x "$build/$p" ] || continue
	cp "$build/$p" "$w/build/"
	progs+=("$w/build/$p")
done
strip "${progs[@]}"
"$shared/device/bundle-libs" "$w/libs" "${progs[@]}" >/dev/null
cp -r "$shared/sqllogictest" "$w/data/slt"
cp -r "$shared/tpch" "$w/data/tpch"
env_duck=""
if [ -n "${GPMDB_DUCKDB_LIB:-}" ] && [ -f "$GPMDB_DUCKDB_LIB" ]; then
	cp "$GPMDB_DUCKDB_LIB" "$w/libs/libduckdb.so"
	env_duck="export GPMDB_DUCKDB_LIB=/tmp/$name/libs/libduckdb.so"
fi
cat >"$w/env.sh" <<EOF
export LD_LIBRARY_PATH=/tmp/$name/libs
export GPMDB_SLT_DIR=/tmp/$name/data/slt GPMDB_TPCH_DIR=/tmp/$name/data/tpch
$env_duck
EOF
mkdir -p "$dest"
tar -C "$stage" -cf - "$name" | xz -T2 -6 >"$dest/$name.tar.xz"
ls -la "$dest/$name.tar.xz"
