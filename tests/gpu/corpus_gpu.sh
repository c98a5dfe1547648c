#!/usr/bin/env bash
# tests/gpu/corpus_gpu.sh - tests/sql and the sqllogictest corpus with
# backend=gpu (not strict: operators without a GPU version run on the CPU
# and are counted); run by run_gpu_suite.sh.
export GPMDB_BACKEND=gpu
export SLT_GPMDB="${GPMDB_SUITE_BUILD:-build}/gpmdb_slt"
# four runner processes over shares of the corpus (tests/slt/run_slt.sh):
# one process ran it for most of a 10-minute device call
export GPMDB_SLT_JOBS=${GPMDB_SLT_JOBS:-4}
exec "$(dirname "$0")/../slt/check_corpus.sh"
