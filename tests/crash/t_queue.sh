#!/usr/bin/env bash
# The merge queue's landing (merge --queue with no dashboard: it lands
# there and then), killed at each of its points and at each point of the
# rebase and the merge it runs (kill -9, and an exit with no cleanup):
# main is before the landing or after it, never between; the queue holds
# the agent still, and resuming it lands the agent once, linearly, checked.
# points: queue.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mapfile -t POINTS < <(fault_points queue)
w=$E2E_TMP/work/proj__worktrees/ag

# ag has one commit (w.txt); main has moved on since (m.txt); a check that passes.
setup() {
	end_keepers
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	printf 'check: "test -f w.txt && echo checked >> %s/checks.log"\n' "$E2E_TMP" >"$repo/.workrex.yaml"
	wrx trust >/dev/null
	rm -f "$E2E_TMP/checks.log"
	wrx add -b ag >/dev/null
	# The landing rebases ag's commit: kept as rebased, or on main, is checked by hand.
	commits_before
	echo work >"$w/w.txt"
	git -C "$w" add w.txt
	git -C "$w" commit -qm work
	echo m >"$repo/m.txt"
	git -C "$repo" add m.txt
	git -C "$repo" commit -qm main
	MAIN=$(git -C "$repo" rev-parse main)
}

# main whole: where it was, or one commit on: ag's work on top of it, linearly.
main_whole() {
	local now
	now=$(git -C "$repo" rev-parse main)
	[ "$now" = "$MAIN" ] && return 0
	[ "$(git -C "$repo" rev-parse main^)" = "$MAIN" ] &&
		[ "$(git -C "$repo" show main:w.txt)" = work ] &&
		[ -z "$(git -C "$repo" log --merges --oneline main)" ] ||
		{ echo "  main is neither before nor after the landing" >&2; return 1; }
}

# Landed once: ag's work on main, linear, the agent gone, the queue says so.
landed() {
	[ "$(git -C "$repo" show main:w.txt)" = work ] &&
		[ "$(git -C "$repo" rev-parse main^)" = "$MAIN" ] &&
		[ -z "$(git -C "$repo" log --merges --oneline main)" ] ||
		{ echo "  main: $(git -C "$repo" log --oneline main | head -3 | tr '\n' ' ')" >&2; return 1; }
	# Checked, on what landed: the check ran in the rebased worktree.
	grep -q checked "$E2E_TMP/checks.log" || { echo "  no check ran" >&2; return 1; }
	not git -C "$repo" rev-parse -q --verify refs/heads/ag >/dev/null
	wrx queue --json | grep -q '"handle":"ag","state":"landed"' ||
		{ wrx queue >&2; return 1; }
}

# Each queue point, and the rebase's and the merge's the landing reaches.
test_each_point() {
	[ "${#POINTS[@]}" -ge 4 ] || { echo "  only ${#POINTS[@]} queue points: ${POINTS[*]}" >&2; return 1; }
	local point action
	for point in "${POINTS[@]}" rebase.intent rebase.done merge.intent merge.checkout merge.hooks \
		merge.rebased merge.moved merge.removed; do
		for action in "${ACTIONS[@]}"; do
			setup
			killed "$point" "$action" merge --queue ag || { echo "  at $point:$action" >&2; return 1; }
			# The next command settles what the kill left; main is whole.
			wrx list >/dev/null 2>&1
			main_whole || { echo "  at $point:$action" >&2; return 1; }
			invariants || { echo "  at $point:$action" >&2; return 1; }
			# The queue still holds ag (or says it landed); resumed, it lands once.
			wrx queue --json | grep -q '"handle":"ag"' || { wrx queue >&2; return 1; }
			wrx queue resume >"$E2E_TMP/resumed" 2>&1 || { cat "$E2E_TMP/resumed" >&2; return 1; }
			landed || { echo "  at $point:$action; resumed: $(cat "$E2E_TMP/resumed")" >&2; return 1; }
			invariants || { echo "  at $point:$action, resumed" >&2; return 1; }
		done
	done
}

run_test "the queue's landing killed at each point: main whole, the queue resumes, lands once" test_each_point
