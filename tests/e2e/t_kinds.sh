#!/usr/bin/env bash
# Agent kinds (SPEC §12, issue 32): the table and what reads it, profiles
# and layouts, add --fork, -w, -A.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

git_env
# `workrex` on PATH, as a user in an agent's shell runs it.
mkdir -p "$E2E_TMP/bin"
ln -sf "$WORKREX" "$E2E_TMP/bin/workrex"
export PATH="$E2E_TMP/bin:$PATH"

# A stand-in claude: says its arguments on one line, then reads its input.
stand_in_claude() {
	mkdir -p "$E2E_TMP/claude-bin"
	printf '#!/bin/sh\necho "CLAUDE ARGS:$*:"\nexec cat\n' >"$E2E_TMP/claude-bin/claude"
	chmod +x "$E2E_TMP/claude-bin/claude"
	export PATH="$E2E_TMP/claude-bin:$PATH" # this test's (a subshell) alone
}
# The arguments H's stand-in said it got (lines joined: a narrow pane wraps them).
args_of() { wrx capture "$1" | tr -d '\n' | grep -o 'CLAUDE ARGS:[^:]*:' | head -1; }

t_agents_and_setup_print() {
	make_repo
	stand_in_claude
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agents:
		  reviewer: {type: codex, command: /opt/wrap/run-codex}
		  fast: {command: claude, args: [--model, haiku]}
	YAML
	(cd "$repo" && workrex agents) >"$E2E_TMP/agents"
	local k
	for k in claude codex gemini opencode copilot amp cursor-agent qwen crush goose kiro-cli pi grok aider; do
		grep -Eq "^$k +" "$E2E_TMP/agents"
	done
	grep -Eq '^claude +yes +argument +yes +yes +not set +- +--dangerously-skip-permissions' "$E2E_TMP/agents"
	grep -Eq '^reviewer +codex +/opt/wrap/run-codex' "$E2E_TMP/agents"
	grep -Eq '^fast +claude +claude' "$E2E_TMP/agents"
	(cd "$repo" && workrex agents --json) | python3 -c '
import json, sys
d = json.load(sys.stdin)
kinds = {k["name"]: k for k in d["kinds"]}
assert len(kinds) >= 14 and kinds["claude"]["installed"], kinds["claude"]
assert kinds["aider"]["prompt"] == "typed" and kinds["codex"]["fork"] == "fork -C . {id}"
assert {p["name"]: p["kind"] for p in d["profiles"]} == {"reviewer": "codex", "fast": "claude"}
c = kinds["claude"]
assert c["hooks_state"] == "not set" and c["heard"] is None, c
assert {"event": "StopFailure", "matcher": None, "status": "failed"} in c["events"], c["events"]
assert c["registry"].endswith("/.claude/sessions") and c["sessions_list"] == "agents --json --all", c
assert kinds["copilot"]["hooks_file"].endswith("/.copilot/hooks/workrex-status.json"), kinds["copilot"]
assert kinds["codex"]["registry"] is None and kinds["gemini"]["usage"].startswith("tokens"), kinds
assert sum(1 for k in kinds.values() if k["hooks"]) >= 9, [k for k in kinds if kinds[k]["hooks"]]'
	# A type that is no kind: the file is refused, said where.
	printf 'agents:\n  x: {type: nosuch, command: y}\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	not workrex config check 2>"$E2E_TMP/err"
	grep -q "agents.\*.type: 'nosuch' is no agent kind" "$E2E_TMP/err"
	rm "$XDG_CONFIG_HOME/workrex/config.yaml"
	# --print: every kind with hooks, installed or not; nothing written.
	workrex setup --print >"$E2E_TMP/print"
	grep -q "claude: would write $HOME/.claude/settings.json" "$E2E_TMP/print"
	grep -q "codex: would write $HOME/.codex/hooks.json" "$E2E_TMP/print"
	grep -q "gemini: would write $HOME/.gemini/settings.json" "$E2E_TMP/print"
	grep -q "opencode: would write $XDG_CONFIG_HOME/opencode/plugins/workrex-status.js" "$E2E_TMP/print"
	grep -q "copilot: would write $HOME/.copilot/hooks/workrex-status.json" "$E2E_TMP/print"
	grep -q "cursor-agent: would write $HOME/.cursor/hooks.json" "$E2E_TMP/print"
	grep -q "qwen: would write $HOME/.qwen/settings.json" "$E2E_TMP/print"
	grep -q "kiro-cli: would write $HOME/.kiro/agents/workrex.json" "$E2E_TMP/print"
	grep -q "grok: would write $HOME/.grok/hooks/workrex-status.json" "$E2E_TMP/print"
	grep -q 'workrexStatus.setup = workrexStatus' "$E2E_TMP/print"
	[ ! -e "$HOME/.codex" ] && [ ! -e "$HOME/.gemini" ]
}

# layouts: add -l opens the layout's panes; an unknown one is refused.
t_layout() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agent: bash
		layouts:
		  review:
		    panes:
		      - command: "sh -c 'echo LAYOUT-LEFT; exec cat'"
		      - command: "sh -c 'echo LAYOUT-RIGHT; exec cat'"
		        split: vertical
		        focus: true
		      - command: "echo LAYOUT-THIRD; exec cat"
	YAML
	start_repo 160 40
	wait_for 'C-b \? help'
	not wrx add x -l nosuch 2>"$E2E_TMP/err"
	grep -q 'add: -l nosuch: no such layout' "$E2E_TMP/err"
	[ -z "$(git -C "$repo" branch --list x)" ]
	wrx add r -l review >/dev/null
	wait_for 'LAYOUT-LEFT'
	wait_for 'LAYOUT-RIGHT'
	wait_for 'LAYOUT-THIRD'
	wrx list --json | python3 -c '
import json, sys
a = {x["handle"]: x for x in json.load(sys.stdin)}
assert a["r"]["panes"] == 3, a["r"]'
	[ "$(git -C "$repo" config workrex.worktree.r.layout)" = review ]
	# The window layout: r's panes as the layout splits them: the second
	# beside the first, the third below the second.
	prefix Space
	wait_for '\[grid\]'
	prefix Space
	wait_for '\[full\]'
	prefix Space
	wait_for '\[window\]'
	# Where each pane's own first line is (not its title bar, which names it too).
	row_of() { screen | grep -n -- "│$1" | head -1 | cut -d: -f1; }
	col_of() { screen | grep -- "│$1" | head -1 | sed "s/│$1.*//" | wc -m; }
	until_ok 5 eval '[ -n "$(row_of LAYOUT-THIRD)" ]'
	[ "$(row_of LAYOUT-LEFT)" = "$(row_of LAYOUT-RIGHT)" ]
	[ "$(col_of LAYOUT-RIGHT)" -gt "$(col_of LAYOUT-LEFT)" ]
	[ "$(row_of LAYOUT-THIRD)" -gt "$(row_of LAYOUT-RIGHT)" ]
	[ "$(col_of LAYOUT-THIRD)" = "$(col_of LAYOUT-RIGHT)" ]
	# A plain add: the config's panes (the agent and a shell).
	wrx add p -b >/dev/null
	panes_of() { wrx list --json | python3 -c "import json, sys; print({x['handle']: x['panes'] for x in json.load(sys.stdin)}['$1'])"; }
	until_ok 10 in_output -x 2 -- panes_of p
}

# add --fork: the agent's conversation continued by its CLI's fork flag, in a
# new worktree with its uncommitted work (modified and untracked), its own left.
t_fork() {
	make_repo
	stand_in_claude
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: claude\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 160 40
	wait_for 'C-b \? help'
	wrx add a -b >/dev/null
	until_ok 10 in_output -E '^CLAUDE ARGS:--session-id [0-9a-f-]{36}:$' -- args_of a
	local s w=$E2E_TMP/work/proj__worktrees
	s=$(args_of a | sed 's/^CLAUDE ARGS:--session-id \(.*\):$/\1/')
	echo changed >"$w/a/a.txt"
	echo new >"$w/a/new.txt"
	mkdir -p "$w/a/sub/deep"
	echo deep >"$w/a/sub/deep/f.txt"
	ln -s ../a.txt "$w/a/sub/link"
	# From a's own worktree, as a user in its shell would.
	(cd "$w/a" && workrex add a2 --fork -p 'try the other way' -b) >"$E2E_TMP/out"
	grep -q 'carried its uncommitted changes and untracked files' "$E2E_TMP/out"
	[ "$(cat "$w/a2/sub/deep/f.txt")" = deep ]
	[ "$(readlink "$w/a2/sub/link")" = ../a.txt ] # a link as a link
	until_ok 10 in_output -E "^CLAUDE ARGS:--resume $s --fork-session --session-id [0-9a-f-]{36} -- try the other way:$" -- args_of a2
	[ "$(cat "$w/a2/a.txt")" = changed ] && [ "$(cat "$w/a2/new.txt")" = new ]
	# a's work is still a's.
	[ "$(cat "$w/a/a.txt")" = changed ] && [ "$(cat "$w/a/new.txt")" = new ]
	[ "$(git -C "$w/a2" rev-parse --abbrev-ref HEAD)" = a2 ]
	[ "$(git -C "$w/a2" rev-parse HEAD)" = "$(git -C "$w/a" rev-parse HEAD)" ]
	# A session named by hand; the focused agent when run from nowhere in particular.
	(cd "$w/a" && workrex add a3 --fork=0f0e-77 -b) >/dev/null
	until_ok 10 in_output -E '^CLAUDE ARGS:--resume 0f0e-77 --fork-session --session-id [0-9a-f-]{36}:$' -- args_of a3
	not sh -c "cd '$w/a' && '$WORKREX' add a4 --fork='x;y'" 2>"$E2E_TMP/err"
	grep -q 'add: --fork: that is no session id' "$E2E_TMP/err"
	[ -z "$(git -C "$repo" branch --list a4)" ]
	# No dashboard: the session kept for a reboot says which.
	kill_tmux
	(cd "$w/a" && workrex add a5 --fork -b) >/dev/null
	until_ok 10 in_output -E "^CLAUDE ARGS:--resume $s --fork-session --session-id [0-9a-f-]{36}:$" -- args_of a5
	# A sandboxed agent's fork is sandboxed too: --no-sandbox is refused.
	git -C "$repo" config workrex.worktree.a.sandbox true
	not sh -c "cd '$w/a' && '$WORKREX' add a6 --fork --no-sandbox" 2>"$E2E_TMP/err"
	grep -q 'add: --fork of a, which runs sandboxed: its fork does too' "$E2E_TMP/err"
	[ -z "$(git -C "$repo" branch --list a6)" ]
}

# add -w: the main worktree's uncommitted changes move into the new agent; -u
# untracked files too; nothing is left in the stash. The project's own
# .workrex.yaml, untracked as workrex init leaves it, stays (issue 46).
t_with_changes() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	echo edited >"$repo/a.txt"
	echo untracked >"$repo/u.txt"
	printf 'scrollback: 3000\n' >"$repo/.workrex.yaml"
	wrx add w -w -u -b >"$E2E_TMP/out"
	grep -q 'moved the uncommitted changes of' "$E2E_TMP/out"
	grep -q "the project's .workrex.yaml stays in $repo (its config), not moved" "$E2E_TMP/out"
	local w=$E2E_TMP/work/proj__worktrees/w
	[ "$(cat "$w/a.txt")" = edited ] && [ "$(cat "$w/u.txt")" = untracked ]
	[ "$(cat "$repo/.workrex.yaml")" = 'scrollback: 3000' ] && [ ! -e "$w/.workrex.yaml" ]
	[ "$(git -C "$repo" status --porcelain)" = '?? .workrex.yaml' ]
	[ -z "$(git -C "$repo" stash list)" ]
	# -u alone is no request; nothing made.
	not wrx add v -u 2>"$E2E_TMP/err"
	grep -q 'add: -u and --patch choose what -w (or --fork) carries' "$E2E_TMP/err"
	end_keepers
}

# add -A: the branch named from the prompt by auto_name.command.
t_auto_name() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-YAML
		agent: bash
		auto_name:
		  command: 'cat >"$E2E_TMP/asked"; echo; echo "\\\`Fix The Login Bug!\\\`"'
	YAML
	wrx add -A -p 'the login page 500s on an empty password' -b >"$E2E_TMP/out" </dev/null
	grep -q 'named it fix-the-login-bug' "$E2E_TMP/out"
	grep -q 'the login page 500s on an empty password' "$E2E_TMP/asked"
	grep -q 'git branch name' "$E2E_TMP/asked"
	[ -n "$(git -C "$repo" branch --list fix-the-login-bug)" ]
	# Named again: it exists; with no terminal to ask, refused, nothing made.
	not wrx add -A -p 'again' -b </dev/null 2>"$E2E_TMP/err"
	grep -q "add: -A: .* named 'fix-the-login-bug', which exists; name it yourself" "$E2E_TMP/err"
	not wrx add -A -b </dev/null 2>"$E2E_TMP/err"
	grep -q 'add: -A names the branch from the prompt' "$E2E_TMP/err"
	end_keepers
}

# A kind with no prompt flag (aider): the prompt typed into it once it is up.
t_typed_prompt() {
	make_repo
	mkdir -p "$E2E_TMP/aider-bin" "$XDG_CONFIG_HOME/workrex"
	printf '#!/bin/sh\necho "AIDER ARGS:$*:"\nsleep 0.5\necho "aider> "\nexec cat\n' >"$E2E_TMP/aider-bin/aider"
	chmod +x "$E2E_TMP/aider-bin/aider"
	export PATH="$E2E_TMP/aider-bin:$PATH"
	printf 'agent: aider\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 140 40
	wait_for 'C-b \? help'
	wrx add t -p '-- typed in, not an argument' >/dev/null
	wait_for 'AIDER ARGS::'
	# Echoed by the terminal, then printed back by cat: it was submitted.
	until_ok 15 in_output -e "-- typed in, not an argument" -- wrx capture t || { screen >&2; return 1; }
	typed_twice() { [ "$(wrx capture t | grep -c -- '-- typed in, not an argument')" -eq 2 ]; }
	until_ok 10 typed_twice
}

run_test "agents lists every kind, installed or not, and the profiles; setup --print every hook format" t_agents_and_setup_print
run_test "add -l opens the layout's panes; an unknown layout is refused" t_layout
run_test "add --fork: the fork flag and session, the work modified and untracked, the source's kept" t_fork
run_test "add -w -u moves the main worktree's changes into the new agent" t_with_changes
run_test "a kind with no prompt flag has its prompt typed in, and submitted" t_typed_prompt
run_test "add -A names the branch from the prompt through auto_name.command" t_auto_name
