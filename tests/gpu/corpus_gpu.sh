#!/usr/bin/env bash
# tests/gpu/corpus_gpu.sh - tests/sql and the sqllogictest corpus with
# backend=gpu (not strict: operators without a GPU version run on the CPU
# and are counted); run by run_gpu_suite.sh.
export GPMDB_BACKEND=gpu
export SLT_GPMDB="${GPMDB_SUITE_BUILD:-build}/gpmdb_slt"
exec "$(dirname "$0")/../slt/check_corpus.sh"
