#!/usr/bin/env bash
# tpc/run_bench.sh - runs the benchmarks and saves their tables under
# tpc/results/, named after the machine, with a description of it
# (docs/benchmarks.md).
# Environment:
#   BUILD           build folder holding the programs (default build)
#   BENCH_ONLY      append | sql | gpu | threshold | batch | index | kv | conc | backup: run only that benchmark (default all)
#   BENCH_INDEX_ROWS  bench_index rows (default 50000000; tpc/index)
#   BENCH_INDEX_ARGS  more bench_index arguments (e.g. "--backends cpu --probe 100000")
#   BENCH_ROWS      bench_append rows (default 50000000)
#   BENCH_DIR       where pools go (default /dev/shm)
#   BENCH_SQL_ROWS  bench_sql rows in fact (default 10000000)
#   BENCH_SQL_REPS  bench_sql timed runs per query (default 3)
#   BENCH_GPU_ROWS  bench_gpu rows in fact (default 100000000)
#   BENCH_GPU_ARGS  more bench_gpu arguments (e.g. "--cap 20 --queries 1,2")
#   BENCH_BATCH_ROWS  bench_batch rows (default 50000000; tpc/batch)
#   BENCH_BATCH_ARGS  more bench_batch arguments (e.g. "--sqlite-rows 1000000")
#   KV_ROWS         bench_kv table sizes (default 1000000,10000000; tpc/kv)
#   KV_OPS          bench_kv operations per workload (default 10000)
#   KV_DISK_DIR     where bench_kv's on-disk databases go (default /var/tmp)
#   BENCH_NOTE      a line added to the saved files' headers (e.g. "the
#                   machine was shared with other jobs")
#   BENCH_HOST      the name in the file names (default hostname -s)
#   GPMDB_DUCKDB_LIB  libduckdb.so (default .peers/duckdb/libduckdb.so,
#                   fetched by tpc/peers/fetch_duckdb.sh when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p tpc/results
build=${BUILD:-build}
host=${BENCH_HOST:-$(hostname -s)}
only=${BENCH_ONLY:-}

# The machine, for the header of every saved file.
describe() {
	echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) threads)"
	echo "- memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
	echo "- load average when it started: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- command: $1"
	if [ -n "${BENCH_NOTE:-}" ]; then
		echo "- note: $BENCH_NOTE"
	fi
	echo
}

# Runs a command into tpc/results/$1-$host.md; the file is saved even when
# the command fails (a result mismatch is worth keeping), and its status
# is returned.
save() {
	local name=$1 title=$2
	shift 2
	local out=tpc/results/$name-$host.md rc=0
	{
		echo "# $title on $host"
		echo
		describe "$*"
		"$@" || echo $? >"$out.rc"
	} | tee "$out.tmp"
	mv "$out.tmp" "$out"
	if [ -f "$out.rc" ]; then
		rc=$(cat "$out.rc")
		rm -f "$out.rc"
		echo "FAILED (status $rc): $*" >&2
	fi
	echo "saved $out"
	return "$rc"
}

status=0
if [ -z "$only" ] || [ "$only" = append ]; then
	save append "Storage bulk append" "$build/bench_append" \
		--rows "${BENCH_ROWS:-50000000}" --dir "${BENCH_DIR:-/dev/shm}" ||
		status=1
fi
if [ -z "$only" ] || [ "$only" = sql ]; then
	# DuckDB is a peer, not a dependency: fetch it when missing; without
	# it the table says "not installed".
	if [ -z "${GPMDB_DUCKDB_LIB:-}" ] && [ ! -f .peers/duckdb/libduckdb.so ]; then
		tpc/peers/fetch_duckdb.sh || echo "run_bench: DuckDB could not be fetched" >&2
	fi
	save sql "SQL queries: gpmdb CPU, SQLite, DuckDB" "$build/bench_sql" \
		--rows "${BENCH_SQL_ROWS:-10000000}" --reps "${BENCH_SQL_REPS:-3}" \
		--dir "${BENCH_DIR:-/dev/shm}" || status=1
fi
if [ -z "$only" ] || [ "$only" = gpu ]; then
	# The GPU benchmark needs a GPU: without one (or in a GPU=0 build) it
	# says why and is skipped.  Its file is named after the date and the
	# GPU: tpc/results/gpu-<date>-<gpu>.md.
	if [ ! -x "$build/bench_gpu" ]; then
		echo "bench_gpu: skipped: $build/bench_gpu was not built"
	elif ! gpu=$("$build/bench_gpu" --probe); then
		echo "bench_gpu: skipped: no GPU ($gpu)"
	else
		if [ -z "${GPMDB_DUCKDB_LIB:-}" ] && [ ! -f .peers/duckdb/libduckdb.so ]; then
			tpc/peers/fetch_duckdb.sh || echo "run_bench: DuckDB could not be fetched" >&2
		fi
		# shellcheck disable=SC2086 # BENCH_GPU_ARGS is a list of words
		host="$(date -u +%Y-%m-%d)-$gpu" save gpu \
			"GPU queries: gpmdb GPU, gpmdb CPU, DuckDB" \
			"$build/bench_gpu" --rows "${BENCH_GPU_ROWS:-100000000}" \
			--dir "${BENCH_DIR:-/dev/shm}" ${BENCH_GPU_ARGS:-} || status=1
	fi
fi
if [ -z "$only" ] || [ "$only" = threshold ]; then
	# PRAGMA gpu_threshold's measurement (tpc/bench_threshold.c): CPU
	# against GPU cold and warm from 1k to 10M rows; needs a GPU.
	if [ ! -x "$build/bench_threshold" ]; then
		echo "bench_threshold: skipped: $build/bench_threshold was not built"
	elif ! gpu=$("$build/bench_gpu" --probe); then
		echo "bench_threshold: skipped: no GPU ($gpu)"
	else
		host="$(date -u +%Y-%m-%d)-$gpu" save threshold \
			"gpu_threshold: CPU against GPU by input size" \
			"$build/bench_threshold" --dir "${BENCH_DIR:-/dev/shm}" ||
			status=1
	fi
fi
if [ -z "$only" ] || [ "$only" = batch ]; then
	# The batch INSERT/UPDATE benchmark (tpc/batch/bench_batch.c): the
	# GPU configurations need a GPU (without one they say so and the rest
	# runs).  Files: tpc/results/<date>-<gpu or host>-batch.{md,png,dat}.
	if [ -z "${GPMDB_DUCKDB_LIB:-}" ] && [ ! -f .peers/duckdb/libduckdb.so ]; then
		tpc/peers/fetch_duckdb.sh || echo "run_bench: DuckDB could not be fetched" >&2
	fi
	gpu=$("$build/bench_batch" --probe) || gpu=$host
	prefix="tpc/results/$(date -u +%Y-%m-%d)-$gpu-batch"
	# shellcheck disable=SC2086 # BENCH_BATCH_ARGS is a list of words
	"$build/bench_batch" --rows "${BENCH_BATCH_ROWS:-50000000}" \
		--dir "${BENCH_DIR:-/dev/shm}" --out "$prefix" ${BENCH_BATCH_ARGS:-} ||
		status=1
	tpc/batch/plot_batch.sh "$prefix" || status=1
	echo "saved $prefix.md"
fi
if [ -z "$only" ] || [ "$only" = kv ]; then
	# The key-value workload (tpc/kv/bench_kv.c): gpmdb, SQLite and
	# DuckDB on /dev/shm and on disk; tpc/results/kv-<host>.{md,dat,svg}.
	if [ -z "${GPMDB_DUCKDB_LIB:-}" ] && [ ! -f .peers/duckdb/libduckdb.so ]; then
		tpc/peers/fetch_duckdb.sh || echo "run_bench: DuckDB could not be fetched" >&2
	fi
	save kv "Key-value workload: gpmdb, SQLite, DuckDB" "$build/bench_kv" \
		--rows "${KV_ROWS:-1000000,10000000}" --ops "${KV_OPS:-10000}" \
		--shm "${BENCH_DIR:-/dev/shm}" --disk "${KV_DISK_DIR:-/var/tmp}" \
		--dat "tpc/results/kv-$host.dat" || status=1
	tpc/kv/plot_kv.sh "tpc/results/kv-$host" || status=1
fi
if [ -z "$only" ] || [ "$only" = conc ]; then
	# The writer beside a live reader (tpc/bench_conc.c), msync on the
	# disk and pmem on /dev/shm; tpc/results/conc-<host>.md.
	save conc "A writer beside a live reader" "$build/bench_conc" \
		--disk "${KV_DISK_DIR:-/var/tmp}" --shm "${BENCH_DIR:-/dev/shm}" ||
		status=1
fi
if [ -z "$only" ] || [ "$only" = backup ]; then
	# Full and incremental backups of a pool on /dev/shm to the disk,
	# a writer beside a backup (tpc/bench_backup.c); BENCH_BACKUP_ROWS.
	save backup "Backups of a pool in memory to a disk" \
		"$build/bench_backup" --rows "${BENCH_BACKUP_ROWS:-32000000}" \
		--disk "${KV_DISK_DIR:-/var/tmp}" --shm "${BENCH_DIR:-/dev/shm}" ||
		status=1
fi
if [ -z "$only" ] || [ "$only" = index ]; then
	# CREATE INDEX and the bound-key probe (tpc/index/bench_index.c):
	# without a GPU, run with BENCH_INDEX_ARGS="--backends cpu".
	if [ -z "${GPMDB_DUCKDB_LIB:-}" ] && [ ! -f .peers/duckdb/libduckdb.so ]; then
		tpc/peers/fetch_duckdb.sh || echo "run_bench: DuckDB could not be fetched" >&2
	fi
	# shellcheck disable=SC2086 # BENCH_INDEX_ARGS is a list of words
	save index "Index build and bound-key probe" "$build/bench_index" \
		--rows "${BENCH_INDEX_ROWS:-50000000}" --dir "${BENCH_DIR:-/dev/shm}" \
		${BENCH_INDEX_ARGS:-} || status=1
fi
exit $status
