#!/usr/bin/env bash
# tests/shell/check_shell.sh - the shell's tests for `make test`: the
# golden tests and the tmux test, on each SHELL given (default: $GPMDB_SHELLS,
# else build/gpmdb, the shell on the real engine, and
# build/tests/shell/gpmdb_sqlite, the same shell on the SQLite test double,
# which tests the shell itself against outputs of the sqlite3 shell), and
# on the real engine's shell the index listing (check_indexes.sh).
# Prints each case as "ok - SHELL: CASE" and one "# passed P failed F".
set -u
cd "$(dirname "$0")/../.."
if [ $# -gt 0 ]; then
	shells=("$@")
else
	# shellcheck disable=SC2206
	shells=(${GPMDB_SHELLS:-build/gpmdb build/tests/shell/gpmdb_sqlite})
fi
p=0
f=0
for shell in "${shells[@]}"; do
	name=${shell##*/}
	tests=(tests/shell/run_golden.sh tests/shell/interactive.sh)
	[ "$name" = gpmdb ] && tests+=(tests/shell/check_indexes.sh)
	for t in "${tests[@]}"; do
		out=$("$t" "$shell" 2>&1)
		echo "$out" | grep -v '^# passed' |
			sed -E "s/^(not ok|ok) - /\\1 - $name: /"
		line=$(echo "$out" | grep -E '^# passed [0-9]+ failed [0-9]+$' | tail -n 1)
		if [ -z "$line" ]; then
			echo "not ok - $name: ${t##*/} reported no result"
			f=$((f + 1))
			continue
		fi
		p=$((p + $(echo "$line" | awk '{print $3}')))
		f=$((f + $(echo "$line" | awk '{print $5}')))
	done
done
echo "# passed $p failed $f"
[ "$f" -eq 0 ]
