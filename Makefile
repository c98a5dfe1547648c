# gpmdb build.  `make` builds the library, the programs and the tests;
# `make GPU=0` builds without CUDA.  `make test` runs every test that needs
# no GPU (plain and under ASan+UBSan), `make test-gpu` the GPU suites, and
# `make bench` the benchmarks.  See README.md.

CC ?= cc
BUILD := build

# CUDA: used when nvcc is on PATH or in /usr/local/cuda/bin, unless GPU=0.
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
ifeq ($(GPU),0)
  override NVCC :=
endif
# nvcc may be a symlink (/usr/local/bin/nvcc -> /usr/local/cuda-X/bin/nvcc),
# so the toolkit is found from its real path, and the static runtime is
# looked for where toolkits and Debian's packages put it.
ifneq ($(NVCC),)
  CUDA_DIRS := $(patsubst %/bin/nvcc,%,$(realpath $(NVCC))) $(CUDA_HOME)
  CUDART := $(firstword $(wildcard $(foreach d,$(CUDA_DIRS),$(d)/lib64/libcudart_static.a \
              $(d)/lib/libcudart_static.a $(d)/targets/*/lib/libcudart_static.a) \
              /usr/lib/x86_64-linux-gnu/libcudart_static.a))
  ifeq ($(CUDART),)
    $(warning nvcc found ($(NVCC)) but no libcudart_static.a under $(CUDA_DIRS): building WITHOUT the GPU backend, as with GPU=0)
    override NVCC :=
  endif
endif
ifneq ($(NVCC),)
  GPU := 1
else
  GPU := 0
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g -fPIC -fopenmp -Iinclude $(WARN) -MMD -MP
CFLAGS ?= -O2
SANFLAGS := -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDLIBS := -lpmem -lzstd -lz -lm -lpthread -lsqlite3 -fopenmp

ifeq ($(GPU),1)
  CFLAGS_BASE += -DGPMDB_HAVE_GPU=1
  NVFLAGS := -std=c++17 -O3 -Iinclude -Xcompiler -fPIC,-Wall,-Wextra,-Werror -MMD -MP \
             -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
  LDLIBS += $(CUDART) -ldl -lrt -lstdc++
endif

# Library sources: every .c of the layers; the lemon grammar when present.
LIB_SRC := $(wildcard storage/*.c sql/*.c engine/*.c engine/*/*.c gpu/*.c gpu/*/*.c)
GRAMMAR := $(wildcard sql/*.y)
GEN_SRC := $(patsubst sql/%.y,$(BUILD)/gen/%.c,$(GRAMMAR))
CU_SRC := $(if $(filter 1,$(GPU)),$(wildcard gpu/*.cu))

LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC) $(GEN_SRC:$(BUILD)/%=%)) \
           $(patsubst %.cu,$(BUILD)/obj/%.o,$(CU_SRC))
ASAN_OBJ := $(patsubst %.c,$(BUILD)/asan/%.o,$(LIB_SRC) $(GEN_SRC:$(BUILD)/%=%)) \
            $(patsubst %.cu,$(BUILD)/obj/%.o,$(CU_SRC))

# Programs: name -> main source (and libraries besides libgpmdb.a).
PROGS := $(BUILD)/gpmdb_check $(BUILD)/bench_append $(BUILD)/tpchgen $(BUILD)/bench_sql
PROGS += $(BUILD)/bench_tpch
# bench_gpu: the GPU benchmark (docs/gpu.md "Benchmark"); built in both
# builds (GPU=0: it says there is no GPU), DuckDB by dlopen as bench_sql.
PROGS += $(BUILD)/bench_gpu
$(BUILD)/bench_gpu_SRC := tpc/bench_gpu.c
$(BUILD)/bench_gpu_LIBS := $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/obj/tpc/bench_util.o
$(BUILD)/bench_gpu: LDLIBS += -ldl
# bench_threshold: measures PRAGMA gpu_threshold (docs/gpu.md).
PROGS += $(BUILD)/bench_threshold
$(BUILD)/bench_threshold_SRC := tpc/bench_threshold.c
$(BUILD)/bench_threshold_LIBS := $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/obj/tpc/bench_util.o
$(BUILD)/bench_threshold: LDLIBS += -ldl
# bench_batch: the batch INSERT/UPDATE benchmark (tpc/batch, docs/benchmarks.md).
PROGS += $(BUILD)/bench_batch
$(BUILD)/bench_batch_SRC := tpc/batch/bench_batch.c
$(BUILD)/bench_batch_LIBS := $(BUILD)/obj/tpc/batch/bench_batch_gpu.o $(BUILD)/obj/tpc/batch/bench_batch_peers.o $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/obj/tpc/bench_util.o
$(BUILD)/bench_batch: LDLIBS += -ldl
# bench_kv: the key-value workload (tpc/kv, docs/benchmarks.md).
PROGS += $(BUILD)/bench_kv
$(BUILD)/bench_kv_SRC := tpc/kv/bench_kv.c
$(BUILD)/bench_kv_LIBS := $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/obj/tpc/bench_util.o
$(BUILD)/bench_kv: LDLIBS += -ldl
# bench_conc: the writer beside a live reader (storage/lock.c,
# docs/benchmarks.md "Concurrency").
PROGS += $(BUILD)/bench_conc
$(BUILD)/bench_conc_SRC := tpc/bench_conc.c
$(BUILD)/bench_conc_LIBS := $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/obj/tpc/bench_util.o
$(BUILD)/bench_conc: LDLIBS += -ldl
# bench_backup: full and incremental backups, a writer beside a backup
# (storage/backup.c, docs/benchmarks.md "Backups").
PROGS += $(BUILD)/bench_backup
$(BUILD)/bench_backup_SRC := tpc/bench_backup.c
$(BUILD)/bench_backup_LIBS := $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/obj/tpc/bench_util.o
$(BUILD)/bench_backup: LDLIBS += -ldl
# bench_zone_marks: a writer's batch writes once a backup made the zone
# table and line masks (storage/zones.c; public API only).
PROGS += $(BUILD)/bench_zone_marks
$(BUILD)/bench_zone_marks_SRC := tpc/bench_zone_marks.c
# bench_index: CREATE INDEX and the bound-key probe, CPU and GPU beside
# SQLite and DuckDB (tpc/index, docs/benchmarks.md).
PROGS += $(BUILD)/bench_index
$(BUILD)/bench_index_SRC := tpc/index/bench_index.c
$(BUILD)/bench_index_LIBS := $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/obj/tpc/bench_util.o
$(BUILD)/bench_index: LDLIBS += -ldl
$(BUILD)/gpmdb_check_SRC := shell/gpmdb_check.c
$(BUILD)/bench_append_SRC := tpc/bench_append.c
# bench_sql loads DuckDB at run time (tpc/peers/duckdb_dl.c, dlopen).
$(BUILD)/bench_sql_SRC := tpc/bench_sql.c
$(BUILD)/bench_sql_LIBS := $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/obj/tpc/bench_util.o
$(BUILD)/bench_sql: LDLIBS += -ldl
$(BUILD)/tpchgen_SRC := tpc/tpch/tpchgen_main.c
$(BUILD)/tpchgen_LIBS := $(BUILD)/libtpch.a
# bench_tpch: the TPC-H benchmark (tpc/tpch/run_bench_tpch.sh, docs/benchmarks.md).
$(BUILD)/bench_tpch_SRC := tpc/tpch/bench_tpch.c
$(BUILD)/bench_tpch_LIBS := $(BUILD)/obj/tpc/peers/duckdb_dl.o $(BUILD)/libtpch.a
$(BUILD)/bench_tpch: LDLIBS += -ldl

# TPC-H generator, .tbl reader/writer and the queries' dialect, runners
# and comparison (tpc/tpch): a small library of their own, linked into
# tpchgen, bench_tpch, test_tpchgen and test_tpch_queries.
TPCH_SRC := tpc/tpch/tpchgen.c tpc/tpch/tbl.c tpc/tpch/tpch_pool.c tpc/tpch/tpch_query.c

# examples/*.c: small programs on the public API, run by `make test`
# (tests/examples/check_examples.sh).
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
$(BUILD)/examples/%: examples/%.c $(BUILD)/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $< $(BUILD)/libgpmdb.a $(LDLIBS)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRC))
ASAN_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/asan/%,$(UNIT_SRC))
CRASH_SRC := $(wildcard tests/crash/crash_*.c)
CRASH_BIN := $(patsubst tests/crash/%.c,$(BUILD)/tests/crash/%,$(CRASH_SRC))
GPU_TEST_SRC := $(if $(filter 1,$(GPU)),$(wildcard tests/gpu/test_*.c tests/gpu/crash_*.c))
GPU_TEST_BIN := $(patsubst tests/gpu/%.c,$(BUILD)/tests/gpu/%,$(GPU_TEST_SRC))

# sqllogictest runners (tests/slt): one core, a driver each.  sqlite_slt
# tests the runner itself; gpmdb_slt needs the engine behind gpmdb.h.
SLT_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,tests/slt/slt.c tests/slt/md5.c)
SLT_BIN := $(BUILD)/sqlite_slt
SLT_BIN += $(BUILD)/gpmdb_slt

# Differential test against SQLite (tests/diff): random tables and queries.
DIFF_BIN := $(BUILD)/tests/diff/test_diff_sqlite

# The 22 TPC-H queries on SF 0.01 against SQLite (tests/tpch, docs/tpch.md),
# plain and under ASan+UBSan.
TPCHQ_BIN := $(BUILD)/tests/tpch/test_tpch_queries $(BUILD)/tests/tpch/test_tpch_queries_asan

.PHONY: all lib tests test test-gpu test-slt bench clean format demo
all: lib $(PROGS) $(BUILD)/gpmdb tests $(EXAMPLE_BIN)
# The README's quick start: the shell on a TPC-H SF 0.01 sample database
# (DEMO_DB, made on first use).
DEMO_DB ?= tpch.db
demo: lib $(BUILD)/gpmdb $(BUILD)/tpchgen
	@[ -e $(DEMO_DB) ] || $(BUILD)/tpchgen -s 0.01 --pool $(DEMO_DB)
	$(BUILD)/gpmdb $(DEMO_DB)
lib: $(BUILD)/libgpmdb.a $(BUILD)/libgpmdb.so
tests: $(UNIT_BIN) $(ASAN_BIN) $(CRASH_BIN) $(GPU_TEST_BIN) $(SLT_BIN) $(DIFF_BIN) \
       $(TPCHQ_BIN) $(BUILD)/tests/shell/gpmdb_sqlite

$(BUILD)/libgpmdb.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libgpmdb.so: $(LIB_OBJ)
	$(CC) -shared -o $@ $^ $(LDLIBS)

$(BUILD)/asan/libgpmdb.a: $(ASAN_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libtpch.a: $(patsubst %.c,$(BUILD)/obj/%.o,$(TPCH_SRC))
	rm -f $@ && ar rcs $@ $^

$(BUILD)/asan/libtpch.a: $(patsubst %.c,$(BUILD)/asan/%.o,$(TPCH_SRC))
	rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SANFLAGS) -c $< -o $@

# Generated parser: lemon writes parse.c/parse.h into build/gen.  The
# generated file is compiled from there with the same flags.
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -Isql -I$(BUILD)/gen $(CFLAGS) -Wno-unused-parameter -c $< -o $@
$(BUILD)/asan/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -Isql -I$(BUILD)/gen $(SANFLAGS) -Wno-unused-parameter -c $< -o $@
$(BUILD)/gen/%.c $(BUILD)/gen/%.h: sql/%.y
	@mkdir -p $(@D)
	lemon -q -d$(BUILD)/gen $<
	@touch $(BUILD)/gen/$*.h # lemon leaves an unchanged header as it was
# Sources that include the generated token header need it first.
$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard sql/*.c)) \
$(patsubst %.c,$(BUILD)/asan/%.o,$(wildcard sql/*.c)): $(GEN_SRC:.c=.h)
CFLAGS_BASE += -I$(BUILD)/gen

$(BUILD)/obj/%.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -c $< -o $@
# index_ops.cu copies between pinned staging and the caller's records on
# every core (OpenMP in host code).
$(BUILD)/obj/gpu/index_ops.o: NVFLAGS += -Xcompiler -fopenmp
# gpu_upload_staged copies into its pinned buffers on every core
$(BUILD)/obj/gpu/device.o: NVFLAGS += -Xcompiler -fopenmp
# the INSERT pipeline stages its chunks on every core (dml_append.cu),
# and the pool's pages are populated on every core before registration
$(BUILD)/obj/gpu/dml_append.o: NVFLAGS += -Xcompiler -fopenmp
$(BUILD)/obj/gpu/persist.o: NVFLAGS += -Xcompiler -fopenmp
# CAP copies the log images down through pinned staging on every core
$(BUILD)/obj/gpu/dml_cap.o: NVFLAGS += -Xcompiler -fopenmp

.SECONDEXPANSION:
$(PROGS): $$($$@_SRC) $$($$@_LIBS) $(BUILD)/libgpmdb.a
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $< $($@_LIBS) $(BUILD)/libgpmdb.a $(LDLIBS)

$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libgpmdb.a $(LDLIBS)

$(BUILD)/tests/asan/%: tests/unit/%.c $(BUILD)/asan/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SANFLAGS) -Itests -o $@ $< $(BUILD)/asan/libgpmdb.a $(LDLIBS)

# test_tpchgen links the TPC-H library too.
$(BUILD)/tests/unit/test_tpchgen: tests/unit/test_tpchgen.c $(BUILD)/libtpch.a $(BUILD)/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libtpch.a $(BUILD)/libgpmdb.a $(LDLIBS)

$(BUILD)/tests/asan/test_tpchgen: tests/unit/test_tpchgen.c $(BUILD)/asan/libtpch.a $(BUILD)/asan/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SANFLAGS) -Itests -o $@ $< $(BUILD)/asan/libtpch.a $(BUILD)/asan/libgpmdb.a $(LDLIBS)

$(BUILD)/tests/crash/%: tests/crash/%.c $(BUILD)/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libgpmdb.a $(LDLIBS)

$(BUILD)/tests/diff/%: tests/diff/%.c $(BUILD)/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libgpmdb.a $(LDLIBS)

$(BUILD)/tests/tpch/test_tpch_queries: tests/tpch/test_tpch_queries.c $(BUILD)/libtpch.a $(BUILD)/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libtpch.a $(BUILD)/libgpmdb.a $(LDLIBS)

$(BUILD)/tests/tpch/test_tpch_queries_asan: tests/tpch/test_tpch_queries.c $(BUILD)/asan/libtpch.a $(BUILD)/asan/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(SANFLAGS) -Itests -o $@ $< $(BUILD)/asan/libtpch.a $(BUILD)/asan/libgpmdb.a $(LDLIBS)

$(BUILD)/tests/gpu/%: tests/gpu/%.c $(BUILD)/libgpmdb.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libgpmdb.a $(LDLIBS)

$(BUILD)/sqlite_slt: $(SLT_OBJ) $(BUILD)/obj/tests/slt/driver_sqlite.o
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $^ -lsqlite3 -lz -lm

$(BUILD)/gpmdb_slt: $(SLT_OBJ) $(BUILD)/obj/tests/slt/driver_gpmdb.o $(BUILD)/libgpmdb.a
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $^ $(LDLIBS)

# The shell (shell/shell*.c, docs/shell.md): build/gpmdb on the engine, and
# build/tests/shell/gpmdb_sqlite, the same objects on a libsqlite3 test
# double of gpmdb.h; the golden and interactive tests run both.
SHELL_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard shell/shell*.c))
SHELL_LIBS := -ledit -lsqlite3
$(BUILD)/gpmdb: $(SHELL_OBJ) $(BUILD)/libgpmdb.a
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $^ $(SHELL_LIBS) $(LDLIBS)
$(BUILD)/tests/shell/gpmdb_sqlite: $(SHELL_OBJ) $(BUILD)/obj/tests/shell/gpmdb_on_sqlite.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $^ $(SHELL_LIBS)

# ASan: leaks are errors; libgomp's thread pool is not a leak.
# tests/check_layout.sh: no source file over 2,000 lines, no executor
# header in the planner (docs/engine.md "Layout").
test: all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  GPMDB_EXAMPLES=$(BUILD)/examples \
	  GPMDB_SHELLS="$(BUILD)/gpmdb $(BUILD)/tests/shell/gpmdb_sqlite" \
	  GPMDB_BENCH_BATCH=$(BUILD)/bench_batch GPMDB_BENCH_KV=$(BUILD)/bench_kv \
	  GPMDB_BENCH_TPCH=$(BUILD)/bench_tpch GPMDB_TPCHGEN=$(BUILD)/tpchgen \
	  SLT_SQLITE=$(BUILD)/sqlite_slt SLT_GPMDB=$(BUILD)/gpmdb_slt \
	  GPMDB_ENC_TPCHQ=$(BUILD)/tests/tpch/test_tpch_queries GPMDB_ENC_DIFF=$(BUILD)/tests/diff/test_diff_sqlite \
	  tests/run.sh $(UNIT_BIN) $(ASAN_BIN) $(CRASH_BIN) $(DIFF_BIN) $(TPCHQ_BIN) tests/slt/check_runner.sh \
	  tests/slt/check_corpus.sh tests/slt/check_corpus_enc.sh tests/slt/check_corpus_grow.sh tests/shell/check_shell.sh tests/examples/check_examples.sh \
	  tests/bench/check_bench_batch.sh tests/bench/check_bench_kv.sh tests/bench/check_bench_tpch.sh \
	  tests/check_encoded.sh tests/check_layout.sh

test-gpu: all
	@if [ "$(GPU)" != 1 ]; then echo "test-gpu needs nvcc (GPU=1)"; exit 1; fi
	tests/gpu/run_gpu_suite.sh $(BUILD)

# gpmdb over tests/sql and the sqllogictest corpus (../shared/sqllogictest
# or GPMDB_SLT_DIR); the records listed in known_failures.txt may fail.
test-slt: $(BUILD)/gpmdb_slt
	tests/slt/run_slt.sh $(BUILD)/gpmdb_slt --known tests/slt/known_failures.txt

bench: all
	BUILD=$(BUILD) tpc/run_bench.sh

# TPC-H: `make bench-tpch SF=n` (default 1), docs/benchmarks.md.
SF ?= 1
.PHONY: bench-tpch
bench-tpch: $(BUILD)/tpchgen $(BUILD)/bench_tpch
	BUILD=$(BUILD) SF=$(SF) tpc/tpch/run_bench_tpch.sh

format:
	clang-format -i $(wildcard include/*.h storage/*.[ch] sql/*.[ch] engine/*.[ch] engine/*/*.[ch] \
	  gpu/*.cu gpu/*.cuh gpu/*.[ch] gpu/*/*.[ch] shell/*.[ch] tests/*.h tests/*/*.[ch] \
	  tpc/*.[ch] tpc/*/*.[ch] examples/*.c)

clean:
	rm -rf $(BUILD)

# libFuzzer targets (clang; not part of `make test` or CI): docs/testing.md.
# `make fuzz-parse` / `make fuzz-sql` build $(BUILD)/fuzz/fuzz_{parse,sql}
# and run it for FUZZ_TIME seconds (0: build only) on one core, starting
# from the seeds of tests/fuzz/make_seeds.sh; findings go to $(BUILD)/fuzz.
FUZZ_CC ?= clang
FUZZ_TIME ?= 600
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fopenmp -MMD -MP -Iinclude -Isql -I$(BUILD)/gen $(WARN) \
  -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_PARSE_OBJ := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(wildcard sql/*.c)) $(BUILD)/fuzz/obj/gen/parse.o
FUZZ_SQL_OBJ := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(LIB_SRC)) $(BUILD)/fuzz/obj/gen/parse.o
$(BUILD)/fuzz/obj/%.o: %.c $(GEN_SRC:.c=.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c $< -o $@
$(BUILD)/fuzz/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Wno-unused-parameter -c $< -o $@
$(BUILD)/fuzz/fuzz_parse: tests/fuzz/fuzz_parse.c $(FUZZ_PARSE_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^)
$(BUILD)/fuzz/fuzz_sql: tests/fuzz/fuzz_sql.c $(FUZZ_SQL_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $(filter %.c %.o,$^) -lpmem -lzstd -lz -lm -lpthread
.PHONY: fuzz-parse fuzz-sql
fuzz-parse fuzz-sql: fuzz-%: $(BUILD)/fuzz/fuzz_%
	@if [ "$(FUZZ_TIME)" != 0 ]; then \
	  tests/fuzz/make_seeds.sh $(BUILD)/fuzz/seed >/dev/null && mkdir -p $(BUILD)/fuzz/corpus-$* && \
	  $< -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=4096 -max_len=4096 \
	    -dict=tests/fuzz/sql.dict -artifact_prefix=$(BUILD)/fuzz/ -print_final_stats=1 \
	    $(BUILD)/fuzz/corpus-$* $(BUILD)/fuzz/seed; fi

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
