#!/usr/bin/env bash
# Runs every tests/sandbox/t_*.sh against $WORKREX with real podman (runc),
# after building the tests' own image (image.sh). A missing tool fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${WORKREX:?set WORKREX to the binary under test}"
: "${WORKREX_GUEST:?set WORKREX_GUEST to the static guest client}"
for tool in podman runc debootstrap tmux python3 git; do
	command -v "$tool" >/dev/null || { echo "sandbox: $tool is required but not installed" >&2; exit 1; }
done
export CONTAINERS_CONF="$here/containers.conf"
"$here/image.sh" || { echo "sandbox: could not build the test image" >&2; exit 1; }
passed=0 failed=0
for t in "$here"/t_*.sh; do
	out=$(bash "$t" 2>&1)
	printf '%s\n' "$out"
	passed=$((passed + $(printf '%s\n' "$out" | grep -c '^ok - ')))
	failed=$((failed + $(printf '%s\n' "$out" | grep -c '^not ok - ')))
done
echo "sandbox: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
