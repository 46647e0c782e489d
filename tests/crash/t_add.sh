#!/usr/bin/env bash
# add killed at each of its fault points (kill -9, and an exit with no
# cleanup): the next command undoes it and says so, every invariant holds,
# and the same add then succeeds.
# points: add.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mapfile -t POINTS < <(fault_points add)

setup() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\npost_create: ["echo made > made.txt"]\nfiles:\n  copy: [.env]\n' \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	echo SECRET=1 >"$repo/.env"
	git -C "$repo" checkout -qb side && echo s >"$repo/s.txt" && git -C "$repo" add s.txt &&
		git -C "$repo" commit -qm side && git -C "$repo" checkout -q main
	commits_before
}

# killed_add POINT ACTION [ARGS]: add ag at POINT, killed there; then list: it is undone.
killed_add() {
	local point=$1 action=$2
	shift 2
	killed "$point" "$action" add -b "$@"
	said_once "an add of 'ag' was cut short; undone"
	invariants
	[ ! -e "$E2E_TMP/work/proj__worktrees/ag" ]
	not git -C "$repo" config workrex.worktree.ag.path >/dev/null
}

test_each_point() {
	[ "${#POINTS[@]}" -ge 7 ] || { echo "  only ${#POINTS[@]} add points: ${POINTS[*]}" >&2; return 1; }
	local point action
	for point in "${POINTS[@]}"; do
		for action in "${ACTIONS[@]}"; do
			setup
			killed_add "$point" "$action" ag || { echo "  at $point:$action" >&2; return 1; }
			# A new branch the add made is gone with it; the same add works now.
			not git -C "$repo" rev-parse -q --verify refs/heads/ag >/dev/null
			wrx add -b ag >/dev/null
			invariants
			[ -f "$(wrx path ag)/made.txt" ] && [ -f "$(wrx path ag)/.env" ]
			end_keepers
		done
	done
}

# Killed in each administrative file, made but still empty (the point
# add.admin-file, passed N times first): git itself reads the worktrees at
# once, and the next command undoes the add. (A build that wrote the entry
# in place left an empty commondir here, and git worktree list was fatal.)
test_admin_each_file() {
	local n
	for n in 0 1 2 3; do
		setup
		WORKREX_FAULT_SKIP=$n killed add.admin-file kill add -b ag ||
			{ echo "  at file $n" >&2; return 1; }
		git -C "$repo" worktree list >/dev/null || { echo "  at file $n" >&2; return 1; }
		said_once "an add of 'ag' was cut short; undone" && invariants ||
			{ echo "  at file $n" >&2; return 1; }
		wrx add -b ag >/dev/null
		invariants
		end_keepers
	done
}

# What an older build left, an entry written in place with an empty
# commondir: the add's undo takes it away, and git reads the worktrees again.
test_old_entry_mended() {
	setup
	WORKREX_FAULT_SKIP=1 killed add.admin-file kill add -b ag
	local gitdir=$repo/.git
	mkdir -p "$gitdir/worktrees/ag"
	echo "$E2E_TMP/work/proj__worktrees/ag/.git" >"$gitdir/worktrees/ag/gitdir"
	: >"$gitdir/worktrees/ag/commondir"
	not git -C "$repo" worktree list >/dev/null 2>&1
	said_once "an add of 'ag' was cut short; undone"
	invariants
	wrx add -b ag >/dev/null
	invariants
	end_keepers
}

# On an existing branch, with a commit of its own: the branch and its commit stay.
test_existing_branch_kept() {
	local point
	for point in add.worktree add.recorded add.steps; do
		setup
		git -C "$repo" branch ag side
		local tip
		tip=$(git -C "$repo" rev-parse ag)
		killed_add "$point" kill ag
		[ "$(git -C "$repo" rev-parse ag)" = "$tip" ]
	done
}

# A second add of the name while the first runs is refused, not mixed with it.
test_one_add_of_a_name() {
	setup
	printf 'agent: bash\npost_create: ["sleep 3"]\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	(cd "$repo" && "$WORKREX" add -b ag >"$E2E_TMP/first.out" 2>&1) &
	local first=$!
	until_ok 10 test -e "$repo/.git/workrex-intents/add.ag"
	local rc=0
	wrx add -b ag >"$E2E_TMP/second.out" 2>&1 || rc=$?
	[ "$rc" -ne 0 ]
	grep -qE "an add of 'ag' is under way already|exists already" "$E2E_TMP/second.out"
	wait "$first"
	grep -q "created ag" "$E2E_TMP/first.out"
	invariants
}

# The dashboard's start is the next command too: it undoes the add before
# it lists agents, so it never opens the half-made one.
test_dashboard_undoes() {
	setup
	killed add.recorded kill add -b ag
	start_repo 100 30
	wait_for 'C-b \? help'
	not grep -q ' ag ' <(screen)
	invariants
	[ ! -e "$E2E_TMP/work/proj__worktrees/ag" ]
	not git -C "$repo" config workrex.worktree.ag.path >/dev/null
	wrx list >/dev/null 2>"$E2E_TMP/list.err"
	not grep -q "cut short" "$E2E_TMP/list.err"
}

run_test "add killed at each fault point (kill -9 and exit): the next command undoes it and says so" test_each_point
run_test "add killed in each worktree entry file: git reads its worktrees, the next command undoes" test_admin_each_file
run_test "an entry an older build left with an empty commondir is taken away by the undo" test_old_entry_mended
run_test "add killed on a branch that existed: the branch and its commits stay" test_existing_branch_kept
run_test "a second add of a name while the first runs is refused" test_one_add_of_a_name
run_test "the dashboard's start undoes a killed add before it lists agents" test_dashboard_undoes
rm -rf "$E2E_TMP"
