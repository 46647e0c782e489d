#!/usr/bin/env bash
# Many agents on one task (SPEC §11, issue 31): add makes a group in one
# call, its prompts and branches rendered from templates, all checked
# before the first worktree is made.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

git_env

# Two stand-in agent CLIs, each saying which it is.
group_config() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agent: bash
		agents:
		  claude-ish: {command: sh, args: [-c, "echo STAND-IN-ONE; exec cat"]}
		  codex-ish: {command: sh, args: [-c, "echo STAND-IN-TWO; exec cat"]}
	YAML
}

prompt_of() { cat "$E2E_TMP/work/proj__worktrees/$1/.workrex/PROMPT-$1.md"; }

# What list --json says of each agent, one line each: handle group agent.
groups() {
	wrx list --json | python3 -c '
import json, sys
for a in json.load(sys.stdin):
    print(a["handle"], a.get("group", "-"), a.get("agent", "-"))'
}

# -a twice: one agent for each CLI, named after it, its prompt rendered.
t_group_of_clis() {
	make_repo
	group_config
	start_repo 140 40
	wait_for 'C-b \? help'
	wrx add fix -a claude-ish -a codex-ish -p 'Fix it as {{ agent }}, number {{ index }}.' \
		>"$E2E_TMP/out"
	grep -qx 'group fix: 2 agents' "$E2E_TMP/out"
	# The sidebar: the group's heading, its two agents under it.
	wait_for '^ ─ fix \(2\)'
	wait_for '^ +[0-9] fix-claude-ish'
	wait_for '^ +[0-9] fix-codex-ish'
	screen | grep -A6 '^ ─ fix (2)' | grep -q 'fix-codex-ish'
	[ "$(prompt_of fix-claude-ish)" = 'Fix it as claude-ish, number 0.' ]
	[ "$(prompt_of fix-codex-ish)" = 'Fix it as codex-ish, number 1.' ]
	groups >"$E2E_TMP/groups"
	grep -qx 'fix-claude-ish fix claude-ish' "$E2E_TMP/groups"
	grep -qx 'fix-codex-ish fix codex-ish' "$E2E_TMP/groups"
	until_ok 10 in_output STAND-IN-ONE -- wrx capture fix-claude-ish
	until_ok 10 in_output STAND-IN-TWO -- wrx capture fix-codex-ish
	# list shows the group.
	wrx list >"$E2E_TMP/list"
	grep -Eq '^fix-codex-ish +fix-codex-ish +fix ' "$E2E_TMP/list"
	head -1 "$E2E_TMP/list" | grep -Eq 'BRANCH +GROUP +STATUS'
}

# -n 3 --foreach: the product, six; a prompt file's foreach; -p -'s lines.
t_group_product() {
	make_repo
	group_config
	wrx add port -n 3 --foreach 'lang:c,go' -p 'Port it to {{ lang }}, try {{ num }}.' -b \
		>"$E2E_TMP/out"
	grep -qx 'group port: 6 agents' "$E2E_TMP/out"
	groups >"$E2E_TMP/groups"
	[ "$(grep -c ' port ' "$E2E_TMP/groups")" -eq 6 ]
	[ "$(prompt_of port-1)" = 'Port it to c, try 1.' ]
	[ "$(prompt_of port-3)" = 'Port it to c, try 3.' ]
	[ "$(prompt_of port-4)" = 'Port it to go, try 4.' ]
	[ "$(prompt_of port-6)" = 'Port it to go, try 6.' ]
	git -C "$repo" rev-parse -q --verify refs/heads/port-6 >/dev/null
	# The front matter's variables, and --branch-template with one of them.
	printf -- '---\nforeach:\n  lang: [rust, zig]\n---\nRewrite it in {{ lang }}.\n' \
		>"$E2E_TMP/task.md"
	wrx add rw -P "$E2E_TMP/task.md" --branch-template 'rw/{{ lang | slugify }}' -b >/dev/null
	[ "$(prompt_of rw-rust)" = 'Rewrite it in rust.' ]
	[ "$(prompt_of rw-zig)" = 'Rewrite it in zig.' ]
	# One for each line of --prompts-from (stdin here); -p - is one prompt,
	# however many lines it has (issue 46 item 8).
	printf 'the login page\n\nthe signup page\n' | wrx add todo --prompts-from - -b >/dev/null
	[ "$(prompt_of todo-1)" = 'the login page' ]
	[ "$(prompt_of todo-2)" = 'the signup page' ]
	[ "$(groups | grep -c ' todo ')" -eq 2 ]
	printf 'Fix the login page.\n\nThen the signup page.\n' | wrx add whole -p - -b >/dev/null
	[ "$(prompt_of whole)" = "$(printf 'Fix the login page.\n\nThen the signup page.')" ]
	test ! -e "$E2E_TMP/work/proj__worktrees/whole-1"
	not wrx add blank -p - -b </dev/null 2>"$E2E_TMP/err"
	grep -qF 'add: -p -: nothing on stdin, no prompt' "$E2E_TMP/err"
}

# A template error, or two agents with one name, is said before anything
# is made: no branch, no worktree, no record.
t_group_errors_first() {
	make_repo
	group_config
	git -C "$repo" branch taken-2
	before=$(git -C "$repo" for-each-ref | wc -l)
	not wrx add bad -n 2 -p 'Use {{ lnag }} here.' 2>"$E2E_TMP/err"
	grep -qx "workrex: add: the prompt, at 1:5: unknown variable 'lnag'; no agent was made" \
		"$E2E_TMP/err"
	not wrx add bad -n 2 --branch-template '{{ base_name }}-{{ nmu }}' 2>"$E2E_TMP/err"
	grep -q "add: --branch-template at 1:17: unknown variable 'nmu'" "$E2E_TMP/err"
	not wrx add bad -n 2 --branch-template '{{ base_name }}' 2>"$E2E_TMP/err"
	grep -q "add: two agents would be 'bad' (bad, bad)" "$E2E_TMP/err"
	not wrx add taken -n 3 2>"$E2E_TMP/err"
	grep -q "add: 'taken-2' exists: a group's agents are all new branches" "$E2E_TMP/err"
	not wrx add bad -n 0 2>"$E2E_TMP/err"
	grep -q "add: -n 0: a number of agents, 1 or more" "$E2E_TMP/err"
	not wrx add bad -n 2 --max-concurrent x 2>"$E2E_TMP/err"
	grep -q "add: --max-concurrent x: a number of agents, 1 or more" "$E2E_TMP/err"
	not wrx add bad --foreach 'lang:' 2>"$E2E_TMP/err"
	grep -q "add: --foreach: 'lang' has no values" "$E2E_TMP/err"
	[ "$(git -C "$repo" for-each-ref | wc -l)" -eq "$before" ]
	[ -z "$(wrx list -q)" ]
	[ ! -e "$E2E_TMP/work/proj__worktrees" ] || [ -z "$(ls "$E2E_TMP/work/proj__worktrees")" ]
}

# Three candidates solve it three ways; the check passes for one. It ran
# when each reached done, on the host; compare shows it; check_required
# refuses a failed one; --merge lands the winner and leaves nothing of the
# others: no worktree, branch, keeper, record.
t_group_compare_merge() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agent: bash
		check: 'echo "ran in $PWD on $(cat /etc/hostname)"; grep -qx good solution.txt'
	YAML
	start_repo 160 40
	wait_for 'C-b \? help'
	wrx add best -n 3 -b >/dev/null
	wait_for '^ +[0-9] best-3'
	local w=$E2E_TMP/work/proj__worktrees k
	for k in 1 2 3; do
		if [ "$k" = 2 ]; then echo good; else echo "bad $k"; fi >"$w/best-$k/solution.txt"
		git -C "$w/best-$k" add solution.txt
		git -C "$w/best-$k" commit -qm "solution $k"
		# The agent says it is done, from its own pane, as its hooks would.
		wrx send "best-$k" 'workrex set-status done'
	done
	checks() {
		wrx compare best --json | python3 -c '
import json, sys
for c in json.load(sys.stdin):
    k = c["check"] or {}
    print(c["handle"], c["status"], k.get("state"), k.get("where"), k.get("current"), c["files"], c["added"])'
	}
	until_ok 30 in_output 'best-3 done failed' -- checks
	until_ok 30 in_output 'best-1 done failed' -- checks
	until_ok 30 in_output 'best-2 done passed' -- checks
	checks >"$E2E_TMP/checks"
	grep -qx 'best-2 done passed host True 1 1' "$E2E_TMP/checks"
	wrx compare best --json | grep -q "ran in $w/best-2 on $(cat /etc/hostname)"
	wrx compare best >"$E2E_TMP/table"
	grep -Eq '^best-2 +bash +done +[0-9]+m[0-9]+s +1 \+1 -0 +passed \(host\)' "$E2E_TMP/table"
	# A check again of what it checked runs nothing; a change, and it runs.
	wrx compare best --check best-2 --if-changed >"$E2E_TMP/out"
	[ ! -s "$E2E_TMP/out" ]
	echo more >>"$w/best-2/notes.txt"
	wrx compare best --check best-2 --if-changed | grep -q 'best-2: check passed (exit 0'
	rm "$w/best-2/notes.txt"
	# A failed check is exit 1, whether run now or seen already (issue 46 item 7).
	not wrx compare best --check best-1 >"$E2E_TMP/out"
	grep -q 'best-1: check failed (exit' "$E2E_TMP/out"
	not wrx compare best --check best-1 --if-changed >/dev/null
	not wrx compare best --check >/dev/null
	# check_required: a failed one is refused, nothing merged.
	printf 'check_required: true\n' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	not wrx compare best --merge best-1 -y 2>"$E2E_TMP/err"
	grep -q 'compare: best-1: its check did not pass, and check_required is true' "$E2E_TMP/err"
	git -C "$repo" log --oneline main >"$E2E_TMP/log"
	not grep -q 'solution' "$E2E_TMP/log"
	# The winner: merged; the others removed, with their work. An untracked
	# file in it is refused, as merge refuses it, and passed over on request.
	echo scratch >"$w/best-2/scratch.txt"
	wrx compare best --check best-2 >/dev/null
	not wrx compare best --merge best-2 -y 2>"$E2E_TMP/err"
	grep -q "branch 'best-2' has uncommitted changes; commit them or pass --ignore-uncommitted" "$E2E_TMP/err"
	not wrx compare best --ignore-uncommitted 2>/dev/null # only with --merge
	wrx compare best --merge best-2 -y --ignore-uncommitted >"$E2E_TMP/out"
	git -C "$repo" log --oneline main | grep -q 'solution 2'
	[ "$(cat "$repo/solution.txt")" = good ]
	wait_gone '^ +[0-9] best-[13]'
	# The winner stays with what is not committed; the others are gone.
	[ "$(git -C "$repo" for-each-ref --format='%(refname:short)' 'refs/heads/best-*')" = best-2 ]
	[ "$(ls "$w")" = best-2 ]
	[ -f "$w/best-2/scratch.txt" ]
	[ "$(wrx list -q)" = best-2 ]
	wrx rm -f best-2 >/dev/null
	[ -z "$(git -C "$repo" config --get-regexp '^workrex\.worktree\.best-' || true)" ]
	until_ok 10 nkeepers 1
	[ -z "$(wrx list -q)" ]
}

# --max-concurrent 2 with six: the rest wait, shown; each done lets the
# next open, in order; a sampler of the statuses never sees three at work.
t_group_max_concurrent() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agent: worker
		agents:
		  worker: {command: sh, args: [-c, "workrex set-status working; exec bash"]}
	YAML
	start_repo 160 50
	wait_for 'C-b \? help'
	wrx add job -n 6 --max-concurrent 2 -b >"$E2E_TMP/out"
	[ "$(grep -c "waits for its group's slot" "$E2E_TMP/out")" -eq 4 ]
	wait_for '^   queued for a slot'
	state() {
		wrx list --json | python3 -c '
import json, sys
a = [x for x in json.load(sys.stdin) if x.get("group") == "job"]
print(sum(x["status"] == "working" for x in a), sum(x["status"] == "done" for x in a),
      " ".join(x["handle"] for x in a if x["status"] == "working"))'
	}
	# Every 0.2 s until it ends (2 min at most, and not past a failed test's
	# end): how many are at work.
	(for _ in $(seq 1 600); do
		[ -d "$E2E_TMP" ] || break
		state | cut -d' ' -f1 >>"$E2E_TMP/samples"
		sleep 0.2
	done) &
	local sampler=$! round h
	for round in 1 2 3 4 5 6; do
		# The oldest at work first: job-1, job-2, then each as it opened.
		h=job-$round
		# (20 s ran out twice in CI rounds under load, sanitizers and all;
		# here each round takes under a second, ASan too.)
		until_ok 60 in_output -w "$h" -- state || { state >&2; screen >&2; return 1; }
		sleep 0.5 # for the sampler to see the slots full
		wrx send "$h" 'workrex set-status done'
		until_ok 60 in_output "^[0-9] $round " -- state || { state >&2; screen >&2; return 1; }
	done
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	state >"$E2E_TMP/end"
	grep -q '^0 6 ' "$E2E_TMP/end"
	sort -n "$E2E_TMP/samples" | tail -1 | grep -qx 2
	[ "$(grep -c . "$E2E_TMP/samples")" -ge 8 ]
}

# C-b = on a candidate: its group as rows; Enter its check's output (its
# escapes as text); r checks again; m asks, then merges it and removes the
# rest. The winner has an untracked file (a scratch file, a post_create
# marker): refused, then asked again as C-b m asks (issue 46).
t_group_compare_view() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agent: bash
		check: 'printf "said \033]52;c;cHduZWQ=\007 and \033]0;PWNED\007\n"; grep -qx good solution.txt'
	YAML
	start_repo 160 40
	wait_for 'C-b \? help'
	tm pipe-pane -o "cat >>'$E2E_TMP/outer.log'"
	wrx add pick -n 3 -b >/dev/null
	wait_for '^ +[0-9] pick-3'
	local w=$E2E_TMP/work/proj__worktrees k
	for k in 1 2 3; do
		if [ "$k" = 3 ]; then echo good; else echo "bad $k"; fi >"$w/pick-$k/solution.txt"
		git -C "$w/pick-$k" add solution.txt
		git -C "$w/pick-$k" commit -qm "solution $k"
	done
	echo notes >"$w/pick-3/scratch.txt"
	wrx compare pick --check >/dev/null || true
	prefix 3
	prefix =
	wait_for 'compare pick  3 candidates'
	wait_for '^ pick-1 +bash +- +[0-9]+m[0-9]+s 1 \+1 -0 +failed'
	wait_for '^ pick-3 +bash +- +[0-9]+m[0-9]+s 1 \+1 -0 +passed'
	# It opened on the focused agent; j moves down, k up.
	keys k
	keys Enter
	wait_for 'check of pick-1: failed, exit 1'
	wait_for 'said \^\[\]52;c;cHduZWQ=\^G and \^\[\]0;PWNED\^G'
	keys q
	wait_gone 'check of pick-1'
	wait_for 'compare pick'
	keys r
	wait_for 'pick-1: check failed \(exit 1'
	keys j j m
	wait_for 'merge pick-3, and remove the rest of pick with their work \(pick-1, pick-2\)\? \(y/n\)'
	keys y
	wait_for "branch 'pick-3' has uncommitted changes; commit them or pass --ignore-uncommitted"
	wait_for 'merge its commits anyway, lea'
	wait_for '^worktree\? \(y/n\)'
	keys y
	wait_for 'merged pick-3; removed pick-1, pick-2'
	wait_gone '^ +[0-9] pick-1'
	until_ok 10 in_output 'solution 3' -- git -C "$repo" log --oneline main
	# The winner keeps its worktree, with the scratch file; the others went.
	picks() { [ "$(git -C "$repo" for-each-ref --format='%(refname:short)' 'refs/heads/pick-*')" = pick-3 ]; }
	until_ok 10 picks
	[ -f "$w/pick-3/scratch.txt" ]
	tm pipe-pane
	test -s "$E2E_TMP/outer.log"
	not grep -aq $'\033]52;' "$E2E_TMP/outer.log"
	not grep -aq $'\033]0;PWNED' "$E2E_TMP/outer.log"
}

# At 80x24 with no check set: r in C-b = says so, in full, over the view
# (a long error's rows were drawn under it once, and nothing showed).
t_group_compare_no_check() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 80 24
	wait_for 'C-b \? help'
	wrx add two -n 2 -b >/dev/null
	wait_for '^ +[0-9] two-2'
	prefix 2
	prefix =
	wait_for 'compare two  2 candidates'
	keys r
	wait_for 'no check: set check \(e.g. check: make test\)'
	screen | grep -q 'compare two  2 candidates'
	keys q
	wait_gone 'compare two'
}

# The project's check, in its .workrex.yaml, is a command: not run until
# trusted. `workrex trust` from a shell reaches the running dashboard: the
# done candidates are checked at once (no C-b R), and the question that
# waited on the status line goes (issue 46).
t_trust_from_a_shell_runs_checks() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	printf 'check: grep -qx good solution.txt\n' >"$repo/.workrex.yaml"
	start_repo 160 40
	wait_for 'a question waits: C-b a to answer - .workrex.yaml is not trusted, so its check'
	wrx add tw -n 2 -b >/dev/null
	wait_for '^ +[0-9] tw-2'
	local w=$E2E_TMP/work/proj__worktrees k
	for k in 1 2; do
		if [ "$k" = 2 ]; then echo good; else echo bad; fi >"$w/tw-$k/solution.txt"
		git -C "$w/tw-$k" add solution.txt
		git -C "$w/tw-$k" commit -qm "solution $k"
		wrx send "tw-$k" 'workrex set-status done'
	done
	states() {
		wrx compare tw --json | python3 -c '
import json, sys
print(" ".join("%s:%s" % (c["handle"], (c["check"] or {}).get("state")) for c in json.load(sys.stdin)))'
	}
	wait_for '^ +[0-9] ✓ tw-2'
	sleep 2
	[ "$(states)" = "tw-1:None tw-2:None" ]
	wrx trust >"$E2E_TMP/trust.out"
	grep -q 'the running dashboard took it' "$E2E_TMP/trust.out"
	until_ok 30 eval '[ "$(states)" = "tw-1:failed tw-2:passed" ]' || { states >&2; return 1; }
	wait_gone 'a question waits'
	# --merge from a script, no terminal to ask (issue 46 item 7): the merge
	# is done, exit 0, and the others stay, said.
	(cd "$repo" && "$WORKREX" compare tw --merge tw-2 </dev/null >"$E2E_TMP/out" 2>"$E2E_TMP/err")
	grep -q 'no terminal to ask: the others (tw-1) stay' "$E2E_TMP/err"
	git -C "$repo" log --oneline main | grep -q 'solution 2'
	wrx list -q | grep -qx tw-1
}

run_test "add -a twice: one agent for each CLI, branch and prompt rendered; list shows the group" t_group_of_clis
run_test "add -n 3 --foreach makes the product; a prompt file's foreach; --prompts-from a line each; -p - one" t_group_product
run_test "a template error or a clash is said before any agent is made" t_group_errors_first
run_test "three candidates: the check ran at done; compare shows it; --merge keeps the winner only" t_group_compare_merge
run_test "--max-concurrent 2 of 6: never three at work; each done opens the next, in order" t_group_max_concurrent
run_test "C-b = shows the group; Enter a check's output as text; r, and m merges the best" t_group_compare_view
run_test "C-b = at 80x24 with no check: r says so over the view" t_group_compare_no_check
run_test "workrex trust from a shell reaches the dashboard: the done candidates are checked" t_trust_from_a_shell_runs_checks
