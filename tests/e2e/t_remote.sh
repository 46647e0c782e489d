#!/usr/bin/env bash
# Agents on a server (remote.hosts), against a real sshd of the test's own
# on loopback. The "server" is this machine as a second user environment:
# sshd gives its sessions their own HOME, XDG dirs and WORKREX_RUNTIME_DIR
# (SetEnv), and its clone lives in a directory of its own. ssh finds it
# through an ssh_config (a wrapper first on PATH adds -F), as a user's
# ~/.ssh/config would. Nothing here is faked: the workrex there is this
# build, copied there by add --remote.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
trap 'end_remote; stop_x; stop' EXIT

git_env
srv=$E2E_TMP/srv

# The keepers that run "there" (their environment has the server's runtime dir).
has_agent() { wrx list -q | grep -qx "$1"; }
nremote() { nkeepers "$1" "WORKREX_RUNTIME_DIR=$srv/run"; }
end_remote() { end_keepers "WORKREX_RUNTIME_DIR=$srv/run"; }

# The server, ssh's way there, and the project's config naming it.
remote_setup() {
	mkdir -p "$srv/home" "$srv/run" "$srv/xdg" "$E2E_TMP/bin"
	chmod 700 "$srv/run" "$srv/xdg"
	printf '[user]\n\tname = S\n\temail = s@example.com\n' >"$srv/home/.gitconfig"
	SSHD_EXTRA="SetEnv HOME=$srv/home XDG_RUNTIME_DIR=$srv/xdg WORKREX_RUNTIME_DIR=$srv/run XDG_CONFIG_HOME=$srv/home/.config XDG_STATE_HOME=$srv/home/.local/state XDG_DATA_HOME=$srv/home/.local/share" \
		start_sshd
	ssh_alias srv
	# The agent: says where it runs and what it was asked, then is a shell.
	cat >"$E2E_TMP/ragent" <<-'EOF'
		#!/bin/bash
		echo "AGENT home=${HOME#"${HOME%/*/*}/"}"
		[ -n "$WORKREX_PROMPT_FILE" ] && echo "asked: $(cat "$WORKREX_PROMPT_FILE")"
		PS1='ra$ ' exec bash --norc -i
	EOF
	chmod +x "$E2E_TMP/ragent"
	make_repo
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-EOF
		agent: $E2E_TMP/ragent
		panes:
		  - command: <agent>
		remote:
		  hosts:
		    srv: {ssh: srv, path: $srv/clone}
	EOF
}

t_add_status_merge() {
	remote_setup
	start_repo 200 40
	wait_for 'wrx\$|proj'
	wrx add --remote srv feat -p "make it so" >"$E2E_TMP/out"
	grep -q "created feat (feat) on srv at $srv/clone__worktrees/feat" "$E2E_TMP/out"
	# The agent runs there: its home, its prompt, its directory.
	wait_for "AGENT home=srv/home" 20
	wait_for 'asked: make it so'
	wait_for 'feat @srv'
	type_line 'pwd | sed "s|.*/srv/|at srv/|"'
	wait_for '│at srv/clone__worktrees/feat'
	nremote 1
	# Its hook reaches this dashboard through the link.
	type_line 'workrex set-status waiting && echo STATUS-SENT'
	wait_for STATUS-SENT
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' status feat | grep -q waiting"
	# It commits there; list and merge bring the commit back, verified.
	type_line 'echo two >b.txt && git add b.txt && git commit -qm from-srv && echo COMMITTED'
	wait_for COMMITTED
	wrx list >"$E2E_TMP/list"
	grep -E '^feat +feat +waiting +running +ssh:srv +[0-9]+s +1$' "$E2E_TMP/list"
	wrx list --json | grep -q '"host": *"srv"'
	# Its review: the branch, fetched back and verified; patch mode is for a
	# worktree here, and says so.
	prefix D
	wait_for 'review feat  \[branch\]  1 file \+1 -0'
	wait_for '│\+two'
	keys a
	wait_for 'patch: feat: its worktree is on its server; c asks it to commit'
	keys q
	wait_gone 'review feat'
	# doctor checks the server too (its own FAILs, for a sandbox image, are not ours).
	wrx sandbox doctor >"$E2E_TMP/doctor" 2>&1 || true
	grep -q '^ok    remote srv: this workrex runs there' "$E2E_TMP/doctor"
	grep -q '^ok    remote srv: the clone is at .*; 1 pane of this project run' "$E2E_TMP/doctor"
	# Its second pane there is a shell: it has no keeper's socket to speak
	# for the agent with no dashboard (the agent pane has, as here).
	prefix c
	until_ok 10 nremote 2
	type_line 'echo "keeper=${WORKREX_RPC_KEEPER:-none} rpc=${WORKREX_RPC_SOCKET:+set}"'
	wait_for 'keeper=none rpc=set'
	wrx merge feat >"$E2E_TMP/merge"
	grep -q 'merged feat into main' "$E2E_TMP/merge"
	git -C "$repo" log --oneline main | grep -q from-srv
	test "$(cat "$repo/b.txt")" = two
	# Gone, here and there.
	wait_gone 'feat @srv'
	until_ok 10 nremote 0
	test ! -e "$srv/clone__worktrees/feat"
	not git -C "$repo" rev-parse --verify -q refs/heads/feat
	not git -C "$srv/clone" rev-parse --verify -q refs/heads/feat
	not has_agent feat
}

t_link_drop() {
	remote_setup
	start_repo 200 40
	wait_for 'wrx\$|proj'
	wrx add --remote srv drop >/dev/null
	wait_for 'ra\$' 20
	type_line 'echo before-drop'
	wait_for '│before-drop'
	# The link drops while the agent works: it goes on there, the pane says so.
	type_line 'for i in $(seq 1 30); do echo tick $i; sleep 0.1; done; workrex set-status waiting; echo LOOP-END rc=$?'
	wait_for '│tick 2 *(│|$)'
	stop_sshd
	wait_for 'srv unreachable: reconnecting; the program goes on there'
	# Unreachable, not failed: the sidebar and list say so.
	wait_for ' 2 .*drop @srv unreachable'
	wrx list | grep -E '^drop +drop +- +unreachable +ssh:srv ' >/dev/null || { wrx list >&2; return 1; }
	wrx list --json | grep -q '"unreachable": *true'
	nremote 1
	sleep 4 # the loop ends there meanwhile
	nremote 1
	# sshd back: the pane attaches again, with what it printed meanwhile.
	run_sshd
	wait_gone 'unreachable' 30
	wrx list | grep -E '^drop +drop +[a-z-]+ +running +ssh:srv ' >/dev/null || { wrx list >&2; return 1; }
	# What it reported meanwhile its keeper kept, and the dashboard has now.
	wait_for '│LOOP-END rc=0'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' status drop | grep -q waiting"
	type_line 'echo after-$((6 * 7))'
	wait_for '│after-42'
	wrx capture drop | grep -q '^before-drop'
	wrx capture drop | grep -q '^tick 30$'
	# Its hooks reach the dashboard again (the bridge's socket forwarded anew).
	type_line 'workrex set-status done && echo DONE-SENT'
	wait_for DONE-SENT
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' status drop | grep -q done"
}

t_without_dashboard() {
	remote_setup
	# add starts the agent there itself; send, capture, close, remove work on it.
	wrx add --remote srv solo >/dev/null
	until_ok 10 nremote 1
	wrx send solo 'echo hello-$((1 + 1))'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture solo | grep -q '^hello-2'"
	# Its hooks with no dashboard: kept there by its keeper for the next one.
	wrx send solo 'workrex set-status waiting; echo status-rc=$?'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' capture solo | grep -q '^status-rc=0'"
	start_repo 200 40
	wait_for 'solo @srv'
	until_ok 10 sh -c "cd '$repo' && '$WORKREX' status solo | grep -q waiting"
	prefix d
	wait_for 'WORKREX-EXITED 0'
	kill_tmux
	# attach from a terminal: the pane there, through the link; typing reaches it.
	tm new-session -d -x 100 -y 30 -c "$repo" \
		"env TERM=tmux-256color PATH='$PATH' $WORKREX attach solo; echo ATTACH-EXITED; sleep 30"
	wait_for '^status-rc=0'
	type_line 'echo attached-$((6 * 7))'
	wait_for '^attached-42'
	prefix d
	wait_for 'detached from solo'
	kill_tmux
	nremote 1
	wrx close solo
	until_ok 10 nremote 0
	wrx open solo
	until_ok 10 nremote 1
	# Uncommitted work there is not removed without -f.
	wrx send solo 'echo x >dirty.txt'
	until_ok 10 test -f "$srv/clone__worktrees/solo/dirty.txt"
	not wrx rm solo 2>"$E2E_TMP/err"
	grep -q "'solo' has uncommitted changes" "$E2E_TMP/err"
	nremote 1
	# shutdown ends its program there too (and the project's shell the
	# dashboard left here), asking first.
	not wrx shutdown </dev/null 2>"$E2E_TMP/err"
	grep -q '2 programs run; -y ends them without asking' "$E2E_TMP/err"
	nremote 1
	wrx shutdown -y | grep -qx 'ended 2 programs'
	until_ok 10 nremote 0
	wrx shutdown -y | grep -qx 'no program of this project runs'
	wrx rm -f solo
	test ! -e "$srv/clone__worktrees/solo"
	not git -C "$repo" rev-parse --verify -q refs/heads/solo
}

t_refusals() {
	remote_setup
	not wrx add --remote nosuch x 2>"$E2E_TMP/err"
	grep -q "no host 'nosuch' in remote.hosts (srv)" "$E2E_TMP/err"
	# The server down: a clear error, and nothing recorded here.
	stop_sshd
	not wrx add --remote srv y 2>"$E2E_TMP/err"
	grep -q 'cannot reach srv (ssh srv)' "$E2E_TMP/err"
	not has_agent y
	not git -C "$repo" rev-parse --verify -q refs/heads/y
	run_sshd
	start_repo 200 40
	wait_for 'wrx\$|proj'
	wrx add --remote srv agent1 >/dev/null
	wait_for 'ra\$' 20
	# An agent there runs no command on this host, and reads no branch of the
	# user's here by spawning on it; it spawns a new agent on its own server.
	git -C "$repo" branch private-work
	type_line 'workrex host-exec true; echo exec-rc=$?'
	wait_for 'host commands are for sandboxes'
	type_line 'workrex add private-work; echo add-rc=$?'
	wait_for "'private-work' exists; an agent may only spawn on a new branch"
	wait_for 'add-rc=1'
	not git -C "$srv/clone" rev-parse --verify -q refs/heads/private-work
	type_line 'workrex add kid -b; echo spawn-rc=$?'
	wait_for 'kid @srv' 30
	wait_for 'spawn-rc=0'
	until_ok 10 nremote 2
	test -d "$srv/clone__worktrees/kid"
}

t_paste_image() {
	need_x
	start_x
	remote_setup
	"$here/make_png.py" "$E2E_TMP/one.png" 5000
	# The dashboard does not see the server's files (an empty tmpfs over
	# them, in a mount namespace of its own), as on another machine: an
	# image written here, not there, is not found there.
	local wt=$srv/clone__worktrees/pic
	mkdir -p "$srv/clone__worktrees"
	unshare -m --propagation private sh -c "mount -t tmpfs none '$srv/clone__worktrees' &&
		exec tmux -L '$SOCK' -f /dev/null new-session -d -x 200 -y 40 -c '$repo' \
		\"env TERM=tmux-256color PATH='$PATH' $WORKREX\""
	wait_for 'wrx\$|proj'
	wrx add --remote srv pic >/dev/null
	wait_for 'ra\$' 20
	prefix z
	# prefix p: staged in the worktree there, and that path pasted; nothing here.
	clip "$E2E_TMP/one.png" image/png
	prefix p
	wait_for "ra\\$ $wt/\\.workrex/tmp/clipboard-[0-9-]+\\.png"
	staged_one "$wt" "$E2E_TMP/one.png"
	# The agent reads it there, by the path it was given.
	tm send-keys -l ' | cmp - "$(ls .workrex/tmp/clipboard-*.png)" && echo SAME-$((1 + 1))'
	tm send-keys C-a
	tm send-keys -l 'cat '
	tm send-keys Enter
	wait_for '│SAME-2'
	test -z "$(git -C "$wt" status --porcelain)"
	# The CLI too; text on the clipboard is refused before anything goes there.
	wrx paste-image pic >"$E2E_TMP/out"
	grep -qE "^$wt/\\.workrex/tmp/clipboard-[0-9-]+\\.png$" "$E2E_TMP/out"
	cmp "$E2E_TMP/one.png" "$(cat "$E2E_TMP/out")"
	printf 'just text' | xclip -selection clipboard >/dev/null 2>&1
	not wrx paste-image pic 2>"$E2E_TMP/err"
	grep -q 'no image on the clipboard' "$E2E_TMP/err"
	[ "$(ls "$wt"/.workrex/tmp/clipboard-*.png | wc -l)" -eq 2 ]
	# The host down: said, and the pane is left as it was.
	clip "$E2E_TMP/one.png" image/png
	stop_sshd
	# (Its link is found down at its next keep-alive: under a full CI round
	# that once took longer than 30 s.)
	wait_for 'srv unreachable' 60
	prefix p
	wait_for 'paste-image: cannot reach srv' 60
	# With no dashboard, a command's own core stages it there alike.
	run_sshd
	wait_gone 'unreachable' 30
	prefix d
	until_ok 10 not tm has-session
	unshare -m --propagation private sh -c "mount -t tmpfs none '$srv/clone__worktrees' &&
		cd '$repo' && exec '$WORKREX' paste-image pic" >"$E2E_TMP/out"
	cmp "$E2E_TMP/one.png" "$(cat "$E2E_TMP/out")"
	[ "$(ls "$wt"/.workrex/tmp/clipboard-*.png | wc -l)" -eq 3 ]
}

# A port on a server (config ports): the server's loopback is its own (a
# network namespace of the test's, ssh reaching its sshd through nsenter, as
# ProxyCommand), so the host reaches the agent's dev server only through the
# forward the link makes, and again after the link dropped.
t_ports_on_a_server() {
	[ "$(id -u)" = 0 ] || { echo "  needs root: a network namespace of its own" >&2; return 1; }
	remote_setup
	echo 'ports: 1' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	unshare -n sleep 600 &
	echo $! >"$E2E_TMP/netns.pid"
	local ns=$!
	until_ok 5 eval '[ "$(readlink /proc/$ns/ns/net)" != "$(readlink /proc/self/ns/net)" ]'
	nsenter -t "$ns" -n ip link set lo up
	sed -i '/^  HostName\|^  Port/d' "$E2E_TMP/ssh_config"
	echo "  ProxyCommand nsenter -t $ns -n /usr/sbin/sshd -i -f $E2E_TMP/sshd/sshd_config" >>"$E2E_TMP/ssh_config"
	start_repo 200 40
	wait_for 'wrx\$|proj'
	wrx add --remote srv web >/dev/null
	wait_for "AGENT home=srv/home" 20
	local p
	p=$(wrx list --json | python3 -c 'import json, sys; print(*[a["ports"][0] for a in json.load(sys.stdin) if a["handle"] == "web"])')
	[ -n "$p" ] || { wrx list --json >&2; return 1; }
	wrx list | grep -Eq "^web .* $p( |$)"
	# Its server there, on its WORKREX_PORT, on the server's loopback.
	type_line 'perl -MIO::Socket::INET -e '\''$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ENV{WORKREX_PORT}, Listen => 5, ReuseAddr => 1) or die "no: $!"; print "SERVING $ENV{WORKREX_PORT}\n"; while ($c = $s->accept) { <$c>; print $c "HTTP/1.0 200 OK\r\n\r\nhello from srv on $ENV{WORKREX_PORT}\n"; close $c }'\'' &'
	wait_for "SERVING $p"
	# It listens there, and what listens on the port here is the link's ssh.
	nsenter -t "$ns" -n bash -c "exec 3<>/dev/tcp/127.0.0.1/$p"
	until_ok 10 eval 'ss -Hltnp "sport = :$p" | grep -q "\"ssh\""' || { ss -ltnp >&2; return 1; }
	until_ok 10 eval '[ "$(curl -s --max-time 5 "http://127.0.0.1:$p/")" = "hello from srv on $p" ]' ||
		{ grep -a "port" "$XDG_STATE_HOME/workrex/workrex.log" | tail -5 >&2; return 1; }
	# The link drops (every connection there ends); once it is back, so is the port.
	pkill -f "sshd -i -f $E2E_TMP/sshd/sshd_config" || true
	until_ok 20 eval '[ "$(curl -s --max-time 5 "http://127.0.0.1:$p/")" = "hello from srv on $p" ]' ||
		{ screen >&2; grep -a "port" "$XDG_STATE_HOME/workrex/workrex.log" | tail -5 >&2; return 1; }
	kill "$ns"
}

run_test "add --remote: the agent runs there, its status reaches here, merge brings it back" t_add_status_merge
end_remote
run_test "a dropped link: the agent goes on there, the pane says so, and comes back whole" t_link_drop
end_remote
run_test "remote agents without a dashboard: add, send, capture, close, open, remove" t_without_dashboard
end_remote
run_test "paste-image into an agent on a server: the image staged there, its path pasted" t_paste_image
end_remote
run_test "remote: unknown and unreachable hosts, and what an agent there may not do" t_refusals
end_remote
run_test "ports: an agent's dev server on a server, reached here through the link" t_ports_on_a_server
end_remote
kill "$(cat "$E2E_TMP/netns.pid" 2>/dev/null)" 2>/dev/null || true
