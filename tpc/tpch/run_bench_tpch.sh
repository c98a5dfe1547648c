#!/usr/bin/env bash
# tpc/tpch/run_bench_tpch.sh - the TPC-H benchmark (`make bench-tpch SF=n`):
# generates the .tbl files with tpchgen (kept for the next run), runs
# bench_tpch on them (gpmdb CPU and GPU, DuckDB, SQLite at SF <= 1) and
# saves the table as tpc/results/tpch-sf<SF>-<host>.md with a description
# of the machine, plus a bar chart tpch-sf<SF>-<host>.png drawn by gnuplot
# (none, and a message, when gnuplot is missing).  docs/benchmarks.md.
# Environment:
#   BUILD           build folder holding tpchgen and bench_tpch (default build)
#   SF              scale factor (default 1)
#   TPCH_DATA       where the .tbl files go (default /tmp/gpmdb-tpch): one
#                   folder sf<SF> per scale factor, reused when complete
#   BENCH_DIR       where the databases go (default /dev/shm)
#   BENCH_TPCH_REPS warm runs per query (default 3)
#   BENCH_TPCH_ARGS more bench_tpch options (e.g. "--only 1,6 --timeout 120")
#   BENCH_NOTE      a line added to the header (e.g. "the machine was shared")
#   BENCH_HOST      the name in the file names (default hostname -s)
#   GPMDB_TPCH_DIR  the folder holding queries/ (default ../shared/tpch)
#   GPMDB_DUCKDB_LIB  libduckdb.so (default .peers/duckdb/libduckdb.so,
#                   fetched by tpc/peers/fetch_duckdb.sh when missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tpc/results
build=${BUILD:-build}
sf=${SF:-1}
host=${BENCH_HOST:-$(hostname -s)}
data=${TPCH_DATA:-/tmp/gpmdb-tpch}/sf$sf
name=tpch-sf$sf-$host
out=tpc/results/$name.md
png=tpc/results/$name.png

for p in tpchgen bench_tpch; do
	if [ ! -x "$build/$p" ]; then
		echo "run_bench_tpch: no $build/$p (make BUILD=$build $build/$p)" >&2
		exit 2
	fi
done

# The data: generated once per scale factor; .complete marks a finished
# generation (an interrupted one is made again).
if [ ! -f "$data/.complete" ]; then
	echo "run_bench_tpch: generating SF $sf into $data" >&2
	rm -rf "$data"
	mkdir -p "$data"
	"$build/tpchgen" -s "$sf" -o "$data" >&2
	touch "$data/.complete"
fi

# DuckDB is a peer, not a dependency: fetch it when missing; without it
# the table says "not installed".
if [ -z "${GPMDB_DUCKDB_LIB:-}" ] && [ ! -f .peers/duckdb/libduckdb.so ]; then
	tpc/peers/fetch_duckdb.sh || echo "run_bench_tpch: DuckDB could not be fetched" >&2
fi

gpu="none"
if command -v nvidia-smi >/dev/null 2>&1; then
	gpu=$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null |
		paste -sd ';' - || true)
	[ -n "$gpu" ] || gpu="none (nvidia-smi found no GPU)"
fi

cmd="$build/bench_tpch --data $data --sf $sf --dir ${BENCH_DIR:-/dev/shm} --reps ${BENCH_TPCH_REPS:-3} ${BENCH_TPCH_ARGS:-}"
plotdat=$(mktemp)
trap 'rm -f "$plotdat" "$out.tmp" "$out.rc"' EXIT
{
	echo "# TPC-H SF $sf on $host"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) threads)"
	echo "- memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
	echo "- gpu: $gpu"
	echo "- load average when it started: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- command: \`make bench-tpch SF=$sf\` ($cmd)"
	echo "- data: tpchgen -s $sf (tpc/tpch, not dbgen's bytes: docs/tpch.md)"
	if [ -n "${BENCH_NOTE:-}" ]; then
		echo "- note: $BENCH_NOTE"
	fi
	echo
	# shellcheck disable=SC2086 # BENCH_TPCH_ARGS is a list of options
	$cmd --plot "$plotdat" || echo $? >"$out.rc"
} | tee "$out.tmp"
rc=0
if [ -f "$out.rc" ]; then
	rc=$(cat "$out.rc")
	echo "FAILED or MISMATCH (status $rc): $cmd" >&2
fi

# The chart: warm times per query and engine, log scale.  Never a fake:
# without gnuplot (or without data) there is no PNG.
rm -f "$png"
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "run_bench_tpch: gnuplot is not installed (apt-get install gnuplot-nox): no chart" >&2
	echo "(no chart: gnuplot is not installed)" >>"$out.tmp"
elif [ "$(head -1 "$plotdat" | awk -F'\t' '{print NF}')" -lt 2 ]; then
	echo "run_bench_tpch: no engine ran: no chart" >&2
else
	ncol=$(head -1 "$plotdat" | awk -F'\t' '{print NF}')
	if gnuplot <<-EOF; then
		set terminal pngcairo size 1400,600 noenhanced font ",10"
		set output "$png"
		set title "TPC-H SF $sf on $host: warm query times (best of ${BENCH_TPCH_REPS:-3}; lower is better)"
		set style data histograms
		set style histogram clustered gap 1
		set style fill solid 0.85 border -1
		set boxwidth 0.9
		set logscale y
		set ylabel "milliseconds (log scale)"
		set grid ytics
		set key outside top center horizontal
		set datafile missing "-"
		set datafile separator "\t"
		plot for [i=2:$ncol] "$plotdat" using i:xtic(1) title columnheader(i)
	EOF
		echo "![warm query times]($name.png)" >>"$out.tmp"
		echo "saved $png"
	else
		echo "run_bench_tpch: gnuplot failed: no chart" >&2
		rm -f "$png"
	fi
fi
mv "$out.tmp" "$out"
echo "saved $out"
exit "$rc"
