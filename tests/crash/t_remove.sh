#!/usr/bin/env bash
# remove killed at each of its fault points (kill -9, and an exit with no
# cleanup): the next command finishes it (it had been decided) and says so;
# the agent's keeper is stopped, every invariant holds.
# points: remove.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mapfile -t POINTS < <(fault_points remove)

setup() {
	end_keepers
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\npre_remove: ["echo bye >> %s/pre_remove.log"]\n' "$E2E_TMP" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add -b ag >/dev/null
	until_ok 10 eval '[ -n "$(keepers)" ]'
	commits_before
}

# killed_remove POINT ACTION [ARGS]: rm ag, killed at POINT; then list finishes it.
killed_remove() {
	local point=$1 action=$2
	shift 2
	killed "$point" "$action" rm "$@" ag
	said_once "a remove of 'ag' was cut short; finished"
	invariants
	[ ! -e "$E2E_TMP/work/proj__worktrees/ag" ]
	not git -C "$repo" config workrex.worktree.ag.path >/dev/null
	until_ok 5 nkeepers 0
}

test_each_point() {
	[ "${#POINTS[@]}" -ge 7 ] || { echo "  only ${#POINTS[@]} remove points: ${POINTS[*]}" >&2; return 1; }
	local point action
	for point in "${POINTS[@]}"; do
		for action in "${ACTIONS[@]}"; do
			setup
			killed_remove "$point" "$action" || { echo "  at $point:$action" >&2; return 1; }
			not git -C "$repo" rev-parse -q --verify refs/heads/ag >/dev/null
			wrx add -b ag >/dev/null
			invariants
		done
	done
}

# --keep-branch, killed after the worktree went: finished, the branch (and its commit) kept.
test_keep_branch() {
	setup
	echo w >"$(wrx path ag)/w.txt"
	git -C "$(wrx path ag)" add w.txt
	git -C "$(wrx path ag)" commit -qm work
	commits_before
	killed_remove remove.worktree kill --keep-branch
	git -C "$repo" rev-parse -q --verify refs/heads/ag >/dev/null
}

# Finishing a remove, and undoing an add, touch their own worktree only:
# another deleted by hand stays listed as missing, for rm to clean.
test_beside_missing() {
	setup
	wrx add -b other >/dev/null
	end_keepers
	rm -rf "$E2E_TMP/work/proj__worktrees/other"
	killed_remove remove.worktree kill
	killed add.worktree kill add -b ag2
	wrx list >"$E2E_TMP/list" 2>/dev/null
	grep -qE '^other +other +missing ' "$E2E_TMP/list"
	wrx rm other >/dev/null
	invariants
}

# With a dashboard: the remove that the next command finishes takes the
# agent off its list, and one whose record went by hand (git, not
# workrex) is said and taken off when opened. Before, each stayed listed,
# and C-b and its number started a keeper for an agent with no record.
test_dashboard_lets_go() {
	setup
	wrx add -b by-hand >/dev/null
	tm new-session -d -x 120 -y 36 -c "$repo" "env TERM=tmux-256color $WORKREX$after_exit"
	wait_for 'C-b \? help'
	wait_for '^ 3 by-hand'
	wrx close by-hand >/dev/null
	killed remove.worktree kill rm ag
	said_once "a remove of 'ag' was cut short; finished"
	until_ok 10 eval '! screen | grep -qE "^ 2 ag\b"' || { screen >&2; return 1; }
	git -C "$repo" worktree remove --force "$E2E_TMP/work/proj__worktrees/by-hand"
	git -C "$repo" config --remove-section workrex.worktree.by-hand
	prefix 3
	wait_for "'by-hand' is no longer recorded"
	until_ok 10 eval '! screen | grep -qE "^ 3 by-hand\b"' || { screen >&2; return 1; }
	sleep 1
	nkeepers 1 || { echo "  keepers: $(keepers)" >&2; return 1; }
	invariants
	tm kill-server
}

run_test "remove killed at each fault point (kill -9 and exit): the next command finishes it" test_each_point
run_test "remove --keep-branch killed: finished, the branch and its commit kept" test_keep_branch
run_test "with a dashboard: a remove finished, or a record gone by hand, is taken off its list; nothing opens" test_dashboard_lets_go
run_test "a remove finished and an add undone beside a worktree deleted by hand: that one stays listed" test_beside_missing
rm -rf "$E2E_TMP"
