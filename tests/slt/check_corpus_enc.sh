#!/usr/bin/env bash
# tests/slt/check_corpus_enc.sh - tests/sql and the corpus's select1-5
# files on encoded storage: every commit encodes the tables it wrote
# (GPMDB_AUTO_ENCODE=1, storage/encode.c), so the queries read frame-of-
# reference and dictionary columns and the writes widen them.  A modest
# pass beside check_corpus.sh's plain one (the whole corpus passed
# encoded too: 242633 records, 2026-11-27).
set -u
cd "$(dirname "$0")/../.."
slt=${SLT_GPMDB:-build/gpmdb_slt}
dir=${GPMDB_SLT_DIR:-../shared/sqllogictest}
files=(tests/sql/*.test)
if [ -d "$dir" ]; then
	for f in "$dir"/select[1-5].test.gz; do
		[ -e "$f" ] && files+=("$f")
	done
fi
out=$(GPMDB_AUTO_ENCODE=1 "$slt" --known tests/slt/known_failures.txt \
	"${files[@]}" 2>&1)
rc=$?
echo "$out" | grep -E ' passed, .* failed' | sed -e 's/^/# /'
if [ "$rc" -eq 0 ]; then
	echo "ok - sqllogictest on encoded storage"
	echo "# passed 1 failed 0"
else
	echo "$out" | tail -n 40 | sed -e 's/^/    /'
	echo "not ok - sqllogictest on encoded storage (status $rc)"
	echo "# passed 0 failed 1"
fi
