#!/usr/bin/env bash
# The README's first command in a Debian 12 root with nothing but git: it
# installs what is missing, builds and opens the dashboard, which works.
. "$(dirname "$0")/lib.sh"

t_readme_first_command() {
	fresh_clone
	local cmd
	cmd=$(readme_command 1)
	[ "$cmd" = "./make.sh run" ]
	tm new-session -d -x 120 -y 36 \
		"podman run --rm -it --network none -v '$src:/src' -w /src workrex-fresh:latest sh -c '$cmd; echo FRESH-EXITED \$?; sleep 60'"
	tm set -g status off
	# Everything the terminal got, kept: the dashboard's screen covers it.
	tm pipe-pane -o "cat >>'$E2E_TMP/fresh.out'"
	wait_for '\? help' 900 || { screen >&2; return 1; }
	# The packages came with a line each, then the build, then the dashboard.
	grep -aqE 'installing [0-9]+ Debian packages' "$E2E_TMP/fresh.out"
	grep -aq '  Setting up make' "$E2E_TMP/fresh.out"
	grep -aq 'workrex: packages installed' "$E2E_TMP/fresh.out"
	wait_for '^ 1 src' 60
	type_line 'echo fresh-$((6*7))'
	wait_for 'fresh-42'
	prefix q
	wait_for 'quit and end 1 running program\? \(y/n\)'
	keys y
	wait_for 'FRESH-EXITED 0' 30
}

run_test "the README's first command on Debian 12 with only git opens the dashboard" t_readme_first_command
