#!/usr/bin/env bash
# merge (each strategy, into a checked-out target and into one that is
# not) and rebase, killed at each of their fault points (kill -9, and an
# exit with no cleanup): the next command undoes what had not moved the
# target and finishes what had, and says which. The target is before or
# after, never between; no merge or rebase is left half done in any
# checkout, no temporary worktree is left; every invariant holds.
# points: merge.* rebase.*
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
mapfile -t POINTS < <(fault_points merge)
w=$E2E_TMP/work/proj__worktrees/ag

# setup [conflict]: ag has one commit (w.txt); main has moved on since
# (m.txt, or a.txt when the two conflict); a branch release no checkout has.
setup() {
	end_keepers
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\npre_merge: ["echo merging >> %s/pre_merge.log"]\n' "$E2E_TMP" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	git -C "$repo" branch release
	wrx add -b ag >/dev/null
	commits_before # a rebase rewrites ag's commit: kept, or on main, is checked by hand
	echo work >"$w/w.txt"
	[ "${1:-}" = conflict ] && echo theirs >"$w/a.txt"
	git -C "$w" add -A
	git -C "$w" commit -qm work
	if [ "${1:-}" = conflict ]; then
		echo ours >"$repo/a.txt"
	else
		echo m >"$repo/m.txt"
	fi
	git -C "$repo" add -A
	git -C "$repo" commit -qm main
	AG=$(git -C "$repo" rev-parse ag) MAIN=$(git -C "$repo" rev-parse main)
	REL=$(git -C "$repo" rev-parse release)
}

# No merge, squash or rebase left under way in the project or the agent's checkout.
nothing_under_way() {
	local d
	for d in "$repo" "$w"; do
		[ -d "$d" ] || continue
		not git -C "$d" rev-parse -q --verify MERGE_HEAD >/dev/null || { echo "  MERGE_HEAD in $d" >&2; return 1; }
		for f in rebase-merge rebase-apply SQUASH_MSG; do
			[ ! -e "$(git -C "$d" rev-parse --path-format=absolute --git-path $f)" ] ||
				{ echo "  $f left in $d" >&2; return 1; }
		done
		[ -z "$(git -C "$d" status --porcelain --untracked-files=no)" ] ||
			{ echo "  changes left in $d: $(git -C "$d" status --short)" >&2; return 1; }
	done
	# No temporary checkout of this project is left in /tmp.
	not grep -ls "$E2E_TMP" /tmp/workrex-merge.*/worktree/.git
}

# undone INTO REV: INTO is at REV, ag as it was, kept; then the merge works.
undone() {
	local into=$1 rev=$2
	shift 2
	[ "$(git -C "$repo" rev-parse "$into")" = "$rev" ] || { echo "  $into moved" >&2; return 1; }
	[ "$(git -C "$repo" rev-parse ag)" = "$AG" ] || { echo "  ag is not where it was" >&2; return 1; }
	[ "$(git -C "$w" rev-parse HEAD)" = "$AG" ] && [ -f "$w/w.txt" ]
	git -C "$repo" config workrex.worktree.ag.path >/dev/null
	nothing_under_way
}

# finished INTO: ag's work is on INTO, and the agent and its branch are gone.
finished() {
	[ "$(git -C "$repo" show "$1:w.txt")" = work ] || { echo "  $1 has not ag's work" >&2; return 1; }
	[ ! -e "$w" ] && not git -C "$repo" config workrex.worktree.ag.path >/dev/null
	not git -C "$repo" rev-parse -q --verify refs/heads/ag >/dev/null
	until_ok 5 nkeepers 0
	nothing_under_way
}

# sflag STRATEGY: its option (none for merge, the default).
sflag() { [ "$1" = merge ] || echo "--$1"; }

# killed_merge POINT ACTION ARGS...: merge ARGS ag, killed at POINT; list settles it.
killed_merge() {
	local point=$1 action=$2
	shift 2
	killed "$point" "$action" merge "$@" ag || return 1
	said_once "a merge of 'ag' into" && invariants
}

# Each point, each strategy, into main (checked out) and into release (not).
test_each_point() {
	[ "${#POINTS[@]}" -ge 7 ] || { echo "  only ${#POINTS[@]} merge points: ${POINTS[*]}" >&2; return 1; }
	local point action strategy into rev
	for into in main release; do
		for strategy in merge squash rebase; do
			for point in "${POINTS[@]}"; do
				case $strategy:$point in
				merge:merge.squashed | merge:merge.rebased | squash:merge.rebased | \
					rebase:merge.squashed | *:merge.conflict) continue ;;
				esac
				# A squash into a temporary checkout is the merge's path there
				# (test_which_way walks its own point into release).
				[ $strategy = squash ] && [ $into = release ] && continue
				for action in "${ACTIONS[@]}"; do
					# An exit leaves a merge what a kill does: walked once, a plain merge into main.
					[ $action = exit ] && [ $into:$strategy != main:merge ] && continue
					setup
					rev=$MAIN
					[ $into = release ] && rev=$REL
					killed_merge "$point" "$action" --into $into $(sflag $strategy) ||
						{ echo "  at $point:$action, --$strategy into $into" >&2; return 1; }
					if grep -q "undone" "$E2E_TMP/said.err"; then
						undone $into $rev &&
							wrx merge --into $into $(sflag $strategy) ag >/dev/null && finished $into
					else
						finished $into
					fi || { echo "  at $point:$action, --$strategy into $into" >&2; return 1; }
				done
			done
		done
	done
}

# The points that must undo (before the target moved) do; those after finish.
test_which_way() {
	local point into s
	for point in merge.intent merge.checkout merge.hooks merge.squashed merge.rebased; do
		for into in main release; do
			setup
			case $point in merge.squashed) s=--squash ;; merge.rebased) s=--rebase ;; *) s= ;; esac
			killed_merge $point kill --into $into $s
			grep -q "undone: $into" "$E2E_TMP/said.err" || { echo "  $point did not undo" >&2; return 1; }
			undone $into "$(git -C "$repo" rev-parse $into)" || { echo "  at $point, into $into" >&2; return 1; }
		done
	done
	for point in merge.moved merge.removed; do
		setup
		killed_merge $point kill
		grep -q "finished" "$E2E_TMP/said.err" || { echo "  $point did not finish" >&2; return 1; }
	done
}

# A conflict, killed before git's merge or rebase is aborted: the next command aborts it.
test_conflict() {
	local strategy point
	for strategy in merge squash rebase; do
		point=merge.conflict
		[ $strategy = rebase ] && point=rebase.conflict
		for into in main release; do
			setup conflict
			rev=$MAIN
			[ $into = release ] && rev=$(git -C "$repo" rev-parse release)
			# release has no conflict with ag: it gets main's commit first.
			[ $into = release ] && git -C "$repo" branch -f release main && rev=$MAIN
			killed_merge $point kill --into $into $(sflag $strategy) ||
				{ echo "  --$strategy into $into" >&2; return 1; }
			undone $into $rev || { echo "  --$strategy into $into" >&2; return 1; }
			not wrx merge --into $into $(sflag $strategy) ag 2>/dev/null
			undone $into $rev || { echo "  --$strategy into $into, merged again" >&2; return 1; }
		done
	done
}

# -k: finished after the target moved, the agent kept.
test_keep() {
	setup
	killed_merge merge.moved kill -k
	grep -q "finished$" "$E2E_TMP/said.err"
	[ "$(git -C "$repo" show main:w.txt)" = work ]
	git -C "$repo" config workrex.worktree.ag.path >/dev/null && [ -d "$w" ]
}

# The agent commits again before the next command: the merge is finished but it is kept.
test_newer_work() {
	setup
	killed merge.moved kill merge ag
	echo more >"$w/more.txt" && git -C "$w" add more.txt && git -C "$w" commit -qm more
	said_once "finished, but the agent is kept (its branch or worktree changed since)"
	[ "$(git -C "$repo" show main:w.txt)" = work ]
	git -C "$repo" rev-parse -q --verify refs/heads/ag >/dev/null && [ -f "$w/more.txt" ]
	invariants
}

# workrex rebase, killed at each of its points: a rebase under way is aborted.
test_rebase_command() {
	local point action
	for point in $(fault_points rebase); do
		for action in "${ACTIONS[@]}"; do
			for kind in clean conflict; do
				[ $point = rebase.conflict ] && [ $kind = clean ] && continue
				setup $kind
				killed "$point" "$action" rebase ag || { echo "  at $point:$action ($kind)" >&2; return 1; }
				said_once "a rebase of 'ag' was cut short" || return 1
				invariants || return 1
				nothing_under_way || { echo "  at $point:$action ($kind)" >&2; return 1; }
				if grep -q "had finished" "$E2E_TMP/said.err"; then
					git -C "$repo" merge-base --is-ancestor main ag
				else
					[ "$(git -C "$repo" rev-parse ag)" = "$AG" ] ||
						{ echo "  at $point:$action ($kind): ag moved" >&2; return 1; }
				fi
			done
		done
	done
}

# Two merges into release (no checkout has it: each makes a temporary one)
# at once: the second waits for the first, both land.
test_merges_wait() {
	setup
	wrx add -b ag2 >/dev/null
	echo two >"$E2E_TMP/work/proj__worktrees/ag2/two.txt"
	git -C "$E2E_TMP/work/proj__worktrees/ag2" add two.txt
	git -C "$E2E_TMP/work/proj__worktrees/ag2" commit -qm two
	printf 'agent: bash\npre_merge: ["sleep 2"]\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx merge --into release ag >"$E2E_TMP/m1" 2>&1 &
	local p1=$!
	sleep 0.5
	wrx merge --into release ag2 >"$E2E_TMP/m2" 2>&1 || { cat "$E2E_TMP/m2" >&2; return 1; }
	wait $p1 || { cat "$E2E_TMP/m1" >&2; return 1; }
	[ "$(git -C "$repo" show release:w.txt)" = work ] && [ "$(git -C "$repo" show release:two.txt)" = two ]
	grep -q "waiting for another merge to end" "$E2E_TMP/m2"
	invariants
}

run_test "merge killed at each point, each strategy, into main and into a branch not checked out" test_each_point
run_test "before the target moves a killed merge is undone; after, finished" test_which_way
run_test "a conflict killed before its abort: the next command aborts the merge or rebase" test_conflict
run_test "merge -k killed after the target moved: finished, the agent kept" test_keep
run_test "a merge finished after a kill keeps an agent that committed since" test_newer_work
run_test "rebase killed at each point: aborted, or said to have finished" test_rebase_command
run_test "two merges into one branch at once: the second waits, both land" test_merges_wait
rm -rf "$E2E_TMP"
