#!/usr/bin/env bash
# The merge queue (SPEC §14, issue 51): finished agents land on main one at
# a time, rebased and checked first; a conflict or a failing check goes
# back to the agent that made it, as a prompt, and it comes back in when
# that agent is done again. Stand-in agents (queue_agent.sh) make the
# changes and answer what they are told; the user only queues them.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
trap stop EXIT

git_env

# Three stand-ins' project: a.txt of five lines; a check that refuses BAD.
queue_project() {
	make_repo
	printf 'one\ntwo\nthree\nfour\nfive\n' >"$repo/a.txt"
	git -C "$repo" commit -qam 'five lines'
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-YAML
		agent: lander
		agents:
		  lander: {command: sh, args: ["$here/queue_agent.sh"]}
	YAML
	printf 'check: "if grep -n BAD a.txt; then echo BAD found; exit 1; fi"\n' >"$repo/.workrex.yaml"
	wrx trust >/dev/null
}

# handle state, a line each, as queue --json says.
queue_states() {
	wrx queue --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["handle"], e["state"])'
}

status_of() {
	wrx list --json | python3 -c '
import json, sys
print(*[a["status"] for a in json.load(sys.stdin) if a["handle"] == sys.argv[1]])' "$1"
}

# What the dashboard's log says of the queue and its agents' statuses.
queue_log() { grep -a 'queue\|status\|q[abc]' "$XDG_STATE_HOME/workrex/workrex.log" | tail -40 >&2; }

t_queue_lands_and_hands_back() {
	queue_project
	start_repo 120 36
	wait_for 'C-b \? help'
	local h
	for h in qa qb qc; do wrx add "$h" -b >/dev/null; done
	for h in qa qb qc; do
		until_ok 30 eval "[ \"\$(status_of $h)\" = done ]" || { wrx list >&2; return 1; }
	done
	# All three queued while the queue waits: qa by keys (m, then q), the others from a shell.
	wrx queue pause >/dev/null
	prefix 2
	prefix m
	wait_for 'merge qa and remove its worktree\? \(y/n, q: to the merge queue\)'
	keys q
	until_ok 20 eval 'queue_states | grep -qx "qa paused"' || { wrx queue >&2; screen >&2; return 1; }
	wrx merge --queue qc | grep -qx 'qc: #2 in the merge queue (paused)'
	wrx merge --queue qb | grep -qx 'qb: #3 in the merge queue (paused)'
	# Reordered from the dashboard's command line (C-b :), as a person would.
	prefix :
	wait_for 'workrex'
	tm send-keys -l 'queue move qb 2'
	keys Enter
	until_ok 10 eval '[ "$(queue_states | tr "\n" " ")" = "qa paused qb paused qc paused " ]' ||
		{ wrx queue >&2; screen >&2; return 1; }
	# Each row says its place.
	wait_for '» queue: #3, paused'
	wrx queue >"$E2E_TMP/queue"
	grep -Eq '^1 +qa +paused' "$E2E_TMP/queue" && grep -Eq '^3 +qc +paused' "$E2E_TMP/queue" ||
		{ cat "$E2E_TMP/queue" >&2; return 1; }
	prefix :
	wait_for 'workrex'
	tm send-keys -l 'queue resume'
	keys Enter
	# qa lands; qb conflicts and is told, resolves, is done and lands; qc's check fails.
	until_ok 60 eval 'queue_states | grep -qx "qb landed"' || { wrx queue >&2; screen >&2; queue_log; return 1; }
	until_ok 60 eval 'queue_states | grep -qx "qc returned"' || { wrx queue >&2; return 1; }
	queue_states | grep -qx 'qa landed'
	wrx queue | grep -Eq '^- +qc +returned +its check failed \(exit 1\) on top of main'
	# What each was told, in its pane; qc works again, said under its row.
	in_output -q 'STAND-IN qc: told its check failed' -- wrx capture qc
	in_output -q 'BAD found' -- wrx capture qc
	[ "$(status_of qc)" = working ]
	wait_for '» queue: check failed'
	# main: linear, every commit on it passes the check, and the three
	# changes there but qc's; nobody ran git but the stand-ins.
	[ -z "$(git -C "$repo" log --merges --oneline main)" ]
	local c
	for c in $(git -C "$repo" rev-list main); do
		! git -C "$repo" show "$c:a.txt" | grep -q BAD || { echo "  $c has BAD" >&2; return 1; }
	done
	git -C "$repo" show main:a.txt | tr '\n' ' ' | grep -qx 'one two-A two-B three four five '
	git -C "$repo" log --format=%s main | grep -qx 'qb: its change'
	# The user's checkout is main, moved with it (fast-forwarded, clean).
	[ "$(git -C "$repo" rev-parse HEAD)" = "$(git -C "$repo" rev-parse main)" ]
	[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ]
	# The landed agents are gone, as merge removes them; qc stays.
	wrx list -q | tr '\n' ' ' | grep -qx 'qc '
}

# With no dashboard, merge --queue lands at once, and says what the agent would be told.
t_queue_without_a_dashboard() {
	queue_project
	for h in qa qc; do wrx add "$h" -b >/dev/null; done
	for h in qa qc; do
		until_ok 30 eval "git -C \"$E2E_TMP/work/proj__worktrees/$h\" log -1 --format=%s | grep -q '$h: its change'" || return 1
	done
	wrx shutdown >/dev/null 2>&1 || true
	wrx merge --queue qc >"$E2E_TMP/out"
	grep -q 'qc: given back: its check failed (exit 1) on top of main' "$E2E_TMP/out"
	wrx merge --queue qa >"$E2E_TMP/out"
	grep -qx 'merged qa into main' "$E2E_TMP/out"
	queue_states | grep -qx 'qa landed'
	# Bad input: an agent that is none, a position that is none, an unknown sub-command.
	not wrx merge --queue nobody 2>"$E2E_TMP/err"
	grep -q "nobody" "$E2E_TMP/err"
	not wrx queue move qc 0 2>"$E2E_TMP/err"
	grep -q 'a position is 1 or more' "$E2E_TMP/err"
	not wrx queue frobnicate 2>/dev/null
}

# The compare view's Q: the chosen candidate into the queue, the others stay.
t_queue_from_the_compare_view() {
	queue_project
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add cand -n 2 -b >/dev/null
	until_ok 30 eval '[ "$(status_of cand-1)" = done ] && [ "$(status_of cand-2)" = done ]' || { wrx list >&2; return 1; }
	prefix 2
	prefix =
	wait_for '^ cand-2 +lander +done'
	keys Q
	until_ok 30 eval 'queue_states | grep -qx "cand-1 landed"' || { wrx queue >&2; screen >&2; return 1; }
	queue_states | not grep -q cand-2
	wrx list -q | grep -qx cand-2
}

run_test "merge queue: three land in turn; a conflict and a failing check go back to their agents" t_queue_lands_and_hands_back
run_test "merge queue: Q in the compare view queues the chosen candidate, the others stay" t_queue_from_the_compare_view
run_test "merge queue with no dashboard: lands at once; bad input said" t_queue_without_a_dashboard
