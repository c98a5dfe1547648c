#!/usr/bin/env bash
# tests/shell/check_shell.sh - the shell's tests for `make test`: the
# golden tests and the tmux test, on SHELL (default: the SQLite double
# build/tests/shell/gpmdb_sqlite, so that they test the shell itself
# whatever the state of the engine).  Prints one "# passed P failed F".
set -u
cd "$(dirname "$0")/../.."
shell=${1:-build/tests/shell/gpmdb_sqlite}
p=0
f=0
for t in tests/shell/run_golden.sh tests/shell/interactive.sh; do
	out=$("$t" "$shell" 2>&1)
	echo "$out" | grep -v '^# passed'
	line=$(echo "$out" | grep -E '^# passed [0-9]+ failed [0-9]+$' | tail -n 1)
	if [ -z "$line" ]; then
		f=$((f + 1))
		continue
	fi
	p=$((p + $(echo "$line" | awk '{print $3}')))
	f=$((f + $(echo "$line" | awk '{print $5}')))
done
echo "# passed $p failed $f"
[ "$f" -eq 0 ]
