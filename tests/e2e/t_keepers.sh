#!/usr/bin/env bash
# Agents outlive the dashboard: each pane's program runs in a keeper. A
# killed or detached dashboard loses nothing; the next one shows every
# pane as it is, history and all; commands work with no dashboard; one
# keeper's death costs one pane; close, remove and merge leave no keeper.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
trap stop EXIT

git_env

N=400
# An agent that counts (every 20 ms) and then is a shell: typing works.
# It waits in read -t on a pipe that never speaks, not in sleep: a fork
# per count took 10 s for 400 counts idle, 16.7 s beside four busy loops.
counter_agent() {
	cat >"$E2E_TMP/counter" <<-EOF
		#!/bin/bash
		exec 9<> <(:)
		for ((i = 1; i <= $N; i++)); do echo "count \$i"; read -rt 0.02 -u 9; done
		echo COUNTED
		exec 9<&-
		PS1='cnt\$ ' exec bash --norc -i
	EOF
	chmod +x "$E2E_TMP/counter"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: %s\npanes:\n  - command: <agent>\n' "$E2E_TMP/counter" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
}

# The count the agent c shows last (its history and screen, from its keeper).
last_count() { wrx capture c | grep -oE '^count [0-9]+' | tail -1 | cut -d' ' -f2; }
counted_past() { test "$(last_count)" -gt "$1"; }

# A dashboard in a new tmux window of the same server: "another terminal".
restart_elsewhere() {
	tm new-window -c "$repo" "env TERM=tmux-256color PATH='$PATH' $WORKREX$after_exit"
}

# What the agent's history must be: every count once, in order, then the end.
history_is_whole() {
	wrx capture c >"$E2E_TMP/cap"
	{ seq 1 $N | sed 's/^/count /'; echo COUNTED; } >"$E2E_TMP/want"
	head -n $((N + 1)) "$E2E_TMP/cap" | diff -u "$E2E_TMP/want" - >&2
}

# How the pane ends: kill (kill -9 of the dashboard) or detach (prefix d).
counter_survives() {
	local how=$1
	make_repo
	counter_agent
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add c >/dev/null
	wait_for '│count 20'
	prefix z
	local before
	before=$(last_count)
	if [ "$how" = kill ]; then
		kill -9 "$(workrex_pid)"
	else
		prefix d
		# As tmux does, it says so on the terminal it leaves.
		wait_for '^\[detached: 2 programs go on; workrex comes back to them\]'
	fi
	wait_for 'WORKREX-EXITED'
	sleep 1
	# It counted on while no dashboard ran.
	local meanwhile
	meanwhile=$(last_count)
	((meanwhile > before + 20)) || { echo "count $before then $meanwhile" >&2; false; }
	restart_elsewhere
	wait_for 'C-b \? help'
	wait_for '^ 2 c'
	prefix 2
	prefix z
	wait_for '│COUNTED' 40
	wait_for '│cnt\$'
	history_is_whole
	# The screen is the end of it, as tmux would show it.
	screen | grep -E '│count [0-9]+ *$' | tail -3 | grep -qE "count $N *$"
	type_line 'echo typed-$((6*7))'
	wait_for '│typed-42'
}

t_kill_dashboard() { counter_survives kill; }
t_detach() { counter_survives detach; }

# vim and less, full screen: the same screen before and after, and the keys still reach them.
# focus_vim: v's vim pane focused, the main one. C-b 2 on an agent that has
# the focus already goes on to its next pane: pressed until it is vim's.
focus_vim() {
	local i=0
	until screen | sed -n 1p | grep -qE '^ workrex +│ [0-9]+ v:bash'; do
		((i++ < 4)) || { screen >&2; return 1; }
		prefix 2
		sleep 0.5
	done
}

# settled_capture FILE: v's screen into FILE once a redraw (a resize as the
# focus moves) is over: the same twice, 0.3 s apart.
settled_capture() {
	local i=0
	wrx capture v --screen >"$1"
	until sleep 0.3 && wrx capture v --screen >"$1.again" && cmp -s "$1" "$1.again"; do
		((i++ < 30)) || return 1
		mv "$1.again" "$1"
	done
}

t_full_screen_programs() {
	make_repo
	seq 1 500 | sed 's/^/text line /' >"$repo/long.txt"
	git -C "$repo" add long.txt
	git -C "$repo" commit -qm long
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\npanes:\n  - command: <agent>\n  - command: less -R long.txt\n' \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add v >/dev/null
	wait_for '│text line 15 *(│|$)' 20
	# vim in v's first pane (focused), less at its end in the second.
	type_line 'vim -u NONE -N +"set nu" long.txt'
	wait_for '│ *1 text line 1 *(│|$)'
	keys 200G
	wait_for '│ *200 text line 200'
	prefix o
	# less is resized as its pane takes the focus (SIGWINCH, a redraw): a
	# G it reads in between can be dropped (once in an ASan CI run); G
	# again, said, goes to the same end.
	keys G
	if ! screen_until yes '│text line 500' 5 2>/dev/null; then
		echo "less did not go to its end on the first G; G again" >&2
		keys G
		wait_for '│text line 500'
	fi
	# vim's pane focused again (the main one): compared at that size after.
	# Grown as it took the focus, its new rows stay blank until vim redraws
	# (SIGWINCH), which may pause longer than settled_capture's 0.3 s (1 run
	# in 12 here): vim fills every row but its command line, so wait for that.
	focus_vim
	vim_drawn() { ! wrx capture v --screen | head -n -1 | grep -q '^ *$'; }
	until_ok 10 vim_drawn
	settled_capture "$E2E_TMP/before"
	grep -q 'text line 200' "$E2E_TMP/before"
	kill -9 "$(workrex_pid)"
	wait_for 'WORKREX-EXITED'
	restart_elsewhere
	wait_for '^ 2 v'
	focus_vim
	wait_for '│ *200 text line 200'
	# Its redraw after the resize may pause (CI's load did, half drawn): the
	# screen as it was, within 10 s, else the difference shown.
	same_screen() { settled_capture "$E2E_TMP/after" && cmp -s "$E2E_TMP/before" "$E2E_TMP/after"; }
	# Not so, for the log: vim's terminal size and signals, the dashboard,
	# and the keeper's own screen with no dashboard (the diff then fails).
	until_ok 10 same_screen || {
		for p in $(ours '^vim( |$)'); do
			echo "vim $p: its terminal is $(stty -F "$(readlink /proc/$p/fd/0)" size)" >&2
			grep -E '^(SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt)' "/proc/$p/status" >&2
		done
		screen >&2
		prefix d
		wait_for 'WORKREX-EXITED'
		echo "the keeper's screen:" >&2
		wrx capture v --screen >&2
	}
	diff -u "$E2E_TMP/before" "$E2E_TMP/after" >&2
	# Detached again, and back: less still at its end, vim still takes keys.
	prefix d
	wait_for 'WORKREX-EXITED'
	tm kill-window
	restart_elsewhere
	wait_for '^ 2 v'
	focus_vim
	# less, in the stack now (smaller), redrew from the top line it had.
	wait_for '│text line 4[6-9][0-9] *$'
	keys ':q' Enter
	wait_for '│wrx\$|│.*\$ *$'
}

# add with no dashboard: the agent runs; send and capture reach it; a dashboard shows it.
t_add_without_dashboard() {
	make_repo
	counter_agent
	wrx add c -p 'count for me' >"$E2E_TMP/out"
	grep -q 'created c' "$E2E_TMP/out"
	until_ok 10 counted_past 10
	until_ok 40 sh -c "cd '$repo' && '$WORKREX' capture c | grep -q COUNTED"
	until_ok 5 sh -c "cd '$repo' && '$WORKREX' capture c | grep -q 'cnt\\$'"
	wrx send c 'echo sent-$((40+2))'
	until_ok 5 sh -c "cd '$repo' && '$WORKREX' capture c | grep -qx 'sent-42'"
	wrx list | grep -qE '^c +c +- +running '
	start_repo 120 36
	wait_for '^ 2 c'
	prefix 2
	prefix z
	wait_for '│sent-42'
	history_is_whole
}

# kill -9 of one keeper: its pane says so, the other pane and the dashboard go on.
t_one_keeper_dies() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add k >/dev/null
	wait_for '^ +3 shell'
	# A keeper forks itself once started: count when the fork has settled.
	until_ok 10 nkeepers 3
	# The newest keeper: k's shell pane.
	local victim
	victim=$(ps -o pid= --sort=start_time -p "$(keepers | paste -sd,)" | tail -1)
	kill -9 "$victim"
	wait_for '\[keeper gone\]'
	until_ok 5 nkeepers 2
	# The rest still works.
	prefix 1
	type_line 'echo still-$((1+1))'
	wait_for '│still-2'
	workrex_pid >/dev/null
}

one_spawner() { [ "$(ours '__spawner$' | wc -l)" -eq 1 ]; }

# A dashboard spawns its keepers and runs its commands through a process of
# its own (the loop never waits for a fork); killed, it is not missed; it
# ends with the dashboard.
t_spawner() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	# One spawner. (Each process it starts is, between its clone and its exec,
	# a second one by its command line: CI saw two once. Counted until one.)
	until_ok 5 one_spawner
	wrx add one >/dev/null
	wait_for '^ +[0-9] one'
	until_ok 10 nkeepers 3
	until_ok 5 one_spawner
	kill -9 "$(ours '__spawner$')"
	wrx add two >/dev/null
	wait_for '^ +[0-9] two'
	until_ok 10 nkeepers 5
	prefix 3
	type_line 'echo spawned-$((40+2))'
	wait_for '│spawned-42'
	workrex_pid >/dev/null
	grep -q 'spawner: it ended' "$XDG_STATE_HOME/workrex/workrex.log"
	# The dashboard's other children (the review view's diff) start without it too.
	echo change >>"$E2E_TMP/work/proj__worktrees/two/a.txt"
	prefix D
	wait_for 'review two +\[wip\] +1 file \+1 -0'
	keys q
	wait_gone 'review two'
	# A new dashboard, a new spawner; its end ends it.
	prefix d
	wait_for 'WORKREX-EXITED'
	restart_elsewhere
	wait_for 'C-b \? help'
	until_ok 5 one_spawner
	prefix d
	wait_for 'WORKREX-EXITED'
	until_ok 10 eval '[ -z "$(ours "__spawner\$")" ]'
}

# close, remove and merge end the agents' keepers; nothing is left but the home shell's.
t_no_keeper_leaks() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	for a in one two three; do
		wrx add $a >/dev/null
		wait_for "^ +[0-9] $a"
	done
	until_ok 5 nkeepers 7
	wrx close one
	until_ok 5 nkeepers 5
	wrx remove -f two
	until_ok 5 nkeepers 3
	echo three >"$repo/../proj__worktrees/three/three.txt" 2>/dev/null ||
		echo three >"$(wrx path three)/three.txt"
	git -C "$(wrx path three)" add three.txt
	git -C "$(wrx path three)" commit -qm three
	wrx merge three >/dev/null
	until_ok 5 nkeepers 1
	# And with no dashboard: remove ends the keepers itself.
	wrx add four >/dev/null
	wait_for '^ +[0-9] four'
	prefix d
	wait_for 'WORKREX-EXITED'
	[ "$(keepers | wc -l)" -eq 3 ]
	wrx remove -f four
	until_ok 5 nkeepers 1
}

# attach and watch from another terminal, while the dashboard runs.
t_attach_and_watch() {
	make_repo
	counter_agent
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add c >/dev/null
	wait_for '│COUNTED' 40
	# attach: the pane in a window of its own, its size; typing reaches the program.
	tm new-window -c "$repo" "env TERM=tmux-256color $WORKREX attach c; echo ATTACH-EXITED; sleep 30"
	until_ok 10 sh -c "tmux -L $SOCK capture-pane -p -t :1 | grep -q 'cnt\\$'"
	tm send-keys -t :1 -l 'echo attached-$((6*7))'
	tm send-keys -t :1 Enter
	until_ok 10 sh -c "tmux -L $SOCK capture-pane -p -t :1 | grep -qx 'attached-42'"
	# The dashboard watched meanwhile.
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture c | grep -qx 'attached-42'"
	# C-b d detaches it; the dashboard writes again.
	tm send-keys -t :1 C-b d
	until_ok 10 sh -c "tmux -L $SOCK capture-pane -p -t :1 | grep -q 'detached from c'"
	tm select-window -t :0
	prefix 2
	type_line 'echo back-$((6*7))'
	wait_for '│back-42'
	# watch: it shows, and nothing typed there reaches the program.
	tm new-window -c "$repo" "env TERM=tmux-256color $WORKREX watch c; echo WATCH-EXITED; sleep 30"
	until_ok 10 sh -c "tmux -L $SOCK capture-pane -p -t :2 | grep -q 'back-42'"
	tm send-keys -t :2 -l 'echo watched-$((6*7))'
	tm send-keys -t :2 Enter
	sleep 1
	wrx capture c | not grep -q 'watched-42'
	tm send-keys -t :2 q
	until_ok 10 sh -c "tmux -L $SOCK capture-pane -p -t :2 | grep -q WATCH-EXITED"
}

# What an agent reports while no dashboard runs is shown by the next one.
t_status_while_detached() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add s >/dev/null
	wait_for '^ 2 s'
	prefix d
	wait_for 'WORKREX-EXITED'
	# The hook runs in the pane (sent there with no dashboard): it must not fail.
	# Its pane's keeper answers: the dashboard's socket found dead, then the keeper's.
	wrx send s "strace -f -qq -e trace=connect -o '$E2E_TMP/hook.strace' workrex set-title 'detached work' && workrex set-status waiting && echo REPORTED"
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture s | grep -qx REPORTED"
	[ "$(grep -c 'connect(' "$E2E_TMP/hook.strace")" -le 2 ]
	# Another pane's keeper, or this one's with another token: refused, nothing kept.
	wrx send s 'for k in "${WORKREX_RPC_KEEPER%/*}"/*.rpc; do [ "$k" = "$WORKREX_RPC_KEEPER" ] || WORKREX_RPC_KEEPER=$k workrex set-title stolen || echo REFUSED-OTHER; done; WORKREX_RPC_TOKEN=$(printf "%064d" 0) workrex set-title stolen || echo REFUSED-TOKEN'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture s | grep -qx REFUSED-TOKEN"
	wrx capture s | grep -qx REFUSED-OTHER
	kill_tmux
	start_repo 120 36
	wait_for '^ 2 ◆ s'
	wait_for 'detached work'
	screen | not grep -q '» stolen'
}

# After a reboot no keeper is left: the agent opens again by itself, resumed.
# The mark an agent's keeper leaves for after a reboot (what it holds: its session id).
kept_mark() { find "$XDG_STATE_HOME" -path "*/$1/kept" 2>/dev/null | head -1; }
# The arguments the claude stand-in of H said it got, lines joined (a narrow pane wraps them).
claude_args() { wrx capture "$1" | tr -d '\n' | grep -o 'CLAUDE ARGS:[^:]*:'; }

t_resume_after_reboot() {
	make_repo
	mkdir -p "$E2E_TMP/bin" "$XDG_CONFIG_HOME/workrex"
	# As Claude Code does, p's has no conversation to resume: it says so and
	# exits 1, after a moment (time to focus it).
	cat >"$E2E_TMP/bin/claude" <<-'EOF'
		#!/bin/sh
		case "$PWD:$*" in */p:*--resume*) sleep 2; echo "No conversation found"; exit 1 ;; esac
		echo "CLAUDE ARGS:$*:"
		exec bash --norc -i
	EOF
	chmod +x "$E2E_TMP/bin/claude"
	printf 'agent: claude\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	export PATH="$E2E_TMP/bin:$PATH"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add r >/dev/null
	wrx add q >/dev/null
	wrx add p >/dev/null
	# Each started a session named by workrex, which it knows them by.
	local h qs
	for h in r q p; do
		until_ok 10 in_output -E '^CLAUDE ARGS:--session-id [0-9a-f-]{36}:$' -- claude_args $h
	done
	qs=$(claude_args q | sed -n 's/^CLAUDE ARGS:--session-id \([0-9a-f-]*\):$/\1/p')
	# Claude Code's hooks give their event on stdin; r's reports its session
	# while no dashboard runs, q's an id that would be shell code.
	prefix d
	wait_for 'WORKREX-EXITED'
	wrx send r "echo '{\"session_id\":\"4f1c-9e2a_B.7\",\"hook_event_name\":\"Stop\"}' | workrex set-status done"
	until_ok 10 eval 'grep -qx 4f1c-9e2a_B.7 "$(kept_mark r)"'
	wrx send q "echo '{\"session_id\":\"x;touch $E2E_TMP/pwned\"}' | workrex set-status done; echo reported"
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture q | grep -qx reported"
	[ -n "$qs" ] && grep -qx "$qs" "$(kept_mark q)" # its own, never the shell code
	# The machine goes down: every process, and the runtime directory with it.
	end_keepers
	rm -rf "$XDG_RUNTIME_DIR/workrex"
	kill_tmux
	start_repo 120 36
	wait_for '^ 2 (✓ )?r'
	wait_for '│CLAUDE ARGS:--resume 4f1c-9e2a_B.7:'
	# q's report was refused: the session it was started with.
	until_ok 10 in_output -x "CLAUDE ARGS:--resume $qs:" -- claude_args q
	[ ! -e "$E2E_TMP/pwned" ]
	# p had nothing to resume: it failed at once, and starts anew, said.
	# Focused as it failed, the new pane has the keys, not a neighbour.
	prefix 4
	wait_for 'p: nothing to resume \(exit 1: No conversation found\): started anew'
	until_ok 10 in_output -E 'CLAUDE ARGS:--session-id [0-9a-f-]{36}:' -- claude_args p
	type_line 'echo typed-into-$((6 * 7))'
	until_ok 10 in_output -qx 'typed-into-42' -- wrx capture p ||
		{ screen >&2; return 1; }
	wrx list >"$E2E_TMP/list"
	grep -q '^p ' "$E2E_TMP/list"
	not grep -q '^p .*failed' "$E2E_TMP/list"
	# A pane closed by the user is not resumed.
	wrx close r
	wrx close q
	wrx close p
	until_ok 5 nkeepers 1
	prefix d
	wait_for 'WORKREX-EXITED'
	end_keepers
	kill_tmux
	start_repo 120 36
	wait_for '^ 2 (✓ )?r'
	sleep 1
	not nkeepers 2
}

# After a reboot an agent comes back as the CLI it was added with, whatever
# the config says now; one that cannot resume opens its shell, says so, and
# never runs its task again unasked.
t_back_as_they_were() {
	make_repo
	mkdir -p "$E2E_TMP/bin" "$XDG_CONFIG_HOME/workrex"
	printf '#!/bin/sh\necho "CLAUDE ARGS:$*:"\nexec bash --norc -i\n' >"$E2E_TMP/bin/claude"
	chmod +x "$E2E_TMP/bin/claude"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agent: claude
		agents:
		  task:
		    command: sh
		    args: ["-c", "echo RAN-THE-TASK >>../task.log; exec bash --norc -i"]
		panes:
		  - command: <agent>
	YAML
	export PATH="$E2E_TMP/bin:$PATH"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add r >/dev/null
	wrx add -a task t >/dev/null
	until_ok 10 in_output -E '^CLAUDE ARGS:--session-id [0-9a-f-]{36}:$' -- claude_args r
	until_ok 10 test -s "$E2E_TMP/work/proj__worktrees/task.log"
	wrx list --json | python3 -c 'import json, sys; a = {x["handle"]: x for x in json.load(sys.stdin)}; assert a["r"]["agent"] == "claude", a'
	# The user's config changes its agent; then the machine goes down.
	sed -i 's/^agent: claude/agent: bash/' "$XDG_CONFIG_HOME/workrex/config.yaml"
	prefix d
	wait_for 'WORKREX-EXITED'
	end_keepers
	rm -rf "$XDG_RUNTIME_DIR/workrex"
	kill_tmux
	start_repo 120 36
	wait_for 't: task cannot resume a session; its shell opened in the worktree'
	until_ok 10 in_output -E '^CLAUDE ARGS:--resume [0-9a-f-]{36}:$' -- claude_args r
	sleep 1
	[ "$(grep -c RAN-THE-TASK "$E2E_TMP/work/proj__worktrees/task.log")" -eq 1 ]
	wrx send t 'echo "in=$(basename "$PWD")"'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture t | grep -qx in=t"
}

# Keepers whose agent is gone are ended; shutdown ends them all, asking first.
t_orphans_and_shutdown() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add gone >/dev/null
	wrx add stays >/dev/null
	until_ok 5 nkeepers 2
	# The agent's worktree and record go behind workrex's back.
	git -C "$repo" worktree remove --force "$(wrx path gone)"
	git -C "$repo" config --remove-section workrex.worktree.gone
	start_repo 120 36
	wait_for '^ [0-9] stays'
	# gone's keeper ended; stays's and the home shell's run.
	until_ok 5 nkeepers 2
	prefix d
	wait_for 'WORKREX-EXITED'
	# shutdown asks (no answer: nothing ends), then ends both.
	echo n | script -qec "cd '$repo' && '$WORKREX' shutdown" /dev/null >/dev/null || true
	nkeepers 2
	(cd "$repo" && "$WORKREX" shutdown -y) | grep -qx 'ended 2 programs'
	until_ok 15 nkeepers 0
	(cd "$repo" && "$WORKREX" shutdown -y) | grep -qx 'no program of this project runs'
}

# A keeper's socket against misbehaving clients and another user (keeper_protocol.py).
t_keeper_socket_abuse() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\npanes:\n  - command: <agent>\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add p >/dev/null
	wait_for '^ 2 p'
	local dir
	dir=$(ls -d "$XDG_RUNTIME_DIR"/workrex/*.k)
	python3 "$here/keeper_protocol.py" "$dir" frames
	python3 "$here/keeper_protocol.py" "$dir" stranger
	python3 "$here/keeper_protocol.py" "$dir" keyless
	screen | not grep -q TYPED-BY-A-STRANGER
	# A flood for the client that never reads; the dashboard keeps drawing it.
	wrx send p 'for i in $(seq 1 10); do head -c 2000000 /dev/zero | tr "\\0" x; echo; done; echo FLOOD-$((6*7))'
	python3 "$here/keeper_protocol.py" "$dir" slow
	prefix 2
	wait_for '│FLOOD-42' 30
	type_line 'echo alive-$((6*7))'
	wait_for '│alive-42'
	# While the pane prints, so that updates are written after the client closed.
	type_line 'exec yes'
	sleep 0.5
	python3 "$here/keeper_protocol.py" "$dir" kill
	wait_for '\[keeper gone\]|\[killed by signal|\[exited'
}

# A program that ends with no dashboard: its keeper keeps the status until the pane is closed.
t_exit_kept() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf '#!/bin/sh\necho bye-now\nexit 3\n' >"$E2E_TMP/ender"
	chmod +x "$E2E_TMP/ender"
	printf 'agent: %s\npanes:\n  - command: <agent>\n' "$E2E_TMP/ender" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add e >/dev/null
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' list | grep -qE '^e +e +[^ ]+ +exited '"
	nkeepers 1
	start_repo 120 36
	wait_for '^ 2 . e|^ 2 e'
	prefix 2
	wait_for '\[exited 3\]'
	wait_for '│bye-now'
	wrx close e
	until_ok 5 nkeepers 1
	wrx list | grep -qE '^e +e +[^ ]+ +- '
}

# A pane not on the screen costs the dashboard nothing: its keeper holds its
# rows and history back. What the dashboard reads while a hidden pane prints
# 60,000 lines stays small; capture, send and showing it again are exact.
t_hidden_pane_held() {
	make_repo
	cat >"$E2E_TMP/flood" <<-EOF
		#!/bin/bash
		h=\$(basename "\$PWD")
		while [ ! -e "$E2E_TMP/go-\$h" ]; do sleep 0.05; done
		seq -f "line %g of \$h" 1 60000
		echo "END of \$h"
		touch "$E2E_TMP/done-\$h"
		PS1='fl\$ ' exec bash --norc -i
	EOF
	chmod +x "$E2E_TMP/flood"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: %s\npanes:\n  - command: <agent>\n' "$E2E_TMP/flood" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add fl >/dev/null
	wrx add qt >/dev/null
	wait_for '^ 3 qt'
	# Each runs in the keeper's own program, installed beside workrex.
	local k
	for k in $(keepers); do
		[ "$(readlink "/proc/$k/exe")" = "$(dirname "$WORKREX")/workrex-keeper" ]
	done
	# qt zoomed: fl is laid out nowhere.
	prefix 3
	prefix z
	wait_gone ' 2 fl:'
	local pid
	pid=$(workrex_pid)
	# Shown, the same flood reaches the dashboard: the weakened build's figure.
	read_bytes() { awk '/^rchar/ {print $2}' "/proc/$pid/io"; }
	local r0 r1
	r0=$(read_bytes)
	touch "$E2E_TMP/go-fl"
	until_ok 30 test -e "$E2E_TMP/done-fl"
	sleep 1 # its last held update
	r1=$(read_bytes)
	echo "the dashboard read $((r1 - r0)) bytes while hidden fl printed $(seq -f 'line %g of fl' 1 60000 | wc -c)" >&2
	[ $((r1 - r0)) -lt 200000 ]
	# Capture asks for it whole: every line, in order, to the end.
	wrx capture fl >"$E2E_TMP/cap"
	grep -x 'END of fl' "$E2E_TMP/cap"
	grep '^line ' "$E2E_TMP/cap" | awk '{ if (prev && $2 != prev + 1) exit 1; prev = $2 } END { exit prev != 60000 }'
	# A send to it, hidden, is typed, seen and submitted.
	until_ok 10 in_output -x 'fl\$ ' -- wrx capture fl -n 1
	wrx send fl 'echo typed-$((6*7))'
	until_ok 5 in_output -x 'typed-42' -- wrx capture fl
	# Shown again: its screen as its keeper has it.
	prefix z
	prefix 2
	wait_for '│typed-42'
	wait_for '│line 59990 of fl'
}

run_test "kill -9 of the dashboard: the agent counts on; history whole; typing works" t_kill_dashboard
run_test "prefix d detaches: the agent counts on; history whole; typing works" t_detach
run_test "vim and less survive a killed and a detached dashboard, screens as they were" t_full_screen_programs
run_test "add with no dashboard starts the agent; send, capture, list; a dashboard shows it" t_add_without_dashboard
run_test "attach takes typing from another terminal, C-b d gives it back; watch only looks" t_attach_and_watch
run_test "status and title reported while detached show in the next dashboard" t_status_while_detached
run_test "after a reboot the agent opens again with its resume flag; a closed one does not" t_resume_after_reboot
run_test "after a reboot agents come back as the CLI they were added with; no task runs twice" t_back_as_they_were
run_test "keepers of a vanished agent are ended; shutdown ends the rest, asking first" t_orphans_and_shutdown
run_test "a keeper's socket: a client that never reads, unknown and broken frames, another user" t_keeper_socket_abuse
run_test "a program that ended with no dashboard keeps its status until its pane is closed" t_exit_kept
run_test "kill -9 of one keeper ends one pane; the rest goes on" t_one_keeper_dies
run_test "a hidden pane's flood is held by its keeper; capture, send and showing it are exact" t_hidden_pane_held
run_test "keepers spawned off the loop; a killed spawner is not missed; it ends with the dashboard" t_spawner
run_test "close, remove and merge end their keepers, with or without a dashboard" t_no_keeper_leaks
