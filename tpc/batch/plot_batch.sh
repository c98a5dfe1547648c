#!/usr/bin/env bash
# tpc/batch/plot_batch.sh PREFIX - PREFIX.png from PREFIX.dat (written by
# bench_batch --out PREFIX): rows/s per configuration for INSERT and the
# two UPDATEs, log scale.  Needs gnuplot (Debian: gnuplot-nox); without it
# says so and makes no chart.
set -euo pipefail
prefix=${1:?usage: plot_batch.sh PREFIX}
if ! command -v gnuplot >/dev/null; then
	echo "plot_batch: gnuplot is not installed (apt-get install gnuplot-nox): no chart" >&2
	exit 0
fi
gnuplot <<GP
set terminal pngcairo size 1200,600 font ",10"
set output "$prefix.png"
set title "Batch INSERT/UPDATE: rows per second (higher is better, log scale)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set ylabel "rows/s"
set yrange [1e4:*]
set grid ytics
set key top right
set xtics rotate by -20
plot "$prefix.dat" using 2:xtic(1) title "INSERT", \
     "" using 3 title "UPDATE a (predicate)", \
     "" using 4 title "UPDATE b (keys)"
GP
echo "saved $prefix.png"
