#!/usr/bin/env bash
# The README on a machine with nothing but git: tests/fresh/t_*.sh, in a
# Debian 12 root of its own (image.sh) under real podman (runc), through
# the e2e runner (one summary line). A missing tool fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
for tool in podman runc debootstrap tmux git; do
	command -v "$tool" >/dev/null || { echo "fresh: $tool is required but not installed" >&2; exit 1; }
done
export CONTAINERS_CONF="$here/../sandbox/containers.conf"
"$here/image.sh" || { echo "fresh: could not build the Debian root" >&2; exit 1; }
exec "$here/../e2e/run.sh" "$here" fresh
