#!/usr/bin/env bash
# A keeper killed at each step of its start (kill -9, and an exit with no
# cleanup): its socket bound, its program started, the link naming its
# agent made, its key written. The agent's record stands; the next command
# clears what the keeper left (its socket, its link), its program does not
# outlive it, and opening the agent again works. Every invariant holds.
# add itself says its agent did not start, and exits 1.
# points: keeper.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mapfile -t POINTS < <(fault_points keeper)
run=$XDG_RUNTIME_DIR/workrex

setup() {
	end_keepers
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	# Its program marks its environment, to be found if it outlived its keeper.
	printf 'agent: env SOAK_MARK=%s bash\npanes:\n  - command: <agent>\n' "$E2E_TMP" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	commits_before
}

# Nothing of a dead keeper left: every socket answers, every link has its socket.
nothing_left() {
	local f
	for f in "$run"/*/*.sock "$run"/*/*.agent; do
		[ -e "$f" ] || [ -L "$f" ] || continue
		case $f in
		*.agent) [ -S "${f%.agent}.sock" ] || { echo "  a link left: $f" >&2; return 1; } ;;
		*.sock) python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$f" 2>/dev/null ||
			{ echo "  a socket no keeper answers: $f" >&2; return 1; } ;;
		esac
	done
}

test_each_point() {
	[ "${#POINTS[@]}" -ge 4 ] || { echo "  only ${#POINTS[@]} keeper points: ${POINTS[*]}" >&2; return 1; }
	local point action
	for point in "${POINTS[@]}"; do
		for action in "${ACTIONS[@]}"; do
			setup
			# The command goes on; its keeper stops at the point, and add says so.
			(cd "$repo" && WORKREX_FAULT="$point:$action" "$WORKREX" add -b ag \
				>"$E2E_TMP/add.out" 2>&1) && { echo "  add at $point:$action: exit 0" >&2; return 1; }
			grep -q "its agent did not start" "$E2E_TMP/add.out" &&
				grep -q "ag: its pane did not start: the keeper died as it started" "$E2E_TMP/add.out" ||
				{ echo "  add at $point:$action said: $(cat "$E2E_TMP/add.out")" >&2; return 1; }
			until_ok 10 nkeepers 0
			wrx list >/dev/null
			invariants && nothing_left || { echo "  at $point:$action" >&2; return 1; }
			git -C "$repo" config workrex.worktree.ag.path >/dev/null
			# Its program went with it (a program the keeper had started: its pty closed).
			until_ok 10 eval '[ -z "$(ours bash "SOAK_MARK=$E2E_TMP")" ]' ||
				{ echo "  at $point:$action: its program outlived it" >&2; return 1; }
			wrx open ag >/dev/null
			until_ok 10 eval '[ -n "$(keepers)" ]'
			wrx send ag 'echo opened-again' >/dev/null
			until_ok 10 in_output -q '^opened-again' -- wrx capture ag ||
				{ echo "  at $point:$action: it did not open again" >&2; return 1; }
			nothing_left
		done
	done
}

# A dashboard's keepers slow to start (two seconds before they listen):
# `shutdown` right after `add` still ends the new agent's keeper, because
# add answers once its pane is up, and shutdown looks again for one
# started meanwhile.
test_shutdown_after_add() {
	setup
	printf 'agent: bash\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	tm new-session -d -x 120 -y 36 -c "$repo" \
		"env TERM=tmux-256color WORKREX_FAULT=keeper.spec:slow $WORKREX$after_exit"
	wait_for 'C-b \? help'
	until_ok 10 compgen -G "$run/*/*.sock" >/dev/null # the project's pane, up
	wrx add -b ag >/dev/null
	wrx shutdown -y >"$E2E_TMP/shutdown.out"
	grep -q 'ended 2 programs' "$E2E_TMP/shutdown.out" ||
		{ echo "  shutdown said: $(cat "$E2E_TMP/shutdown.out")" >&2; return 1; }
	until_ok 10 nkeepers 0 || { echo "  keepers left: $(keepers)" >&2; return 1; }
	tm kill-server
}

# Quit and end (C-b q, y) while the project's shell is still starting (its
# keeper slow to listen): the dashboard ends it as its start answers,
# before it exits; no keeper is left.
test_quit_while_starting() {
	setup
	tm new-session -d -x 120 -y 36 -c "$repo" \
		"env TERM=tmux-256color WORKREX_FAULT=keeper.spec:slow $WORKREX$after_exit"
	wait_for 'C-b \? help'
	[ -z "$(compgen -G "$run/*/*.sock")" ] || { echo "  the shell's keeper was up already" >&2; return 1; }
	prefix q
	wait_for 'quit and end 1 running program'
	keys y
	wait_for 'WORKREX-EXITED 0'
	# Its start answered (two seconds), then its keeper was told to end: it
	# goes, with its program, moments after the dashboard's exit, as every
	# keeper of a quit-and-end does. One never told to end stays (the bug).
	until_ok 5 nkeepers 0 || { echo "  keepers left: $(keepers)" >&2; return 1; }
	sleep 3
	[ -z "$(keepers)" ] || { echo "  keepers left: $(keepers)" >&2; return 1; }
	tm kill-server
}

# A keeper slower to start than the ten seconds it is given (fifteen, at
# the point where it listens, runs its program and names its agent, before
# it answers): the dashboard's pane says it did not start, and the keeper
# that would have answered later, unknown to anyone, ends with its
# program. So does one that add (no dashboard) gave up on. Before, each
# ran on, a keeper of no pane.
test_start_too_slow() {
	setup
	tm new-session -d -x 120 -y 36 -c "$repo" \
		"env TERM=tmux-256color WORKREX_FAULT=keeper.linked:stall $WORKREX$after_exit"
	wait_for 'C-b \? help'
	wait_for 'its pane did not start: the keeper did not start in time' 30
	until_ok 10 nkeepers 0 || { echo "  keepers left: $(keepers)" >&2; return 1; }
	# Past the stall: nothing came up late.
	sleep 6
	[ -z "$(keepers)" ] || { echo "  a keeper came up late: $(keepers)" >&2; return 1; }
	nothing_left
	tm kill-server
	local rc=0
	(cd "$repo" && WORKREX_FAULT=keeper.linked:stall "$WORKREX" add -b ag) >"$E2E_TMP/add.out" 2>&1 || rc=$?
	[ "$rc" -eq 1 ] && grep -q 'did not start in time' "$E2E_TMP/add.out" ||
		{ echo "  add said ($rc): $(cat "$E2E_TMP/add.out")" >&2; return 1; }
	until_ok 10 nkeepers 0 || { echo "  keepers left: $(keepers)" >&2; return 1; }
	sleep 6
	[ -z "$(keepers)" ] || { echo "  a keeper came up late: $(keepers)" >&2; return 1; }
	[ -z "$(ours bash "SOAK_MARK=$E2E_TMP")" ] || { echo "  its program outlived it" >&2; return 1; }
	wrx list >/dev/null
	nothing_left
}

# An agent whose keeper was killed is opened again by the next dashboard
# (resumed). Ended by shutdown within the minute after, it is not taken
# for a resume that failed on its own (which starts anew, once): nothing
# starts again, no keeper is left.
test_shutdown_after_resume() {
	setup
	# Each start of its program counted.
	printf 'agent: sh -c "echo up >>%s/starts; exec bash"\npanes:\n  - command: <agent>\n' "$E2E_TMP" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	rm -f "$E2E_TMP/starts"
	wrx add -b ag >/dev/null
	local k
	k=$(keepers)
	[ -n "$k" ] && kill -9 $k
	until_ok 10 nkeepers 0
	tm new-session -d -x 120 -y 36 -c "$repo" "env TERM=tmux-256color $WORKREX$after_exit"
	wait_for 'C-b \? help'
	until_ok 20 eval '[ "$(keepers | wc -l)" -eq 2 ]' || { echo "  ag was not resumed" >&2; return 1; }
	local before
	before=$(wc -l <"$E2E_TMP/starts")
	wrx shutdown -y >/dev/null
	sleep 3
	[ "$(wc -l <"$E2E_TMP/starts")" -eq "$before" ] || { echo "  started again: $(screen | tail -1)" >&2; return 1; }
	[ -z "$(keepers)" ] || { echo "  keepers left: $(keepers)" >&2; return 1; }
	tm kill-server
}

run_test "a shutdown right after an add, keepers slow to start: none left" test_shutdown_after_add
run_test "shutdown soon after a dashboard resumed an agent: nothing starts anew" test_shutdown_after_resume
run_test "quit and end while the project's shell starts: its keeper is ended too" test_quit_while_starting
run_test "a keeper slower to start than it is given: ended, not left running unknown" test_start_too_slow
run_test "a keeper killed at each step of its start: cleared by the next command, the agent opens again" test_each_point
rm -rf "$E2E_TMP"
