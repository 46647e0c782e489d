#!/bin/sh
# make check-layers: every #include in src/ goes down the layers, never up
# or sideways between peers, and only the dashboard draws (curses). The
# layers are docs/ARCHITECTURE.md's; this table is theirs, lowest first.
set -eu
cd "$(dirname "$0")/.."

rank() {
	case $1 in
	util) echo 0 ;;
	term | rpc | net) echo 1 ;;
	config | keeper) echo 2 ;;
	git) echo 3 ;;
	backends | remote) echo 4 ;;
	core) echo 5 ;;
	ui | cmd) echo 6 ;;
	guest | .) echo 7 ;; # the two programs: src/main.c and src/guest/main.c
	*) echo "check-layers: src/$1/ is in no layer: add it to docs/ARCHITECTURE.md and here" >&2
	   exit 2 ;;
	esac
}

bad=0
for f in $(find src -name '*.[ch]' | sort); do
	dir=$(dirname "${f#src/}")
	from=$(rank "$dir")
	# "../x/y.h" from src/<dir>/, or "x/y.h" from src/main.c.
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		../*/*) to=${inc#../}; to=${to%%/*} ;;
		*/*) to=${inc%%/*} ;;
		*) continue ;; # its own directory
		esac
		[ "$to" = "$dir" ] && continue
		r=$(rank "$to")
		if [ "$r" -ge "$from" ]; then
			echo "$f: includes $inc: src/$to/ is not below src/$dir/" >&2
			bad=1
		fi
	done
	if [ "$dir" != ui ] && grep -Eq '^#include <n?curses(w)?\.h>' "$f"; then
		echo "$f: includes curses: only src/ui/ draws" >&2
		bad=1
	fi
done
if [ $bad -ne 0 ]; then
	echo "check-layers: FAILED (docs/ARCHITECTURE.md says who may include whom)" >&2
	exit 1
fi
echo "check-layers: every include goes down a layer ($(find src -name '*.[ch]' | wc -l) files)"
