#!/usr/bin/env bash
# A sandboxed agent on a server (add --remote HOST -S): sshd on loopback
# is the server (its own home, runtime and state directories), its podman
# the engine there. The container is made there by the same backend as
# here, from the settings this dashboard sends: the server's clone, its
# private git dir, the bridge forwarded into the agent's own directory
# there, the proxy run by its keeper there under policy: deny.
#
# The attack cases that apply there: no host secret (neither this
# machine's nor the server's), no route out under deny (a direct
# connection, DNS; a name not allowed gets the proxy's 403, told to the
# dashboard), and the verified import: a commit made inside lands through
# merge; an object corrupted inside is not imported, there or here.
. "$(dirname "$0")/lib.sh"
srv=$E2E_TMP/srv

box_setup() {
	mkdir -p "$srv/home/.ssh" "$srv/run" "$srv/xdg" "$E2E_TMP/bin"
	chmod 700 "$srv/run" "$srv/xdg"
	printf '[user]\n\tname = S\n\temail = s@example.com\n' >"$srv/home/.gitconfig"
	# The server's secrets, and this machine's.
	echo SERVER-KEY >"$srv/home/.ssh/id_ed25519"
	mkdir -p "$HOME/.ssh"
	echo LOCAL-KEY >"$HOME/.ssh/id_ed25519"
	SSHD_EXTRA="SetEnv HOME=$srv/home XDG_RUNTIME_DIR=$srv/xdg WORKREX_RUNTIME_DIR=$srv/run XDG_CONFIG_HOME=$srv/home/.config XDG_STATE_HOME=$srv/home/.local/state XDG_DATA_HOME=$srv/home/.local/share CONTAINERS_CONF=$CONTAINERS_CONF" \
		start_sshd
	ssh_alias srv
	make_repo
	global_config "  network:" "    policy: deny"
	cat >>"$XDG_CONFIG_HOME/workrex/config.yaml" <<-EOF
		agent: bash
		panes:
		  - command: <agent>
		remote:
		  hosts:
		    srv: {ssh: srv, path: $srv/clone, podman: true}
	EOF
}

# The server's containers of this project (its clone is the project there).
boxes() { podman ps --filter "label=workrex.project=$srv/clone" --format '{{.Names}}'; }

# inside SCRIPT: run it in box's pane (in its container there), wait for it to end.
inside() {
	local w=$srv/clone__worktrees/box
	printf '%s\necho attack-done >%s/.attack-done\n' "$1" "$w" >"$w/.attack.sh"
	rm -f "$w/.attack-done"
	wrx send box "sh .attack.sh >.attack.log 2>&1"
	until_ok 60 test -e "$w/.attack-done" || { screen >&2; cat "$w/.attack.log" >&2; return 1; }
	rm -f "$w/.attack.sh" "$w/.attack-done"
}

t_remote_sandbox() {
	box_setup
	trap 'podman ps -aq --filter "label=workrex.project=$srv/clone" | xargs -r podman rm -f >/dev/null 2>&1; stop' EXIT
	start_repo 200 45
	wait_for 'wrx\$|proj'
	wrx add --remote srv -S box >"$E2E_TMP/add" 2>&1 || { cat "$E2E_TMP/add" >&2; return 1; }
	wait_for 'box @srv ▣'
	until_ok 60 eval '[ -n "$(boxes)" ]' || { screen >&2; podman ps -a >&2; cat "$XDG_STATE_HOME"/workrex/*.log "$XDG_STATE_HOME"/workrex/log* 2>/dev/null | tail -20 >&2; return 1; }
	wrx list | grep -qE '^box +box +.* ssh:srv/container ' || { wrx list >&2; return 1; }
	local w=$srv/clone__worktrees/box
	# No secret of either machine, in a container with no network.
	inside "
		for f in $HOME/.ssh/id_ed25519 $srv/home/.ssh/id_ed25519 $srv/home/.gitconfig; do
			if grep -q . \$f 2>/dev/null; then echo READABLE \$f; else echo hidden \$f; fi
		done
		echo uid=\$(id -u) sandbox=\$WORKREX_SANDBOX
		bash -c 'echo x >/dev/tcp/198.51.100.2/443' 2>/dev/null; echo tcp-\$?
		getent hosts example.org >/dev/null; echo dns-\$?
		curl -sS --max-time 10 https://other.test/ 2>&1 | tail -1; echo curl-\$?
		echo made-in-the-box >inside.txt && git add inside.txt && git commit -qm from-the-box && echo commit-ok
		workrex set-status waiting && echo status-ok
	"
	cat "$w/.attack.log" >&2
	not grep -q READABLE "$w/.attack.log"
	[ "$(grep -c '^hidden ' "$w/.attack.log")" -eq 3 ]
	grep -qx 'tcp-1' "$w/.attack.log"
	grep -qx 'dns-2' "$w/.attack.log"
	grep -q '403' "$w/.attack.log"
	grep -qx commit-ok "$w/.attack.log"
	grep -qx status-ok "$w/.attack.log"
	# The proxy there told this dashboard what it refused; the status came through the bridge.
	wait_for 'box: the proxy refused +other.test:443 \(403\)'
	until_ok 15 sh -c "cd '$repo' && '$WORKREX' status box | grep -q waiting"
	# What it spawns runs sandboxed there too, never beside it on the server.
	inside "workrex add child >/dev/null 2>&1; echo spawned-\$?"
	grep -qx spawned-0 "$w/.attack.log" || { cat "$w/.attack.log" >&2; return 1; }
	wait_for 'child @srv ▣'
	wrx list | grep -qE '^child +child +.* ssh:srv/container ' || { wrx list >&2; return 1; }
	until_ok 60 eval '[ "$(boxes | grep -c "^wrx-child-")" = 1 ]'
	rm -f "$w/.attack.log"
	# status imported it (verified there) and fetched it (hashed here): the branch has it.
	git -C "$repo" log -1 --format=%s box | grep -qx from-the-box
	rm -f "$w/.attack.log"
	# Commit, then corrupt the object it made, in what it may write: not imported, anywhere.
	local before
	before=$(git -C "$repo" rev-parse box 2>/dev/null || echo none)
	inside "
		echo planted >x.txt; git add x.txt; git commit -qm corrupt
		b=\$(git rev-parse HEAD:x.txt); o=\$(git rev-parse --git-dir)/objects/\$(echo \$b | cut -c1-2)/\$(echo \$b | cut -c3-)
		other=\$(git rev-parse HEAD~1:inside.txt); src=\$(git rev-parse --git-dir)/objects/\$(echo \$other | cut -c1-2)/\$(echo \$other | cut -c3-)
		[ -e \$src ] || src=\$(ls -d $srv/clone/.git/objects/??/* | head -1)
		chmod u+w \$o; cp \$src \$o && echo corrupted
	"
	grep -qx corrupted "$w/.attack.log" || { cat "$w/.attack.log" >&2; return 1; }
	rm -f "$w/.attack.log"
	not wrx merge box >"$E2E_TMP/merge1" 2>&1
	cat "$E2E_TMP/merge1" >&2
	grep -q 'failed verification and were not imported' "$E2E_TMP/merge1"
	git -C "$srv/clone" log --format=%s box >"$E2E_TMP/there"
	git -C "$repo" log --format=%s --all >"$E2E_TMP/here"
	not grep -qx corrupt "$E2E_TMP/there" || { cat "$E2E_TMP/there" >&2; git -C "$srv/clone" for-each-ref >&2; return 1; }
	not grep -qx corrupt "$E2E_TMP/here"
	git -C "$srv/clone" fsck --strict >/dev/null 2>&1
	# Undone inside, the good commit lands: imported there, fetched here, merged.
	inside "git reset -q --hard HEAD~1 && echo reset-ok"
	rm -f "$w/.attack.log"
	wrx merge box >"$E2E_TMP/merge2" 2>&1 || { cat "$E2E_TMP/merge2" >&2; return 1; }
	git -C "$repo" log --format=%s main | grep -qx from-the-box
	test "$(cat "$repo/inside.txt")" = made-in-the-box
	git -C "$repo" fsck --strict >/dev/null 2>&1
	# Merged and removed: its container there goes with its pane.
	until_ok 20 eval '[ -z "$(boxes | grep "^wrx-box-")" ]' || { podman ps -a >&2; return 1; }
}

run_test "a sandboxed agent on a server: its container there, no secret of either machine, no route out under deny, verified import" t_remote_sandbox
