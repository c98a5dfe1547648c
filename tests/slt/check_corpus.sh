#!/usr/bin/env bash
# tests/slt/check_corpus.sh - gpmdb over tests/sql/*.test and the
# sqllogictest corpus (../shared/sqllogictest or $GPMDB_SLT_DIR), with
# tests/slt/known_failures.txt: a record outside that list that fails, or a
# listed record that passes, fails the run.  One case per file for
# tests/run.sh ("ok - FILE" / "not ok - FILE"), then the runner's totals.
set -u
cd "$(dirname "$0")/../.."
slt=${SLT_GPMDB:-build/gpmdb_slt}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tests/slt/run_slt.sh "$slt" --known tests/slt/known_failures.txt >"$out" 2>&1
rc=$?
passed=0
failed=0
while IFS= read -r line; do
	case "$line" in
	*": "*" passed, "*" failed"*)
		f=${line%%: *}
		nf=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
		if [ "$nf" = 0 ]; then
			echo "ok - $line"
			passed=$((passed + 1))
		else
			echo "not ok - $line"
			failed=$((failed + 1))
		fi
		;;
	esac
done <"$out"
# The runner's exit status also covers listed records that now pass and
# files that could not be read: make it a failure of its own.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	echo "not ok - runner exited with status $rc"
	failed=1
fi
grep -v -E '^\.\./|^tests/sql/' "$out" | sed -e 's/^/    /' | tail -n 80
echo "# passed $passed failed $failed"
