#!/usr/bin/env bash
# Runs every tests/sandbox/t_*.sh against $WORKREX with real podman (runc),
# after building the tests' own image (image.sh), through the e2e runner
# (one summary line; sanitizer reports count). A missing tool fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${WORKREX:?set WORKREX to the binary under test}"
: "${WORKREX_GUEST:?set WORKREX_GUEST to the static guest client}"
for tool in podman runc debootstrap git; do
	command -v "$tool" >/dev/null || { echo "sandbox: $tool is required but not installed" >&2; exit 1; }
done
export CONTAINERS_CONF="$here/containers.conf"
"$here/image.sh" || { echo "sandbox: could not build the test image" >&2; exit 1; }
exec "$here/../e2e/run.sh" "$here" sandbox
