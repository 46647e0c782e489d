#!/usr/bin/env bash
# The README's second command, nested in a Debian 12 root with nothing but
# git: it installs the test tools, runs one file of each suite
# (TEST_SMOKE=1) and reports the sandbox suite's situation (no podman in
# there) clearly.
. "$(dirname "$0")/lib.sh"

t_readme_test_command_nested() {
	fresh_clone
	local cmd log=$E2E_TMP/nested.log
	cmd=$(readme_command 2)
	[ "$cmd" = "./make.sh test" ]
	# One file of each suite (tests/smoke): the whole suite runs once, on
	# the machine itself; here, that each suite's tools install and run.
	timeout 3000 podman run --rm --network none -v "$src:/src" -w /src workrex-fresh:latest \
		sh -c "TEST_SMOKE=1 FUZZ_SECONDS=3 SEEDS_MINUTES=0.5 $cmd" >"$log" 2>&1 || true
	grep -E '^(e2e|crash|net|sandbox):|PASSED|FAILED|make test' "$log" | sed 's/^/  nested: /' >&2
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

run_test "the README's test command nested in a container: one file of each suite reports" t_readme_test_command_nested
