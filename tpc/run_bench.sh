#!/usr/bin/env bash
# tpc/run_bench.sh - runs the benchmarks and saves their tables under
# tpc/results/, named after the machine, with a description of it.
# Environment: BENCH_ROWS (default 50000000), BENCH_DIR (default /dev/shm).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p tpc/results
host=${BENCH_HOST:-$(hostname -s)}
out=tpc/results/append-$host.md
{
	echo "# Storage bulk append on $host"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) threads)"
	echo "- memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
	echo "- command: build/bench_append --rows ${BENCH_ROWS:-50000000} --dir ${BENCH_DIR:-/dev/shm}"
	echo
	build/bench_append --rows "${BENCH_ROWS:-50000000}" --dir "${BENCH_DIR:-/dev/shm}"
} | tee "$out.tmp"
mv "$out.tmp" "$out"
echo "saved $out"
