#!/usr/bin/env bash
# Docker and Apple Container cannot run here: recording fakes stand in for
# them. Each fake appends its command line to a log, and for `run` plays the
# container's part the way the runtime would: it takes the --env values and
# the RPC socket's mount from its arguments and runs the guest client with
# them, so the command line is checked by what works through it, not only by
# its text.
. "$(dirname "$0")/../e2e/lib.sh"
trap stop EXIT
git_env
: "${WORKREX_GUEST:?}"
export WORKREX_GUEST

fake() {
	mkdir -p "$E2E_TMP/fakebin"
	cat >"$E2E_TMP/fakebin/$1" <<'FAKE'
#!/bin/bash
log=${FAKE_LOG:?}
printf '%s\n' "$(basename "$0") $*" >>"$log"
[ "$1" = run ] || exit 0
envs=() sock_dir=
while [ $# -gt 0 ]; do
	case $1 in
	--env) envs+=("$2"); shift ;;
	--mount) case $2 in *target=/run/workrex,*) sock_dir=${2#type=bind,source=}; sock_dir=${sock_dir%%,*} ;; esac; shift ;;
	esac
	shift
done
run_env=()
for e in "${envs[@]}"; do
	case $e in
	WORKREX_RPC_SOCKET=*) run_env+=("WORKREX_RPC_SOCKET=$sock_dir/rpc.sock") ;;
	*) run_env+=("$e") ;;
	esac
done
env -i "${run_env[@]}" "$WORKREX_GUEST" set-status waiting && echo "fake: set-status ok"
exec sleep 600
FAKE
	chmod +x "$E2E_TMP/fakebin/$1"
}

global_config() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'sandbox:\n  image: some/image:1\n%s\n' "$1" >"$XDG_CONFIG_HOME/workrex/config.yaml"
}

t_apple_container_over_tcp() {
	make_repo
	fake container
	global_config "  rpc_host: 127.0.0.1
  container:
    runtime: apple-container"
	echo 'ports: 1' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	export FAKE_LOG=$E2E_TMP/container.log
	PATH="$E2E_TMP/fakebin:$PATH" start_repo 140 40
	wait_for 'wrx\$'
	wrx add mac -S -b >/dev/null
	# The guest reached the dashboard over TCP with its token: the icon changed.
	wait_for '◆ mac'
	wait_for 'fake: set-status ok'
	local run
	run=$(grep '^container run ' "$FAKE_LOG")
	[[ $run == "container run --rm -it --name wrx-mac-"* ]]
	[[ $run == *"--env WORKREX_RPC_HOST=127.0.0.1 --env WORKREX_RPC_PORT="* ]]
	[[ $run != *"WORKREX_RPC_SOCKET"* ]]
	[[ $run != *"--pids-limit"* ]]
	# (its port's forwarder first: see below)
	[[ $run == *"-- some/image:1 /opt/workrex/bin/workrex port-serve "*" -- /bin/sh -c "* ]]
	# The listener is on the address asked for, not on every address.
	ss -ltn | grep -q '127.0.0.1:'"$(sed -n 's/.*WORKREX_RPC_PORT=\([0-9]*\).*/\1/p' <<<"$run")"
	# Its port: the ports directory mounted, port-serve before the agent; with
	# no socket there (none crosses into its VM), a connection goes through
	# `container exec -i` to port-connect.
	local p
	p=$(wrx list --json | python3 -c 'import json, sys; print(*[a["ports"][0] for a in json.load(sys.stdin) if a["handle"] == "mac"])')
	[[ $run == *"/ports,target=/run/workrex-ports "* ]]
	[[ $run == *" /opt/workrex/bin/workrex port-serve $p -- "* ]]
	curl -s --max-time 5 "http://127.0.0.1:$p/" >/dev/null || true
	until_ok 10 grep -q "^container exec -i wrx-mac-[^ ]* /opt/workrex/bin/workrex port-connect $p\$" "$FAKE_LOG" ||
		{ cat "$FAKE_LOG" >&2; return 1; }
	wrx close mac
	local i=0
	until grep -q '^container delete --force wrx-mac-' "$FAKE_LOG" || ((i > 100)); do sleep 0.1; i=$((i + 1)); done
	grep -q '^container delete --force wrx-mac-' "$FAKE_LOG"
}

t_docker_over_the_agents_socket() {
	make_repo
	fake docker
	global_config "  container:
    runtime: docker
    memory: 2g"
	export FAKE_LOG=$E2E_TMP/docker.log
	PATH="$E2E_TMP/fakebin:$PATH" start_repo 140 40
	wait_for 'wrx\$'
	wrx add dock -S -b >/dev/null
	# Through the socket the command line mounts: the agent's own.
	wait_for '◆ dock'
	local run
	run=$(grep '^docker run ' "$FAKE_LOG")
	[[ $run == "docker run --rm -it --name wrx-dock-"* ]]
	[[ $run == *"--user=$(id -u):$(id -g)"* ]]
	[[ $run == *"--memory=2g"* ]]
	[[ $run == *",target=/run/workrex,readonly"* ]]
	[[ $run == *"--env WORKREX_RPC_SOCKET=/run/workrex/rpc.sock"* ]]
	wrx close dock
	local i=0
	until grep -q '^docker rm -f wrx-dock-' "$FAKE_LOG" || ((i > 100)); do sleep 0.1; i=$((i + 1)); done
	grep -q '^docker rm -f wrx-dock-' "$FAKE_LOG"
}

run_test "Apple Container (recording fake): its command line, status over the token-checked TCP listener, its port through exec" t_apple_container_over_tcp
run_test "Docker (recording fake): its command line, status through the agent's own socket" t_docker_over_the_agents_socket
