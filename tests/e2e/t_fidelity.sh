#!/usr/bin/env bash
# Panes against tmux, cell by cell (fidelity.py; its cases in fidelity_cases.py):
# the same programs in a workrex pane and in a plain tmux pane of the same size.
: "${WORKREX:?set WORKREX to the binary under test}"
for tool in vim less vttest; do
	command -v "$tool" >/dev/null || { echo "not ok - fidelity: $tool is not installed"; exit 1; }
done
exec python3 "$(dirname "$0")/fidelity.py"
