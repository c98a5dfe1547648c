#!/usr/bin/env bash
# tests/shell/interactive.sh - the shell on a terminal, through tmux.
#
# Usage: tests/shell/interactive.sh SHELL
# Starts SHELL in a private tmux server and checks: the prompt, the
# continuation prompt, history recall with Up, tab completion of a keyword
# and of a table name, Ctrl-C at the prompt (the line is dropped, the shell
# lives), the progress bar of a long statement, Ctrl-C during a statement
# (it stops with "interrupted", a write's transaction is rolled back, the
# shell lives), Ctrl-D exit, and the history file.  Every wait polls the screen
# (capture-pane) with a timeout, so the test is as fast as the shell.
# Prints "ok - " / "not ok - " per check and "# passed P failed F".
set -u
shell=$(realpath "$1")
passed=0
failed=0
if ! command -v tmux >/dev/null; then
	echo "not ok - tmux is not installed"
	echo "# passed 0 failed 1"
	exit 1
fi
dir=$(mktemp -d)
sock="gpmdb-test-$$"
tm() { tmux -L "$sock" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$dir"' EXIT

screen() { tm capture-pane -p -t t 2>/dev/null; }

# wait_for REGEX [SECONDS]: polls the screen until a line matches.
wait_for() {
	local re=$1 limit=${2:-5} i
	for ((i = 0; i < limit * 50; i++)); do
		screen | grep -qE -- "$re" && return 0
		sleep 0.02
	done
	return 1
}

# wait_last REGEX: polls until the last non-blank line matches.
wait_last() {
	local i
	for ((i = 0; i < 250; i++)); do
		screen | grep -v '^ *$' | tail -n 1 | grep -qE -- "$1" && return 0
		sleep 0.02
	done
	return 1
}

check() { # NAME REGEX: counts one check against the screen
	if wait_for "$2"; then
		echo "ok - $1"
		passed=$((passed + 1))
	else
		echo "not ok - $1 (no line matching '$2')"
		screen | sed -e 's/^/    | /'
		failed=$((failed + 1))
	fi
}

# keys KEY...: tmux key names; a ';' ending an argument would end the
# tmux command, so it is escaped.
keys() {
	local a args=()
	for a in "$@"; do
		[ "${a%;}" != "$a" ] && a="${a%;}\\;"
		args+=("$a")
	done
	tm send-keys -t t "${args[@]}"
}

tm new-session -d -s t -x 100 -y 30 \
	"env HOME=$dir GPMDB_HISTORY=$dir/history TERM=xterm $shell $dir/test.db"
tm set-option -t t remain-on-exit on >/dev/null

check "prompt" '^gpmdb> ?$'
keys 'create table fruit(name text, qty int);' Enter
keys "insert into fruit values('apple', 3);" Enter
keys 'select qty' Enter
check "continuation prompt" '^   \.\.\.> ?$'
keys 'from fruit;' Enter
check "multi-line statement runs" '^3$'

keys Up
check "history recall with Up" '^gpmdb> from fruit;$'
keys C-c
wait_last '^gpmdb> ?$'
check "Ctrl-C at the prompt gives a new prompt" '^gpmdb> from fruit;\^C$'
keys 'select 42;' Enter
check "Ctrl-C dropped the recalled line" '^42$'

keys 'select 1' Enter
wait_for '^   \.\.\.> ?$'
keys C-c
wait_last '^gpmdb> ?$' # the terminal drops what is typed before the prompt
keys 'select 8;' Enter
check "Ctrl-C drops an unfinished statement" '^8$'

keys 'sel' Tab
check "tab completes a keyword" '^gpmdb> select ?$'
keys '* from fru' Tab
check "tab completes a table name" '^gpmdb> select \* from fruit ?$'
keys ';' Enter
check "completed statement runs" '^apple\|3$'
keys 'select qt' Tab
check "tab completes a column name" '^gpmdb> select qty ?$'
keys C-u

# A long statement: a nested-loop join of 100k x 100k rows whose filter
# keeps nothing (little memory, minutes of work).  After a second the busy
# bar shows; Ctrl-C stops the statement, not the shell.
keys 'create table n(x int);' Enter
keys 'insert into n values (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);' Enter
keys 'create table big as select a.x*10000+b.x*1000+c.x*100+d.x*10+e.x as x from n a, n b, n c, n d, n e;' Enter
keys 'select count(*) * 7 from big;' Enter
wait_for '^700000$'
keys 'select count(*) from big a, big b where a.x + b.x < 0;' Enter
check "a statement running over a second shows the progress bar" 'running \[.*<=>.*\] [0-9.]+ s'
keys C-c
check "Ctrl-C stops a running statement" 'interrupted$'
keys 'select count(*) * 3 from big;' Enter
check "the shell runs a query after the interrupt" '^300000$'
# An interrupted write inside BEGIN rolls the whole transaction back.
keys 'begin;' Enter
keys "insert into fruit values('pear', 5);" Enter
keys "insert into fruit select 'slow', count(*) from big a, big b where a.x + b.x < 0;" Enter
wait_for 'running \[' 5
keys C-c
wait_last '^gpmdb> ?$'
keys 'commit;' Enter
check "the interrupt ended the transaction" 'cannot commit - no transaction is active'
keys 'select count(*) + 1000 from fruit;' Enter
check "the interrupted transaction wrote nothing" '^1001$'
keys C-d
if wait_for 'Pane is dead' 5 || [ "$(tm display -p -t t '#{pane_dead}')" = 1 ]; then
	echo "ok - Ctrl-D exits"
	passed=$((passed + 1))
else
	echo "not ok - Ctrl-D exits"
	screen | sed -e 's/^/    | /'
	failed=$((failed + 1))
fi
# libedit's file format writes a space as \040.
if grep -qE '^select(\\040| )42;$' "$dir/history" 2>/dev/null; then
	echo "ok - history saved"
	passed=$((passed + 1))
else
	echo "not ok - history saved"
	failed=$((failed + 1))
fi
echo "# passed $passed failed $failed"
[ "$failed" -eq 0 ]
