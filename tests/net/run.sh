#!/usr/bin/env bash
# Runs tests/net/t_*.sh against $WORKREX as root (network and mount
# namespaces of their own) through the e2e runner: one summary line, and
# sanitizer reports of the binary under test count. A missing tool fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${WORKREX:?set WORKREX to the binary under test}"
for tool in python3 ip unshare; do
	command -v "$tool" >/dev/null || { echo "net: $tool is required but not installed" >&2; exit 1; }
done
exec "$here/../e2e/run.sh" "$here" net
