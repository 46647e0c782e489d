#!/usr/bin/env bash
# The Lima backend, against a recording fake limactl: Lima cannot run on
# this machine (no VM here). The fake logs each command line and plays the
# VM's part: `list --json` reports the state it keeps, `create` keeps the
# YAML it was given, `start` prints progress for a few seconds, `shell`
# runs the command in --workdir on this host, with the guest's view of the
# host (host.lima.internal is the host's loopback, as Lima forwards it) and
# of the client it mounts. So the pane's command line is checked by what
# works through it: the VM's lifecycle, the progress in the pane, a loop
# that answers keys during a slow start, and status over TCP.
. "$(dirname "$0")/lib.sh"
trap stop EXIT
git_env
: "${WORKREX_GUEST:?}"
export WORKREX_GUEST

fake_limactl() {
	mkdir -p "$E2E_TMP/fakebin"
	cat >"$E2E_TMP/fakebin/limactl" <<'FAKE'
#!/bin/bash
state=${FAKE_STATE:?}
printf 'limactl %s\n' "$*" >>"${FAKE_LOG:?}"
case $1 in
list)
	[ -s "$state" ] && printf '{"name":"%s","status":"%s"}\n' "$(cat "$state.name")" "$(cat "$state")"
	printf '{"name":"someone-else","status":"Running"}\n'
	;;
create)
	for a; do case $a in --name=*) echo "${a#--name=}" >"$state.name" ;; *.yaml) cp "$a" "$state.yaml" ;; esac; done
	echo 'INFO[0000] Attempting to download the image'
	echo Stopped >"$state"
	;;
start)
	for i in 1 2 3; do
		echo "INFO[000$i] Waiting for the VM ($i/3)"
		sleep "${FAKE_START_SLEEP:-0}"
	done
	echo Running >"$state"
	echo 'INFO[0009] READY. Run `limactl shell` to open the shell.'
	;;
shell)
	shift
	[ "$1" = --workdir ] && { cd "$2" || exit 1; shift 2; }
	shift 2 # the VM, --
	args=()
	for a; do
		case $a in
		WORKREX_RPC_HOST=host.lima.internal) args+=("WORKREX_RPC_HOST=127.0.0.1") ;;
		PATH=/opt/workrex/bin:*) args+=("PATH=$XDG_STATE_HOME/workrex/lima/bin:${a#PATH=/opt/workrex/bin:}") ;;
		*) args+=("$a") ;;
		esac
	done
	exec "${args[@]}"
	;;
stop) echo Stopped >"$state" ;;
delete) : >"$state" ;;
esac
FAKE
	chmod +x "$E2E_TMP/fakebin/limactl"
	export PATH="$E2E_TMP/fakebin:$PATH"
	export FAKE_LOG=$E2E_TMP/limactl.log FAKE_STATE=$E2E_TMP/vm
	: >"$FAKE_LOG"
	: >"$FAKE_STATE"
}

lima_config() {
	mkdir -p "$XDG_CONFIG_HOME/workrex"
	printf 'sandbox:\n  enabled: true\n  backend: lima\n  lima:\n    cpus: 2\n%s\n' "$1" \
		>"$XDG_CONFIG_HOME/workrex/config.yaml"
}

t_lima_lifecycle() {
	make_repo
	fake_limactl
	lima_config "    accept_reduced_git_metadata_isolation: true"
	export FAKE_START_SLEEP=2
	start_repo 160 40
	wait_for 'wrx\$'
	wrx add box >/dev/null
	# A missing VM: made from the YAML, then started, its progress in the pane.
	wait_for 'creating the Lima VM wrx-proj-'
	wait_for 'Waiting for the VM \(1/3\)'
	# Meanwhile the dashboard answers: the host pane (in the stack, right of
	# the new agent's) takes keys and runs them.
	prefix Right
	type_line 'echo "still-$((6*7))"'
	wait_for 'still-42'
	[ "$(cat "$FAKE_STATE")" = Stopped ] # the VM was still starting
	wait_for 'the Lima VM wrx-proj-[0-9a-f]* is up' 20
	wait_for '│wrx\$ *$'
	local vm
	vm=$(cat "$FAKE_STATE.name")
	grep -qx "limactl create --tty=false --name=$vm $XDG_STATE_HOME/workrex/lima/$vm.yaml" "$FAKE_LOG"
	grep -qx "limactl start --tty=false $vm" "$FAKE_LOG"
	# The pane's shell in the VM: the host pane's prompt above is no sign of it (it prints one too).
	until_ok 20 grep -q "^limactl shell --workdir $E2E_TMP/work/proj__worktrees/box $vm -- env .*WORKREX_RPC_HOST=host.lima.internal" "$FAKE_LOG"
	grep -q '^cpus: 2$' "$FAKE_STATE.yaml"
	# In the "VM": the mounted client reaches the dashboard over TCP.
	wrx send box 'workrex set-status waiting'
	wait_for '◆ box'
	# A running VM is used as it is.
	: >"$FAKE_LOG"
	wrx add two >/dev/null
	wait_for '^ 3 two'
	until_ok 10 grep -q "^limactl shell --workdir $E2E_TMP/work/proj__worktrees/two $vm" "$FAKE_LOG"
	not grep -q 'limactl create\|limactl start' "$FAKE_LOG"
	# A stopped one is started, not made again.
	echo Stopped >"$FAKE_STATE"
	: >"$FAKE_LOG"
	FAKE_START_SLEEP=0 wrx add three >/dev/null
	until_ok 10 grep -q "^limactl shell --workdir $E2E_TMP/work/proj__worktrees/three" "$FAKE_LOG"
	grep -qx "limactl start --tty=false $vm" "$FAKE_LOG"
	not grep -q 'limactl create' "$FAKE_LOG"
	# doctor and stop know the VM.
	wrx sandbox doctor >"$E2E_TMP/doctor" || { cat "$E2E_TMP/doctor" >&2; false; }
	grep -q "^ok    limactl" "$E2E_TMP/doctor"
	grep -q "^ok    VM: $vm (Running)" "$E2E_TMP/doctor"
	wrx sandbox stop >/dev/null
	grep -qx "limactl stop $vm" "$FAKE_LOG"
}

# Not accepted yet: the dashboard asks. No: no VM is made. Yes: the global
# config says so from then on (its comments kept), and the VM is made.
t_lima_not_accepted() {
	make_repo
	fake_limactl
	lima_config "    memory: 2GiB # mine"
	wrx sandbox doctor >"$E2E_TMP/doctor" || true
	grep -q '^FAIL  .*accept_reduced_git_metadata_isolation' "$E2E_TMP/doctor"
	start_repo 160 40
	wait_for 'wrx\$'
	(wrx add box -b >"$E2E_TMP/add" 2>&1 || echo "rc=$?" >>"$E2E_TMP/add") &
	wait_for 'git metadata writable.*Accept, for every project\? \(y/n\)'
	keys n
	until_ok 10 grep -q "rc=1" "$E2E_TMP/add" || { cat "$E2E_TMP/add" >&2; false; }
	grep -q "the user declined" "$E2E_TMP/add" || { cat "$E2E_TMP/add" >&2; screen >&2; tail -5 "$XDG_STATE_HOME/workrex/workrex.log" >&2; false; }
	not grep -q 'limactl create' "$FAKE_LOG"
	not grep -q accept_reduced "$XDG_CONFIG_HOME/workrex/config.yaml"
	# The answered question gone from the screen first: else the next wait
	# can match it still drawn, and y goes to the pane before it is asked.
	wait_gone 'Accept, for every project\? \(y/n\)'
	wrx open box >"$E2E_TMP/open2" 2>&1 &
	wait_for 'Accept, for every project\? \(y/n\)'
	keys y
	wait_for 'writable git metadata in Lima VMs accepted'
	grep -q '^    accept_reduced_git_metadata_isolation: true$' "$XDG_CONFIG_HOME/workrex/config.yaml"
	grep -q 'memory: 2GiB # mine' "$XDG_CONFIG_HOME/workrex/config.yaml"
	until_ok 10 grep -q 'limactl create' "$FAKE_LOG"
}

run_test "lima: a missing VM made, a stopped one started, progress shown, keys answered" t_lima_lifecycle
run_test "lima: writable git metadata: the dashboard asks; no starts nothing, yes is kept" t_lima_not_accepted
