#!/usr/bin/env bash
# tests/gpu/run_gpu_suite.sh - the whole GPU suite (`make test-gpu`), on a
# machine with a GPU, from already built programs.
#
# Usage: tests/gpu/run_gpu_suite.sh [BUILD]      (default build)
# Runs, through tests/run.sh (last line "N passed, N failed"):
#   BUILD/tests/gpu/test_* and crash_*   kernels, GPU operators, GPU writes,
#                                        kill -9 crash tests of GPU batches
#   tests/gpu/tpch_gpu.sh                the 22 TPC-H queries, backend=gpu
#                                        against backend=cpu and SQLite
#   tests/gpu/corpus_gpu.sh              tests/sql and the sqllogictest
#                                        corpus with backend=gpu
#   tests/gpu/encoded_gpu.sh             TPC-H and a GPU UPDATE on encoded
#                                        tablets
# GPMDB_TPCH_DIR and GPMDB_SLT_DIR point at the data where ../shared is not
# beside the checkout (the GPU machine: see ../shared/device/README.md).
# GPMDB_TEST_JOBS=N runs N programs at once.  GPMDB_GPU_SUITE=scripts
# or programs runs one half (the device: 4 jobs took 470-525 s for the
# whole suite, and a slower host passed the 10-minute call in
# 2026-11-27's device run F, where the ordered report still waited for
# corpus_gpu.sh: run the halves in two calls); programs is tests (the
# test_* programs) and crash (the crash_* programs: crash_gpu_dml alone
# took more than 450 s beside three others on 2026-11-27's hosts), which
# fit a 10-minute call each.
set -u
cd "$(dirname "$0")/../.."
export GPMDB_SUITE_BUILD=${1:-build}
tests=() crashes=()
for p in "$GPMDB_SUITE_BUILD"/tests/gpu/test_*; do
	[ -x "$p" ] && [ "${p%.d}" = "$p" ] && tests+=("$p")
done
for p in "$GPMDB_SUITE_BUILD"/tests/gpu/crash_*; do
	[ -x "$p" ] && [ "${p%.d}" = "$p" ] && crashes+=("$p")
done
progs=("${tests[@]}" "${crashes[@]}")
# the two scripts first: the longest, they start at once when
# GPMDB_TEST_JOBS runs several programs together (tests/run.sh)
scripts=(tests/gpu/tpch_gpu.sh tests/gpu/corpus_gpu.sh
	tests/gpu/encoded_gpu.sh)
case "${GPMDB_GPU_SUITE:-all}" in
scripts) exec tests/run.sh "${scripts[@]}" ;;
programs) exec tests/run.sh "${progs[@]}" ;;
tests) exec tests/run.sh "${tests[@]}" ;;
crash) exec tests/run.sh "${crashes[@]}" ;;
all) exec tests/run.sh "${scripts[@]}" "${progs[@]}" ;;
*)
	echo "run_gpu_suite.sh: GPMDB_GPU_SUITE is scripts, tests, crash, programs or all" >&2
	exit 2
	;;
esac
