#!/usr/bin/env bash
# Runs every tests/net/t_*.py against $WORKREX (as root: network and mount
# namespaces of their own) and prints one summary line. Sanitizer reports
# of the binary under test fail the suite too.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${WORKREX:?set WORKREX to the binary under test}"
for tool in python3 ip unshare; do
	command -v "$tool" >/dev/null || { echo "net: $tool is required but not installed" >&2; exit 1; }
done
asan_dir=$(mktemp -d /tmp/wrx-asan.XXXXXX)
export ASAN_OPTIONS="log_path=$asan_dir/asan:detect_leaks=0:abort_on_error=1"
export UBSAN_OPTIONS="log_path=$asan_dir/ubsan:print_stacktrace=1:halt_on_error=1"
passed=0 failed=0
for t in "$here"/t_*.py; do
	out=$(timeout 600 python3 "$t" 2>&1)
	printf '%s\n' "$out"
	passed=$((passed + $(printf '%s\n' "$out" | grep -c '^ok - ')))
	failed=$((failed + $(printf '%s\n' "$out" | grep -c '^not ok - ')))
done
if compgen -G "$asan_dir/*" >/dev/null; then
	echo "not ok - sanitizer reports:"
	cat "$asan_dir"/*
	failed=$((failed + 1))
fi
rm -rf "$asan_dir"
echo "net: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
