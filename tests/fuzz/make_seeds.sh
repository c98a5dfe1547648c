#!/bin/sh
# make_seeds.sh OUTDIR - writes the fuzzers' seed corpus into OUTDIR, one
# file per input: the TPC-H queries, every statement of tests/sql/*.test,
# and (when the corpus is there) the first records of each sqllogictest
# file, so that the fuzzers start from SQL that reaches most of the
# grammar.  GPMDB_TPCH_DIR and GPMDB_SLT_DIR as for the tests.
set -eu
out=${1:?usage: make_seeds.sh OUTDIR}
tpch=${GPMDB_TPCH_DIR:-../shared/tpch}
slt=${GPMDB_SLT_DIR:-../shared/sqllogictest}
per_slt=${SEEDS_PER_SLT_FILE:-12}
mkdir -p "$out"

for q in "$tpch"/queries/*.sql; do
	[ -f "$q" ] && cp "$q" "$out/tpch_$(basename "$q")"
done

# The SQL of each "statement" / "query" record: the lines after the
# header up to a blank line or "----".
extract() { # name max
	awk -v out="$out" -v name="$1" -v max="$2" '
		/^(statement|query)/ { insql = 1; sql = ""; next }
		insql && (/^----/ || /^$/) {
			if (sql != "" && n < max) {
				f = sprintf("%s/%s_%04d.sql", out, name, n++)
				printf "%s", sql > f
				close(f)
			}
			insql = 0; next
		}
		insql { sql = sql $0 "\n" }
		END {
			if (insql && sql != "" && n < max) {
				f = sprintf("%s/%s_%04d.sql", out, name, n++)
				printf "%s", sql > f
			}
		}'
}
for t in tests/sql/*.test; do
	extract "sql_$(basename "$t" .test)" 100000 <"$t"
done
if [ -d "$slt" ]; then
	find "$slt" -name '*.test.gz' | sort | while read -r f; do
		n=$(echo "$f" | sed "s|^$slt/||; s|/|_|g; s|\.test\.gz$||")
		gzip -dc "$f" | extract "slt_$n" "$per_slt"
	done
fi
echo "$(ls "$out" | wc -l) seeds in $out"
