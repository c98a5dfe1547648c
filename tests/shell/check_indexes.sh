#!/usr/bin/env bash
# tests/shell/check_indexes.sh - the shell's index listing on the real
# engine (the sizes come from PRAGMA index_list's bytes and entries, which
# the SQLite test double has not, so this is no golden case):
# `.indexes` (names, as sqlite3 prints them), `.indexes --bytes [TABLE]`
# (name, table, origin, entries, bytes), the indexes in `.stats`, `.schema`
# with CREATE INDEX, REINDEX and its error, and the usage message.
#
# Usage: tests/shell/check_indexes.sh SHELL (build/gpmdb)
# Prints "ok - " / "not ok - " per check and "# passed P failed F".
set -u
shell=$(realpath "$1")
passed=0
failed=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1

check() { # NAME REGEX TEXT: TEXT has a line matching REGEX
	if printf '%s\n' "$3" | grep -qE -- "$2"; then
		echo "ok - $1"
		passed=$((passed + 1))
	else
		echo "not ok - $1"
		printf '%s\n' "$3" | sed -e 's/^/    /' | head -n 20
		failed=$((failed + 1))
	fi
}

check_not() { # NAME REGEX TEXT: no line of TEXT matches REGEX
	if printf '%s\n' "$3" | grep -qE -- "$2"; then
		echo "not ok - $1"
		printf '%s\n' "$3" | sed -e 's/^/    /' | head -n 20
		failed=$((failed + 1))
	else
		echo "ok - $1"
		passed=$((passed + 1))
	fi
}

run() { "$shell" -batch test.db 2>&1; }

run <<'SQL' >/dev/null
CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c INT);
CREATE TABLE t2(x INT);
CREATE INDEX i1 ON t1(c, b DESC);
CREATE UNIQUE INDEX i2 ON t2(x);
INSERT INTO t1 VALUES (1, 'one', 10), (2, 'two', 20), (3, 'three', 30);
INSERT INTO t2 VALUES (7);
SQL

out=$(echo ".indexes" | run)
check ".indexes lists i1" "(^| )i1( |$)" "$out"
check ".indexes lists i2" "(^| )i2( |$)" "$out"
check_not ".indexes prints no header" "^index " "$out"
out=$(echo ".indexes t2" | run)
check ".indexes t2 is i2 alone" "^i2 *$" "$out"

out=$(echo ".indexes --bytes" | run)
check ".indexes --bytes header" "^index +table +origin +entries +bytes$" "$out"
check ".indexes --bytes i1" "^i1 +t1 +c +3 +[1-9][0-9]*$" "$out"
check ".indexes --bytes i2" "^i2 +t2 +c +1 +[1-9][0-9]*$" "$out"
check ".indexes --bytes PRIMARY KEY" "^[^ ]+ +t1 +pk +3 +[1-9][0-9]*$" "$out"
check ".indexes --bytes UNIQUE" "^[^ ]+ +t1 +u +3 +[1-9][0-9]*$" "$out"
out=$(echo ".indexes --bytes t2" | run)
check ".indexes --bytes t2: one index" "^i2 +t2 +c +1 +[1-9][0-9]*$" "$out"
check_not ".indexes --bytes t2: not t1's" " t1 " "$out"
out=$(echo ".indexes a b c" | run)
check ".indexes usage" "^Usage: \.indexes \[--bytes\] \[TABLE\]" "$out"

out=$(echo ".stats" | run)
check ".stats lists i1" "^index i1 +on t1, entries 3, bytes [1-9][0-9]*$" "$out"

out=$(echo ".schema t1" | run)
check ".schema keeps CREATE INDEX" "^CREATE INDEX i1 ON t1\(c, b DESC\);$" "$out"

out=$(printf 'REINDEX;\nREINDEX t1;\nREINDEX i2;\nSELECT count(*) FROM t1 WHERE b = %s;\n' "'two'" | run)
check "REINDEX then a lookup" "^1$" "$out"
out=$(echo "REINDEX nosuch;" | run)
check "REINDEX of an unknown name" "unable to identify the object to be reindexed" "$out"

echo "# passed $passed failed $failed"
[ "$failed" -eq 0 ]
