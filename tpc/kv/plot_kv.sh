#!/usr/bin/env bash
# tpc/kv/plot_kv.sh PREFIX - PREFIX.svg from PREFIX.dat (written by
# bench_kv --dat): operations per second of each workload, one bar per
# engine, log scale, one panel per table size.  Needs gnuplot (Debian:
# gnuplot-nox); without it, says so and draws nothing.
set -euo pipefail
prefix=$1
if ! command -v gnuplot >/dev/null; then
	echo "plot_kv: gnuplot is not installed (apt-get install gnuplot-nox): no chart" >&2
	exit 0
fi
mapfile -t sizes < <(sed -n 's/^# rows=//p' "$prefix.dat")
n=${#sizes[@]}
if [ "$n" -eq 0 ]; then
	echo "plot_kv: $prefix.dat has no results: no chart" >&2
	exit 1
fi
{
	echo "set terminal svg size 1000,$((380 * n)) dynamic font 'sans,11'"
	echo "set output '$prefix.svg'"
	echo "set datafile missing 'NaN'"
	echo "set style data histograms"
	echo "set style histogram clustered gap 1"
	echo "set style fill solid 0.85 border -1"
	echo "set logscale y"
	echo "set ylabel 'operations per second (log)'"
	echo "set grid ytics"
	echo "set key outside right top vertical"
	echo "set multiplot layout $n,1"
	for i in $(seq 0 $((n - 1))); do
		echo "set title 'key-value workload, ${sizes[$i]} rows (tpc/kv/bench_kv.c)'"
		echo "plot for [c=2:7] '$prefix.dat' index $i using c:xtic(1) title columnheader(c)"
	done
	echo "unset multiplot"
} | gnuplot
echo "saved $prefix.svg"
