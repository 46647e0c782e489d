#!/usr/bin/env bash
# Agent status: hooks installed by `workrex setup` run by a stand-in for
# Claude Code change the icons; status noticed without hooks (exit,
# silence); the RPC protocol against the live dashboard.
. "$(dirname "$0")/lib.sh"
trap stop EXIT

git_env
here=$(cd "$(dirname "$0")" && pwd)
# `workrex` on PATH, as the hooks call it by name.
mkdir -p "$E2E_TMP/bin"
ln -sf "$WORKREX" "$E2E_TMP/bin/workrex"
export PATH="$E2E_TMP/bin:$PATH"

# The sidebar row of agent N ("  2 ◆ feat 0m"), as shown.
row() { screen | cut -c1-24 | grep -E "^ $1 " || true; }

# fake_claude_agent: the config's agent, a stand-in that runs Claude Code's hooks.
fake_claude_agent() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<YAML
agent: fake
agents:
  fake:
    type: claude
    command: python3
    args: ["$here/fake_agent.py", "claude"]
YAML
}

# outside CMD...: CMD run in no project (the folder trust agents reports is a project's).
outside() { (cd "$E2E_TMP" && "$@"); }

t_claude_hooks_change_icons() {
	make_repo
	mkdir -p "$HOME/.claude"
	echo '{"theme": "dark"}' >"$HOME/.claude/settings.json"
	workrex setup >"$E2E_TMP/setup.out"
	grep -q 'claude: hooks added' "$E2E_TMP/setup.out"
	grep -q 'claude: no hook of it has reached a dashboard yet' "$E2E_TMP/setup.out"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	fake_claude_agent
	# Installed, not heard from yet. (Asked outside any project: the real
	# Claude's folder trust, which the stand-in does not ask, is no part of it.)
	outside workrex agents | grep -Eq '^claude +.* set up +- ' || { outside workrex agents >&2; return 1; }
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add feat -b >/dev/null
	wait_for 'fake claude ready'
	# The home shell keeps the focus; feat reports through its hooks.
	wrx send feat go
	wait_for '^ 2 ● feat'
	wait_for 'hook PostToolUse rc=0'
	wrx status --json | grep -q '"status":"working"'
	# A notification that is not a permission prompt changes nothing.
	wrx send feat idle
	sleep 0.5
	row 2 | grep -q '●'
	wrx send feat ask
	wait_for '^ 2 ◆ feat'
	# Needing the user, it stays in its place: rows do not move under a click.
	screen | sed -n 2p | grep -q '^ 1 proj'
	wrx send feat finish
	wait_for '^ 2 ✓ feat'
	wait_for 'hook Stop rc=0'
	not grep -q 'rc=[1-9]' <(screen)
	# Focusing the agent clears its highlight, not its status: done stays
	# for list and status, and wait returns at once.
	prefix 2
	sleep 0.5
	wait_for '^ 2 ✓ feat'
	wrx status --json | grep -q '"status":"done"'
	(cd "$repo" && timeout 5 "$WORKREX" wait feat --timeout 3 >/dev/null)
	grep -q 'workrex set-status waiting' "$HOME/.claude/settings.json"
	# Every event setup mapped: a permission request and an MCP elicitation wait...
	wrx send feat go
	wait_for '^ 2 ● feat'
	wrx send feat perm
	wait_for '^ 2 ◆ feat'
	wrx send feat go
	wait_for '^ 2 ● feat'
	wrx send feat elicit
	wait_for '^ 2 ◆ feat'
	# ... a background subagent finishing is not the agent's end ...
	wrx send feat go
	wait_for '^ 2 ● feat'
	wrx send feat sub
	sleep 0.5
	not grep -q 'hook SubagentStop' <(screen) # setup installs none for it
	row 2 | grep -q '●'
	# ... a turn stopped by a rate limit waits for its reset, said under its row ...
	wrx send feat limit
	wait_for '^ 2 ◆ feat'
	wait_for '^   » rate_limit: usage'
	wrx status --json | grep -q '"status":"waiting"'
	# ... a turn that died on an API error is failed, with the error as its reason ...
	wrx send feat go
	wait_for '^ 2 ● feat'
	wrx send feat fail
	wait_for '^ 2 ✗ feat'
	wait_for '^   server_error: API'
	wrx status --json | grep -q '"failure":"server_error: API Error: 500 overloaded"'
	# ... and a session that ended leaves no status.
	wrx send feat end
	wait_for 'hook SessionEnd rc=0'
	until_ok 10 eval 'wrx status --json | grep -q "\"status\":null"' || { wrx status --json >&2; return 1; }
	not grep -q 'rc=[1-9]' <(screen)
	# agents says its hooks were heard from.
	outside workrex agents | grep -Eq '^claude +.* set up +just now ' || { outside workrex agents >&2; return 1; }
	workrex setup | grep -q 'claude: its hooks last reached a dashboard 0 min ago'
	wrx send feat quit
	wait_for '\[exited 0\]'
}

t_status_without_hooks() {
	make_repo
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add quiet -b >/dev/null
	wrx add ends -b >/dev/null
	wait_for '^ 3 ends'
	# A working agent that prints nothing for 10 s is shown interrupted.
	wrx send quiet 'workrex set-status working; workrex set-title "long job"'
	wait_for '^ [23] ● quiet'
	wait_for '^   » long job'
	wait_for '^ [23] ○ quiet' 20
	prefix w
	wait_for 'interrupted'
	# The overview covers the whole pane area: no pane's text or border
	# beside it; each row's columns where the header's are, an icon of
	# three bytes or not (issue 46).
	screen | head -n -1 | not grep -q '│'
	python3 - "$(screen)" <<-'PY'
		import sys
		rows = sys.argv[1].split("\n")
		head = rows[0]
		at = head.index("AGE")
		body = [r for r in rows[1:] if "quiet" in r or "ends" in r]
		assert body and all(r[at - 1] == " " and r[at] != " " for r in body), (head, body)
	PY
	keys q
	# A title cannot pass for another agent's row: one line, marked as the agent's.
	wrx send quiet "workrex set-title \"\$(printf '\\n 9 \\342\\234\\223 fake\\t\\tagent')\"; workrex set-title --help >/dev/null"
	wait_for '^   » 9 ✓ fake agent' 20
	screen | not grep -q '^ 9 '
	wrx send quiet 'workrex set-title "long job"'
	wait_for '^   » long job' 
	# An agent whose program fails, having said nothing, is failed: its
	# icon, and how it ended for status, list and wait.
	wrx send ends 'exec sh -c "echo cannot start: no API key; exit 3"'
	wait_for '^ [23] ✗ ends'
	wrx status ends | grep -qF 'failed (exit 3: cannot start: no API key)'
	wrx status --json | grep -qF '"failure":"exit 3: cannot start: no API key"'
	(cd "$repo" && timeout 5 "$WORKREX" wait ends --status failed --timeout 3 >/dev/null)
	# Waiting for it to be done returns at once, non-zero, saying why (issue 46).
	(cd "$repo" && not timeout 5 "$WORKREX" wait ends 2>"$E2E_TMP/wait.err")
	grep -qF "wait: ends failed (exit 3: cannot start: no API key): it will not be done" "$E2E_TMP/wait.err"
	# One whose program ends well is done.
	wrx send quiet 'exit 0'
	wait_for '^ [23] ✓ quiet'
	# Outside any pane, set-status has nothing to say and succeeds.
	env -u WORKREX_PANE -u WORKREX_RPC_TOKEN -u WORKREX_RPC_SOCKET "$WORKREX" set-status done
	not env WORKREX_SANDBOX=1 "$WORKREX" set-status done 2>/dev/null
	not "$WORKREX" set-status sleeping 2>/dev/null
}

# A status is the agent's state, not a dashboard's memory: a failed, a
# crashed and a done agent keep their icon, reason and age across a detach,
# with no dashboard, and across a reboot that took every keeper; wait
# answers at once for each, non-zero for the failed ones (issue 46).
t_statuses_survive() {
	make_repo
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add ok -b >/dev/null
	wrx add bad -b >/dev/null
	wrx add crash -b >/dev/null
	wait_for '^ 4 crash'
	wrx send ok 'workrex set-title "all tests pass"; workrex set-status done'
	wrx send bad 'exec sh -c "echo cannot start: no API key; exit 3"'
	wrx send crash "exec sh -c 'echo about to crash; kill -SEGV \$\$'"
	wait_for '^ 2 ✓ ok'
	wait_for '^ 3 ✗ bad'
	wait_for '^ 4 ✗ crash'
	local t0=$SECONDS
	sleep 3
	# As they are: in the sidebar, in status, and to wait.
	statuses() {
		local age=$(($1 * 1000)) json
		json=$(wrx status --json)
		python3 - "$age" "$json" <<-'PY'
			import json, sys
			age, got = int(sys.argv[1]), json.loads(sys.argv[2])
			by = {a["handle"]: a for a in got}
			want = {"ok": ("done", None), "bad": ("failed", "exit 3: cannot start: no API key"),
			        "crash": ("failed", "killed by signal 11: about to crash")}
			for h, (st, why) in want.items():
			    a = by[h]
			    assert a.get("status") == st, (h, a)
			    assert a.get("failure") == why, (h, a)
			    assert a.get("since_ms", 0) >= age, (h, a, age)
		PY
		(cd "$repo" && timeout 5 "$WORKREX" wait ok --timeout 3 >/dev/null)
		(cd "$repo" && not timeout 5 "$WORKREX" wait bad --timeout 3 2>"$E2E_TMP/wait.err")
		grep -qF 'bad failed (exit 3: cannot start: no API key): it will not be done' "$E2E_TMP/wait.err"
		(cd "$repo" && not timeout 5 "$WORKREX" wait crash --timeout 3 2>/dev/null)
		(cd "$repo" && timeout 5 "$WORKREX" wait crash --status failed --timeout 3 >/dev/null)
	}
	statuses 3
	# A dashboard started again shows each as it was, age and all.
	kept() {
		wait_for '^ 2 ✓ ok'
		wait_for '^ 3 ✗ bad'
		wait_for '^ 4 ✗ crash'
		wait_for '» all tests pass'
		statuses $((SECONDS - t0 - 1)) # whole seconds: one less
	}
	# Detached: the keepers answer for them.
	prefix d
	wait_for 'WORKREX-EXITED'
	wrx status >"$E2E_TMP/status"
	grep -qF 'failed (exit 3: cannot start: no API key)' "$E2E_TMP/status"
	(cd "$repo" && not timeout 5 "$WORKREX" wait bad --timeout 3 2>/dev/null)
	(cd "$repo" && timeout 5 "$WORKREX" wait ok --timeout 3 >/dev/null)
	kill_tmux
	start_repo 140 40
	kept
	# A reboot: every process, and the runtime directory with it.
	prefix d
	wait_for 'WORKREX-EXITED'
	end_keepers
	rm -rf "$XDG_RUNTIME_DIR/workrex"
	kill_tmux
	start_repo 140 40
	kept
	# The failed ones were not started again; opened by the user, they start anew.
	nkeepers 3 # the project's shell's, ok's two panes'
	wrx open bad
	wait_for '^ 3 bad'
	until_ok 10 not nkeepers 3
}

t_rpc_protocol_live() {
	make_repo
	start_repo 140 40
	wait_for 'wrx\$'
	for h in agent-a agent-b agent-c agent-d; do
		wrx add "$h" -b >/dev/null
	done
	wait_for '^ 5 agent-d'
	for h in agent-a agent-b agent-c agent-d; do
		wrx send "$h" "printf %s \"\$WORKREX_RPC_TOKEN\" >$E2E_TMP/tok-$h; printf %s \"\$WORKREX_RPC_SOCKET\" >$E2E_TMP/sock"
	done
	local i=0
	while [ ! -s "$E2E_TMP/tok-agent-d" ] && ((i < 200)); do sleep 0.05; i=$((i + 1)); done
	sleep 0.2
	python3 "$here/rpc_protocol.py" "$(cat "$E2E_TMP/sock")" "$XDG_STATE_HOME/workrex/workrex.log" \
		"$(cat "$E2E_TMP/tok-agent-a")" "$(cat "$E2E_TMP/tok-agent-b")" \
		"$(cat "$E2E_TMP/tok-agent-c")" "$(cat "$E2E_TMP/tok-agent-d")" >"$E2E_TMP/rpc.out" 2>&1 ||
		{ cat "$E2E_TMP/rpc.out" >&2; screen >&2; return 1; }
	grep -c '^ok - ' "$E2E_TMP/rpc.out" | sed 's/^/rpc protocol checks passed: /'
	# Only A's status changed; the dashboard is alive and B's panes are there.
	wrx status --json >"$E2E_TMP/st.json"
	python3 - "$E2E_TMP/st.json" <<'PY'
import json, sys
st = {a["handle"]: a.get("status") for a in json.load(open(sys.argv[1]))}
assert st["agent-a"] == "done", st
assert st["agent-b"] is None and st["agent-c"] is None, st
PY
	wrx send agent-b 'echo still-here'
	wait_for 'still-here'
	# A closed pane's token is dead.
	local tb
	tb=$(cat "$E2E_TMP/tok-agent-b")
	wrx close agent-b
	wait_gone 'still-here'
	not env WORKREX_RPC_TOKEN="$tb" WORKREX_RPC_SOCKET="$(cat "$E2E_TMP/sock")" "$WORKREX" set-status done 2>/dev/null
	# close from the agent itself (its own pane goes).
	wrx send agent-c 'workrex close'
	wait_gone '^ +[0-9]+ agent-c:'
}

# The static guest client, as a sandbox would carry it, from an agent's pane.
t_guest_client_over_rpc() {
	: "${WORKREX_GUEST:?set WORKREX_GUEST to the static guest client}"
	make_repo
	mkdir -p "$E2E_TMP/guestbin" "$E2E_TMP/fakebin" "$XDG_CONFIG_HOME/workrex"
	ln -sf "$WORKREX_GUEST" "$E2E_TMP/guestbin/workrex"
	# A desktop that records notifications.
	printf '#!/bin/sh\nprintf "%%s|" "$@" >>%s/notified; echo >>%s/notified\n' "$E2E_TMP" "$E2E_TMP" \
		>"$E2E_TMP/fakebin/notify-send"
	chmod +x "$E2E_TMP/fakebin/notify-send"
	echo 'notify: desktop' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	# A pre_merge hook the sandbox's merge must not run.
	printf 'pre_merge: ["touch %s/pre-merge-ran"]\n' "$E2E_TMP" >"$repo/.workrex.yaml"
	git -C "$repo" add .workrex.yaml
	git -C "$repo" commit -qm config
	PATH="$E2E_TMP/fakebin:$PATH" start_repo 140 40
	wait_for 'wrx\$'
	wrx add inside -b >/dev/null
	wait_for '^ 2 inside'
	local g="PATH=$E2E_TMP/guestbin:\$PATH WORKREX_SANDBOX=1"
	wrx send inside "$g workrex --version; $g workrex set-status waiting; $g workrex add spawned -p 'from the sandbox' -b; echo add-rc=\$?"
	wait_for 'sandbox client'
	wait_for 'add-rc=0'
	wait_for '^ [0-9] spawned'
	# The project's pre_merge was never trusted: the dashboard asks; no.
	wait_for 'a question waits: C-b a to answer - .workrex.yaml is not trusted, so its pre_merge'
	prefix a
	wait_for '^trust it\? \(y/n\)'
	keys n
	wait_gone 'is not trusted'
	grep -q 'from the sandbox' "$repo/../proj__worktrees/spawned/.workrex/PROMPT-spawned.md"
	# A prompt for an agent that exists is not an agent's to type into it.
	wrx send inside "$g workrex add spawned -p 'speak-for-it' -b; echo again-rc=\$?"
	wait_for 'again-rc=1'
	wrx capture spawned | not grep -q 'speak-for-it'
	wait_for '◆ inside'
	grep -q 'workrex: inside|waiting|' "$E2E_TMP/notified"
	# An agent that notifies in a loop starts no process per call.
	local before
	before=$(wc -l <"$E2E_TMP/notified")
	wrx send inside "for i in \$(seq 40); do $g workrex notify spam-\$i; done; echo spam-done"
	wait_for 'spam-done' 30
	sleep 1
	[ "$(wc -l <"$E2E_TMP/notified")" -le $((before + 3)) ] || { cat "$E2E_TMP/notified" >&2; return 1; }
	# Another agent is not its to merge.
	wrx send inside "$g workrex merge spawned; echo merge-other-rc=\$?"
	wait_for 'merge-other-rc=1'
	wait_for 'may only merge'
	# With an untracked file its merge is refused at once, the user not asked,
	# saying the option its own client takes (issue 46).
	wrx send inside "echo new >new.txt && git add new.txt && git commit -qm new && echo scratch >scratch.txt && $g workrex merge; echo merge-dirty-rc=\$?"
	wait_for 'merge-dirty-rc=1'
	wrx capture inside | tr -d '\n' | grep -q "workrex: merge: branch 'inside' has uncommitted changes; commit them or pass --ignore-uncommitted"
	not in_output 'inside asks to merge' -- screen
	# Its own merge waits for the user's yes; then hooks off, the branch lands
	# on main; with its scratch file its worktree stays, said.
	wrx send inside "$g workrex merge --ignore-uncommitted"
	wait_for 'question waits: C-b a to answer - inside asks to merge inside into main: 1 file changed'
	test ! -f "$repo/new.txt"
	prefix a
	wait_for '^inside asks to merge inside into main: 1 file changed'
	keys y
	until_ok 10 test -f "$repo/new.txt"
	until_ok 10 in_output -q 'keeps its uncommitted changes and was not removed' -- \
		sh -c "cd '$repo' && '$WORKREX' capture inside | tr -d '\n'"
	test ! -e "$E2E_TMP/pre-merge-ran"
	test -f "$repo/../proj__worktrees/inside/scratch.txt"
	# Clean, its next merge takes its panes with it.
	wrx send inside "rm scratch.txt && echo two >two.txt && git add two.txt && git commit -qm two && $g workrex merge"
	wait_for 'question waits: C-b a to answer - inside asks to merge inside into main: 1 file changed'
	prefix a
	keys y
	wait_gone '^ [0-9] . ?inside'
	until_ok 10 test -f "$repo/two.txt"
	test ! -d "$repo/../proj__worktrees/inside"
	# Commands a sandbox may not run say so.
	not env WORKREX_SANDBOX=1 "$WORKREX_GUEST" remove spawned 2>"$E2E_TMP/err"
	grep -q 'not available inside a sandbox' "$E2E_TMP/err"
}

# An agent may spawn at most 5 agents a minute (here from a host pane, through
# the same RPC request a sandbox's client sends).
t_spawn_rate_limit() {
	: "${WORKREX_GUEST:?set WORKREX_GUEST to the static guest client}"
	make_repo
	mkdir -p "$E2E_TMP/guestbin"
	ln -sf "$WORKREX_GUEST" "$E2E_TMP/guestbin/workrex"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add parent -b >/dev/null
	wait_for '^ 2 parent'
	local g="PATH=$E2E_TMP/guestbin:\$PATH WORKREX_SANDBOX=1"
	wrx send parent "for i in 1 2 3 4 5 6; do $g workrex add kid\$i -b >/dev/null 2>>\$HOME/spawn.err || echo refused-\$i; done; echo spawn-done"
	wait_for 'spawn-done' 60
	wait_for 'refused-6'
	screen | not grep -q 'refused-[1-5]'
	grep -q 'at most 5 agents a minute' "$HOME/spawn.err"
	[ "$(wrx list | grep -c '^kid')" -eq 5 ]
}

# A chain of spawns, each agent making the next within its own 5 a minute:
# the family under the agent the user made stops at 8; another family of
# the user's still may; the lineage is recorded where no agent writes.
t_spawn_family_budget() {
	: "${WORKREX_GUEST:?set WORKREX_GUEST to the static guest client}"
	make_repo
	mkdir -p "$E2E_TMP/guestbin"
	ln -sf "$WORKREX_GUEST" "$E2E_TMP/guestbin/workrex"
	start_repo 160 60
	wait_for 'wrx\$'
	wrx add root -b >/dev/null
	wrx add other -b >/dev/null
	wait_for '^ 3 other'
	local g="PATH=$E2E_TMP/guestbin:\$PATH WORKREX_SANDBOX=1" from=root i
	for i in $(seq 1 9); do
		wrx send "$from" "$g workrex add gen$i -b 2>>\$HOME/family.err; echo gen-rc-$i=\$?"
		wait_for "gen-rc-$i=" 30
		[ "$i" -le 8 ] || break
		until_ok 20 eval 'wrx list | grep -q "^gen$i "' || { screen >&2; return 1; }
		until_ok 20 eval 'wrx send gen$i true 2>/dev/null'
		from=gen$i
	done
	wait_for 'gen-rc-9=1'
	grep -q 'its family (agents made under one agent of yours) has the most it may (8 under root)' "$HOME/family.err"
	[ "$(wrx list | grep -c '^gen')" -eq 8 ]
	[ "$(git -C "$repo" config workrex.worktree.gen3.parent)" = gen2 ]
	wrx send other "$g workrex add cousin -b; echo cousin-rc=\$?"
	wait_for 'cousin-rc=0' 30
}

# setup for Gemini CLI (its settings.json hooks) and OpenCode (a plugin), run
# by stand-ins that fire them as those CLIs do (fake_agent.py gemini,
# fake_opencode.mjs, which loads the plugin as an ES module).
t_gemini_and_opencode_hooks() {
	make_repo
	mkdir -p "$HOME/.gemini" "$HOME/.codex" "$XDG_CONFIG_HOME/opencode"
	echo '{"theme": "GitHub"}' >"$HOME/.gemini/settings.json"
	workrex setup >"$E2E_TMP/setup.out"
	grep -q 'gemini: hooks added to' "$E2E_TMP/setup.out"
	grep -q 'opencode: plugin written to' "$E2E_TMP/setup.out"
	grep -q 'codex: hooks written to' "$E2E_TMP/setup.out"
	grep -q '"theme": "GitHub"' "$HOME/.gemini/settings.json"
	grep -q '"timeout": 10000' "$HOME/.gemini/settings.json"
	workrex setup >"$E2E_TMP/setup.out"
	grep -q 'gemini: .* already calls workrex set-status' "$E2E_TMP/setup.out"
	grep -q 'opencode: .* already calls workrex set-status' "$E2E_TMP/setup.out"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<YAML
agents:
  gem:
    command: python3
    args: ["$here/fake_agent.py", "gemini"]
  cdx:
    command: python3
    args: ["$here/fake_agent.py", "codex"]
  oc:
    command: node
    args: ["$here/fake_opencode.mjs"]
YAML
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add g1 -a gem -b >/dev/null
	wrx add o1 -a oc -b >/dev/null
	wrx add c1 -a cdx -b >/dev/null
	wait_for 'fake gemini ready'
	wait_for 'fake opencode v1 ready'
	wait_for 'fake codex ready'
	local h
	for h in g1 o1 c1; do
		wrx send $h go
		wait_for "^ [234] ● $h"
		wrx send $h ask
		wait_for "^ [234] ◆ $h"
		wrx send $h finish
		wait_for "^ [234] ✓ $h"
	done
	# Codex: a turn the user interrupted waits for them.
	wrx send c1 go
	wait_for "^ [234] ● c1"
	wrx send c1 interrupt
	wait_for "^ [234] ◆ c1"
	# ... and its session's end leaves no status.
	wrx send c1 end
	until_ok 10 eval "wrx status c1 --json | grep -q '\"status\":null'" || { wrx status c1 --json >&2; return 1; }
	grep -q '^hooks = true$' "$HOME/.codex/config.toml"
	not grep -q codex_hooks "$HOME/.codex/config.toml"
	wrx capture c1 | grep -q 'hook Stop rc=0'
	wrx capture c1 | not grep -q 'rc=[1-9]'
	wrx capture g1 | grep -q 'hook AfterAgent rc=0'
	wrx capture o1 | tr -d '\n' | grep -q "plugin ran workrex set-status done --session ses_stand_in --dir $E2E_TMP/work/proj__worktrees/o1 rc=0"
	wrx capture g1 | not grep -q 'bad stdout'
	wrx capture g1 | not grep -q 'rc=[1-9]'
	wrx capture o1 | not grep -q 'rc=[1-9]'
}

# prefix a: to the agent that last came to need the user, then the one before.
t_attention_key() {
	make_repo
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add aa -b >/dev/null
	wrx add bb -b >/dev/null
	wait_for '^ 3 bb'
	wrx send aa 'workrex set-status waiting'
	wait_for '^ 2 ◆ aa'
	wrx send bb 'workrex set-status done'
	wait_for '^ 3 ✓ bb'
	prefix a
	type_line 'echo "first=$WORKREX_HANDLE"'
	wait_for 'first=bb'
	prefix a
	type_line 'echo "second=$WORKREX_HANDLE"'
	wait_for 'second=aa'
	prefix a
	wait_for 'no agent has finished or waits for you'
}

# A hook without the pane's environment: an agent CLI's background host
# (Claude Code's) or shared daemon (OpenCode v2's `opencode serve`). Its
# session id says which agent it is; the directory only which project. The
# worktrees are inside the main checkout (one directory tree), and the
# call comes from one agent's directory with the other's session.
t_daemon_hooks_by_session() {
	make_repo
	# The stand-in in a directory of this test's own: the next tests' agent stays the shell.
	mkdir -p "$E2E_TMP/daemon-bin" "$XDG_CONFIG_HOME/workrex"
	printf '#!/bin/sh\necho "CLAUDE ARGS:$*:"\nexec cat\n' >"$E2E_TMP/daemon-bin/claude"
	chmod +x "$E2E_TMP/daemon-bin/claude"
	export PATH="$E2E_TMP/daemon-bin:$PATH"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<YAML
agent: claude
worktree_dir: .trees
panes:
  - command: <agent>
agents:
  oc:
    type: opencode
    command: node
    args: ["$here/fake_opencode.mjs", "v2", "ses_oc_1"]
YAML
	mkdir -p "$XDG_CONFIG_HOME/opencode"
	workrex setup >/dev/null
	start_repo 140 40
	wait_for 'C-b \? help'
	wrx add a -b >/dev/null
	wrx add b -b >/dev/null
	wait_for '^ 3 b'
	local wa=$repo/.trees/a sa sb
	args() { wrx capture "$1" | tr -d '\n' | sed -n 's/.*CLAUDE ARGS:--session-id \([0-9a-f-]*\):.*/\1/p'; }
	until_ok 10 eval '[ -n "$(args a)" ]'
	until_ok 10 eval '[ -n "$(args b)" ]'
	sa=$(args a) sb=$(args b)
	[ "$sa" != "$sb" ]
	# From a's directory, b's session: b's status, never a's.
	(cd "$wa" && echo "{\"session_id\":\"$sb\",\"cwd\":\"$wa\"}" | workrex set-status waiting)
	wait_for '^ 3 ◆ b'
	not in_output '^ 2 ◆ a' -- screen
	# From the main checkout, around both: a's session, a.
	echo "{\"session_id\":\"$sa\",\"cwd\":\"$repo\"}" | (cd "$repo" && workrex set-status done)
	wait_for '^ 2 ✓ a'
	# An id no agent has: refused, said and logged; nothing moves.
	not sh -c "cd '$wa' && echo '{\"session_id\":\"ses-nobody\",\"cwd\":\"$wa\"}' | '$WORKREX' set-status working" 2>"$E2E_TMP/err"
	grep -q "set-status: session ses-nobody is no agent's here; nothing changed" "$E2E_TMP/err"
	sleep 0.5
	in_output '^ 2 ✓ a' -- screen
	in_output '^ 3 ◆ b' -- screen
	grep -rq 'a hook of session ses-nobody .* is no agent.s: refused' "$XDG_STATE_HOME"
	# No session at all: nothing to say who it is; nothing to do.
	(cd "$wa" && workrex set-status working </dev/null)
	# OpenCode v2: its plugin in the daemon, from /, no pane environment.
	wrx add o -a oc -b >/dev/null
	wait_for 'fake opencode v2 ready'
	wrx send o go
	wait_for '^ 4 ● o'
	wrx send o ask
	wait_for '^ 4 ◆ o'
	wrx send o finish
	wait_for '^ 4 ✓ o'
	in_output '^ 2 ✓ a' -- screen
	in_output '^ 3 ◆ b' -- screen
	wrx capture o | tr -d '\n' | grep -q "plugin ran workrex set-status done --session ses_oc_1 --dir $repo/.trees/o rc=0"
	wrx capture o | not grep -q 'rc=[1-9]'
}

# A daemon's hook with one pane's environment (Codex's app-server: one per
# user, started from the first Codex pane): the session and directory it
# names say whose it is, not the token it inherited; once that pane is gone
# its token is refused and the session still says. With no dashboard, a
# keeper keeps no other agent's hook. (Two real Codex: t_agent_clis.sh.)
t_inherited_token_speaks_for_no_one() {
	make_repo
	mkdir -p "$E2E_TMP/cx-bin" "$XDG_CONFIG_HOME/workrex"
	printf '#!/bin/sh\nexec bash --norc -i\n' >"$E2E_TMP/cx-bin/codex"
	chmod +x "$E2E_TMP/cx-bin/codex"
	export PATH="$E2E_TMP/cx-bin:$PATH"
	printf 'agent: codex\nworktree_dir: .trees\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 140 40
	wait_for 'C-b \? help'
	wrx add a >/dev/null
	wrx add b >/dev/null
	wait_for '^ 3 b'
	local wa=$repo/.trees/a wb=$repo/.trees/b
	# a's pane keeps its environment for the "daemon".
	wrx send a "export -p | grep WORKREX_ >'$E2E_TMP/a.env'; echo saved"
	until_ok 10 grep -q WORKREX_RPC_TOKEN "$E2E_TMP/a.env"
	hook() { # STATUS SESSION DIR: as the daemon runs it, with a's environment
		(. "$E2E_TMP/a.env" && cd / && echo "{\"session_id\":\"$2\",\"cwd\":\"$3\"}" | workrex set-status "$1")
	}
	hook working ses-b-1 "$wb"
	wait_for '^ 3 ● b'
	not in_output '^ 2 ● a' -- screen
	hook working ses-a-1 "$wa"
	wait_for '^ 2 ● a'
	hook done ses-b-1 "$wb"
	wait_for '^ 3 ✓ b'
	in_output '^ 2 ● a' -- screen
	# a's pane goes: its token with it. The daemon's next hook still lands.
	wrx close a
	wait_gone '^   2 codex'
	hook waiting ses-b-1 "$wb"
	wait_for '^ 3 ◆ b'
	# No dashboard: b's keeper keeps b's; a hook of b's session sent to it with
	# another directory is refused, nothing kept.
	prefix d
	wait_for 'WORKREX-EXITED'
	wrx send b "export -p | grep WORKREX_ >'$E2E_TMP/b.env'; echo saved"
	until_ok 10 grep -q WORKREX_RPC_KEEPER "$E2E_TMP/b.env"
	(. "$E2E_TMP/b.env" && echo "{\"session_id\":\"ses-x\",\"cwd\":\"$wa\"}" | workrex set-status done)
	wrx status b | grep -q waiting
	(. "$E2E_TMP/b.env" && echo "{\"session_id\":\"ses-b-1\",\"cwd\":\"$wb\"}" | workrex set-status done)
	wrx status b | grep -q done
}

# Hooks arrive out of order (each a process of its own): one that started
# before the agent's done and arrives after it changes nothing; a new
# turn's does. With a dashboard, and with none (its keeper keeps it), and
# the next dashboard orders by what the keeper kept.
t_late_hook_after_done() {
	make_repo
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add late -b >/dev/null
	wait_for '^ 2 late'
	# A working hook started, then stalled until after done: it arrives last.
	local race='sh -c "kill -STOP \$\$; exec workrex set-status working" & p=$!; sleep 0.3; workrex set-status done; kill -CONT $p; wait $p; echo LATE-$((40 + N))'
	wrx send late "N=2; $race"
	wait_for '│LATE-42'
	sleep 1
	wait_for '^ 2 ✓ late'
	wrx status late | grep -q done
	# A new turn's hook is news.
	wrx send late 'workrex set-status working; echo TURN-$((6 * 7))'
	wait_for '│TURN-42'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' status late | grep -q working"
	# No dashboard: the keeper orders them alike, and the next dashboard by what it kept.
	prefix d
	wait_for 'WORKREX-EXITED'
	wrx send late "N=3; $race"
	until_ok 10 eval 'wrx capture late | grep -q "^LATE-43"'
	sleep 1
	wrx status late | grep -q done || { wrx status late >&2; return 1; }
	kill_tmux
	start_repo 140 40
	wait_for '^ 2 ✓ late'
	wrx send late "N=4; $race"
	wait_for '│LATE-44'
	sleep 1
	wait_for '^ 2 ✓ late'
	wrx status late | grep -q done
}

# What each agent used, read from what its CLI writes (a stand-in's
# transcripts in Claude Code's, Codex's and Gemini CLI's formats, named by the hook's
# event as theirs do): in the sidebar, list and status --json, compare,
# and the project's total; kept across a new dashboard.
t_usage_from_transcripts() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 160 40
	wait_for 'wrx\$'
	wrx add use -n 3 -b >/dev/null
	wait_for '^ +[0-9] use-3'
	local w=$E2E_TMP/work/proj__worktrees
	# Claude Code: a message written in two parts (its usage once), a second with its cost.
	cat >"$E2E_TMP/claude.jsonl" <<-'EOF'
		{"type":"user","message":{"role":"user","content":"go"}}
		{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":1000,"cache_read_input_tokens":2000,"output_tokens":300}},"costUSD":0.30}
		{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":1000,"cache_read_input_tokens":2000,"output_tokens":300}}}
		{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":500,"output_tokens":200}},"costUSD":0.12}
	EOF
	# Codex: its token_count events, running totals; no cost.
	cat >"$E2E_TMP/codex.jsonl" <<-'EOF'
		{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10000,"output_tokens":2000}}}}
		{"type":"event_msg","payload":{"type":"agent_message","message":"done"}}
		{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":120000,"cached_input_tokens":4000,"output_tokens":3400}}}}
	EOF
	# Gemini CLI: each message's record, again once its tokens came; no cost.
	cat >"$E2E_TMP/gemini.jsonl" <<-'EOF'
		{"sessionId":"s3","projectHash":"p","startTime":"2026-12-07T10:00:00Z","kind":"main"}
		{"id":"u1","type":"user","content":[{"text":"go"}]}
		{"id":"g1","type":"gemini","content":"thinking","model":"gemini-2.5-pro"}
		{"id":"g1","type":"gemini","content":"done","tokens":{"input":7000,"output":800,"cached":0,"thoughts":200,"tool":0,"total":8000}}
		{"id":"g2","type":"gemini","content":"more","tokens":{"input":9000,"output":1000,"cached":0,"thoughts":0,"tool":0,"total":10000}}
	EOF
	# Each turn's end, as their Stop hooks run: the event on stdin names the transcript.
	wrx send use-1 "printf '{\"session_id\":\"s1\",\"transcript_path\":\"%s\"}' $E2E_TMP/claude.jsonl | workrex set-status done"
	wrx send use-2 "printf '{\"session_id\":\"s2\",\"transcript_path\":\"%s\"}' $E2E_TMP/codex.jsonl | workrex set-status done"
	wrx send use-3 "printf '{\"session_id\":\"s3\",\"transcript_path\":\"%s\"}' $E2E_TMP/gemini.jsonl | workrex set-status done"
	wait_for '✓ use-1 .*\$0\.42'
	wait_for '✓ use-2 .*123k tok'
	wait_for '✓ use-3 .*18k tok'
	wrx list --json | python3 -c '
import json, sys
by = {a["handle"]: a for a in json.load(sys.stdin)}
assert by["use-1"]["usage"] == {"input_tokens": 3500, "output_tokens": 500, "cost_usd": 0.42}, by
assert by["use-2"]["usage"] == {"input_tokens": 120000, "output_tokens": 3400}, by
assert by["use-3"]["usage"] == {"input_tokens": 16000, "output_tokens": 2000}, by'
	wrx status --json | grep -q '"output_tokens":3400'
	wrx list | grep -qx 'used by 3 agents: 139500 tokens in, 5900 out, \$0.42 for 1 of them (the others.* say no cost)' ||
		{ wrx list >&2; return 1; }
	wrx compare use >"$E2E_TMP/compare"
	grep -Eq '^use-1 .* \$0\.42 ' "$E2E_TMP/compare" && grep -Eq '^use-2 .* 123k tok ' "$E2E_TMP/compare" &&
		grep -Eq '^use-3 .* 18k tok ' "$E2E_TMP/compare" &&
		grep -q '^used by 3 agents: 139500 tokens in' "$E2E_TMP/compare" || { cat "$E2E_TMP/compare" >&2; return 1; }
	# A new dashboard: kept (the keepers had it).
	prefix d
	wait_for 'WORKREX-EXITED'
	kill_tmux
	start_repo 160 40
	wait_for '✓ use-1 .*\$0\.42'
	wait_for '✓ use-2 .*123k tok'
}

# The five more kinds with hooks, each in its own CLI's file and shape:
# Qwen Code's and Grok's (Claude Code's shape, Grok's fields camelCase),
# Copilot CLI's, Cursor's and Kiro CLI's (handler lists; Kiro's an agent
# of its own, which the agent is started with). Stand-ins run them as the
# CLIs do; every mapped event reaches its icon in a live dashboard.
t_five_more_kinds_hooks() {
	make_repo
	mkdir -p "$HOME/.qwen" "$HOME/.grok" "$HOME/.copilot" "$HOME/.cursor" "$HOME/.kiro"
	echo '{"model": {"name": "qwen3-coder"}}' >"$HOME/.qwen/settings.json"
	echo '{"version": 1, "hooks": {"stop": [{"command": "true"}]}}' >"$HOME/.cursor/hooks.json"
	workrex setup >"$E2E_TMP/setup.out"
	local k
	for k in qwen grok copilot cursor-agent kiro-cli; do
		grep -Eq "^$k: hooks (added to|written to)" "$E2E_TMP/setup.out" || { cat "$E2E_TMP/setup.out" >&2; return 1; }
		workrex agents | grep -Eq "^$k +.* set up " || { workrex agents >&2; return 1; }
	done
	# Merged into what was there; each file in its CLI's shape.
	grep -q '"name": "qwen3-coder"' "$HOME/.qwen/settings.json"
	grep -q '"command": "true"' "$HOME/.cursor/hooks.json"
	python3 - "$HOME" <<-'PY'
		import json, sys
		h = sys.argv[1]
		cop = json.load(open(h + "/.copilot/hooks/workrex-status.json"))
		assert cop["version"] == 1, cop
		e = cop["hooks"]["errorOccurred"][0]
		assert e == {"type": "command", "bash": "workrex set-status failed", "timeoutSec": 10}, e
		kiro = json.load(open(h + "/.kiro/agents/workrex.json"))
		assert kiro["name"] == "workrex" and kiro["tools"] == ["*"], kiro
		assert kiro["hooks"]["stop"] == [{"command": "workrex set-status done", "timeout_ms": 10000}], kiro
		q = json.load(open(h + "/.qwen/settings.json"))["hooks"]["Stop"][0]["hooks"][0]
		assert q["timeout"] == 10000 and q["name"] == "workrex-status", q
	PY
	workrex setup | grep -q '^kiro-cli: .* already calls workrex set-status'
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<YAML
agents:
  qw: {type: qwen, command: python3, args: ["$here/fake_agent.py", "qwen"]}
  gk: {type: grok, command: python3, args: ["$here/fake_agent.py", "grok"]}
  cp: {type: copilot, command: python3, args: ["$here/fake_agent.py", "copilot"]}
  cu: {type: cursor-agent, command: python3, args: ["$here/fake_agent.py", "cursor"]}
  ki: {type: kiro-cli, command: python3, args: ["$here/fake_agent.py", "kiro"]}
YAML
	start_repo 160 40
	wait_for 'wrx\$'
	local h
	for h in qw gk cp cu ki; do
		wrx add $h -a $h -b >/dev/null
	done
	for k in qwen grok copilot cursor kiro; do
		wait_for "fake $k ready \\([1-9]"
	done
	# Kiro's stand-in reads hooks only of the agent it was started as (none: 0 events).
	ps -eo args | grep -q '[f]ake_agent.py kiro chat --agent workrex'
	for h in qw gk cp cu ki; do
		wrx send $h go
		wait_for "^ [2-6] ● $h"
		wrx send $h finish
		wait_for "^ [2-6] ✓ $h"
	done
	# A question waits (Qwen, Grok, Copilot: the kinds that have a hook for one).
	for h in qw gk cp; do
		wrx send $h go
		wait_for "^ [2-6] ● $h"
		wrx send $h ask
		wait_for "^ [2-6] ◆ $h"
	done
	# Copilot: a notification that is no question changes nothing; errorOccurred
	# is failed with its message; a rate limit waits; a hook stamped before
	# the turn's end that runs after it changes nothing.
	wrx send cp go
	wait_for "^ [2-6] ● cp"
	wrx send cp idle
	sleep 0.5
	screen | grep -q "^ [2-6] ● cp"
	wrx send cp fail
	wait_for "^ [2-6] ✗ cp"
	wrx status cp --json | grep -q '"failure":"model request failed: 500"'
	wrx send cp limit
	wait_for "^ [2-6] ◆ cp"
	wrx send cp finish
	wait_for "^ [2-6] ✓ cp"
	wrx send cp late
	sleep 1
	screen | grep -q "^ [2-6] ✓ cp" || { screen >&2; return 1; }
	# Grok: StopFailure is failed.
	wrx send gk go
	wait_for "^ [2-6] ● gk"
	wrx send gk fail
	wait_for "^ [2-6] ✗ gk"
	# Cursor: a stop whose status is error is failed; aborted waits for the user.
	wrx send cu go
	wait_for "^ [2-6] ● cu"
	wrx send cu fail
	wait_for "^ [2-6] ✗ cu"
	wrx send cu go
	wait_for "^ [2-6] ● cu"
	wrx send cu abort
	wait_for "^ [2-6] ◆ cu"
	# A session's end leaves no status (Qwen, Grok, Copilot, Cursor).
	for h in qw gk cp cu; do
		wrx send $h end
		until_ok 10 eval "wrx status $h --json | grep -q '\"status\":null'" || { wrx status $h --json >&2; return 1; }
	done
	for h in qw gk cp cu ki; do
		wrx capture $h | not grep -q 'rc=[1-9]' || { wrx capture $h >&2; return 1; }
	done
	for k in qwen grok copilot cursor-agent kiro-cli; do
		workrex agents | grep -Eq "^$k +.* set up +just now " || { workrex agents >&2; return 1; }
	done
}


# add --max-concurrent while the CLI's quota is out: an agent whose turn
# stopped on a rate limit waits (its reset said under its row), and none
# of its kind opens in a slot another frees until it moves again.
t_quota_holds_the_queue() {
	make_repo
	mkdir -p "$HOME/.claude" "$XDG_CONFIG_HOME/workrex"
	workrex setup >/dev/null
	fake_claude_agent
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add job -n 3 --max-concurrent 2 -b >/dev/null
	wait_for 'job-3'
	until_ok 20 eval 'wrx capture job-2 | grep -q "fake claude ready"'
	wrx capture job-1 | grep -q 'fake claude ready'
	# job-1's turn stops on a rate limit: it waits, and says until when.
	wrx send job-1 go
	wait_for '^ [2-4] ● job-1'
	wrx send job-1 limit
	wait_for '^ [2-4] ◆ job-1'
	wait_for '^   » rate_limit: usage'
	# job-2 ends: its slot is free, but the quota is out: job-3 waits.
	wrx send job-2 go
	wait_for '^ [2-4] ● job-2'
	wrx send job-2 finish
	wait_for '^ [2-4] ✓ job-2'
	sleep 2
	wrx list --json | python3 -c 'import json,sys; a={x["handle"]: x for x in json.load(sys.stdin)}; assert a["job-3"]["panes"] == 0, a["job-3"]' ||
		{ wrx list >&2; return 1; }
	grep -q 'queue: job-3 waits: job-1 waits for its quota' "$XDG_STATE_HOME/workrex/workrex.log"
	# job-1 moves again (its quota is back): job-3 opens.
	wrx send job-1 go
	wait_for '^ [2-4] ● job-1'
	until_ok 20 eval 'wrx capture job-3 | grep -q "fake claude ready"' || { wrx list >&2; return 1; }
}

# A Claude Code background job started outside workrex (a stand-in that
# keeps Claude's registry: sessions/PID.json, jobs/ID/state.json, agents
# --json, attach) and no hook set up: listed as adoptable, adopted into
# the dashboard, its pane the job attached, its status following the
# registry as it is typed into; kept across a new dashboard; forgotten.
t_adopt_a_background_job() {
	make_repo
	mkdir -p "$E2E_TMP/cbin"
	ln -s "$here/fake_claude.py" "$E2E_TMP/cbin/claude"
	export PATH="$E2E_TMP/cbin:$PATH"
	rm -f "$HOME/.claude/settings.json" # no hook set up (an earlier test's setup)
	(cd "$repo" && claude --bg fix the flaky test) >"$E2E_TMP/bg.out"
	local id
	id=$(sed -n 's/^job \([0-9a-f]*\) started.*/\1/p' "$E2E_TMP/bg.out")
	[ -n "$id" ]
	(cd "$repo" && workrex adopt --list) >"$E2E_TMP/list"
	grep -Eq "^$id +claude +background +working +proj +fix" "$E2E_TMP/list" || { cat "$E2E_TMP/list" >&2; return 1; }
	start_repo 140 40
	wait_for 'wrx\$'
	# The overview says so too.
	wrx list | grep -qx '1 session started outside workrex runs here (workrex adopt --list)' || { wrx list >&2; return 1; }
	(cd "$repo" && workrex adopt "$id") | grep -q "^adopted $id as fix (its pane: the job, attached)"
	wrx list | not grep -q 'outside workrex'
	wait_for "attached to job $id"
	# No hook: the registry says it works.
	wait_for '^ 2 ● fix'
	workrex agents | grep -Eq '^claude +.* not set ' || { workrex agents >&2; return 1; }
	# Typed into its pane as a person does: it asks (why, under its row), works, ends.
	prefix 2
	tm send-keys -l ask
	keys Enter
	wait_for '^ 2 ◆ fix'
	wait_for '^   » permission prompt'
	tm send-keys -l go
	keys Enter
	wait_for '^ 2 ● fix'
	wrx list | grep -Eq '^fix +- +.*adopted:claude' || { wrx list >&2; return 1; }
	tm send-keys -l finish
	keys Enter
	wait_for '^ 2 ✓ fix'
	wrx status fix --json | grep -q '"status":"done"'
	# Adopted is not adoptable again.
	(cd "$repo" && workrex adopt --list) | grep -q '^no session to adopt'
	# A new dashboard: its row, and its job's end, still there.
	prefix d
	wait_for 'WORKREX-EXITED'
	kill_tmux
	start_repo 140 40
	wait_for '^ 2 ✓ fix'
	# A second job that fails: failed, from its state.
	(cd "$repo" && claude --bg second try) >"$E2E_TMP/bg2.out"
	local id2
	id2=$(sed -n 's/^job \([0-9a-f]*\) started.*/\1/p' "$E2E_TMP/bg2.out")
	(cd "$repo" && workrex adopt "$id2" --name try2) | grep -q "as try2"
	wait_for '^ 3 ● try2'
	# Closed, its job goes on; opened again, attached again.
	wrx close try2 | grep -q '^closed try2: its panes ended, its session goes on'
	until_ok 10 eval 'wrx list --json | grep -q "\"panes\":0"'
	wrx open try2 >/dev/null
	until_ok 10 eval "wrx capture try2 | grep -q 'attached to job $id2'" || { wrx capture try2 >&2; wrx list >&2; return 1; }
	wrx send try2 fail
	wait_for '^ 3 ✗ try2'
	# Forgotten: its row goes; the job's own files stay as they were.
	(cd "$repo" && workrex adopt --forget fix) | grep -q '^forgot fix'
	until_ok 10 eval 'not on_screen "✓ fix"'
	test -f "$HOME/.claude/jobs/$id/state.json"
	wrx status fix 2>&1 | grep -q "no agent 'fix'"
}

run_test "setup's Claude hooks, run by a stand-in agent, change the icons (every mapped event, StopFailure to failed)" t_claude_hooks_change_icons
run_test "what each agent used, from Claude Code's, Codex's and Gemini CLI's transcripts: sidebar, list, status, compare, total" t_usage_from_transcripts
run_test "a hook that started before done and arrives after it changes nothing (dashboard, keeper, the next dashboard)" t_late_hook_after_done
run_test "status noticed without hooks: silence, exit; set-status outside a pane" t_status_without_hooks
run_test "failed, crashed and done keep status, reason and age: detach, reboot" t_statuses_survive
run_test "setup's Codex and Gemini CLI hooks and OpenCode plugin, run by stand-ins, change the icons" t_gemini_and_opencode_hooks
run_test "Qwen Code, Grok, Copilot CLI, Cursor and Kiro CLI hooks, each in its own shape, change the icons" t_five_more_kinds_hooks
run_test "a Claude background job started outside workrex, adopted: its pane, its status with no hook" t_adopt_a_background_job
run_test "--max-concurrent holds new agents of a kind while its quota is out; it opens them once it moves" t_quota_holds_the_queue
run_test "a hook from a daemon, without the pane's environment: its session id says whose" t_daemon_hooks_by_session
run_test "a daemon's inherited token speaks for no one: its session and directory say whose" t_inherited_token_speaks_for_no_one
run_test "prefix a focuses the agent that last finished or waits" t_attention_key
run_test "RPC protocol against the live dashboard" t_rpc_protocol_live
run_test "the static guest client: status, add, merge over RPC; hooks off; no other agent" t_guest_client_over_rpc
run_test "an agent spawns at most 5 agents a minute" t_spawn_rate_limit
run_test "a chain of spawns stops at the family budget; another family still may" t_spawn_family_budget
