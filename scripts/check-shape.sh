#!/bin/sh
# make check-layers, its second half: the shape the code keeps where every
# feature lands (docs/ARCHITECTURE.md, "Where features land").
#
#   check-shape.sh [SRC]   (src/ of this tree)
#
#   - no function in src/cmd/, src/core/ or src/ui/ over 120 lines or over
#     40 in pmccabe's first column (modified cyclomatic complexity: a
#     switch counts once, however many cases);
#   - struct ui (src/ui/ui.h) has at most 40 members: what grows goes
#     into the part it belongs to (its terminal, its frame, its status
#     line) or a view of its own;
#   - a command knows its own row as ctx->self: cmd_find() outside cmd.c
#     only finds another command to run it (cmd_exec);
#   - a command's options are its row's, parsed by cmd.c: no file of
#     src/cmd/ tests a word against "-x" by hand (but the xclip and
#     wl-paste stand-ins, which speak those tools' own options);
#   - every workrex command line the dashboard and the core run comes
#     from core/children.c's table: no other file outside src/cmd/ and
#     src/keeper/ (which starts its own program) puts the program into an
#     argv, and each child named in the code is a row of that table.
set -eu
cd "$(dirname "$0")/.."
SRC=$(realpath "${1:-src}")
MAX_LINES=120 MAX_COMPLEXITY=40 MAX_UI=40

if ! command -v pmccabe >/dev/null; then
	echo "check-shape: pmccabe is missing (scripts/deps.sh --test installs it)" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# pmccabe: "MODIFIED TRADITIONAL STATEMENTS FIRST-LINE LINES FILE(LINE): NAME"
(cd "$SRC" && pmccabe cmd/*.c core/*.c ui/*.c) | awk -v l=$MAX_LINES -v c=$MAX_COMPLEXITY '
$1 > c || $5 > l {
	where = $6; sub(/:$/, "", where)
	printf "src/%s: %s: %d lines, complexity %d (at most %d and %d)\n", where, $7, $5, $1, l, c
}' >"$tmp/out"
nfun=$(cd "$SRC" && pmccabe cmd/*.c core/*.c ui/*.c | grep -c .)

# struct ui's members: each declarator at its top level ("int rows, cols;" is
# two; a nested "struct { ... } sig;" is one).
nui=$(awk '
/^struct ui \{/ { on = 1; depth = 0; next }
on && /^\};/ { on = 0; next }
on {
	s = $0
	gsub(/\/\*.*\*\//, "", s); sub(/\/\*.*/, "", s)
	if (s ~ /^[ \t]*\*/) next
	t = s
	after = depth + gsub(/\{/, "{", t) - gsub(/\}/, "}", t)
	if (after == 0 && s ~ /;/) { gsub(/\([^)]*\)/, "", s); n += 1 + gsub(/,/, ",", s) }
	depth = after
}
END { print n + 0 }' "$SRC/ui/ui.h")
[ "$nui" -le $MAX_UI ] ||
	echo "src/ui/ui.h: struct ui has $nui members (at most $MAX_UI)" >>"$tmp/out"

grep -n 'cmd_find(' "$SRC"/cmd/*.c | grep -v '^[^:]*/cmd\.c:' | grep -v 'cmd_exec(' |
	sed "s|^$SRC/|src/|; s|^\([^:]*:[0-9]*\):.*|\1: cmd_find() of a command's own row (it is ctx->self)|" \
		>>"$tmp/out" || true

grep -nE 'strn?cmp\(([a-z]*argv\[[^]]*\]|a), "--?[A-Za-z]' "$SRC"/cmd/*.c |
	grep -v "^$SRC/cmd/cmd\.c:" | grep -v xclip |
	sed "s|^$SRC/|src/|; s|^\([^:]*:[0-9]*\):.*|\1: an option tested by hand (the command's row has its options)|" \
		>>"$tmp/out" || true
grep -nE '(\{[^}]*|strlist_add\([^)]*|\] = )[a-z>.-]*self_exe' "$SRC"/*/*.c |
	grep -v "^$SRC/\(cmd\|keeper\)/\|^$SRC/core/children.c:" |
	sed "s|^$SRC/|src/|; s|^\([^:]*:[0-9]*\):.*|\1: a workrex argv built here (core/children.c's table has them)|" \
		>>"$tmp/out" || true
nchild=0
for name in $(grep -ohE 'child_argv(_piped)?\([^,]*, "[a-z-]+"' "$SRC"/*/*.c | sed 's/.*"\(.*\)"/\1/' | sort -u); do
	nchild=$((nchild + 1))
	grep -q "^	{\"$name\", {" "$SRC/core/children.c" ||
		echo "src/core/children.c: no child named '$name' (the code asks for one)" >>"$tmp/out"
done

if [ -s "$tmp/out" ]; then
	cat "$tmp/out" >&2
	echo "check-shape: FAILED (scripts/check-shape.sh says why each bound is there)" >&2
	exit 1
fi
echo "check-shape: $nfun functions within $MAX_LINES lines and complexity $MAX_COMPLEXITY;" \
	"struct ui has $nui members; no command looks itself up or tests an option by hand;" \
	"$nchild workrex children, all from one table"
