#!/usr/bin/env bash
# tests/gpu/tpch_gpu.sh - the TPC-H test in its GPU mode (see
# tests/tpch/test_tpch_queries.c, GPMDB_TPCH_GPU); run by run_gpu_suite.sh.
GPMDB_TPCH_GPU=1 exec "${GPMDB_SUITE_BUILD:-build}/tests/tpch/test_tpch_queries"
