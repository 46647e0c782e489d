#!/bin/sh
# make man: the sections written from the tables, put in place of the ones
# between their BEGIN and END lines: workrex.yaml(5)'s KEY REFERENCE, from
# `workrex config reference --man` (src/config/table.c), workrex(1)'s
# AGENT KINDS, from `workrex agents --man`, and workrex.yaml(5)'s KIND
# STATUS, from `workrex agents --man=status` (src/config/kinds.c).
# tests/unit/test_config.c fails while a page and its table differ.
set -eu
bin=$1
dir=${2:-man}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# splice PAGE NAME: the section NAME of PAGE from $tmp/ref.
splice() {
	grep -q "^\.\\\\\" BEGIN $2" "$1" || {
		echo "man-keys: $1 has no BEGIN $2 line to replace" >&2
		exit 1
	}
	awk -v ref="$tmp/ref" -v name="$2" '
		index($0, ".\\\" BEGIN " name) == 1 { while ((getline l < ref) > 0) print l; skip = 1; next }
		index($0, ".\\\" END " name) == 1 { skip = 0; next }
		!skip
	' "$1" >"$tmp/out"
	cat "$tmp/out" >"$1"
}

"$bin" config reference --man >"$tmp/ref"
splice "$dir/workrex.yaml.5" "KEY REFERENCE"
"$bin" agents --man >"$tmp/ref"
splice "$dir/workrex.1" "AGENT KINDS"
"$bin" agents --man=status >"$tmp/ref"
splice "$dir/workrex.yaml.5" "KIND STATUS"
