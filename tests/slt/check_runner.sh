#!/usr/bin/env bash
# tests/slt/check_runner.sh - the sqllogictest runner's own test.
#
# Runs build/sqlite_slt (the runner core over SQLite) on the hand-written
# files in tests/slt/selftest, which must pass or fail exactly as their
# "# expect:" lines and "# FAIL" markers say (the runner must be able to
# fail), then on the whole sqllogictest corpus when it is there, which
# SQLite must pass entirely: it was made with SQLite.  Prints "ok - " or
# "not ok - " per case and "# passed P failed F" for tests/run.sh.
set -u
cd "$(dirname "$0")/../.."
slt=${SLT_SQLITE:-build/sqlite_slt}
st=tests/slt/selftest
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case NAME CONDITION-COMMAND...: runs the command, counts the outcome,
# and shows the runner's last output when it failed.
case_() {
	local name=$1
	shift
	if "$@"; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		sed -e 's/^/    /' "$tmp/out" | tail -n 40
		failed=$((failed + 1))
	fi
}

# run ARGS...: runs the runner, output in $tmp/out, status in $rc.
run() {
	"$slt" "$@" >"$tmp/out" 2>&1
	rc=$?
}

# The "PATH: P passed, ..." line of a file, without its time.
summary() {
	grep -F "$1: " "$tmp/out" | grep -E ' passed, [0-9]+ failed' |
		sed -e 's/^[^:]*: //; s/ ([0-9.]*s)$//'
}

expect_of() {
	sed -n 's/^# expect: //p' "$1"
}

# Lines of the records the runner reported, and of the "# FAIL" markers.
reported_lines() {
	grep -E "^$1:[0-9]+: " "$tmp/out" | cut -d: -f2 | sort -n | tr '\n' ' '
}

marked_lines() {
	awk '/^# FAIL/ { print NR + 1 }' "$1" | sort -n | tr '\n' ' '
}

if [ ! -x "$slt" ]; then
	echo "not ok - $slt is not built"
	echo "# passed 0 failed 1"
	exit 1
fi

run "$st/pass.test"
case_ "pass.test: every record passes" \
	test "$rc" = 0 -a "$(summary "$st/pass.test")" = "$(expect_of "$st/pass.test")"

gzip -c "$st/pass.test" >"$tmp/pass.test.gz"
run "$tmp/pass.test.gz"
case_ "pass.test.gz: gzipped files read" \
	test "$rc" = 0 -a "$(summary "$tmp/pass.test.gz")" = "$(expect_of "$st/pass.test")"

sed -e 's/$/\r/' "$st/pass.test" >"$tmp/crlf.test"
run "$tmp/crlf.test"
case_ "pass.test with CRLF line ends" \
	test "$rc" = 0 -a "$(summary "$tmp/crlf.test")" = "$(expect_of "$st/pass.test")"

run --max-failures 100 "$st/fail.test"
case_ "fail.test: the counts and exit status" \
	test "$rc" = 1 -a "$(summary "$st/fail.test")" = "$(expect_of "$st/fail.test")"
case_ "fail.test: exactly the marked records fail" \
	test "$(reported_lines "$st/fail.test")" = "$(marked_lines "$st/fail.test")"
printf '%s\n' "$st/fail.test:22: wrong result" "    SELECT a FROM t1" \
	"  expected:" "    1" "    2" "    5" "    4" \
	"  got:" "    1" "    2" "    3" "    4" >"$tmp/want"
case_ "fail.test: a failure shows the SQL, expected and got" \
	cmp -s "$tmp/want" <(grep -A 11 -F "$st/fail.test:22: " "$tmp/out")
case_ "fail.test: last line adds up" \
	test "$(tail -n 1 "$tmp/out")" = "6 passed, 19 failed"

run --max-failures 2 "$st/fail.test"
case_ "--max-failures limits the failures shown" \
	test "$(grep -cE "^$st/fail.test:[0-9]+: " "$tmp/out")" = 2 -a \
	"$(grep -c '17 more failures not shown' "$tmp/out")" = 1

run --halt-on-error "$st/fail.test" "$st/pass.test"
case_ "--halt-on-error stops at the first failure" \
	test "$rc" = 1 -a "$(tail -n 1 "$tmp/out")" = "2 passed, 1 failed" -a \
	"$(grep -c pass.test "$tmp/out")" = 0

run --engine-name mysql "$st/pass.test"
case_ "--engine-name decides skipif and onlyif" \
	test "$rc" = 1 -a "$(summary "$st/pass.test")" = "39 passed, 3 failed, 4 skipped"

run --known "$st/known.txt" "$st/known.test"
case_ "--known: a listed record that passes or does not run fails" \
	test "$rc" = 1 -a \
	"$(summary "$st/known.test")" = "2 passed, 2 failed, 1 skipped, 1 known failures" -a \
	"$(grep -c 'known.test:15: now passes, remove from known failures' "$tmp/out")" = 1 -a \
	"$(grep -c 'known.test:27: listed in known failures' "$tmp/out")" = 1

run --known "$st/known_ok.txt" "$st/known.test"
case_ "--known: listed failures are expected" \
	test "$rc" = 0 -a \
	"$(summary "$st/known.test")" = "3 passed, 0 failed, 1 skipped, 1 known failures"

run "$tmp/no_such_file.test"
case_ "a missing file is a failure" \
	test "$rc" = 1 -a "$(tail -n 1 "$tmp/out")" = "0 passed, 1 failed"

run
case_ "no file is a usage error" test "$rc" = 2

# The corpus: everything that applies to SQLite passes (about 5 s).
dir=${GPMDB_SLT_DIR:-../shared/sqllogictest}
if [ -d "$dir" ]; then
	tests/slt/run_slt.sh --corpus-only "$slt" >"$tmp/out" 2>&1
	rc=$?
	last=$(tail -n 1 "$tmp/out")
	n=$(echo "$last" | sed -n 's/^\([0-9][0-9]*\) passed, 0 failed$/\1/p')
	case_ "the corpus under SQLite: $last" \
		test "$rc" = 0 -a "${n:-0}" -gt 0
else
	echo "# note: no sqllogictest corpus at $dir (GPMDB_SLT_DIR); not run"
fi

echo "# passed $passed failed $failed"
[ "$failed" -eq 0 ]
