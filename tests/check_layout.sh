#!/usr/bin/env bash
# tests/check_layout.sh - the source layout's rules (docs/engine.md
# "Layout"), run by `make test`:
#
#   1. no source file (.c .h .cu .cuh .y) is longer than MAX_LINES lines,
#      except the known exceptions below;
#   2. the planner (engine/plan/, engine/index/plan_index.c) includes no
#      executor header, directly or through the headers it includes: the
#      executors depend on the planner, never the other way.
#
# Prints "ok - " or "not ok - " per rule and "# passed P failed F" for
# tests/run.sh.
set -u
cd "$(dirname "$0")/.."

MAX_LINES=2000
# Known exceptions (path: why).  Keep this list short and dated.
EXCEPTIONS=""

# The planner's files and the headers they must not reach.
PLANNER="engine/plan/*.c engine/plan/*.h engine/index/plan_index.c"
FORBIDDEN='^(engine/engine\.h|engine/exec/.*|gpu/exec/.*|engine/write/write\.h|engine/write/batch_gpu\.h)$'

passed=0
failed=0
ok() {
	echo "ok - $1"
	passed=$((passed + 1))
}
not_ok() {
	echo "not ok - $1"
	failed=$((failed + 1))
}

# The files of the tree: git's (tracked, or untracked and not ignored)
# when this is a checkout, else every file.
files() {
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files --cached --others --exclude-standard
	else
		find . -type f ! -path './.git/*' | sed 's|^\./||'
	fi
}

# 1. file sizes
long=""
while IFS= read -r f; do
	[ -f "$f" ] || continue
	case " $EXCEPTIONS " in *" $f "*) continue ;; esac
	n=$(wc -l <"$f")
	if [ "$n" -gt "$MAX_LINES" ]; then
		long="$long $f($n)"
	fi
done < <(files | grep -E '\.(c|h|cu|cuh|y)$' | sort -u)
if [ -z "$long" ]; then
	ok "no source file over $MAX_LINES lines (exceptions: $EXCEPTIONS)"
else
	not_ok "source files over $MAX_LINES lines:$long"
fi

# 2. the planner's includes, followed through the headers (paths relative
# to the including file, as the sources write them; <...> and headers
# not in the tree are not followed)
normalize() { # a/b/../c -> a/c
	local IFS=/ out=() p
	for p in $1; do
		case "$p" in
		. | "") ;;
		..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
		*) out+=("$p") ;;
		esac
	done
	echo "${out[*]}"
}
bad=""
for f in $PLANNER; do
	[ -f "$f" ] || continue
	seen=" "
	todo="$f"
	while [ -n "$todo" ]; do
		set -- $todo
		cur=$1
		shift
		todo="$*"
		dir=$(dirname "$cur")
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$cur"); do
			h=$(normalize "$dir/$inc")
			[ -f "$h" ] || h=$(normalize "include/$inc")
			[ -f "$h" ] || continue
			case "$seen" in *" $h "*) continue ;; esac
			seen="$seen$h "
			if [[ "$h" =~ $FORBIDDEN ]]; then
				bad="$bad $f->$h"
			fi
			todo="$todo $h"
		done
	done
done
if [ -z "$bad" ]; then
	ok "the planner includes no executor header"
else
	not_ok "planner files reach executor headers:$bad"
fi

echo "# passed $passed failed $failed"
[ "$failed" -eq 0 ]
