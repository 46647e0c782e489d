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
. "$(dirname "$0")/lib.sh"
TAG=$$
NS=wrxs$TAG VH=wsh$TAG VN=wsn$TAG
trap 'podman ps -aq --filter "label=workrex.project=$repo" | xargs -r podman rm -f >/dev/null 2>&1; [ -n "${UP:-}" ] && kill "$UP" 2>/dev/null; ip link del "$VH" 2>/dev/null; ip netns del "$NS" 2>/dev/null; stop' EXIT

for tool in ip unshare openssl python3; do
	command -v "$tool" >/dev/null || { echo "not ok - network: $tool is required but not installed"; exit 1; }
done

upstream() {
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
		-addext "subjectAltName=DNS:allowed.test,DNS:other.test" \
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

# run_in BOX LINE: the agent pane runs LINE; its output lands in out.txt.
t_deny_policy() {
	make_repo
	upstream
	printf '127.0.0.1 localhost\n198.51.100.2 allowed.test other.test\n' >"$E2E_TMP/hosts"
	global_config "  enabled: true" "  network:" "    policy: deny" \
		"    allowed_domains: [allowed.test]"
	tm new-session -d -x 160 -y 40 -c "$repo" \
		"unshare -m sh -c 'mount --make-rprivate / && mount --bind $E2E_TMP/hosts /etc/hosts && exec env TERM=tmux-256color PATH=\"$PATH\" $WORKREX'$after_exit"
	tm set -g status off
	wait_for 'wrx\$'
	local w
	add_box
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
	# Only loopback; the user's uid; no capabilities.
	type_line 'grep -c : /proc/net/dev >ifs.txt; id -u >uid.txt; grep CapEff /proc/self/status >caps.txt; echo facts-done'
	wait_for '│facts-done'
	[ "$(cat "$w/ifs.txt")" = 1 ]
	[ "$(cat "$w/uid.txt")" = "$(id -u)" ]
	grep -q 'CapEff:.0000000000000000' "$w/caps.txt"
	# The dashboard lists both, and the log has them.
	wrx egress box >"$E2E_TMP/egress"
	grep -q '1 allowed, 1 refused' "$E2E_TMP/egress"
	grep -q 'allowed  allowed.test:443 via 198.51.100.2' "$E2E_TMP/egress"
	grep -q 'refused  other.test:443 (403)' "$E2E_TMP/egress"
	grep -q 'box: proxy: refused  other.test:443' "$XDG_STATE_HOME/workrex/workrex.log"
	wait_for '^ 2 .*box.*⊘1'
	# The user allows it: the dashboard asks; yes writes the global config;
	# the agent's panes opened again take it.
	(cd "$repo" && "$WORKREX" allow-domain other.test >"$E2E_TMP/allow.out" 2>&1) &
	wait_for 'add other.test to sandbox.network.allowed_domains in .*\(y/n\)'
	keys y
	wait_for 'other.test is in allowed_domains'
	grep -q '"other.test"' "$XDG_CONFIG_HOME/workrex/config.yaml"
	wrx close box
	until_ok 30 eval '! podman ps --format "{{.Names}}" | grep -q "^wrx-box-"'
	wrx open box
	until_ok 30 eval 'podman ps --format "{{.Names}}" | grep -q "^wrx-box-"'
	prefix z
	wait_for '│.*[$#] *$'
	type_line 'curl -sS --max-time 10 --cacert cert.pem https://other.test/ >ok2.txt 2>&1; echo "now-$?"'
	wait_for '│now-0'
	grep -qx 'hello from upstream' "$w/ok2.txt"
	# With no dashboard, the keeper's proxy goes on serving the agent.
	prefix d
	wait_for 'WORKREX-EXITED'
	wrx send box 'curl -sS --max-time 10 --cacert cert.pem https://allowed.test/ >detached.txt 2>&1'
	until_ok 20 grep -qx 'hello from upstream' "$w/detached.txt"
}

run_test "policy deny: HTTPS to allowed names through the proxy, and no other way out" t_deny_policy
