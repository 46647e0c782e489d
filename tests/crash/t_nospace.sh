#!/usr/bin/env bash
# A disk that fills part way through a command: every durable write
# workrex makes (an intent, a batch of git config records, a staged file)
# fails in turn from the Nth on, as on a full disk (the fault action
# enospc at the point "write"). N is walked from the first write until the
# command makes no write that fails. At each, the command fails and says
# the disk is full; every invariant holds; the next command completes or
# undoes what was begun; with room again the same command works.
# (A real full disk, filled before the command: t_full.sh.)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
wt=$E2E_TMP/work/proj__worktrees

# setup [plain]: a project whose adds place a file and run post_create
# (plain: neither, so that a merge finds nothing uncommitted).
setup() {
	end_keepers
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	if [ "${1:-}" = plain ]; then
		printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	else
		printf 'agent: bash\npost_create: ["echo made > made.txt"]\nfiles:\n  copy: [.env]\n' \
			>"$XDG_CONFIG_HOME/workrex/config.yaml"
	fi
	echo SECRET=1 >"$repo/.env"
	commits_before
}

# full_at N CMD...: workrex CMD in the project, every durable write from
# the N+1st on failing with ENOSPC. 0: a write failed, and CMD failed and
# said the disk is full; 1: CMD made N writes or fewer and ran whole;
# 2: anything else (said).
full_at() {
	local n=$1 rc=0
	shift
	(cd "$repo" && WORKREX_FAULT=write:enospc WORKREX_FAULT_SKIP=$n exec "$WORKREX" "$@") \
		>"$E2E_TMP/full.out" 2>&1 || rc=$?
	if ! grep -q '^workrex: fault write: enospc' "$E2E_TMP/full.out"; then
		[ "$rc" -eq 0 ] && return 1
		echo "  $* failed with no write failed: $(cat "$E2E_TMP/full.out")" >&2
		return 2
	fi
	if [ "$rc" -eq 0 ] || ! grep -v '^workrex: fault' "$E2E_TMP/full.out" | grep -qi 'no space left on device'; then
		echo "  $* with write $((n + 1)) on failing: exit $rc, said: $(cat "$E2E_TMP/full.out")" >&2
		return 2
	fi
}

# walk NAME: for N from 0, "NAME_at N" (the command, full from write N+1)
# and "NAME_after N" (its state checked, then made whole with room); up to
# the first N at which the command ran whole. At least MIN writes walked.
walk() {
	local name=$1 min=$2 n=0 r
	while :; do
		r=0
		"${name}_at" "$n" || r=$?
		[ "$r" -le 1 ] || { echo "  $name: at write $((n + 1))" >&2; return 1; }
		# Undone or finished at once, or left to the next command, and said.
		if [ -n "$(ls -A "$repo/.git/workrex-intents" 2>/dev/null)" ]; then
			grep -q "the next workrex command" "$E2E_TMP/full.out" ||
				{ echo "  $name: at write $((n + 1)): an intent left, unsaid" >&2; return 1; }
		else
			invariants || { echo "  $name: at write $((n + 1)), then" >&2; return 1; }
		fi
		wrx list >/dev/null 2>"$E2E_TMP/next.err" ||
			{ echo "  $name: the next command failed: $(cat "$E2E_TMP/next.err")" >&2; return 1; }
		invariants || { echo "  $name: at write $((n + 1)), after the next command" >&2; return 1; }
		[ "$r" -eq 1 ] && break
		"${name}_after" "$n" || { echo "  $name: at write $((n + 1)), with room again" >&2; return 1; }
		invariants || return 1
		n=$((n + 1))
		((n < 40)) || { echo "  $name: more than 40 writes" >&2; return 1; }
	done
	((n >= min)) || { echo "  $name: only $n writes walked" >&2; return 1; }
	echo "  $name: $n writes failed in turn" >&2
}

add_at() { full_at "$1" add -b "ag$1"; }
add_after() {
	# Nothing of it is left; with room the same add works.
	[ ! -e "$wt/ag$1" ] && not git -C "$repo" config "workrex.worktree.ag$1.path" >/dev/null &&
		not git -C "$repo" rev-parse -q --verify "refs/heads/ag$1" >/dev/null ||
		{ echo "  add ag$1 left something: $(ls "$wt"; git -C "$repo" branch)" >&2; return 1; }
	wrx add -b "ag$1" >/dev/null && [ -f "$wt/ag$1/made.txt" ] && [ -f "$wt/ag$1/.env" ] ||
		{ echo "  add ag$1 with room again: not made whole" >&2; return 1; }
}
test_add() {
	setup
	walk add 2
}

rm_at() {
	[ "$1" -gt 0 ] || wrx add -b rm0 >/dev/null
	full_at "$1" rm --force -y "rm$1"
}
rm_after() {
	# Gone, or listed (its record there, missing or not): rm takes it away.
	if git -C "$repo" config "workrex.worktree.rm$1.path" >/dev/null; then
		wrx rm --force -y "rm$1" >/dev/null || return 1
	fi
	[ ! -e "$wt/rm$1" ] && not git -C "$repo" config "workrex.worktree.rm$1.path" >/dev/null &&
		not git -C "$repo" rev-parse -q --verify "refs/heads/rm$1" >/dev/null ||
		{ echo "  rm rm$1 with room again: not gone whole" >&2; return 1; }
	wrx add -b "rm$(($1 + 1))" >/dev/null # the next one's
}
test_remove() {
	setup
	walk rm 2
}

rename_at() {
	[ "$1" -gt 0 ] || wrx add -b rn0 >/dev/null
	end_keepers
	full_at "$1" rename "rn$1" "new$1"
}
rename_after() {
	# Under one name, whole: the old if it did not begin, else the new.
	local name=new$1 other=rn$1
	git -C "$repo" config "workrex.worktree.new$1.path" >/dev/null || name=rn$1 other=new$1
	[ "$(git -C "$repo" config "workrex.worktree.$name.path")" = "$wt/$name" ] && [ -d "$wt/$name" ] &&
		[ ! -e "$wt/$other" ] && not git -C "$repo" config "workrex.worktree.$other.path" >/dev/null ||
		{ echo "  rename rn$1: $(git -C "$repo" config --get-regexp 'workrex\.worktree\..*\.path'; ls "$wt")" >&2; return 1; }
	[ "$name" = "new$1" ] || wrx rename "rn$1" "new$1" >/dev/null || return 1
	[ -d "$wt/new$1" ] && [ "$(git -C "$wt/new$1" rev-parse --abbrev-ref HEAD)" = "new$1" ] ||
		{ echo "  rename rn$1 with room again: new$1 not whole" >&2; return 1; }
	wrx add -b "rn$(($1 + 1))" >/dev/null # the next one's
}
test_rename() {
	setup
	walk rename 2
}

# merge_at N, merge_after N: mg<N> into $INTO by $HOW (a strategy's flag,
# or none), each with a commit of its own (w<N>.txt).
merge_at() {
	if [ "$1" -eq 0 ]; then
		wrx add -b mg0 >/dev/null
		echo 0 >"$wt/mg0/w0.txt" && git -C "$wt/mg0" add -A && git -C "$wt/mg0" commit -qm "work 0"
	fi
	# Every commit but the branch's own: a squash or a rebase replaces
	# those, and the target is checked for their work (merge_after).
	comm -23 <(git -C "$repo" rev-list --all | sort) \
		<(git -C "$repo" rev-list "mg$1" --not main release | sort) >"$E2E_TMP/commits.before"
	end_keepers
	# shellcheck disable=SC2086
	full_at "$1" merge --into "$INTO" $HOW "mg$1"
}
merge_after() {
	# The target has the work or not, never half; with room the merge ends it.
	if git -C "$repo" config "workrex.worktree.mg$1.path" >/dev/null; then
		# shellcheck disable=SC2086
		wrx merge --into "$INTO" $HOW "mg$1" >/dev/null || return 1
	fi
	[ "$(git -C "$repo" show "$INTO:w$1.txt")" = "$1" ] &&
		not git -C "$repo" config "workrex.worktree.mg$1.path" >/dev/null ||
		{ echo "  merge mg$1 into $INTO $HOW with room again: not merged whole" >&2; return 1; }
	[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
		{ echo "  merge mg$1: changes left in the project: $(git -C "$repo" status --short)" >&2; return 1; }
	local next=$(($1 + 1))
	wrx add -b "mg$next" >/dev/null || return 1
	echo "$next" >"$wt/mg$next/w$next.txt" && git -C "$wt/mg$next" add -A &&
		git -C "$wt/mg$next" commit -qm "work $next"
}
test_merge() {
	local how
	for INTO in main release; do
		for how in merge --squash --rebase; do
			HOW=$how
			[ "$how" = merge ] && HOW=
			setup plain
			git -C "$repo" branch release
			walk merge 3 || { echo "  merge into $INTO $HOW" >&2; return 1; }
		done
	done
}

trust_at() { full_at "$1" trust; }
trust_after() {
	# Not trusted (the old bytes): asked again; with room, trusted.
	wrx trust >/dev/null || return 1
	printf 'post_create: ["echo %s"]\n' "$1" >"$repo/.workrex.yaml"
}
test_trust() {
	setup
	printf 'post_create: ["echo one"]\n' >"$repo/.workrex.yaml"
	walk trust 1
}

allow_at() {
	cp "$XDG_CONFIG_HOME/workrex/config.yaml" "$E2E_TMP/config.before"
	full_at "$1" allow-domain -y "d$1.example"
}
allow_after() {
	cmp "$XDG_CONFIG_HOME/workrex/config.yaml" "$E2E_TMP/config.before" &&
		[ "$(ls -A "$XDG_CONFIG_HOME/workrex")" = config.yaml ] ||
		{ echo "  config.yaml changed, or a file was left: $(ls -A "$XDG_CONFIG_HOME/workrex")" >&2; return 1; }
	wrx allow-domain -y "d$1.example" >/dev/null && grep -q "d$1.example" "$XDG_CONFIG_HOME/workrex/config.yaml"
}
test_allow_domain() {
	setup
	walk allow 1
}

run_test "add: each write failing in turn (a full disk): said, undone, then it works" test_add
run_test "remove: each write failing in turn: said; gone or listed, rm ends it" test_remove
run_test "rename: each write failing in turn: said; one name, whole; the next command ends it" test_rename
run_test "merge (each strategy, into main and a branch not checked out): each write failing in turn" test_merge
run_test "trust: its write failing: said, not trusted; then it works" test_trust
run_test "allow-domain: its write failing: said, the old bytes; then it works" test_allow_domain
end_keepers
rm -rf "$E2E_TMP"
