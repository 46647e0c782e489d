#!/usr/bin/env bash
# A provisioned host (remote.hosts.NAME.provision) on a real "engine" of
# this machine's: create starts a podman container running sshd from an
# image with git and sshd and none of workrex's libraries, endpoint says
# where ssh goes, destroy removes it. add --remote makes it and the agent
# runs there (workrex-server, static, copied by the link); its status
# reaches the dashboard; merge brings its commits back verified; the
# host's last agent going destroys the container. A create that fails
# half way leaves no container and says why. A sandboxed agent there (-S):
# its container made in the engine by the engine's own podman (nested,
# the engine privileged), and the attack cases that apply there.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
trap 'podman ps -aq --filter "name=^wrx-(engine|boxed|broken|coder|k8s)-" | xargs -r podman rm -f >/dev/null 2>&1
	podman volume ls -q | grep "^wrx-boxed-" | xargs -r podman volume rm -f >/dev/null 2>&1; stop' EXIT

"$here/sshd_image.sh" || { echo "not ok - the sshd image could not be built"; exit 1; }
image=workrex-test-sshd:latest

containers() { podman_names | grep -E "^wrx-$1-" || true; }

engine_setup() {
	make_repo
	local d=$E2E_TMP/engine
	rm -rf "$d"
	mkdir -p "$d" "$E2E_TMP/bin"
	ssh-keygen -q -t ed25519 -N '' -f "$d/user_key"
	PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	# ssh's way there, as a user's ~/.ssh/config would say it.
	cat >"$d/ssh_config" <<-EOF
		Host 127.0.0.1
		  IdentityFile $d/user_key
		  StrictHostKeyChecking no
		  UserKnownHostsFile /dev/null
		  LogLevel ERROR
	EOF
	printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' "$d/ssh_config" >"$E2E_TMP/bin/ssh"
	chmod +x "$E2E_TMP/bin/ssh"
	case :$PATH: in *:$E2E_TMP/bin:*) ;; *) export PATH="$E2E_TMP/bin:$PATH" ;; esac
	# The engine's create: a container with sshd on the port, ready when it
	# answers. "boxed" (its second word): one that can run a sandbox, the
	# same server privileged, its podman's storage on a volume, the sandbox
	# image loaded into it.
	cat >"$d/create" <<-EOF
		#!/bin/bash
		set -e
		name=wrx-\${2:-engine}-\$1 more=()
		[ "\${2:-}" != boxed ] || more=(--privileged -v "\$name-store:/var/lib/containers"
		  -v $CONTAINERS_CONF:/etc/containers/containers.conf:ro)
		podman run -d --name "\$name" --network host "\${more[@]}" \\
		  -v $d/user_key.pub:/root/.ssh/authorized_keys:ro $image \\
		  sh -c 'mkdir -p /run/sshd && ssh-keygen -A >/dev/null && git config --global user.name S &&
		    git config --global user.email s@example.com &&
		    exec /usr/sbin/sshd -D -e -p $PORT -o ListenAddress=127.0.0.1 -o StrictModes=no \\
		    -o UsePAM=no -o PermitRootLogin=prohibit-password' >/dev/null
		[ "\${2:-}" != boxed ] || podman save workrex-test:latest | podman exec -i "\$name" podman load -q >/dev/null
		[ "\${2:-}" != boxed ] || echo "\$name" >$d/boxed.name
		for i in \$(seq 100); do
		  ssh -o BatchMode=yes -o ConnectTimeout=2 -p $PORT root@127.0.0.1 true 2>/dev/null && exit 0
		  sleep 0.1
		done
		echo "sshd did not answer on $PORT" >&2; exit 1
	EOF
	chmod +x "$d/create"
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	cat >"$XDG_CONFIG_HOME/workrex/config.yaml" <<-EOF
		agent: bash
		panes:
		  - command: <agent>
		remote:
		  hosts:
		    engine:
		      path: /root/clone
		      provision:
		        create: [$d/create, "{id}"]
		        endpoint: [echo, "ssh://root@127.0.0.1:$PORT"]
		        destroy: [podman, rm, -f, "wrx-engine-{id}"]
		    pausing:
		      path: /root/clone
		      provision:
		        create: [$d/create, "{id}"]
		        start: [bash, -c, "podman start wrx-engine-{id} >/dev/null && until ssh -o BatchMode=yes -o ConnectTimeout=2 -p $PORT root@127.0.0.1 true 2>/dev/null; do sleep 0.1; done"]
		        endpoint: [echo, "ssh://root@127.0.0.1:$PORT"]
		        stop: [podman, stop, -t, "0", "wrx-engine-{id}"]
		        destroy: [podman, rm, -f, "wrx-engine-{id}"]
		    boxed:
		      path: /root/clone
		      podman: true
		      provision:
		        create: [$d/create, "{id}", boxed]
		        endpoint: [echo, "ssh://root@127.0.0.1:$PORT"]
		        destroy: [bash, -c, "podman rm -f wrx-boxed-{id} && podman volume rm -f wrx-boxed-{id}-store"]
		    broken:
		      path: /root/clone
		      provision:
		        create: [bash, -c, "podman run -d --name wrx-broken-{id} $image sleep 600 >/dev/null && echo 'quota exceeded' >&2 && exit 3"]
		        endpoint: [echo, "ssh://root@127.0.0.1:1"]
		        destroy: [podman, rm, -f, "wrx-broken-{id}"]
	EOF
}

t_engine_made_used_destroyed() {
	engine_setup
	# The server has none of workrex's libraries.
	[ "$(podman run --rm $image sh -c 'ls /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu 2>/dev/null' |
		grep -cE '^lib(uv|vterm|git2|json-c|yaml)' || true)" = 0 ]
	start_repo 160 40
	wait_for 'wrx\$|proj'
	wrx add --remote engine feat >"$E2E_TMP/out" 2>"$E2E_TMP/err" || { cat "$E2E_TMP/err"; false; }
	grep -q 'remote engine: create' "$E2E_TMP/err"
	[ -n "$(containers engine)" ]
	wait_for 'feat @engine'
	# It runs there, as root in the container, on the static build.
	keys 'echo "AT $(id -un) $(pwd)"' Enter
	wait_for 'AT root /root/clone__worktrees/feat'
	keys 'ldd "$(command -v workrex)" 2>&1 | tr a-z A-Z' Enter
	wait_for 'NOT A DYNAMIC EXECUTABLE'
	# Its status reaches this dashboard through the link.
	keys 'workrex set-status waiting && echo STATUS-SENT' Enter
	wait_for STATUS-SENT
	until_ok 15 sh -c "cd '$repo' && '$WORKREX' status feat | grep -q waiting"
	keys 'echo two >b.txt && git add b.txt && git commit -qm from-engine && echo COMMITTED' Enter
	wait_for COMMITTED
	# merge brings it back, verified; the host's last agent went: the container goes.
	wrx merge feat >"$E2E_TMP/merge.out" 2>&1 || true
	git -C "$repo" log --format=%s main | grep -qx from-engine ||
		{ cat "$E2E_TMP/merge.out" >&2; git -C "$repo" log --oneline --all >&2; return 1; }
	grep -q 'remote engine: its last agent went; destroyed' "$E2E_TMP/merge.out"
	until_ok 10 eval '[ -z "$(containers engine)" ]'
	# Made again for the next agent; rm of it destroys it again.
	wrx add --remote engine feat2 >/dev/null 2>&1
	[ -n "$(containers engine)" ]
	wait_for 'feat2 @engine'
	wrx rm -f feat2 >"$E2E_TMP/rm.out" 2>&1
	grep -q 'destroyed' "$E2E_TMP/rm.out"
	until_ok 10 eval '[ -z "$(containers engine)" ]'
}

running() { podman inspect -f '{{.State.Running}}' "$(containers engine)" 2>/dev/null; }

# provision.stop when the host's last agent closes, start when one opens again.
t_engine_stopped_when_idle() {
	engine_setup
	start_repo 160 40
	wait_for 'wrx\$|proj'
	wrx add --remote pausing feat >/dev/null 2>"$E2E_TMP/err" || { cat "$E2E_TMP/err"; false; }
	wait_for 'feat @pausing'
	keys 'echo "ON $(hostname)"' Enter
	wait_for 'ON '
	[ "$(running)" = true ]
	# Its one pane closed as a person does: C-b x, then y. The host stops.
	keys C-b x
	wait_for 'y/n'
	keys y
	until_ok 20 eval '[ "$(running)" = false ]' || { podman ps -a >&2; screen >&2; return 1; }
	# And stays stopped: nothing here brings it up while no pane wants it.
	sleep 3
	[ "$(running)" = false ]
	# open starts it again (provision.start), and the agent runs there.
	wrx open feat >/dev/null
	until_ok 30 eval '[ "$(running)" = true ]'
	wait_for 'feat @pausing'
	keys 'echo "BACK-$((6 * 7))"' Enter
	wait_for 'BACK-42'
	# Without a dashboard, close stops it too.
	kill_tmux
	wrx close feat >"$E2E_TMP/close.out" 2>&1 || { cat "$E2E_TMP/close.out" >&2; return 1; }
	grep -q 'remote pausing: no agent of this project runs there now; stopped' "$E2E_TMP/close.out"
	[ "$(running)" = false ]
	# rm of its last agent destroys it, stopped or not.
	wrx rm -f feat >"$E2E_TMP/rm.out" 2>&1
	grep -q destroyed "$E2E_TMP/rm.out" || { cat "$E2E_TMP/rm.out" >&2; return 1; }
	until_ok 10 eval '[ -z "$(containers engine)" ]'
}

# in_engine CMD...: CMD in the boxed engine (the server), as its root: the one
# its create made (by name: another's may still be going).
in_engine() { podman exec -i "$(cat "$E2E_TMP/engine/boxed.name")" "$@"; }

# inside SCRIPT: run it in box's pane (its container in the engine), wait, the log in $E2E_TMP/log.
inside() {
	local w=/root/clone__worktrees/box
	printf '%s\necho attack-done >%s/.attack-done\n' "$1" "$w" | in_engine sh -c "cat >$w/.attack.sh"
	in_engine rm -f "$w/.attack-done" "$w/.attack.log"
	wrx send box "sh .attack.sh >.attack.log 2>&1"
	until_ok 60 in_engine test -e "$w/.attack-done" || { screen >&2; in_engine cat "$w/.attack.log" >&2; return 1; }
	in_engine cat "$w/.attack.log" >"$E2E_TMP/log"
	in_engine rm -f "$w/.attack.sh" "$w/.attack-done" "$w/.attack.log"
}

# A sandboxed agent on the provisioned host: the attack cases that apply
# there. No secret of either machine; no route out under deny (a direct
# connection, DNS; a name not allowed gets the proxy's 403 there, told to
# this dashboard); what it spawns is sandboxed there too; the import
# verified (a corrupted object lands nowhere; the good commit merges).
t_engine_sandboxed_agent() {
	engine_setup
	mkdir -p "$HOME/.ssh"
	echo LOCAL-KEY >"$HOME/.ssh/id_ed25519"
	printf 'sandbox:\n  image: workrex-test:latest\n  network:\n    policy: deny\nports: 1\n' \
		>>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 200 45
	wait_for 'wrx\$|proj'
	wrx add --remote boxed -S box >/dev/null 2>"$E2E_TMP/err" || { cat "$E2E_TMP/err" >&2; return 1; }
	wait_for 'box @boxed ▣'
	until_ok 60 eval 'in_engine podman ps --format "{{.Names}}" | grep -q "^wrx-box-"' ||
		{ screen >&2; in_engine podman ps -a >&2; tail -5 "$XDG_STATE_HOME"/workrex/workrex.log >&2; return 1; }
	wrx list | grep -qE '^box +box +.* ssh:boxed/container ' || { wrx list >&2; return 1; }
	in_engine sh -c 'echo SERVER-KEY >/root/.ssh/id_ed25519'
	inside "
		for f in $HOME/.ssh/id_ed25519 /root/.ssh/id_ed25519 /root/.gitconfig; do
			if grep -q . \$f 2>/dev/null; then echo READABLE \$f; else echo hidden \$f; fi
		done
		bash -c 'echo x >/dev/tcp/198.51.100.2/443' 2>/dev/null; echo tcp-\$?
		getent hosts example.org >/dev/null; echo dns-\$?
		curl -sS --max-time 10 https://other.test/ 2>&1 | tail -1
		echo made-in-the-box >inside.txt && git add inside.txt && git commit -qm from-the-box && echo commit-ok
		workrex set-status waiting && echo status-ok
		workrex add child >/dev/null 2>&1; echo spawned-\$?
	"
	cat "$E2E_TMP/log" >&2
	not grep -q READABLE "$E2E_TMP/log"
	[ "$(grep -c '^hidden ' "$E2E_TMP/log")" -eq 3 ]
	grep -qx 'tcp-1' "$E2E_TMP/log"
	grep -qx 'dns-2' "$E2E_TMP/log"
	grep -q '403' "$E2E_TMP/log"
	grep -qx commit-ok "$E2E_TMP/log"
	grep -qx status-ok "$E2E_TMP/log"
	grep -qx spawned-0 "$E2E_TMP/log"
	# Its port: its keeper there relays it into its container (the engine's
	# network is this machine's, so that is reached here without the link).
	local p
	p=$(wrx list --json | python3 -c 'import json, sys; print(*[a["ports"][0] for a in json.load(sys.stdin) if a["handle"] == "box"])')
	[ -n "$p" ]
	wrx send box 'perl -MIO::Socket::INET -e '\''$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ENV{WORKREX_PORT}, Listen => 5, ReuseAddr => 1) or die "no: $!"; while ($c = $s->accept) { <$c>; print $c "HTTP/1.0 200 OK\r\n\r\nhello from box on $ENV{WORKREX_PORT}\n"; close $c }'\'' &'
	until_ok 30 eval '[ "$(curl -s --max-time 5 "http://127.0.0.1:$p/")" = "hello from box on $p" ]' ||
		{ wrx capture box | tail -5 >&2; in_engine ss -ltnp >&2; return 1; }
	# The proxy there counted the refusal to this dashboard (the sidebar's ⊘).
	wait_for 'box @boxed ▣ ⊘1'
	until_ok 15 sh -c "cd '$repo' && '$WORKREX' status box | grep -q waiting"
	# Its spawn: sandboxed there too, a container of its own.
	wait_for 'child @boxed ▣'
	until_ok 60 eval 'in_engine podman ps --format "{{.Names}}" | grep -q "^wrx-child-"'
	# Commit, then corrupt the object it made, in what it may write: imported nowhere.
	local before
	before=$(git -C "$repo" rev-parse box)
	inside "
		echo planted >x.txt; git add x.txt; git commit -qm corrupt
		b=\$(git rev-parse HEAD:x.txt); o=\$(git rev-parse --git-dir)/objects/\$(echo \$b | cut -c1-2)/\$(echo \$b | cut -c3-)
		other=\$(git rev-parse HEAD~1:inside.txt); src=\$(git rev-parse --git-dir)/objects/\$(echo \$other | cut -c1-2)/\$(echo \$other | cut -c3-)
		chmod u+w \$o; cp \$src \$o && echo corrupted
	"
	grep -qx corrupted "$E2E_TMP/log" || { cat "$E2E_TMP/log" >&2; return 1; }
	not wrx merge box >"$E2E_TMP/merge1" 2>&1
	grep -q 'failed verification and were not imported' "$E2E_TMP/merge1" || { cat "$E2E_TMP/merge1" >&2; return 1; }
	in_engine git -C /root/clone log --format=%s box >"$E2E_TMP/there"
	not grep -qx corrupt "$E2E_TMP/there"
	git -C "$repo" log --format=%s --all >"$E2E_TMP/here"
	not grep -qx corrupt "$E2E_TMP/here"
	[ "$(git -C "$repo" rev-parse box)" = "$before" ]
	# Undone inside, the good commit lands: verified there, hashed here, merged.
	inside "git reset -q --hard HEAD~1"
	wrx merge box >"$E2E_TMP/merge2" 2>&1 || { cat "$E2E_TMP/merge2" >&2; return 1; }
	git -C "$repo" log --format=%s main | grep -qx from-the-box
	git -C "$repo" fsck --strict >/dev/null 2>&1
	until_ok 20 eval '! in_engine podman ps --format "{{.Names}}" | grep -q "^wrx-box-"'
	# The host's last agent going (child) destroys the engine, its storage too.
	wrx rm -f child >/dev/null 2>&1
	until_ok 20 eval '[ -z "$(containers boxed)" ]'
	not eval 'podman volume ls -q | grep -q "^wrx-boxed-"'
}

t_engine_create_fails_half_way() {
	engine_setup
	not wrx add --remote broken feat >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	grep -q 'remote.hosts.broken.provision.create failed (exit status): quota exceeded' "$E2E_TMP/err"
	# What it made is gone, and no agent is left half made.
	[ -z "$(containers broken)" ]
	not grep -qx feat <(wrx list -q)
}

# Coder and Kubernetes cannot run here: recording fakes of their CLIs stand
# in, each logging its command line and playing the engine's part with
# podman (a workspace or a sandbox is a container; `coder ssh --stdio`
# and `kubectl exec -i` give ssh the container's sshd on a stream, sshd
# -i). The adapters are workrex.yaml(5)'s, as written there.
fakes() {
	local d=$E2E_TMP/engine
	export FAKE_LOG=$d/fake.log IMAGE=$image KEY=$d/user_key.pub
	: >"$FAKE_LOG"
	# What a workspace or sandbox is here: a container with sshd ready for -i.
	cat >"$E2E_TMP/bin/mkbox" <<-'EOF'
		#!/bin/bash
		exec podman run -d --name "$1" --network none -v "$KEY:/root/.ssh/authorized_keys:ro" "$IMAGE" \
		  sh -c 'mkdir -p /run/sshd && ssh-keygen -A >/dev/null && git config --global user.name S &&
		    git config --global user.email s@example.com && exec sleep infinity' >/dev/null
	EOF
	cat >"$E2E_TMP/bin/coder" <<-'EOF'
		#!/bin/bash
		printf '%s\n' "coder $*" >>"$FAKE_LOG"
		case $1 in
		create) mkbox "wrx-coder-$2" ;;
		start) podman start "wrx-coder-$2" >/dev/null ;;
		stop) podman stop -t 1 "wrx-coder-$2" >/dev/null ;;
		delete) podman rm -f "wrx-coder-$2" >/dev/null ;;
		ssh) [ "$2" = --stdio ] || exit 2
		  exec podman exec -i "wrx-coder-${3#coder.}" /usr/sbin/sshd -i -o StrictModes=no -o UsePAM=no ;;
		*) exit 2 ;;
		esac
	EOF
	cat >"$E2E_TMP/bin/kubectl" <<-'EOF'
		#!/bin/bash
		printf '%s\n' "kubectl $*" >>"$FAKE_LOG"
		case $1 in
		create) [ "$2 $3" = "-f -" ] || exit 2
		  claim=$(cat); printf '%s\n' "$claim" >>"$FAKE_LOG"
		  grep -q '^kind: SandboxClaim$' <<<"$claim" || { echo "not a SandboxClaim" >&2; exit 1; }
		  name=$(sed -n 's/^  name: //p' <<<"$claim" | head -1)
		  mkbox "wrx-k8s-$name" ;;
		wait) for a; do case $a in sandboxclaim/*) name=${a#sandboxclaim/} ;; esac; done
		  [ "$(podman inspect -f '{{.State.Running}}' "wrx-k8s-$name")" = true ] ;;
		delete) [ "$2" = sandboxclaim ] && podman rm -f "wrx-k8s-$3" >/dev/null ;;
		exec) [ "$2" = -i ] && [ "$4" = -- ] || exit 2
		  name=$3; shift 4; exec podman exec -i "wrx-k8s-$name" "$@" ;;
		*) exit 2 ;;
		esac
	EOF
	chmod +x "$E2E_TMP/bin/mkbox" "$E2E_TMP/bin/coder" "$E2E_TMP/bin/kubectl"
	# As `coder config-ssh` writes it, and a kubectl exec ProxyCommand.
	cat >>"$d/ssh_config" <<-EOF
		Host coder.*
		  User root
		  IdentityFile $d/user_key
		  StrictHostKeyChecking no
		  UserKnownHostsFile /dev/null
		  LogLevel ERROR
		  ProxyCommand coder ssh --stdio %h
		Host k8s.*
		  User root
		  IdentityFile $d/user_key
		  StrictHostKeyChecking no
		  UserKnownHostsFile /dev/null
		  LogLevel ERROR
		  ProxyCommand sh -c 'exec kubectl exec -i "\${0#k8s.}" -- /usr/sbin/sshd -i -o StrictModes=no -o UsePAM=no' %h
	EOF
	cat >>"$XDG_CONFIG_HOME/workrex/config.yaml" <<-'EOF'
		    coder:
		      path: /root/clone
		      provision:
		        create: [coder, create, "wrx-{project}", --template, agents, --yes]
		        start: [coder, start, "wrx-{project}", --yes]
		        endpoint: [echo, "coder.wrx-{project}"]
		        stop: [coder, stop, "wrx-{project}", --yes]
		        destroy: [coder, delete, "wrx-{project}", --yes]
		    k8s:
		      path: /root/clone
		      provision:
		        create:
		          - sh
		          - -c
		          - |
		            kubectl create -f - <<CLAIM && kubectl wait --for=condition=Ready sandboxclaim/wrx-{id} --timeout=300s
		            apiVersion: extensions.agents.x-k8s.io/v1alpha1
		            kind: SandboxClaim
		            metadata:
		              name: wrx-{id}
		            spec:
		              sandboxTemplateRef:
		                name: agents
		            CLAIM
		        endpoint: [echo, "k8s.wrx-{id}"]
		        destroy: [kubectl, delete, sandboxclaim, "wrx-{id}"]
	EOF
}

# host: the agent there, its status here, gone with its host.
adapter_round() {
	local host=$1 agent=$2
	wrx add --remote "$host" "$agent" >/dev/null 2>"$E2E_TMP/err" || { cat "$E2E_TMP/err" "$FAKE_LOG"; grep -A3 "Host k8s" "$E2E_TMP/engine/ssh_config"; false; }
	wait_for "$agent @$host"
	wrx send "$agent" 'workrex set-status waiting; echo "AT-$(id -un)-$(pwd)"'
	wait_for "AT-root-/root/clone__worktrees/$agent"
	until_ok 15 sh -c "cd '$repo' && '$WORKREX' status $agent | grep -q waiting" ||
		{ adapter_said "$agent"; return 1; }
	wrx rm -f "$agent" >"$E2E_TMP/rm.out" 2>&1
	grep -q "remote $host: its last agent went; destroyed" "$E2E_TMP/rm.out" ||
		{ cat "$E2E_TMP/rm.out" >&2; adapter_said "$agent"; return 1; }
}

# adapter_said AGENT: its status, its pane, the fakes' log and the dashboard's.
adapter_said() {
	wrx status "$1" >&2
	wrx capture "$1" | tail -5 >&2
	tail -5 "$FAKE_LOG" >&2
	grep -a "$1\|remote" "$XDG_STATE_HOME/workrex/workrex.log" | tail -10 >&2
}

t_engine_adapters_recorded() {
	engine_setup
	fakes
	start_repo 160 40
	wait_for 'wrx\$|proj'
	adapter_round coder c1
	until_ok 10 eval '[ -z "$(containers coder)" ]' || { containers coder >&2; return 1; }
	grep -qx 'coder create wrx-proj --template agents --yes' "$FAKE_LOG"
	grep -qx 'coder ssh --stdio coder.wrx-proj' "$FAKE_LOG"
	grep -qx 'coder delete wrx-proj --yes' "$FAKE_LOG"
	adapter_round k8s k1
	until_ok 10 eval '[ -z "$(containers k8s)" ]' || { containers k8s >&2; return 1; }
	grep -qx 'kubectl create -f -' "$FAKE_LOG"
	grep -qx 'kind: SandboxClaim' "$FAKE_LOG"
	grep -qE '^kubectl wait --for=condition=Ready sandboxclaim/wrx-[0-9a-f]{8} --timeout=300s$' "$FAKE_LOG"
	grep -qE '^kubectl exec -i wrx-[0-9a-f]{8} -- /usr/sbin/sshd -i' "$FAKE_LOG"
	grep -qE '^kubectl delete sandboxclaim wrx-[0-9a-f]{8}$' "$FAKE_LOG"
}

run_test "a provisioned engine: made by add --remote, the agent there, merge back, destroyed" t_engine_made_used_destroyed
run_test "provision.stop when the host's last agent closes (C-b x; close without a dashboard), start when one opens" t_engine_stopped_when_idle
run_test "a sandboxed agent on the provisioned host: no secret, no route out under deny, its spawn boxed, verified import" t_engine_sandboxed_agent
run_test "a provisioned engine whose create fails half way leaves nothing" t_engine_create_fails_half_way
run_test "Coder and Kubernetes adapters against recording fakes of their CLIs" t_engine_adapters_recorded
