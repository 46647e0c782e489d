#!/bin/sh
# check-layers against planted violations: a copy of src/ and of its
# objects, one violation planted at a time, each of which must fail the
# check with its own line; the clean copy must pass first, so that no case
# passes by the check failing on everything.
set -eu
cd "$(dirname "$0")/../.."
OBJ=${1:-build/src}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r src "$tmp/src"
cp -r "$OBJ" "$tmp/obj"
passed=0 failed=0

# The whole check; the include cases skip the objects (no such folder).
check() { scripts/check-layers.sh "$tmp/src" "${1:-$tmp/obj}" >"$tmp/out" 2>&1; }

# verdict NAME COMMAND...: COMMAND's status as a test line (the check's output when it failed).
verdict() {
	name=$1
	shift
	if "$@"; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		cat "$tmp/out"
		failed=$((failed + 1))
	fi
}

verdict "the clean copy passes" check

# refused EXPECT [OBJ]: the check fails, saying EXPECT.
refused() { ! check "${2:-}" && grep -qF "$1" "$tmp/out"; }

# plant NAME FILE LINE EXPECT: LINE appended to src/FILE; the check must fail saying EXPECT.
plant() {
	cp "$tmp/src/$2" "$tmp/saved"
	printf '%s\n' "$3" >>"$tmp/src/$2"
	verdict "refused: $1" refused "$4" "$tmp/none"
	cp "$tmp/saved" "$tmp/src/$2"
}

# The cases, one a line: name, file, the line planted, what the check must say (tabs between).
while IFS='	' read -r name file line expect; do
	plant "$name" "$file" "$line" "$expect"
done <<'CASES'
an upward include through a path	core/wrx.c	#include "../config/../ui/ui.h"	src/core/wrx.c: includes ../config/../ui/ui.h: src/ui/ is not below src/core/
an include out of src/	util/util.c	#include "../../tests/unit/shell.h"	outside src/
an include spaced out	git/repo.c	#  include   "../core/wrx.h"	src/core/ is not below src/git/
curses by another path	core/wrx.c	#include <ncursesw/curses.h>	includes <ncursesw/curses.h>: only src/ui/
terminfo outside ui/	term/screen.c	#include <term.h>	includes <term.h>: only src/ui/
vterm outside term/	core/session.c	#include <vterm.h>	includes <vterm.h>: only src/term/
git2 outside git/	core/agents.c	#include <git2.h>	includes <git2.h>: only src/git/
yaml outside config/	cmd/cmd.c	#include <yaml.h>	includes <yaml.h>: only src/config/
libuv in the guest	guest/main.c	#include <uv.h>	the guest links libc and json-c only
an include through a macro	util/log.c	#include HEADER	includes a macro
CASES

# A hand-written prototype calling up a layer: nothing is included, the
# object references the dashboard's layout from util/.
cat >"$tmp/planted.c" <<'C'
int layout_name(int);
int util_planted(void) { return layout_name(0); }
C
cc -c -o "$tmp/obj/util/planted.o" "$tmp/planted.c"
verdict "refused: a prototype calling up a layer" \
	refused 'src/util/planted.c: calls layout_name, defined in src/ui/'
rm -f "$tmp/obj/util/planted.o"

# The shape (scripts/check-shape.sh): the clean copy passes, then a
# function grown past each bound, struct ui past 40 members and a command
# looking itself up are each refused with their own line.
shape() { scripts/check-shape.sh "$tmp/src" >"$tmp/out" 2>&1; }
shape_refused() { ! shape && grep -qF "$1" "$tmp/out"; }
verdict "shape: the clean copy passes" shape

# plant_shape NAME FILE EXPECT: $tmp/plant appended to src/FILE; the shape check must fail saying EXPECT.
plant_shape() {
	cp "$tmp/src/$2" "$tmp/saved"
	cat "$tmp/plant" >>"$tmp/src/$2"
	verdict "refused: $1" shape_refused "$3"
	cp "$tmp/saved" "$tmp/src/$2"
}
{
	echo "int planted_long(int x)"
	echo "{"
	i=0
	while [ $i -lt 121 ]; do echo "	x += $i;"; i=$((i + 1)); done
	echo "	return x;"
	echo "}"
} >"$tmp/plant"
plant_shape "a function over 120 lines" core/agents.c "planted_long: 125 lines"
{
	echo "int planted_knot(int x)"
	echo "{"
	i=0
	while [ $i -lt 41 ]; do echo "	if (x == $i) x++;"; i=$((i + 1)); done
	echo "	return x;"
	echo "}"
} >"$tmp/plant"
plant_shape "a function over complexity 40" ui/render.c "planted_knot: 45 lines, complexity 42"
cp "$tmp/src/ui/ui.h" "$tmp/saved"
# Members enough to pass 40 whatever it has now (one line, several declarators).
sed -i 's/^\(\tint sidebar_top;\)/\1\n\tint planted_0, planted_1, planted_2, planted_3, planted_4, planted_5, planted_6;/' "$tmp/src/ui/ui.h"
sed -i 's/^\(\tint sidebar_top;\)/\1\n\tbool planted_7, planted_8, planted_9;/' "$tmp/src/ui/ui.h"
verdict "refused: struct ui past 40 members" shape_refused "members (at most 40)"
cp "$tmp/saved" "$tmp/src/ui/ui.h"
printf 'int planted_self(struct cmd_ctx *ctx)\n{\n\treturn cmd_usage(cmd_find("list"));\n}\n' >"$tmp/plant"
plant_shape "a command looking itself up" cmd/cmd_agent.c "cmd_find() of a command's own row"

printf 'static void planted_child(struct ui *ui)\n{\n\tchar *const argv[] = {ui->w->self_exe, "list", NULL};\n\t(void)argv;\n}\n' >"$tmp/plant"
plant_shape "a workrex argv built outside the children's table" ui/prompts.c "a workrex argv built here"
printf 'static void planted_name(struct wrx *w)\n{\n\tchild_argv_free(child_argv(w, "no-such-child", NULL));\n}\n' >"$tmp/plant"
plant_shape "a child the table lacks" core/queue.c "no child named 'no-such-child'"

printf 'static int planted_opt(int argc, char **argv)\n{\n\treturn argc > 1 \&\& !strcmp(argv[1], "--json");\n}\n' >"$tmp/plant"
plant_shape "an option tested by hand" cmd/cmd_kinds.c "an option tested by hand"

# Three core files calling round: a cycle of three, refused with its files.
printf 'int planted_b(void);\nint planted_a(void) { return planted_b(); }\n' >"$tmp/pa.c"
printf 'int planted_c(void);\nint planted_b(void) { return planted_c(); }\n' >"$tmp/pb.c"
printf 'int planted_a(void);\nint planted_c(void) { return planted_a(); }\n' >"$tmp/pc.c"
for x in a b c; do cc -c -o "$tmp/obj/core/planted_$x.o" "$tmp/p$x.c"; done
verdict "refused: a call cycle of three core files" \
	refused 'a call cycle of 3 files in src/core/ (at most 2): src/core/planted_'
rm -f "$tmp"/obj/core/planted_?.o

echo "layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
