#!/usr/bin/env bash
# add --repos killed between the other repositories' agents and this
# one's (kill -9, and an exit with no cleanup): every repository is whole
# (each agent there made whole, or not at all), and the same add again
# completes it, taking what the first left.
# points: workspace.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mapfile -t POINTS < <(fault_points workspace)

setup() {
	end_keepers
	make_workspace
}

test_each_point() {
	[ "${#POINTS[@]}" -ge 1 ] || { echo "  no workspace points" >&2; return 1; }
	local point action home
	for point in "${POINTS[@]}"; do
		for action in "${ACTIONS[@]}"; do
			setup
			killed "$point" "$action" add task --repos web -b || return 1
			# Each repository whole: the project's list reads, web's agent is whole there.
			wrx list >/dev/null 2>&1
			invariants || { echo "  at $point:$action" >&2; return 1; }
			(cd "$web" && "$WORKREX" list -q) | grep -qx task
			# The same add again completes it.
			wrx add task --repos web -b >"$E2E_TMP/again" 2>&1 || { cat "$E2E_TMP/again" >&2; return 1; }
			home=$E2E_TMP/work/proj__worktrees/task.repos
			[ -d "$home/proj/.git" ] || [ -f "$home/proj/.git" ] || { ls -la "$home" >&2; return 1; }
			[ -f "$home/web/.git" ] && [ -f "$home/web/c.txt" ]
			wrx list --json | grep -q '"web"'
			invariants || { echo "  at $point:$action, added again" >&2; return 1; }
			wrx rm -f task >/dev/null
		done
	done
}

run_test "add --repos killed after the other repositories: each whole; the same add completes it" test_each_point
