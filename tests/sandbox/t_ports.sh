#!/usr/bin/env bash
# Ports per agent (config ports; SPEC §14) with real podman: each agent
# holds its own, a server inside a sandbox (its network: none) is reached
# from the host on its port (through its agent pane's keeper: a detach or a
# dashboard killed changes nothing), and the ports outlive a reboot of the keepers.
. "$(dirname "$0")/lib.sh"

containers() { podman_names --filter "label=workrex.project=$repo" "$@"; }

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

# fetched PORT [SECONDS]: the sandbox's answer on PORT, at the first try
# (bounded: 10 s, or SECONDS), or what was there instead. Through the
# runtime's exec (the fallback) a connection waits for `podman exec`, which
# a loaded CI machine has kept waiting for tens of seconds: 90 there.
fetched() {
	local got
	got=$(curl -s --max-time "${2:-10}" "http://127.0.0.1:$1/") && [ "$got" = "hello from the sandbox on $1" ] && return 0
	echo "  127.0.0.1:$1 answered: '$got'" >&2
	grep -a 'port' "$XDG_STATE_HOME/workrex/workrex.log" | tail -5 >&2
	local c
	for c in $(containers); do
		echo "  $c, through exec now: $(printf 'GET / HTTP/1.0\r\n\r\n' |
			timeout 30 podman exec -i "$c" /opt/workrex/bin/workrex port-connect "$1" 2>&1 | tail -1)" >&2
	done
	return 1
}

# ports_dir HANDLE: the host directory its container makes its ports' sockets in.
ports_dir() { echo "$XDG_STATE_HOME"/workrex/sandbox/git-*/"$1"/ports; }

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
	# Its pane's title says where to open it.
	wait_for " box:shell .*\\[:$p1\\]"
	# Through the guest's socket, not an exec a connection: 20 in a row, each at once.
	[ -S "$(ports_dir box)/$p1.sock" ] || { ls -la "$(ports_dir box)" >&2; return 1; }
	local i
	for i in $(seq 20); do fetched "$p1" || return 1; done
	! grep -a "ports: $p1" "$XDG_STATE_HOME/workrex/workrex.log" || return 1
	# Detached: its keeper listens, not the dashboard; a dashboard killed changes nothing.
	prefix d
	wait_for 'WORKREX-EXITED'
	fetched "$p1"
	# A reboot: every process of ours and the runtime directory; the ports stay its own.
	end_keepers
	rm -rf "$XDG_RUNTIME_DIR/workrex"
	kill_tmux
	until_ok 30 eval '! containers | grep -q "^wrx-box-"' || true
	# Meanwhile something of the machine's took two's port: said when its keeper starts.
	python3 -c 'import socket, sys, time; s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(120)' "$p2" &
	local squatter=$!
	until_ok 5 eval "ss -Hltn 'sport = :$p2' | grep -q ."
	start_repo 140 40
	wait_for "two: not forwarded here: port $p2: address already in use" 30 ||
		{ kill $squatter; return 1; }
	kill $squatter
	[ "$(port_of box)" = "$p1" ] && [ "$(port_of two)" = "$p2" ]
	until_ok 60 eval 'containers --filter status=running | grep -q "^wrx-box-"' || { containers >&2; return 1; }
	serve box
	fetched "$p1"
	kill -9 "$(workrex_pid)"
	fetched "$p1"
	# Nothing listens in two: refused, said, nothing hangs.
	[ -z "$(curl -s --max-time 30 "http://127.0.0.1:$p2/" || true)" ]
	# Its forwarder gone, the socket left with nobody on it: the exec instead, said.
	wrx send box 'for p in /proc/[0-9]*; do case "$(tr -d "\0" <$p/cmdline 2>/dev/null)" in *port-serve*) kill ${p#/proc/}; while kill -0 ${p#/proc/} 2>/dev/null; do sleep 0.1; done ;; esac; done; echo KILLED-FWD'
	until_ok 10 eval "wrx capture box | grep -q '^KILLED-FWD'" || { wrx capture box >&2; return 1; }
	through_exec "$p1"
	# (runc: refused; gVisor's socket takes it and says nothing)
	grep -aEq "ports: $p1: its socket (refused it: connection refused|did not greet it in 2000 ms); through podman exec instead" "$XDG_STATE_HOME/workrex/workrex.log"
}

# through_exec PORT: a connection to PORT that goes through the runtime's exec.
# Under runc, the sandbox's answer. Under gVisor, `podman exec` into runsc on a
# loaded machine now and then starts port-connect with its stdin at its end
# and its output lost (seen by hand: the server got an empty request); there
# the connection must end within its time, with the answer or with nothing.
through_exec() {
	if [ "${WORKREX_TEST_RUNTIME:-}" = gvisor ]; then
		local got
		got=$(curl -s --max-time 90 "http://127.0.0.1:$1/") || true
		[ -z "$got" ] || [ "$got" = "hello from the sandbox on $1" ] || { echo "  got: '$got'" >&2; return 1; }
	else
		fetched "$1" 90
	fi
}

run_test "ports: 1 each, distinct; a sandboxed server reached from the host on its port, detached, after a kill -9 and a reboot too" t_ports_reach_a_sandboxed_server

# The guest owns its ports directory, and the host connects to what is in it:
# a link put there in place of its socket, to a socket of the host's, must not
# be followed. (Against a build that follows it, the host's answer comes back.)
t_ports_socket_swapped_for_a_link() {
	make_repo
	global_config "  enabled: true"
	echo 'ports: 1' >>"$XDG_CONFIG_HOME/workrex/config.yaml"
	# A socket of the host's, which the sandbox cannot reach, answering as the host.
	local host_sock=$E2E_TMP/host.sock
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(5); s.settimeout(120)
while True:
    c, _ = s.accept(); c.recv(4096)
    c.sendall(b"HTTP/1.0 200 OK\r\n\r\nTHE HOST ANSWERED\n"); c.close()' "$host_sock" &
	local hp=$!
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add box -b >/dev/null
	local p
	p=$(port_of box)
	until_ok 30 eval 'containers | grep -q "^wrx-box-"'
	serve box
	fetched "$p"
	# The agent swaps its socket for a link to the host's.
	wrx send box "rm /run/workrex-ports/$p.sock && ln -s $host_sock /run/workrex-ports/$p.sock && echo SWAPPED"
	until_ok 10 eval "wrx capture box | grep -q '^SWAPPED'" || { wrx capture box >&2; kill $hp; return 1; }
	[ -L "$(ports_dir box)/$p.sock" ] || { kill $hp; return 1; }
	local got
	got=$(curl -s --max-time 90 "http://127.0.0.1:$p/") || true
	kill $hp
	[[ $got != *"THE HOST ANSWERED"* ]] || { echo "  the host's socket was reached through the link" >&2; return 1; }
	# Not followed, and said: the sandbox's server, through the runtime's exec instead.
	grep -aq "ports: $p: $p.sock is not a socket (a link is not followed); through podman exec instead" \
		"$XDG_STATE_HOME/workrex/workrex.log"
	through_exec "$p"
}

run_test "ports: a link in place of the guest's socket is not followed to the host's" t_ports_socket_swapped_for_a_link
