#!/usr/bin/env python3
"""The network proxy (workrex __proxy) against real sockets, as root.

Upstream servers run in a network namespace this test makes (ip netns add,
a veth pair with documentation and private addresses: 198.51.100.2,
2001:db8::2, 10.77.0.2); the proxy runs in a mount namespace of its own
(unshare -m) where a hosts file made here is /etc/hosts, so every name
below resolves there and nowhere else. A "secret" server on 127.0.0.1:443
in the test's own namespace stands for what must never be reached: it
counts its connections. No other machine is contacted; every wait is
bounded. Prints one "ok - " / "not ok - " line per case.
"""
import base64, hashlib, json, os, re, select, signal, socket, subprocess, sys, tempfile, threading, time

WORKREX = os.environ["WORKREX"]
TOKEN = "tok-" + os.urandom(8).hex()
TAG = "%d" % os.getpid()
NS = "wrxp" + TAG
VH, VN = "wvh" + TAG, "wvn" + TAG
TMP = tempfile.mkdtemp(prefix="wrx-net.")
SOCK = os.path.join(TMP, "proxy.sock")
HOSTS = """127.0.0.1 localhost
127.0.0.1 mixed.test
198.51.100.2 allowed.test other.test mixed.test sub.wild.test wild.test
2001:db8::2 allowed6.test
127.0.0.1 loop.test
169.254.169.254 meta.test
10.77.0.2 priv.test privok.test
::ffff:127.0.0.1 mapped.test
::1 loop6.test
198.51.100.1 own.test
2001:0:4136:e378:8000:63bf:3fff:fdd2 teredo.test
::ffff:0:7f00:1 translated.test
198.18.0.1 bench.test
"""
POLICY = [{"host": h} for h in ("allowed.test", "allowed6.test", "loop.test", "mixed.test",
                                "meta.test", "priv.test", "mapped.test", "loop6.test",
                                "*.wild.test", "nowhere.test", "own.test", "teredo.test",
                                "translated.test", "bench.test")]
POLICY.append({"host": "privok.test", "allow_private_ips": True})

passed = failed = 0
events = []


def ok(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok - proxy: %s" % name)
    else:
        failed += 1
        print("not ok - proxy: %s%s" % (name, (": " + detail) if detail else ""))
    sys.stdout.flush()


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


def clear_stale():
    """A run killed part way leaves its namespace and veth behind, named by
    its pid (this file's wrxp/wvh, the sandbox network test's wrxs/wsh):
    the same addresses here would send this run's packets to them. Those
    whose process is gone are removed first."""
    links = sh("ip", "-o", "link", check=False).stdout
    for name, pid in re.findall(r"^\d+: ((?:wvh|wsh)(\d+))[@:]", links, re.M):
        if not os.path.exists("/proc/" + pid):
            sh("ip", "link", "del", name, check=False)
    spaces = sh("ip", "netns", "list", check=False).stdout
    for name, pid in re.findall(r"^((?:wrxp|wrxs)(\d+))\b", spaces, re.M):
        if not os.path.exists("/proc/" + pid):
            sh("ip", "netns", "del", name, check=False)


def setup_net():
    clear_stale()
    sh("ip", "netns", "add", NS)
    sh("ip", "link", "add", VH, "type", "veth", "peer", "name", VN)
    sh("ip", "link", "set", VN, "netns", NS)
    for a in ("198.51.100.1/24", "10.77.0.1/24"):
        sh("ip", "addr", "add", a, "dev", VH)
    sh("ip", "-6", "addr", "add", "2001:db8::1/64", "dev", VH, "nodad")
    sh("ip", "link", "set", VH, "up")
    ns = ("ip", "netns", "exec", NS)
    for a in ("198.51.100.2/24", "10.77.0.2/24"):
        sh(*ns, "ip", "addr", "add", a, "dev", VN)
    sh(*ns, "ip", "-6", "addr", "add", "2001:db8::2/64", "dev", VN, "nodad")
    sh(*ns, "ip", "link", "set", VN, "up")
    sh(*ns, "ip", "link", "set", "lo", "up")


def teardown_net():
    sh("ip", "link", "del", VH, check=False)
    sh("ip", "netns", "del", NS, check=False)


UPSTREAM = r"""
import socket, sys, threading
def serve(c):
    c.settimeout(30)
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            c.sendall(b)
        c.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    c.close()
def listen(fam, addr):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, 443)); s.listen(64)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
threading.Thread(target=listen, args=(socket.AF_INET6, "::"), daemon=True).start()
print("up", flush=True)
listen(socket.AF_INET, "0.0.0.0")
"""


class Secret:
    """127.0.0.1:443 here: nothing the proxy may ever reach."""

    def __init__(self):
        self.hits = 0
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.s.bind(("127.0.0.1", 443))
        self.s.listen(16)
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                return
            self.hits += 1
            c.sendall(b"SECRET")
            c.close()


def start_proxy(extra=None):
    spec = {"socket": SOCK, "token": TOKEN, "allowed_domains": POLICY, "max_connections": 8,
            "head_ms": 1500, "idle_ms": 3000}
    spec.update(extra or {})
    hosts = os.path.join(TMP, "hosts")
    with open(hosts, "w") as f:
        f.write(HOSTS)
    p = subprocess.Popen(["unshare", "-m", "sh", "-c",
                          "mount --make-rprivate / && mount --bind '%s' /etc/hosts && exec '%s' __proxy"
                          % (hosts, WORKREX)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p.stdin.write(json.dumps(spec))
    p.stdin.close()
    line = p.stdout.readline().strip()
    if line != "listening":
        raise RuntimeError("the proxy did not start: %r" % line)

    def read_events():
        for l in p.stdout:
            events.append(json.loads(l))
    threading.Thread(target=read_events, daemon=True).start()
    return p


def auth(token=TOKEN):
    return "Proxy-Authorization: Basic %s\r\n" % base64.b64encode(("workrex:" + token).encode()).decode()


def connect(head, extra=b"", timeout=10):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(SOCK)
    try:
        s.sendall(head.encode("latin-1") + extra)
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused before all of it was read: the answer is there to read
    return s


def event_of(host, timeout=5):
    """The proxy's latest event for host: it comes a moment after the connection ends."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = [e for e in events if e["host"] == host]
        if found:
            return found[-1]
        time.sleep(0.05)
    return None


def status_of(s, timeout=10):
    s.settimeout(timeout)
    got = b""
    end = time.monotonic() + timeout
    while b"\r\n\r\n" not in got and time.monotonic() < end:
        b = s.recv(4096)
        if not b:
            break
        got += b
    line = got.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0), got


def ask(target, headers=None, raw=None):
    head = raw if raw is not None else ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n"
                                         % (target, target, auth() if headers is None else headers))
    s = connect(head)
    st, _ = status_of(s)
    s.close()
    return st


def tunnel_roundtrip(target, size=1 << 20):
    """1 MB of random bytes through the tunnel and back (the upstream echoes)."""
    data = os.urandom(size)
    s = connect("CONNECT %s HTTP/1.1\r\n%s\r\n" % (target, auth()), data[:1000])
    st, got = status_of(s)
    if st != 200:
        return st, False
    back = bytearray(got.split(b"\r\n\r\n", 1)[1])

    def send():
        s.sendall(data[1000:])
        s.shutdown(socket.SHUT_WR)
    t = threading.Thread(target=send)
    t.start()
    end = time.monotonic() + 30
    while time.monotonic() < end:
        b = s.recv(1 << 16)
        if not b:
            break
        back += b
    t.join(10)
    s.close()
    return st, hashlib.sha256(back).digest() == hashlib.sha256(data).digest()


def main():
    if os.geteuid() != 0:
        print("not ok - proxy: the network tests need root (ip netns, unshare -m)")
        return 1
    for tool in ("ip", "unshare"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            print("not ok - proxy: %s is required but not installed" % tool)
            return 1
    up = proxy = None
    try:
        setup_net()
        up = subprocess.Popen(["ip", "netns", "exec", NS, "python3", "-c", UPSTREAM],
                              stdout=subprocess.PIPE, text=True)
        assert up.stdout.readline().strip() == "up"
        secret = Secret()
        proxy = start_proxy()

        st, same = tunnel_roundtrip("allowed.test:443")
        ok("an allowed name: 200, 1 MB each way byte for byte", st == 200 and same, "%d %s" % (st, same))
        st, same = tunnel_roundtrip("allowed6.test:443", 1 << 16)
        ok("an allowed name over IPv6", st == 200 and same, "%d" % st)
        st, same = tunnel_roundtrip("ALLOWED.test.:443", 1 << 12)
        ok("upper case and a trailing dot name the same host", st == 200 and same, "%d" % st)
        st, same = tunnel_roundtrip("sub.wild.test:443", 1 << 12)
        ok("*.wild.test lets a subdomain through", st == 200 and same, "%d" % st)
        ok("*.wild.test does not let wild.test through", ask("wild.test:443") == 403)
        ok("a name not allowed: 403", ask("other.test:443") == 403)
        ok("a name that does not resolve: 502", ask("nowhere.test:443") == 502)
        for lit in ("198.51.100.2", "127.0.0.1", "127.1", "0x7f.0.0.1", "2130706433",
                    "017700000001", "[::1]", "[::ffff:127.0.0.1]", "[2001:db8::2]"):
            st = ask(lit + ":443")
            ok("the IP literal %s: 403" % lit, st == 403, "%d" % st)
        for port in ("80", "22", "8443"):
            ok("port %s: 403" % port, ask("allowed.test:" + port) == 403)
        ok("no credentials: 407", ask("allowed.test:443", headers="") == 407)
        ok("wrong credentials: 407",
           ask("allowed.test:443", headers=auth("tok-wrong")) == 407)
        ok("credentials of the right length but wrong: 407",
           ask("allowed.test:443", headers=auth(TOKEN[:-1] + ("x" if TOKEN[-1] != "x" else "y"))) == 407)
        ok("not CONNECT: 405",
           ask(None, raw="GET http://allowed.test/ HTTP/1.1\r\n%s\r\n" % auth()) == 405)
        for name, target in (("NUL", "allowed.test\0.evil:443"), ("percent", "allowed%2etest:443"),
                             ("underscore", "allowed_test:443"), ("an at sign", "x@allowed.test:443"),
                             ("UTF-8", "b\u00fccher.test:443"), ("two trailing dots", "allowed.test..:443")):
            st = ask(target)
            ok("a name with %s: 400" % name, st == 400, "%d" % st)
        ok("punycode is a name like any other (not allowed: 403)", ask("xn--bcher-kva.test:443") == 403)
        for name, why in (("loop.test", "loopback"), ("meta.test", "169.254.169.254"),
                          ("priv.test", "a private address"), ("mapped.test", "IPv4-mapped loopback"),
                          ("loop6.test", "IPv6 loopback")):
            st = ask(name + ":443")
            ok("%s resolving to %s: 403" % (name, why), st == 403, "%d" % st)
        for name, why in (("own.test", "this machine's own address"), ("teredo.test", "Teredo"),
                          ("translated.test", "IPv4-translated loopback"), ("bench.test", "198.18/15")):
            st = ask(name + ":443")
            ok("%s resolving to %s: 403" % (name, why), st == 403, "%d" % st)
        ask("portcheck.test:8080")
        ev = event_of("portcheck.test")
        ok("a refused port is reported with its port", ev and ev.get("port") == 8080, str(ev))
        st, same = tunnel_roundtrip("privok.test:443", 1 << 12)
        ok("a private address with allow_private_ips: 200", st == 200 and same, "%d" % st)
        st, same = tunnel_roundtrip("mixed.test:443", 1 << 12)
        mixed = event_of("mixed.test")
        ok("a name resolving to loopback first, then a public address: the public one",
           st == 200 and same and mixed and mixed.get("addr") == "198.51.100.2",
           "%d %s" % (st, mixed))
        ok("the secret server on 127.0.0.1:443 was never reached", secret.hits == 0, "%d" % secret.hits)

        # The head: slow, oversize, pipelined.
        s = connect("CONNECT allowed.test:443 HTTP/1.1\r\n")
        t0 = time.monotonic()
        st, _ = status_of(s, 10)
        ok("a head not whole in time: 408", st == 408 and time.monotonic() - t0 < 5, "%d" % st)
        s.close()
        s = connect("CONNECT allowed.test:443 HTTP/1.1\r\nX: " + "x" * 9000 + "\r\n\r\n")
        st, _ = status_of(s)
        ok("a head over 8 KiB: 400", st == 400, "%d" % st)
        s.close()
        s = connect("CONNECT allowed.test:443 HTTP/1.1\r\n%s\r\n" % auth(), b"pipelined-bytes")
        st, got = status_of(s)
        rest = got.split(b"\r\n\r\n", 1)[1]
        s.settimeout(5)
        while len(rest) < 15:
            b = s.recv(100)
            if not b:
                break
            rest += b
        ok("bytes sent with the head reach the server", st == 200 and rest == b"pipelined-bytes",
           repr(rest))
        s.close()

        # max_connections (8): the ninth is refused while eight are open.
        held = []
        for _ in range(8):
            h = connect("CONNECT allowed.test:443 HTTP/1.1\r\n%s\r\n" % auth())
            status_of(h)
            held.append(h)
        st = ask("allowed.test:443")
        ok("over max_connections: 503", st == 503, "%d" % st)
        for h in held:
            h.close()
        end, st = time.monotonic() + 5, 0
        while st != 200 and time.monotonic() < end:  # the proxy sees the closes a moment later
            time.sleep(0.1)
            st = ask("allowed.test:443")
        ok("below it again: 200", st == 200, "%d" % st)

        # A tunnel with nothing either way ends after idle_ms (3 s here).
        s = connect("CONNECT allowed.test:443 HTTP/1.1\r\n%s\r\n" % auth())
        st, _ = status_of(s)
        t0 = time.monotonic()
        s.settimeout(10)
        try:
            gone = s.recv(100) == b""
        except OSError:
            gone = True
        took = time.monotonic() - t0
        ok("an idle tunnel ends after idle_ms", st == 200 and gone and 2 < took < 9, "%d %s %.1f" % (st, gone, took))
        s.close()

        # Every connection is told, refused ones with why.
        time.sleep(1)
        refused = [e for e in events if e["status"] == 403 and e["host"] == "other.test"]
        ok("refusals are reported with the reason", refused and "allowed_domains" in refused[0].get("why", ""),
           str(refused[:1]))
        big = [e for e in events if e["status"] == 200 and e["host"] == "allowed.test" and e["up"] >= 1 << 20]
        ok("tunnels are reported with their bytes", big and big[0]["down"] >= 1 << 20, str(big[:1]))
    except Exception as e:  # a step of the set-up, or a case that could not run
        detail = getattr(e, "stderr", "") or ""
        ok("the cases ran to their end", False, "%s %s" % (e, detail.strip()))
    finally:
        if proxy:
            proxy.send_signal(signal.SIGTERM)
            try:
                proxy.wait(5)
            except subprocess.TimeoutExpired:
                proxy.kill()
        if up:
            up.kill()
        teardown_net()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
