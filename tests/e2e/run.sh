#!/usr/bin/env bash
# Runs every t_*.sh of a suite against $WORKREX and prints one summary line:
#   run.sh              the e2e suite (this directory)
#   run.sh DIR NAME     another suite built on lib.sh (tests/sandbox/run.sh)
# Sanitizer reports of the binary under test fail the suite too.
set -u
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here} name=${2:-e2e}
: "${WORKREX:?set WORKREX to the binary under test}"
for tool in tmux python3; do
	command -v "$tool" >/dev/null || { echo "$name: $tool is required but not installed" >&2; exit 1; }
done
passed=0 failed=0
asan_dir=$(mktemp -d /tmp/wrx-asan.XXXXXX)
# The quarantine (freed memory ASan holds back to catch use after free) grows
# with allocation throughput, up to 256 MB by default; the flood test bounds
# workrex's own memory, so the quarantine is kept to 32 MB.
export ASAN_OPTIONS="log_path=$asan_dir/asan:detect_leaks=0:abort_on_error=1:quarantine_size_mb=32"
export UBSAN_OPTIONS="log_path=$asan_dir/ubsan:print_stacktrace=1:halt_on_error=1"
for t in "$dir"/t_*.sh; do
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
echo "$name: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
