#!/bin/sh
# make check-layers: src/ goes down the layers, never up or sideways between
# peers, and each library is used only where ARCHITECTURE.md puts it. The
# layers are docs/ARCHITECTURE.md's; this table is theirs, lowest first.
#
#   check-layers.sh [SRC [OBJ]]   (src/ and build/src/ of this tree)
#
# Three checks, none fooled by how a line is spelled:
#   - every #include "..." is resolved as the compiler resolves it (a
#     "../config/../ui/ui.h" is ui/), and must land in src/, in its own
#     folder or one below;
#   - every #include <...> of a library is in that library's folder:
#     curses and terminfo ui/, vterm term/, git2 git/, yaml config/, and
#     libuv anywhere but the guest; an #include of a macro is refused;
#   - at link level, with OBJ: no object references a symbol defined in a
#     folder that is not below its own (a hand-written prototype of an
#     upper layer's function includes nothing, but links to it); and in
#     src/core/, where files call each other, no call cycle longer than
#     CORE_CYCLE files.
set -eu
cd "$(dirname "$0")/.."
SRC=$(realpath "${1:-src}")
OBJ=${2:-build/src}

# The longest call cycle src/core/'s files may make (runner.c and remote.c:
# a remote pane's host calls the link, which connects it back).
CORE_CYCLE=2
# The layers, lowest first: "folder:rank", the two programs (src/main.c and
# src/guest/main.c) on top.
RANKS="util:0 term:1 rpc:1 net:1 config:2 keeper:2 git:3 backends:4 remote:5 core:6 web:7 ui:8 cmd:8 guest:9 .:9"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0

for d in $(cd "$SRC" && find . -mindepth 1 -maxdepth 1 -type d | sed 's|^\./||'); do
	case " $RANKS " in
	*" $d:"*) ;;
	*) echo "check-layers: src/$d/ is in no layer: add it to docs/ARCHITECTURE.md and here" >&2
	   exit 2 ;;
	esac
done
files=$(cd "$SRC" && find . -name '*.[ch]' | sed 's|^\./||' | sort)
nfiles=$(echo "$files" | grep -c .)
# Every include line, however spaced ("#  include", "# include <x>"), its
# path resolved as the compiler would: components, "." and ".." walked.
(cd "$SRC" && awk -v ranks="$RANKS" '
function norm(p,    n, i, k, c, out, st) {
	n = split(p, c, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (c[i] == "" || c[i] == ".") continue
		if (c[i] == "..") { if (k == 0) return ""; k--; continue }
		st[++k] = c[i]
	}
	out = ""
	for (i = 1; i <= k; i++) out = out (i > 1 ? "/" : "") st[i]
	return out
}
function lib(h) {
	if (h ~ /^(n?curses(w)?\.h|ncursesw?\/.*|term\.h|termcap\.h|unctrl\.h|panel\.h|menu\.h|form\.h)$/) return "ui"
	if (h ~ /^vterm(_keycodes)?\.h$/) return "term"
	if (h ~ /^git2(\.h|\/.*)$/) return "git"
	if (h == "yaml.h") return "config"
	if (h ~ /^uv(\.h|\/.*)$/) return "-"
	return ""
}
BEGIN { n = split(ranks, t, " "); for (i = 1; i <= n; i++) { split(t[i], kv, ":"); rank[kv[1]] = kv[2] } }
FNR == 1 { dir = FILENAME; sub(/\/[^\/]*$/, "", dir); if (dir == FILENAME) dir = "." }
/^[ \t]*#[ \t]*include/ {
	inc = $0; sub(/^[ \t]*#[ \t]*include[ \t]*/, "", inc); sub(/\r$/, "", inc)
	if (inc ~ /^"/) {
		sub(/^"/, "", inc); sub(/".*/, "", inc)
		to = norm((dir == "." ? "" : dir "/") inc)
		if (to == "") { printf "src/%s: includes %s: outside src/\n", FILENAME, inc; next }
		if (to ~ /\//) sub(/\/.*/, "", to); else to = "."
		if (to == dir) next
		if (!(to in rank)) printf "src/%s: includes %s: src/%s/ is in no layer\n", FILENAME, inc, to
		else if (rank[to] >= rank[dir]) printf "src/%s: includes %s: src/%s/ is not below src/%s/\n", FILENAME, inc, to, dir
	} else if (inc ~ /^</) {
		sub(/^</, "", inc); sub(/>.*/, "", inc)
		l = lib(inc)
		if (l == "-" && dir == "guest") printf "src/%s: includes <%s>: the guest links libc and json-c only\n", FILENAME, inc
		else if (l != "" && l != "-" && l != dir) printf "src/%s: includes <%s>: only src/%s/ uses that library\n", FILENAME, inc, l
	} else {
		printf "src/%s: includes a macro (%s): name the header\n", FILENAME, inc
	}
}' $files) >"$tmp/inc"
if [ -s "$tmp/inc" ]; then
	cat "$tmp/inc" >&2
	bad=1
fi

# Link level: which folder defines each global symbol, then who references it.
nobj=0
if [ -d "$OBJ" ]; then
	objs=$(cd "$OBJ" && find . -name '*.o' | sort)
	nobj=$(echo "$objs" | grep -c . || true)
	# (one nm for all of them: "OBJECT:ADDRESS TYPE NAME", "OBJECT: U NAME")
	(cd "$OBJ" && nm -A -g --defined-only $objs && nm -A -u $objs) | awk '
	{
		o = $1; sub(/:.*/, "", o); sub(/^\.\//, "", o)
		d = o; if (sub(/\/[^\/]*$/, "", d) == 0) d = "."
	}
	$2 == "U" { print "U", $3, d, o; next }
	NF == 3 { print "D", $3, d }' >"$tmp/syms"
	awk -v ranks="$RANKS" 'BEGIN {
		n = split(ranks, t, " ")
		for (i = 1; i <= n; i++) { split(t[i], kv, ":"); rank[kv[1]] = kv[2] }
	}
	NR == FNR { if ($1 == "D") def[$2] = $3; next }
	$1 == "U" && ($2 in def) && def[$2] != $3 && rank[def[$2]] >= rank[$3] {
		printf "src/%s: calls %s, defined in src/%s/, which is not below src/%s/\n", $4, $2, def[$2], $3
	}' "$tmp/syms" "$tmp/syms" | sed 's/\.o: calls/.c: calls/' >"$tmp/up"
	if [ -s "$tmp/up" ]; then
		cat "$tmp/up" >&2
		bad=1
	fi
	# Inside src/core/, between its files: the largest set of files that
	# all call each other (a call cycle) has at most CORE_CYCLE files. The
	# core goes down too: base.c and the session at the floor, wrx.c on
	# top; what a lower file must reach above it is a hook.
	core=$(cd "$OBJ" && find core -name '*.o' | sort)
	cycle=$( (cd "$OBJ" && nm -A -g --defined-only $core && nm -A -u $core) | awk '
	{ o = $1; sub(/:.*/, "", o); sub(/\.o$/, ".c", o) }
	$2 == "U" { print "U", $3, o; next }
	NF == 3 { print "D", $3, o }' | awk '
	{ line[NR] = $0 }
	$1 == "D" { def[$2] = $3 }
	END {
		for (r = 1; r <= NR; r++) {
			split(line[r], x, " ")
			if (x[1] == "U" && (x[2] in def) && def[x[2]] != x[3]) {
				e[x[3], def[x[2]]] = 1; f[x[3]] = 1; f[def[x[2]]] = 1
			}
		}
		n = 0
		for (k in f) v[++n] = k
		for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if (e[v[i], v[k]])
			for (j = 1; j <= n; j++) if (e[v[k], v[j]]) e[v[i], v[j]] = 1
		best = 1; list = "none"
		for (i = 1; i <= n; i++) {
			c = 1; l = "src/" v[i]
			for (j = 1; j <= n; j++)
				if (j != i && e[v[i], v[j]] && e[v[j], v[i]]) { c++; l = l " src/" v[j] }
			if (c > best) { best = c; list = l }
		}
		print best, list
	}')
	ncycle=${cycle%% *}
	if [ "$ncycle" -gt "$CORE_CYCLE" ]; then
		echo "check-layers: a call cycle of $ncycle files in src/core/ (at most $CORE_CYCLE): ${cycle#* }" >&2
		bad=1
	fi
fi

if [ $bad -ne 0 ]; then
	echo "check-layers: FAILED (docs/ARCHITECTURE.md says who may include and call whom)" >&2
	exit 1
fi
echo "check-layers: every include and call goes down a layer ($nfiles files, $nobj objects);" \
	"the largest call cycle in src/core/: ${cycle:-1 none}"
