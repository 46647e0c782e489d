#!/usr/bin/env bash
# Runs every tests/e2e/t_*.sh against $WORKREX and prints one summary line.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${WORKREX:?set WORKREX to the binary under test}"
for tool in tmux python3; do
	command -v "$tool" >/dev/null || { echo "e2e: $tool is required but not installed" >&2; exit 1; }
done
passed=0 failed=0
asan_dir=$(mktemp -d /tmp/wrx-asan.XXXXXX)
export ASAN_OPTIONS="log_path=$asan_dir/asan:detect_leaks=0:abort_on_error=1"
export UBSAN_OPTIONS="log_path=$asan_dir/ubsan:print_stacktrace=1:halt_on_error=1"
for t in "$here"/t_*.sh; do
	out=$(bash "$t" 2>&1)
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
echo "e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
