#!/usr/bin/env bash
# rename killed at each of its fault points (kill -9, and an exit with no
# cleanup): the next command finishes it (it had been decided, and nothing
# runs in the worktree) and says so. The agent is whole under its new name:
# its worktree, git's entry both ways, its branch, its record; every
# invariant holds.
# points: rename.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mapfile -t POINTS < <(fault_points rename)
wt=$E2E_TMP/work/proj__worktrees

# setup BRANCH: agent ag on BRANCH with one commit, its panes closed.
setup() {
	end_keepers
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	if [ "$1" = ag ]; then wrx add -b ag >/dev/null; else wrx add -b "$1" --name ag >/dev/null; fi
	wrx close ag
	until_ok 10 nkeepers 0
	echo work >"$wt/ag/w.txt"
	git -C "$wt/ag" add w.txt
	git -C "$wt/ag" commit -qm work
	commits_before
}

# renamed BRANCH: the agent is better, on BRANCH, whole.
renamed() {
	local branch=$1
	[ ! -e "$wt/ag" ] && [ -f "$wt/better/w.txt" ] || { echo "  worktree not moved" >&2; return 1; }
	[ "$(git -C "$wt/better" rev-parse --abbrev-ref HEAD)" = "$branch" ] ||
		{ echo "  HEAD: $(git -C "$wt/better" rev-parse --abbrev-ref HEAD)" >&2; return 1; }
	git -C "$repo" worktree list | grep -q "proj__worktrees/better .*\[$branch\]"
	not git -C "$repo" worktree list | grep -q "proj__worktrees/ag "
	[ "$(git -C "$repo" config workrex.worktree.better.path)" = "$wt/better" ]
	[ "$(git -C "$repo" config workrex.worktree.better.branch)" = "$branch" ]
	not git -C "$repo" config workrex.worktree.ag.path >/dev/null
	[ -z "$(git -C "$wt/better" status --porcelain)" ]
	wrx list | grep -qE "^better +$branch "
}

test_each_point() {
	[ "${#POINTS[@]}" -ge 7 ] || { echo "  only ${#POINTS[@]} rename points: ${POINTS[*]}" >&2; return 1; }
	local point action branch
	for branch in ag feature/x; do
		for point in "${POINTS[@]}"; do
			for action in "${ACTIONS[@]}"; do
				setup $branch
				local want=$branch
				[ $branch = ag ] && want=better
				killed "$point" "$action" rename ag better &&
					said_once "a rename of 'ag' to 'better' was cut short; finished" &&
					invariants && renamed $want ||
					{ echo "  at $point:$action, on $branch" >&2; return 1; }
				# It works as an agent: it merges.
				wrx merge better >/dev/null
				[ "$(git -C "$repo" show main:w.txt)" = work ]
				invariants
			done
		done
	done
}

run_test "rename killed at each fault point (kill -9 and exit): the next command finishes it" test_each_point
rm -rf "$E2E_TMP"
