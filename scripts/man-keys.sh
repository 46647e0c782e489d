#!/bin/sh
# make man: put the KEY REFERENCE section that `workrex config reference
# --man` writes from the key table (src/config/table.c) into
# man/workrex.yaml.5, in place of the one between its BEGIN and END lines.
# tests/unit/test_config.c fails while the two differ.
set -eu
bin=$1
page=${2:-man/workrex.yaml.5}
ref=$(mktemp)
out=$(mktemp)
trap 'rm -f "$ref" "$out"' EXIT
"$bin" config reference --man >"$ref"
grep -q '^\.\\" BEGIN KEY REFERENCE' "$page" || {
	echo "man-keys: $page has no BEGIN KEY REFERENCE line to replace" >&2
	exit 1
}
awk -v ref="$ref" '
	/^\.\\" BEGIN KEY REFERENCE/ { while ((getline l < ref) > 0) print l; skip = 1; next }
	/^\.\\" END KEY REFERENCE/ { skip = 0; next }
	!skip
' "$page" >"$out"
cat "$out" >"$page"
