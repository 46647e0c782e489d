#!/usr/bin/env bash
# Worktree agents in the dashboard: n, add from another terminal, m, X, :,
# and agents surviving a restart.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
trap stop EXIT

git_env


t_new_agent_key() {
	make_repo
	start_repo
	wait_for 'wrx\$'
	# A branch name git would refuse is said at once, before the prompt is asked.
	prefix n
	wait_for 'new agent, branch \(or #N, a GitHub issue; # Tab lists them\):'
	tm send-keys -l 'bad..name'
	keys Enter
	wait_for "new agent: 'bad..name' is not a valid branch name"
	screen | not grep -q 'prompt (Enter for none)'
	prefix n
	wait_for 'new agent, branch \(or #N, a GitHub issue; # Tab lists them\):'
	tm send-keys -l 'feature/login'
	keys Enter
	wait_for 'prompt \(Enter for none\):'
	tm send-keys -l 'make it work'
	keys Enter
	wait_for '^ 2 feature-login'
	wait_for 'feature-login:'
	type_line 'basename "$PWD"; basename "$(dirname "$PWD")"'
	wait_for "│feature-login *(│|$)"
	wait_for "│proj__worktrees *(│|$)"
	grep -q 'make it work' "$E2E_TMP/work/proj__worktrees/feature-login/.workrex/PROMPT-feature-login.md"
	[ "$(git -C "$repo" worktree list | wc -l)" -eq 2 ]
}

t_add_from_another_terminal() {
	make_repo
	start_repo
	wait_for 'wrx\$'
	wrx add x -p "hi" | grep -q 'created x'
	wait_for '^ 2 x'
	wait_for '│ [0-9] x:'
	# send and capture reach the agent's pane
	wrx send x 'echo sent-$((6*7))'
	wait_for 'sent-42'
	wrx capture x | grep -q 'sent-42'
	# -e keeps a last row that shows only a background colour (the text
	# capture drops it); --screen is the pane's rows, its 24-bit colours as
	# this 256-colour terminal shows them.
	wrx send x "clear; printf '\\033[38;2;255;0;0mred\\033[0m\\n\\033[99;1H\\033[44m\\033[K\\033[0m\\033[3;1H'"
	wait_for '│red'
	wrx capture x -e >"$E2E_TMP/cap"
	grep -aq $'\033\\[0;38;2;255;0;0mred' "$E2E_TMP/cap"
	tail -n 1 "$E2E_TMP/cap" | grep -aq $'\033\\[0;48;5;4m'
	wrx capture x >"$E2E_TMP/txt"
	[ "$(wc -l <"$E2E_TMP/txt")" -lt "$(wc -l <"$E2E_TMP/cap")" ]
	wrx capture x --screen >"$E2E_TMP/scr"
	grep -aq $'\033\\[0;38;5;196mred' "$E2E_TMP/scr"
	[ "$(wc -l <"$E2E_TMP/scr")" -eq "$(wc -l <"$E2E_TMP/cap")" ]
}

t_merge_key_closes_panes() {
	make_repo
	start_repo
	wait_for 'wrx\$'
	wrx add topic >/dev/null
	wait_for '^ 2 topic'
	echo two >"$E2E_TMP/work/proj__worktrees/topic/b.txt"
	git -C "$E2E_TMP/work/proj__worktrees/topic" add b.txt
	git -C "$E2E_TMP/work/proj__worktrees/topic" commit -qm two
	prefix 2
	prefix m
	wait_for 'merge topic and remove its worktree\? \(y/n, q: to the merge queue\)'
	keys y
	wait_for 'merged topic'
	wait_gone '^ 2 topic'
	wait_gone 'topic:'
	git -C "$repo" log --oneline | grep -q "Merge branch 'topic'"
	[ -f "$repo/b.txt" ]
	not git -C "$repo" rev-parse --verify --quiet refs/heads/topic
}

t_merge_conflict_is_reported() {
	make_repo
	start_repo
	wait_for 'wrx\$'
	wrx add clash >/dev/null
	wait_for '^ 2 clash'
	echo agent >"$E2E_TMP/work/proj__worktrees/clash/a.txt"
	git -C "$E2E_TMP/work/proj__worktrees/clash" commit -qam agent
	echo main >"$repo/a.txt"
	git -C "$repo" commit -qam main
	prefix 2
	prefix m
	wait_for 'merge clash'
	keys y
	wait_for 'conflict in a.txt; nothing was changed'
	[ "$(cat "$repo/a.txt")" = main ]
	[ -z "$(git -C "$repo" status --porcelain)" ]
	# The agent stays, ready to open again.
	screen | grep -qE '^ 2 clash'
	# A merge refused before anything changes leaves the agent running.
	prefix 2
	wait_for 'clash:'
	echo wip >>"$E2E_TMP/work/proj__worktrees/clash/a.txt"
	not wrx merge clash
	sleep 0.5
	screen | grep -qE 'clash:'
}

t_remove_key_and_command_line() {
	make_repo
	start_repo
	wait_for 'wrx\$'
	wrx add gone >/dev/null
	wait_for '^ 2 gone'
	prefix 2
	prefix X
	wait_for 'remove the worktree and branch of gone\? \(y/n\)'
	keys y
	wait_for 'removed gone'
	wait_gone '^ 2 gone'
	[ ! -d "$E2E_TMP/work/proj__worktrees/gone" ]
	# The command line runs any command.
	prefix :
	wait_for 'workrex'
	tm send-keys -l 'add via-colon -b'
	keys Enter
	wait_for '^ 2 via-colon'
}

# prefix : shows a command's whole output in a view; one line stays a message.
t_command_output_view() {
	make_repo
	start_repo 120 30
	wait_for 'wrx\$'
	wrx add aa -b >/dev/null
	wrx add bb -b >/dev/null
	wait_for '^ 3 bb'
	prefix :
	wait_for 'workrex'
	tm send-keys -l 'list'
	keys Enter
	wait_for '^ workrex list  \[1-3 of 3\]'
	wait_for '^HANDLE +BRANCH'
	wait_for '^aa +aa'
	wait_for '^bb +bb'
	keys q
	wait_gone '^HANDLE +BRANCH'
	# Longer than the screen: it scrolls, G to the end.
	prefix :
	tm send-keys -l 'config reference'
	keys Enter
	wait_for '^ workrex config reference  \[1-28 of [0-9]+\]'
	wait_for '^# workrex configuration'
	keys G
	wait_gone '^# workrex configuration'
	wait_for 'of ([0-9]+) of \1\]|-([0-9]+) of \2\]'
	keys Escape
	wait_gone 'workrex config reference'
	# A one-line outcome is a message on the status line, as before.
	prefix :
	tm send-keys -l 'path aa'
	keys Enter
	wait_for 'proj__worktrees/aa'
	screen | not grep -q 'workrex path aa  \['
}

# The dashboard reads its config again: prefix R, a file changed on disk,
# workrex config reload; a file that does not load leaves the old config.
t_config_reload() {
	make_repo
	local g=$XDG_CONFIG_HOME/workrex/config.yaml
	start_repo 140 40
	wait_for 'wrx\$'
	# No global config dir when it started: prefix R reads the new file.
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: "sh -c '"'"'echo AGENT-ONE; exec sh'"'"'"\n' >"$g"
	prefix R
	wait_for 'config reloaded'
	wrx add one -b >/dev/null
	until_ok 10 eval 'wrx capture one | grep -q AGENT-ONE'
	# Now watched: a change on disk is read without asking.
	printf 'agent: "sh -c '"'"'echo AGENT-TWO; exec sh'"'"'"\n' >"$g"
	sleep 1
	wrx add two -b >/dev/null
	until_ok 10 eval 'wrx capture two | grep -q AGENT-TWO'
	# A file that does not load: said, and the old config stays.
	printf 'agent: [\n' >"$g"
	wait_for 'config not reloaded, the old one stays: .*config.yaml'
	not wrx config reload 2>"$E2E_TMP/err"
	grep -q 'config reload: .*config.yaml:2' "$E2E_TMP/err"
	# The project file: added, then deleted.
	: >"$g"
	printf 'status_icons: {done: "D"}\n' >"$repo/.workrex.yaml"
	sleep 1
	wrx send two 'workrex set-status done'
	wait_for '^ 3 D two'
	rm "$repo/.workrex.yaml"
	wait_for '^ 3 ✓ two'
	wrx config reload | grep -qx 'the dashboard reloaded its config'
}

t_agents_survive_restart() {
	make_repo
	# With no dashboard, add starts the agent; the dashboard then shows it running.
	wrx add later -p "do it later" | grep -q 'no dashboard runs; its agent does'
	start_repo
	wait_for '^ 2 later'
	prefix q
	wait_for 'quit and end'
	keys y
	wait_for 'WORKREX-EXITED 0'
	until_ok 15 nkeepers 0
	kill_server
	start_repo
	wait_for '^ 2 later'
	# Not open until asked: focusing it opens its panes in its worktree.
	prefix 2
	wait_for 'later:'
	type_line 'basename "$PWD"'
	wait_for '│later *(│|$)'
}

t_second_dashboard_refused() {
	make_repo
	start_repo
	wait_for 'wrx\$'
	out=$(cd "$repo" && script -qec "$WORKREX" /dev/null </dev/null 2>&1 | tr -d '\r')
	echo "$out" | grep -q "a dashboard is already running for this project (pid $(workrex_pid),"
}

t_overview_and_cli_queries() {
	make_repo
	wrx add one -b >/dev/null
	wrx add two -b >/dev/null
	start_repo
	wait_for '^ 3 two'
	prefix w
	wait_for '# +AGENT +STATUS'
	screen | grep -qE ' 2 +one +- +2 +host +one'
	keys j j Enter
	wait_gone '# +AGENT'
	wait_for 'two:'
	wrx status --json | grep -q '"handle":"two"'
	wrx list | grep -qE '^two +two +- +[a-z-]+ +host'
	out=$(wrx wait two --timeout 0.5 2>&1 || true)
	echo "$out" | grep -q "timed out before two reached 'done'"
	# Bad input to the control socket gets an error, the dashboard carries on.
	sock=$(ls "$XDG_RUNTIME_DIR"/workrex/*.sock)
	python3 - "$sock" <<'PY'
import socket, sys
def talk(payload, n):
    s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
    s.sendall(payload)
    data = b""
    while data.count(b"\n") < n:
        chunk = s.recv(4096)
        if not chunk: break
        data += chunk
    return data.decode().splitlines()
# A first line that is neither a CLI command nor a token ends the connection.
lines = talk(b"{not json\n{\"cmd\":\"ping\"}\n", 2)
assert lines == ['{"type":"error","message":"authentication failed"}'], lines
# Once a CLI connection, garbage lines get errors and the connection goes on.
lines = talk(b"{\"cmd\":\"ping\"}\n{not json\n[1,2]\n{\"cmd\":\"explode\",\"handle\":\"two\"}\n", 4)
assert "ok" in lines[0], lines
assert "malformed JSON" in lines[1], lines
assert "a request is a JSON object" in lines[2], lines
assert "unknown command" in lines[3], lines
PY
	wrx capture two >/dev/null
}

# A project config's commands run only once the user trusted that content:
# merged in by an agent, it runs nothing until allowed; allowed, it runs;
# changed again, it is asked for again.
t_project_trust() {
	make_repo
	start_repo 150 40
	wait_for 'wrx\$'
	wrx add feat -b --no-sandbox >/dev/null
	local f
	f=$(cd "$repo/../proj__worktrees/feat" && pwd)
	printf 'post_create: ["touch %s/ran-1"]\n' "$E2E_TMP" >"$f/.workrex.yaml"
	git -C "$f" add .workrex.yaml
	git -C "$f" commit -qm "a post_create hook"
	# The dashboard merges it (its command line), then asks about the new file.
	prefix :
	wait_for 'workrex'
	tm send-keys -l 'merge feat'
	keys Enter
	# It waits for the user on the status line; opened, it shows the line.
	wait_for 'a question waits: C-b a to answer - .workrex.yaml is not trusted, so its post_create did not run'
	prefix a
	wait_for '^  1: post_create: \["touch .*ran-1"\]'
	wait_for '^trust it\? \(y/n\)'
	# Until the user says yes, it runs nothing.
	wrx add before -b --no-sandbox >"$E2E_TMP/out" 2>&1
	grep -q "'post_create' goes to sh -c on the host, in the project or the agent's worktree, and this project config is not trusted" "$E2E_TMP/out"
	test ! -e "$E2E_TMP/ran-1"
	keys y
	wait_for 'trusted .*proj/.workrex.yaml' || { tail -20 "$XDG_STATE_HOME/workrex/workrex.log" >&2; return 1; }
	wrx add after -b --no-sandbox >/dev/null 2>&1
	test -e "$E2E_TMP/ran-1"
	# Changed on main: asked again, and nothing runs meanwhile.
	printf 'post_create: ["touch %s/ran-2"]\n' "$E2E_TMP" >"$repo/.workrex.yaml"
	git -C "$repo" commit -qam "changed"
	wrx add changed -b --no-sandbox >/dev/null 2>&1
	test ! -e "$E2E_TMP/ran-2"
	# The dashboard watches the file: the change alone asks. (A `:` command
	# here raced that question: its C-b, landing on it, said no.)
	wait_for 'a question waits: C-b a to answer - .workrex.yaml is not trusted, so its post_create'
	prefix a
	wait_for '^  1: post_create: \["touch .*ran-2"\]'
	keys n
	wrx add declined -b --no-sandbox >/dev/null 2>&1
	test ! -e "$E2E_TMP/ran-2"
	# workrex trust from a terminal shows the file and trusts it.
	wrx trust >"$E2E_TMP/trust"
	grep -q 'ran-2' "$E2E_TMP/trust"
	wrx add trusted -b --no-sandbox >/dev/null 2>&1
	test -e "$E2E_TMP/ran-2"
	# A remote git would read as an option: asked; trusted, it is refused, said.
	printf 'review:\n  remote: "--upload-pack=touch %s/ran-3;true"\n' "$E2E_TMP" >"$repo/.workrex.yaml"
	wait_for 'a question waits: C-b a to answer - .workrex.yaml is not trusted, so its review.remote'
	prefix a
	wait_for '^  2:   remote: "--upload-pack=touch .*ran-3;true"'
	keys y
	wait_for "^trusted .*proj/.workrex.yaml, but it is not valid:"
	not wrx config check >"$E2E_TMP/check" 2>&1
	grep -q "review.remote: '--upload-pack=touch .*' begins with '-'" "$E2E_TMP/check"
	not wrx pr trusted 2>/dev/null
	test ! -e "$E2E_TMP/ran-3"
}

# A profile written into agents: while the dashboard runs is there for
# the add that comes right after, not only after a restart.
t_profile_added_while_running() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: bash\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	printf 'agent: bash\nagents:\n  fresh:\n    command: sh\n    args: ["-c", "echo FRESH-PROFILE; exec bash"]\n' \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx add -a fresh -b x >/dev/null
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture x | grep -qx FRESH-PROFILE"
	not grep -q 'not found' <(wrx capture x)
}

# add -a runs that agent, not the configured one (and again after a restart).
t_add_with_agent() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agents:
		  echoer: {command: sh, args: [-c, "echo I-AM-ECHOER; exec sleep 60"]}
	YAML
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add picked -a echoer -b >/dev/null
	wait_for '^ 2 picked'
	local i=0
	until wrx capture picked | grep -q I-AM-ECHOER; do
		((i < 100)) || { wrx capture picked >&2; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
	wrx list --json | python3 -c 'import json,sys; a={x["handle"]: x for x in json.load(sys.stdin)}; assert a["picked"]["agent"] == "echoer", a'
}

# Names that match nothing are errors, never an empty answer or a wait forever.
t_unknown_names_are_errors() {
	make_repo
	start_repo
	wait_for 'wrx\$'
	not wrx status nosuch 2>"$E2E_TMP/err"
	grep -q "status: no agent 'nosuch'" "$E2E_TMP/err"
	# A long option is spelled whole: no abbreviation means another by surprise.
	not wrx merge --ignore nosuch 2>"$E2E_TMP/err"
	grep -q 'merge: --ignore is not an option; say --ignore-uncommitted in full' "$E2E_TMP/err"
	# -a twice is a group (SPEC §11): of new agents, never one named by --name.
	not wrx add -a one -a two --name x nosuch 2>"$E2E_TMP/err"
	grep -q 'add: --name makes one agent, not a group' "$E2E_TMP/err"
	local rc=0
	(cd "$repo" && timeout 5 "$WORKREX" wait nosuch) 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 1 ]
	grep -q "wait: no agent 'nosuch'" "$E2E_TMP/err"
	not wrx --config /missing/workrex.yaml list 2>"$E2E_TMP/err"
	grep -q -- '--config /missing/workrex.yaml: No such file' "$E2E_TMP/err"
	not wrx --config /missing/workrex.yaml config check 2>"$E2E_TMP/err"
	grep -q -- '--config /missing/workrex.yaml' "$E2E_TMP/err"
}

# Numbers stay for an agent's life and across restarts; a pane's number is
# its WORKREX_PANE (issue 11: both changed after merges, new panes, restarts).
t_numbers_are_stable() {
	make_repo
	start_repo 140 40
	wait_for 'wrx\$'
	local h
	for h in aa bb cc; do wrx add "$h" -b >/dev/null; done
	wait_for '^ 4 cc'
	wrx remove bb >/dev/null
	wait_gone '^ 3 bb'
	screen | grep -qE '^ 2 aa'
	screen | grep -qE '^ 4 cc'
	# A new agent takes the lowest free number; cc keeps 4.
	wrx add dd -b >/dev/null
	wait_for '^ 3 dd'
	prefix 4
	type_line 'echo "pane=$WORKREX_PANE"'
	wait_for '│pane=[0-9]+ *(│|$)'
	local id
	id=$(screen | grep -oE '│pane=[0-9]+' | head -1 | cut -d= -f2)
	screen | grep -qE "│ $id [^│]*cc:" || { screen >&2; return 1; }
	# After a restart, the same numbers.
	kill_server
	start_repo 140 40
	wait_for '^ 4 cc'
	screen | grep -qE '^ 2 aa'
	screen | grep -qE '^ 3 dd'
}

# -p reaches any agent: {prompt} where its command asks, WORKREX_PROMPT_FILE
# for all; a prompt that starts with '-' stays a prompt (issue 11).
t_prompt_reaches_any_agent() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'YAML'
		agents:
		  placed: {command: sh, args: [-c, 'printf "got[%s]\n" "$1"; exec sleep 60', sh, "{prompt}"]}
		  plain: {command: sh, args: [-c, 'printf "file[%s]\n" "$(cat "$WORKREX_PROMPT_FILE")"; exec sleep 60']}
	YAML
	start_repo 160 40
	wait_for 'wrx\$'
	wrx add one -a placed -p '--help me; $(touch /tmp/no)' -b >/dev/null
	wrx add two -a plain -p 'second prompt' -b >/dev/null
	local i=0
	until wrx capture one | grep -qF 'got[--help me; $(touch /tmp/no)]'; do
		((i < 100)) || { wrx capture one >&2; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
	i=0
	until wrx capture two | grep -qF 'file[second prompt]'; do
		((i < 100)) || { wrx capture two >&2; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
	wait_for 'two: plain takes no prompt argument; the prompt is in \$WORKREX_PROMPT_FILE'
}

# list fits 80 columns for ordinary names (it was 121 wide).
t_list_fits_80_columns() {
	make_repo
	wrx add feature/login-page -b >/dev/null
	wrx add fix-1234 -b >/dev/null
	wrx list >"$E2E_TMP/list"
	cat "$E2E_TMP/list" >&2
	[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$E2E_TMP/list")" -le 80 ]
	# Every agent in the worktree dir under its handle: no PATH column (--json has it).
	grep -qE '^HANDLE +BRANCH +STATUS +PANES +BACKEND +AGE +UNMERGED$' "$E2E_TMP/list"
	grep -qE '^feature-login-page +feature/login-page +- +running +host +[0-9]+s +0$' "$E2E_TMP/list"
	# One elsewhere: PATH, relative to the project's parent directory.
	git -C "$repo" worktree add -q -b odd "$E2E_TMP/work/elsewhere"
	wrx list >"$E2E_TMP/list"
	grep -qE '^HANDLE +BRANCH +STATUS +PANES +BACKEND +AGE +UNMERGED +PATH$' "$E2E_TMP/list"
	grep -qE '^elsewhere +odd +.* elsewhere$' "$E2E_TMP/list"
}

# Each pane's program starts at the size its pane keeps: laid out before it
# runs, not resized as it starts (which less, for one, can miss).
t_panes_start_at_their_size() {
	make_repo
	cat >"$E2E_TMP/sizer" <<-'EOF'
		#!/bin/sh
		a=$(stty size); sleep 1; b=$(stty size)
		if [ "$a" = "$b" ]; then echo "size kept $b"; else echo "size moved $a to $b"; fi
		exec sleep 60
	EOF
	chmod +x "$E2E_TMP/sizer"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: %s\npanes:\n  - command: <agent>\n  - command: %s\n  - command: %s\n' \
		"$E2E_TMP/sizer" "$E2E_TMP/sizer" "$E2E_TMP/sizer" >"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add s >/dev/null
	until_ok 10 sh -c "tmux -L $SOCK capture-pane -p | grep -cE 'size (kept|moved)' | grep -qx 3"
	screen | grep -oE 'size (kept|moved).*' >&2
	screen | not grep -q 'size moved'
}

# send types the text, waits until the program took it, then Enter on its
# own; a program slow to read that takes a CR in the same read as a paste
# for a newline (slow_agent.py, as Claude Code's box does) still gets it
# submitted, and one that shows nothing after Enter is reported.
t_send_is_submitted() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agent: %s\npanes:\n  - command: <agent>\n' "$here/slow_agent.py" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 120 36
	wait_for 'C-b \? help'
	wrx add s -b >/dev/null
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture s | grep -q 'slow agent ready'"
	wrx send s 'fix the login bug'
	wrx capture s | grep -qxF 'SUBMITTED[fix the login bug]'
	wrx send s 'two words; $(and quotes)'
	wrx capture s | grep -qxF 'SUBMITTED[two words; $(and quotes)]'
	# Text from stdin, as a script would send it.
	echo 'from stdin' | wrx send s
	wrx capture s | grep -qxF 'SUBMITTED[from stdin]'
	# add -p for an agent that runs already: delivered the same way.
	wrx add s -p 'and the logout one' >"$E2E_TMP/out"
	grep -qx 's runs already: the prompt was sent to it' "$E2E_TMP/out"
	wrx capture s | grep -qxF 'SUBMITTED[and the logout one]'
	# An agent's spawn_agent never types into another agent.
	not wrx add --new-only s -p 'from an agent' 2>"$E2E_TMP/err"
	grep -q "an agent named 's' exists already" "$E2E_TMP/err"
	wrx capture s | not grep -qF 'from an agent'
	wrx send s 'go deaf'
	not wrx send s 'anyone there' 2>"$E2E_TMP/err"
	grep -q 'not submitted' "$E2E_TMP/err" || { cat "$E2E_TMP/err" >&2; return 1; }
	not wrx add s -p 'still deaf' 2>"$E2E_TMP/err"
	grep -q 'not submitted' "$E2E_TMP/err" || { cat "$E2E_TMP/err" >&2; return 1; }
}

# .workrex.yaml changes (an editor, a merge) while the user types into a
# pane, at 80x24: every key reaches the pane, nothing is trusted, and the
# question waits on the status line for C-b a; opened, it shows each line
# that would run a command (issue 46).
t_trust_question_waits() {
	make_repo
	start_repo 80 24
	wait_for 'wrx\$'
	type_line "cat >'$E2E_TMP/typed.txt'"
	local typed='yes do it, then C-b and more' i
	for ((i = 0; i < ${#typed}; i++)); do
		tm send-keys -l -- "${typed:i:1}"
		if ((i == 3)); then
			printf 'post_create: ["touch %s/ran-pc"]\ncheck: touch %s/ran-check\n' \
				"$E2E_TMP" "$E2E_TMP" >"$repo/.workrex.yaml"
		fi
		sleep 0.05
		# The question came while typing: the rest is typed after it.
		((i != 3)) || wait_for 'a question waits: C-b a to answer - .workrex.yaml is not'
	done
	keys Enter C-d
	until_ok 10 grep -qx "$typed" "$E2E_TMP/typed.txt" ||
		{ cat "$E2E_TMP/typed.txt" >&2; screen >&2; return 1; }
	# Nothing trusted: an agent added now runs no post_create.
	wrx add one -b >/dev/null 2>&1
	test ! -e "$E2E_TMP/ran-pc"
	wait_for 'a question waits: C-b a to answer - .workrex.yaml is not'
	prefix a
	wait_for '^  1: post_create: \["touch .*/ran-pc"\]'
	wait_for '^  2: check: touch .*/ran-check'
	wait_for '^trust it\? \(y/n\)'
	keys y
	wait_gone '^trust it\? \(y/n\)'
	wrx add two -b >/dev/null 2>&1
	test -e "$E2E_TMP/ran-pc"
}

run_test "n creates a worktree and a pane in it" t_new_agent_key
run_test "workrex add from another terminal opens panes in the dashboard" t_add_from_another_terminal
run_test "m merges; the agent's panes go" t_merge_key_closes_panes
run_test "a merge conflict is reported and changes nothing" t_merge_conflict_is_reported
run_test "X removes; : runs a command" t_remove_key_and_command_line
run_test "prefix : shows a command's whole output in a view" t_command_output_view
run_test "config reload: prefix R, a change on disk, workrex config reload" t_config_reload
run_test "agents survive a restart and open on focus" t_agents_survive_restart
run_test "a second dashboard for the project is refused" t_second_dashboard_refused
run_test "overview table; status, list, wait; bad control input" t_overview_and_cli_queries
run_test "a project config runs commands only once trusted; a change asks again" t_project_trust
run_test ".workrex.yaml changed while the user types: keys reach the pane, the question waits" t_trust_question_waits
run_test "add -a runs that agent" t_add_with_agent
run_test "a profile added to agents: while the dashboard runs is used at once" t_profile_added_while_running
run_test "unknown names and a missing --config are errors" t_unknown_names_are_errors
run_test "agent and pane numbers are stable" t_numbers_are_stable
run_test "a prompt reaches any agent; one starting with - stays a prompt" t_prompt_reaches_any_agent
# add -a with a CLI that is not there (issue 46 item 12): refused before a
# branch or a worktree is made; a profile whose command is missing too;
# a sandboxed agent's command is its image's, not checked here.
t_add_unknown_agent() {
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'agents:\n  ghost:\n    command: no-such-cli-2 --x\n' >"$XDG_CONFIG_HOME/workrex/config.yaml"
	not wrx add x -a no-such-cli -b 2>"$E2E_TMP/err"
	grep -qF -- "add: -a no-such-cli: no profile of that name, and no command no-such-cli on PATH" "$E2E_TMP/err"
	not wrx add y -a ghost -b 2>"$E2E_TMP/err"
	grep -qF -- "add: -a ghost: its profile's command no-such-cli-2 is not on PATH" "$E2E_TMP/err"
	not git -C "$repo" rev-parse -q --verify refs/heads/x
	not git -C "$repo" rev-parse -q --verify refs/heads/y
	test ! -e "$repo/../proj__worktrees/x"
	wrx add z -a sh -b >/dev/null 2>&1 || true
	git -C "$repo" rev-parse -q --verify refs/heads/z >/dev/null
	# A group: every -a of it checked before any is made.
	not wrx add grp -a sh -a no-such-cli -b 2>"$E2E_TMP/err"
	grep -qF -- "add: -a no-such-cli: no profile of that name" "$E2E_TMP/err"
	[ -z "$(git -C "$repo" for-each-ref 'refs/heads/grp-*')" ]
}

run_test "add -a with a CLI that is not there: refused, no branch, no worktree" t_add_unknown_agent
run_test "list fits 80 columns" t_list_fits_80_columns
run_test "each pane's program starts at the size its pane keeps" t_panes_start_at_their_size
run_test "send and add -p into a running agent: submitted, or not submitted is said" t_send_is_submitted
