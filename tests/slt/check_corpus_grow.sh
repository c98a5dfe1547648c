#!/usr/bin/env bash
# tests/slt/check_corpus_grow.sh - check_corpus.sh with
# GPMDB_TEST_GROW_EXACT set: every growth of a pool is exactly what the
# allocation past its end needs (storage/alloc.c), so the pool is mapped
# again, and may move, at almost every such allocation.  A pointer into
# the pool kept across an allocation then reads the old mapping (one in
# catalog.c's cat_index_add crashed select5 once pools grew by an eighth
# instead of doubling).
export GPMDB_TEST_GROW_EXACT=1
exec "$(dirname "$0")/check_corpus.sh"
