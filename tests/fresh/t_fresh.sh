#!/usr/bin/env bash
# The README's two commands, in a Debian 12 root with nothing but git (no
# network: its apt cache holds the packages, image.sh): the first opens the
# dashboard; the second, nested in that container, runs the suites and
# reports the sandbox suite's situation (no podman in there) clearly.
. "$(dirname "$0")/../e2e/lib.sh"
trap stop EXIT

root=$(cd "$(dirname "$0")/../.." && pwd)

# readme_command N: the README's N-th command, as a newcomer pastes it.
readme_command() {
	awk '/^```sh$/ { inblock = 1; next } /^```$/ { exit } inblock { print }' "$src/README.md" |
		sed -n "${1}p"
}

# A clone of the project, as a user gets it (committed files only).
fresh_clone() {
	src=$E2E_TMP/src
	rm -rf "$src"
	git clone -q "$root" "$src"
}

fresh() { podman run --rm --network none -v "$src:/src" -w /src "$@"; }

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

t_readme_test_command_nested() {
	fresh_clone
	local cmd log=$E2E_TMP/nested.log
	cmd=$(readme_command 2)
	[ "$cmd" = "./make.sh test" ]
	timeout 3000 podman run --rm --network none -v "$src:/src" -w /src workrex-fresh:latest \
		sh -c "$cmd" >"$log" 2>&1 || true
	grep -E '^(e2e|sandbox):|PASSED|FAILED|make test' "$log" | sed 's/^/  nested: /' >&2
	# The sandbox suite says why it cannot run, and what would make it.
	grep -q 'podman cannot store images here: its storage (overlay) would sit' "$log" ||
		{ tail -30 "$log" >&2; return 1; }
	grep -q 'printf .\[storage\]' "$log"
	# The others ran and reported.
	grep -qE '^\[  PASSED  \] [0-9]+ test' "$log"
	grep -qE '^e2e: [0-9]+ passed' "$log"
	grep -qE '^Done [0-9]+ runs' "$log"
	grep -qE '^make test: FAILED:' "$log"
}

run_test "the README's first command on Debian 12 with only git opens the dashboard" t_readme_first_command
run_test "the README's test command nested in a container: every suite reports" t_readme_test_command_nested
