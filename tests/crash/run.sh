#!/usr/bin/env bash
# Runs every tests/crash/t_*.sh against $WORKREX, a build with fault points
# (make faults), through the e2e runner: one summary line.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${WORKREX:?set WORKREX to a build with fault points (make faults)}"
if ! grep -qa 'WORKREX_FAULT_SKIP' "$WORKREX"; then
	echo "crash: $WORKREX has no fault points: build it with make faults" >&2
	exit 1
fi
exec "$here/../e2e/run.sh" "$here" crash
