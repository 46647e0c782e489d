#!/usr/bin/env bash
# sandbox.network.policy: deny, in real podman containers. An HTTPS server
# of the test's own runs in a network namespace it made (a veth, the
# documentation address 198.51.100.2 and 2001:db8::2); the dashboard runs
# in a mount namespace whose /etc/hosts names it allowed.test and
# other.test, so its keepers' proxy resolves them there and nowhere else.
# Inside the container: the allowed name works through the proxy (curl
# reads HTTPS_PROXY); another name is refused; a direct connection, a DNS
# query, IPv6 and curl --noproxy all fail; the agent's uid is the user's
# and it holds no capability. The proxy goes on with no dashboard.
#
# Both ways out are tried: no network at all (the default: the proxy's
# socket is mounted), and the firewall mode of Docker Desktop and Apple
# Container (share_sockets: false), here on podman's own bridge: a firewall
# step as root inside, the proxy and the bridge on TCP, and an agent that
# cannot undo the rules, reach the host's other ports or the bridge.
. "$(dirname "$0")/lib.sh"
TAG=$$
NS=wrxs$TAG VH=wsh$TAG VN=wsn$TAG
# Everything a test started goes when it ends (each runs in a subshell: its own trap).
cleanup() {
	set +e
	trap - ERR
	podman ps -aq --filter "label=workrex.project=$repo" | while read -r c; do podman rm -f "$c"; done >/dev/null 2>&1
	podman rm -f "wrxfw-$TAG" >/dev/null 2>&1
	[ -n "${NSPID:-}" ] && kill "$NSPID" 2>/dev/null
	[ -n "${UP:-}" ] && kill "$UP" 2>/dev/null
	[ -n "${HOSTSVC:-}" ] && kill "$HOSTSVC" 2>/dev/null
	ip link del "$VH" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
}
trap 'cleanup; stop' EXIT

for tool in ip unshare openssl python3; do
	command -v "$tool" >/dev/null || { echo "not ok - network: $tool is required but not installed"; exit 1; }
done

# A run killed part way leaves its namespace and veth behind, named by its
# pid (this file's wrxs/wsh, tests/net/proxy.py's wrxp/wvh): the same
# addresses here would take this run's packets. Those whose process is
# gone are removed first.
clear_stale() {
	local n
	for n in $(ip -o link | sed -n 's/^[0-9]*: \(w[sv]h[0-9]*\)[@:].*/\1/p'); do
		[ -d "/proc/${n#w?h}" ] || ip link del "$n" 2>/dev/null
	done
	for n in $(ip netns list | sed -n 's/^\(wrx[sp][0-9]*\).*/\1/p'); do
		[ -d "/proc/${n#wrx?}" ] || ip netns del "$n" 2>/dev/null
	done
}

upstream() {
	clear_stale
	ip netns add "$NS"
	ip link add "$VH" type veth peer name "$VN"
	ip link set "$VN" netns "$NS"
	ip addr add 198.51.100.1/24 dev "$VH"
	ip -6 addr add 2001:db8::1/64 dev "$VH" nodad
	ip link set "$VH" up
	ip netns exec "$NS" ip addr add 198.51.100.2/24 dev "$VN"
	ip netns exec "$NS" ip -6 addr add 2001:db8::2/64 dev "$VN" nodad
	ip netns exec "$NS" ip link set "$VN" up
	ip netns exec "$NS" ip link set lo up
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=allowed.test \
		-addext "subjectAltName=DNS:allowed.test,DNS:other.test,DNS:third.test" \
		-keyout "$E2E_TMP/key.pem" -out "$E2E_TMP/cert.pem" >/dev/null 2>&1
	cat >"$E2E_TMP/https.py" <<-'EOF'
		import http.server, socket, ssl, sys, threading
		class H(http.server.BaseHTTPRequestHandler):
		    def do_GET(self):
		        body = b"hello from upstream\n"
		        self.send_response(200); self.send_header("Content-Length", str(len(body)))
		        self.end_headers(); self.wfile.write(body)
		    def log_message(self, *a): pass
		class S6(http.server.ThreadingHTTPServer):
		    address_family = socket.AF_INET6
		    def server_bind(self):
		        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
		        super().server_bind()
		ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
		ctx.load_cert_chain(sys.argv[1], sys.argv[2])
		for cls, addr in ((http.server.ThreadingHTTPServer, "0.0.0.0"), (S6, "::")):
		    s = cls((addr, 443), H)
		    s.socket = ctx.wrap_socket(s.socket, server_side=True)
		    threading.Thread(target=s.serve_forever, daemon=True).start()
		print("up", flush=True)
		threading.Event().wait()
	EOF
	ip netns exec "$NS" python3 "$E2E_TMP/https.py" "$E2E_TMP/cert.pem" "$E2E_TMP/key.pem" \
		>"$E2E_TMP/up.out" 2>&1 &
	UP=$!
	until_ok 10 grep -q up "$E2E_TMP/up.out"
}

# ns_up: a mount namespace whose /etc/hosts names the upstream allowed.test
# and other.test, held by a sleeping process; podman runs in it from then
# on (a container's network namespace is a mount in there), and so does the
# dashboard (dashboard_in_ns), whose keepers' proxy resolves names there.
ns_up() {
	trap cleanup EXIT
	printf '127.0.0.1 localhost\n198.51.100.2 allowed.test other.test third.test\n' >"$E2E_TMP/hosts"
	unshare -m --propagation private sh -c "mount --bind $E2E_TMP/hosts /etc/hosts && exec sleep 3600" \
		</dev/null >/dev/null 2>&1 &
	NSPID=$!
	until_ok 10 eval 'nsenter -m -t "$NSPID" grep -q allowed.test /etc/hosts'
	podman() { nsenter -m -t "$NSPID" podman "$@"; }
}

dashboard_in_ns() {
	tm new-session -d -x 160 -y 40 -c "$repo" \
		"nsenter -m -t $NSPID --wd=$repo env TERM=tmux-256color PATH=\"$PATH\" $WORKREX$after_exit"
	tm set -g status off
	wait_for 'wrx\$'
}

# no_way_out: in the box's focused shell, the allowed name works through
# the proxy; another is refused; around the proxy, a direct connection,
# DNS and IPv6 fail.
no_way_out() {
	cp "$E2E_TMP/cert.pem" "$w/cert.pem"
	prefix z
	wait_for '│.*[$#] *$'
	# Through the proxy: the allowed name, over real TLS.
	type_line 'curl -sS --max-time 10 --cacert cert.pem https://allowed.test/ >ok.txt 2>&1; echo "allowed-$?"'
	wait_for '│allowed-0'
	grep -qx 'hello from upstream' "$w/ok.txt"
	# Another name: the proxy's 403.
	type_line 'curl -sS --max-time 10 --cacert cert.pem https://other.test/ >no.txt 2>&1; echo "other-$?"'
	wait_for '│other-[1-9]'
	grep -q '403' "$w/no.txt"
	wait_for 'box: the proxy refused +other.test:443 \(403\)'
	# No other way out: around the proxy, a direct connection, DNS, IPv6.
	type_line 'curl -sS --noproxy "*" --max-time 5 --cacert cert.pem --resolve allowed.test:443:198.51.100.2 https://allowed.test/ >direct.txt 2>&1; echo "direct-$?"'
	wait_for '│direct-[1-9]'
	not grep -q 'hello from upstream' "$w/direct.txt"
	type_line '(echo x >/dev/tcp/198.51.100.2/443) 2>tcp.txt; echo "tcp-$?"; (echo x >/dev/udp/198.51.100.1/53) 2>udp.txt; echo "udp-$?"'
	wait_for '│udp-[1-9]'
	screen | grep -q '│tcp-[1-9]'
	type_line '(echo x >/dev/tcp/2001:db8::2/443) 2>v6.txt; echo "v6-$?"; getent hosts example.org; echo "dns-$?"'
	wait_for '│dns-[1-9]'
	screen | grep -q '│v6-[1-9]'
}

t_deny_policy() {
	make_repo
	upstream
	global_config "  enabled: true" "  network:" "    policy: deny" \
		"    allowed_domains: [allowed.test]"
	ns_up
	dashboard_in_ns
	local w
	add_box
	no_way_out
	# Only loopback; the user's uid; no capabilities.
	type_line 'grep -c : /proc/net/dev >ifs.txt; id -u >uid.txt; grep CapEff /proc/self/status >caps.txt; echo facts-done'
	wait_for '│facts-done'
	[ "$(cat "$w/ifs.txt")" = 1 ]
	[ "$(cat "$w/uid.txt")" = "$(id -u)" ]
	grep -q 'CapEff:.0000000000000000' "$w/caps.txt"
	# A look inside with sandbox shell: refused before; now no network at all, said.
	wrx sandbox shell box -- sh -c 'grep -c : /proc/net/dev' >"$E2E_TMP/shell.out" 2>"$E2E_TMP/shell.err"
	[ "$(cat "$E2E_TMP/shell.out")" = 1 ]
	grep -q 'sandbox shell: no network in it (policy: deny' "$E2E_TMP/shell.err"
	# The dashboard lists both, and the log has them.
	wrx egress box >"$E2E_TMP/egress"
	grep -q '1 allowed, 1 refused' "$E2E_TMP/egress"
	grep -q 'allowed  allowed.test:443 via 198.51.100.2' "$E2E_TMP/egress"
	grep -q 'refused  other.test:443 (403)' "$E2E_TMP/egress"
	grep -q 'box: proxy: refused  other.test:443' "$XDG_STATE_HOME/workrex/workrex.log"
	wait_for '^ 2 .*box.*⊘1'
	# The user allows it: the dashboard asks; yes writes the global config,
	# and the agent's running proxy takes it at once.
	(cd "$repo" && "$WORKREX" allow-domain other.test >"$E2E_TMP/allow.out" 2>&1) &
	wait_for 'add other.test to sandbox.network.allowed_domains in .*\(y/n\)'
	keys y
	wait_for 'other.test is in allowed_domains.*take it now'
	grep -q '"other.test"' "$XDG_CONFIG_HOME/workrex/config.yaml"
	type_line 'curl -sS --max-time 10 --cacert cert.pem https://other.test/ >ok2.txt 2>&1; echo "now-$?"'
	wait_for '│now-0'
	grep -qx 'hello from upstream' "$w/ok2.txt"
	# With no dashboard, the keeper's proxy goes on serving the agent.
	prefix d
	wait_for 'WORKREX-EXITED'
	wrx send box 'curl -sS --max-time 10 --cacert cert.pem https://allowed.test/ >detached.txt 2>&1'
	until_ok 20 grep -qx 'hello from upstream' "$w/detached.txt"
	# ... and refuses what it must, counted for the next dashboard.
	wrx send box 'curl -sS --max-time 10 --cacert cert.pem https://fourth.test/ >fourth.txt 2>&1; echo fourth-$? >>fourth.txt'
	until_ok 20 grep -q '^fourth-' "$w/fourth.txt"
	# allow-domain with no dashboard says when running agents take it, and
	# it is so: the next dashboard gives the list to the proxy of the agent
	# it takes over (before, only agents it started itself were told).
	wrx allow-domain third.test -y | grep -q 'agents running now take it when a dashboard next runs'
	kill_tmux
	dashboard_in_ns
	# Its refusals go on counting from where they were: the one before, the one since.
	wait_for '^ 2 .*box.*⊘2'
	wrx send box 'curl -sS --max-time 10 --cacert cert.pem https://third.test/ >third.txt 2>&1'
	until_ok 20 grep -qx 'hello from upstream' "$w/third.txt"
}

# An agent floods its proxy with 10,000 refused requests: the log stays
# under its cap, refusals are counted (not said one by one), and the
# dashboard answers and takes keys meanwhile.
t_refusal_flood() {
	make_repo
	global_config "  enabled: true" "  network:" "    policy: deny" \
		"    allowed_domains: [allowed.test]"
	start_repo 140 40
	wait_for 'wrx\$'
	local w n=10000
	# Under gVisor each connection crosses its netstack and the socket
	# forwarder: 8,452 of them took the 240 s in CI's sanitizer round.
	[ "${WORKREX_TEST_RUNTIME:-}" != gvisor ] || n=3000
	add_box
	cat >"$w/flood.sh" <<-EOF
		i=0
		while [ \$i -lt $n ]; do
			exec 3<>/dev/tcp/127.0.0.1/3128 || break
			printf 'CONNECT bad%d.test:443 HTTP/1.1\r\nHost: x\r\n\r\n' \$i >&3
			read -r line <&3
			exec 3>&-
			i=\$((i + 1))
		done
		echo "flood-done \$i \$line"
	EOF
	local t0=$SECONDS
	wrx send box 'bash flood.sh >flood.out 2>&1'
	# Meanwhile: the dashboard lists, and another pane takes keys.
	sleep 2
	wrx list >/dev/null
	prefix 1
	type_line 'echo still-$((6*7))'
	wait_for 'still-42'
	until_ok 240 grep -q flood-done "$w/flood.out" || { cat "$w/flood.out" >&2; screen >&2; return 1; }
	cat "$w/flood.out" >&2
	grep -q "^flood-done $n HTTP/1.1 407" "$w/flood.out"
	echo "$n refusals in $((SECONDS - t0)) s" >&2
	local log=$XDG_STATE_HOME/workrex/workrex.log size
	size=$(stat -c %s "$log")
	echo "workrex.log: $size bytes, $(grep -c 'proxy: refused' "$log") refusal lines, $(grep -c 'more refused' "$log") tallies" >&2
	[ "$size" -lt $((8 << 20)) ]
	[ "$(grep -c 'proxy: refused' "$log")" -lt 1000 ]
	wait_for "^ 2 .*box.*⊘$n" 20
	wrx list >/dev/null
}

run_test "policy deny: HTTPS to allowed names through the proxy, and no other way out" t_deny_policy
# The web view listens on the host's loopback: a sandboxed agent (hostile,
# its prompts off) cannot reach it, not directly, not through its proxy.
t_web_port_unreachable() {
	make_repo
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	# localhost allowed by name too (a user's slip): its address is loopback, refused still.
	global_config "  enabled: true" "  network:" "    policy: deny" \
		"    allowed_domains: [allowed.test, localhost]" "web:" "  listen: 127.0.0.1:$port"
	ns_up
	dashboard_in_ns
	wait_for "web: http://127.0.0.1:$port/ serves the agents"
	curl -s --max-time 5 "http://127.0.0.1:$port/" | grep -q '<!doctype html>'
	local w
	add_box
	prefix z
	wait_for '│.*[$#] *$'
	# Through the proxy, told to tunnel there (NO_PROXY would skip it).
	type_line "curl -sS -p -x \"\${https_proxy:-\$HTTPS_PROXY}\" --noproxy '' --max-time 5 http://127.0.0.1:$port/ >w1.txt 2>&1; echo w1-\$?"
	wait_for '│w1-[0-9]'
	type_line "curl -sS -p -x \"\${https_proxy:-\$HTTPS_PROXY}\" --noproxy '' --max-time 5 http://localhost:$port/ >w2.txt 2>&1; echo w2-\$?"
	wait_for '│w2-[0-9]'
	type_line "curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:$port/ >w3.txt 2>&1; echo w3-\$?"
	wait_for '│w3-[0-9]'
	type_line "(echo x >/dev/tcp/127.0.0.1/$port) 2>w4.txt; echo w4-\$?"
	wait_for '│w4-[0-9]'
	screen | grep -q '│w1-[1-9]'
	screen | grep -q '│w2-[1-9]'
	screen | grep -q '│w3-[1-9]'
	screen | grep -q '│w4-[1-9]'
	not grep -qi 'doctype' "$w/w1.txt" "$w/w2.txt" "$w/w3.txt"
	# The proxy said no to the host's loopback, and counted it.
	wrx egress box >"$E2E_TMP/egress"
	grep -q "refused  127.0.0.1:$port" "$E2E_TMP/egress"
	grep -q "refused  localhost:$port" "$E2E_TMP/egress"
}

run_test "10,000 refused connections (3,000 under gVisor): the log under its cap, the dashboard responsive" t_refusal_flood

# Firewall mode, for real: podman's bridge stands in for Docker Desktop's
# and Apple Container's network, where no socket is shared.
# Under gVisor the firewall mode is refused, said so (its firewall is
# iptables, which gVisor's network has not): that is what is tested there.
gvisor_refuses_firewall() {
	echo "# under gVisor: the firewall mode is refused, not run (iptables)" >&2
	global_config "  enabled: true" "  rpc_host: 10.88.0.1" "  container:" "    share_sockets: false" \
		"  network:" "    policy: deny"
	start_repo 140 40
	wait_for 'wrx\$'
	wrx add fw -b >"$E2E_TMP/fw.out" 2>&1 || true
	not wrx open fw >>"$E2E_TMP/fw.out" 2>&1
	grep -q 'gvisor cannot keep policy: deny with share_sockets: false' "$E2E_TMP/fw.out" ||
		{ cat "$E2E_TMP/fw.out" >&2; return 1; }
}

t_firewall_mode() {
	make_repo
	[ "${WORKREX_TEST_RUNTIME:-}" != gvisor ] || { gvisor_refuses_firewall; return; }
	upstream
	ns_up
	# The bridge is up while a container uses it; its gateway is the host.
	podman run -d --name "wrxfw-$TAG" workrex-test:latest sleep 600 >/dev/null
	local gw
	gw=$(podman network inspect podman --format '{{range .Subnets}}{{.Gateway}}{{end}}')
	[ -n "$gw" ]
	until_ok 10 eval "ip -4 addr | grep -q 'inet $gw/'"
	# A service of the host's on the bridge: out of the agent's reach.
	python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], 0)); s.listen(); print(s.getsockname()[1], flush=True); [s.accept()[0].sendall(b"host secret\n") for _ in iter(int, 1)]' "$gw" >"$E2E_TMP/hostsvc" &
	HOSTSVC=$!
	until_ok 10 test -s "$E2E_TMP/hostsvc"
	local hport
	hport=$(cat "$E2E_TMP/hostsvc")
	global_config "  enabled: true" "  rpc_host: $gw" "  container:" "    share_sockets: false" \
		"  network:" "    policy: deny" "    allowed_domains: [allowed.test]"
	dashboard_in_ns
	local w
	add_box
	# The bridge over TCP: the agent's status reaches the dashboard.
	wrx send box 'workrex set-status waiting'
	wait_for '◆ box'
	no_way_out
	# The host's other ports, and the bridge's address on other ports, are shut.
	type_line "(exec 3<>/dev/tcp/$gw/$hport; cat <&3) >hostsvc.txt 2>&1; echo \"hostsvc-\$?\""
	wait_for '│hostsvc-[1-9]'
	not grep -q 'host secret' "$w/hostsvc.txt"
	# The agent cannot undo the firewall: the user's uid, no capability left.
	type_line 'iptables -F OUTPUT >flush.txt 2>&1; echo "flush-$?"; id -u >uid.txt; grep ^Cap /proc/self/status >caps.txt; echo facts-done'
	wait_for '│facts-done'
	screen | grep -q '│flush-[1-9]'
	[ "$(cat "$w/uid.txt")" = "$(id -u)" ]
	[ "$(grep -c ':.0000000000000000' "$w/caps.txt")" = 5 ]
	# Still shut after the attempt.
	type_line '(echo x >/dev/tcp/198.51.100.2/443) 2>/dev/null; echo "again-$?"'
	wait_for '│again-[1-9]'
	wrx egress box >"$E2E_TMP/egress"
	grep -q '1 allowed, 1 refused' "$E2E_TMP/egress"
	# doctor says how the sandbox reaches the host, and finds iptables in the image.
	nsenter -m -t "$NSPID" --wd="$repo" "$WORKREX" sandbox doctor box >"$E2E_TMP/doctor" || { cat "$E2E_TMP/doctor" >&2; false; }
	grep -q "^ok    host: RPC and the proxy over TCP at $gw .*a firewall step" "$E2E_TMP/doctor"
	grep -q '^ok    iptables in workrex-test:latest' "$E2E_TMP/doctor"
}

# A firewall step that fails starts no agent: an image without iptables.
t_firewall_fails_closed() {
	make_repo
	[ "${WORKREX_TEST_RUNTIME:-}" != gvisor ] || { gvisor_refuses_firewall; return; }
	ns_up
	podman run --name "wrxfw-noipt-$TAG" workrex-test:latest rm /usr/sbin/iptables /usr/sbin/ip6tables
	podman commit -q "wrxfw-noipt-$TAG" "workrex-test-noipt:$TAG" >/dev/null
	podman rm -f "wrxfw-noipt-$TAG" >/dev/null
	podman run -d --name "wrxfw-$TAG" workrex-test:latest sleep 600 >/dev/null
	local gw
	gw=$(podman network inspect podman --format '{{range .Subnets}}{{.Gateway}}{{end}}')
	global_config "  enabled: true" "  rpc_host: $gw" "  container:" "    share_sockets: false" \
		"  network:" "    policy: deny"
	sed -i "s|image: workrex-test:latest|image: workrex-test-noipt:$TAG|" "$XDG_CONFIG_HOME/workrex/config.yaml"
	dashboard_in_ns
	wrx add box >/dev/null
	wait_for 'iptables is not in the image'
	# ...and the container is gone: no agent ran.
	until_ok 20 eval '! podman ps --filter "label=workrex.project=$repo" --format "{{.Names}}" | grep -q "^wrx-box-"'
	wait_for 'box:shell .*\[exited 126\]'
	not nsenter -m -t "$NSPID" --wd="$repo" "$WORKREX" sandbox doctor box >"$E2E_TMP/doctor"
	grep -q "^FAIL  iptables in workrex-test-noipt:$TAG: missing" "$E2E_TMP/doctor"
	podman rmi -f "workrex-test-noipt:$TAG" >/dev/null 2>&1
}

run_test "the web view's port: not from a sandboxed agent, directly or through its proxy" t_web_port_unreachable
run_test "firewall mode (share_sockets: false): the same, from a bridge network" t_firewall_mode
run_test "firewall mode: a failed step starts no agent" t_firewall_fails_closed
