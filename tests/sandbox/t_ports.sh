#!/usr/bin/env bash
# Ports per agent (config ports; SPEC §14) with real podman: each agent
# holds its own, a server inside a sandbox (its network: none) is reached
# from the host on its port, and the ports outlive a reboot of the keepers.
. "$(dirname "$0")/lib.sh"

containers() { podman ps -a --filter "label=workrex.project=$repo" "$@" --format '{{.Names}}'; }

# port_of HANDLE: its first port, as list --json says.
port_of() {
	wrx list --json | python3 -c '
import json, sys
print(*[a["ports"][0] for a in json.load(sys.stdin) if a["handle"] == sys.argv[1] and a.get("ports")])' "$1"
}

# serve HANDLE: a one-line HTTP server in the agent's pane, on its WORKREX_PORT
# (perl, which the test image's Debian has; its loopback is its own).
serve() {
	wrx send "$1" 'perl -MIO::Socket::INET -e '\''$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ENV{WORKREX_PORT}, Listen => 5, ReuseAddr => 1) or die "no: $!"; print "SERVING $ENV{WORKREX_PORT}\n"; while ($c = $s->accept) { <$c>; print $c "HTTP/1.0 200 OK\r\n\r\nhello from the sandbox on $ENV{WORKREX_PORT}\n"; close $c }'\'' &'
	until_ok 30 eval "wrx capture $1 | grep -q 'SERVING [0-9]'" || { wrx capture "$1" >&2; return 1; }
}

# fetch PORT: what the host gets from 127.0.0.1:PORT (bounded: 3 tries, 30 s
# each). A connection costs a `podman exec` (about 150 ms here, idle; some
# seconds on a loaded CI machine, where 5 s once ran out).
fetch() { curl -s --max-time 30 --retry 2 --retry-connrefused "http://127.0.0.1:$1/"; }

# fetched PORT: the sandbox's answer on PORT (5 tries, as a person reloads:
# 2 of 5 CI rounds once got an empty answer, the exec's own failure, which
# the dashboard log now says), or what was there instead.
fetched() {
	local try
	for try in 1 2 3 4 5; do
		fetch "$1" | grep -qx "hello from the sandbox on $1" && return 0
		sleep 1
	done
	echo "  127.0.0.1:$1 answered: $(curl -sv --max-time 30 "http://127.0.0.1:$1/" 2>&1 | tail -5)" >&2
	grep -a 'port' "$XDG_STATE_HOME/workrex/workrex.log" | tail -5 >&2
	containers >&2
	return 1
}

t_ports_reach_a_sandboxed_server() {
	make_repo
	global_config "  enabled: true"
	echo 'ports: 1' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	wrx add two -b >/dev/null
	local p1 p2
	p1=$(port_of box) p2=$(port_of two)
	[ -n "$p1" ] && [ -n "$p2" ] && [ "$p1" != "$p2" ] || { wrx list >&2; return 1; }
	wrx list | grep -Eq "^box .* $p1( |$)"
	until_ok 30 eval 'containers | grep -q "^wrx-box-"'
	# Its port, not the host's: nothing listens on the host's loopback but the dashboard.
	serve box
	wrx capture box | grep -q "SERVING $p1"
	fetched "$p1"
	# A reboot: every process of ours and the runtime directory; the ports stay its own.
	prefix d
	wait_for 'WORKREX-EXITED'
	end_keepers
	rm -rf "$XDG_RUNTIME_DIR/workrex"
	kill_tmux
	until_ok 30 eval '! containers | grep -q "^wrx-box-"' || true
	start_repo 140 40
	wait_for 'wrx\$'
	[ "$(port_of box)" = "$p1" ] && [ "$(port_of two)" = "$p2" ]
	until_ok 60 eval 'containers --filter status=running | grep -q "^wrx-box-"' || { containers >&2; return 1; }
	serve box
	fetched "$p1"
	# Nothing listens in two: refused, said, nothing hangs.
	[ -z "$(curl -s --max-time 30 "http://127.0.0.1:$p2/" || true)" ]
}

run_test "ports: 1 each, distinct; a sandboxed server reached from the host on its port, after a reboot too" t_ports_reach_a_sandboxed_server
