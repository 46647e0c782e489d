#!/usr/bin/env python3
"""Protocol tests against a live dashboard's RPC socket (SPEC §7).

usage: rpc_protocol.py SOCKET LOGFILE TOKEN_A TOKEN_B TOKEN_C TOKEN_D
The tokens are four agents' pane tokens (agent-a ... agent-d). Prints "ok - ..." per check and exits
non-zero on the first failure. Every socket has a timeout; every loop is
bounded.
"""
import json, os, socket, sys, threading, time

SOCK, LOG = sys.argv[1:3]
TOKENS = sys.argv[3:7]
TA, TB = TOKENS[0], TOKENS[1]
T = 10  # seconds, the bound on any single wait


def conn():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(T)
    s.connect(SOCK)
    return s


class Lines:
    def __init__(self, s):
        self.s, self.buf = s, b""

    def next(self):
        while b"\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def closed(self):
        """True when the server closed the connection (after any pending lines)."""
        try:
            while True:
                chunk = self.s.recv(65536)
                if not chunk:
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False


def auth(token):
    s = conn()
    s.sendall(json.dumps({"token": token}).encode() + b"\n")
    r = Lines(s)
    return s, r, r.next()


def call(s, r, obj):
    s.sendall((obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n")
    return r.next()


def check(cond, what):
    if not cond:
        print(f"not ok - {what}", flush=True)
        sys.exit(1)
    print(f"ok - {what}", flush=True)


def log_text():
    with open(LOG, errors="replace") as f:
        return f.read()


# Right token.
s, r, hello = auth(TA)
check(hello == {"type": "ok"}, "right token is accepted")
check(call(s, r, {"type": "heartbeat", "id": 1}) == {"type": "ok", "id": 1}, "heartbeat")

# Wrong, missing, short, overlong, non-string tokens: refused, closed, logged.
before = log_text().count("rpc: refused")
bad = [
    json.dumps({"token": "0" * 64}).encode(),
    json.dumps({"token": TA[:-1] + ("0" if TA[-1] != "0" else "1")}).encode(),
    json.dumps({}).encode(),
    json.dumps({"token": TA[:32]}).encode(),
    json.dumps({"token": TA + "0"}).encode(),
    json.dumps({"token": TA.upper()}).encode(),
    json.dumps({"token": 12345}).encode(),
    b"not json at all",
]
for i, line in enumerate(bad):
    s2 = conn()
    s2.sendall(line + b"\n")
    r2 = Lines(s2)
    reply = r2.next()
    check(reply == {"type": "error", "message": "authentication failed"} and r2.closed(),
          f"bad token #{i} refused and closed")
    s2.close()
time.sleep(0.2)
check(log_text().count("rpc: refused") >= before + len(bad), "refusals are logged")

# A request before the token is not a token.
s2 = conn()
s2.sendall(b'{"type":"set_status","status":"done"}\n')
r2 = Lines(s2)
check(r2.next()["type"] == "error" and r2.closed(), "a request without a token is refused")

# An overlong first line: the control socket also takes CLI commands, whose
# first line may be up to 1 MiB; past that, refused and closed.
s2 = conn()
try:
    s2.sendall(b'{"token":"' + b"a" * (2 << 20))
except (BrokenPipeError, ConnectionResetError):
    pass
r2 = Lines(s2)
check(r2.next() == {"type": "error", "message": "authentication failed"} and r2.closed(),
      "a 2 MiB token line is refused and closed")

# No auth line: closed after 5 s.
s2 = conn()
t0 = time.monotonic()
r2 = Lines(s2)
reply = r2.next()
elapsed = time.monotonic() - t0
check(reply == {"type": "error", "message": "authentication timed out"} and r2.closed()
      and 4.5 <= elapsed <= 8, f"silent client closed after {elapsed:.1f} s")

# A 2 MiB line: error and close.
s2, r2, _ = auth(TA)
try:
    s2.sendall(b'{"type":"set_title","title":"' + b"x" * (2 << 20) + b'"}\n')
except (BrokenPipeError, ConnectionResetError):
    pass
reply = r2.next()
check(reply == {"type": "error", "message": "request line too long"} and r2.closed(),
      "a 2 MiB line gets an error and the connection is closed")

# Malformed JSON, wrong types, unknown type, deep nesting: error, connection goes on.
garbage = [
    b"{not json",
    b"[1,2,3]",
    b'{"type":"set_status","status":5}',
    b'{"type":"set_status","status":"sleeping"}',
    b'{"type":"set_title"}',
    b'{"type":"spawn_agent","branch":["x"]}',
    b'{"type":"merge","rebase":"yes"}',
    b'{"type":"format_disk"}',
    b'{"type":7}',
    b'{"no_type":1}',
    b'{"type":"heartbeat","x":' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"type":"notify","text":"a\\u0000b"}',
]
for i, g in enumerate(garbage):
    reply = call(s, r, g)
    check(reply and reply.get("type") == "error" and reply.get("message"),
          f"garbage #{i} -> error: {reply and reply.get('message')}")
check(call(s, r, {"type": "heartbeat"}) == {"type": "ok"}, "the connection still works")

# A client vanishing mid-line, and one vanishing right after its token.
for _ in range(20):
    s2 = conn()
    s2.sendall(json.dumps({"token": TA}).encode() + b'\n{"type":"set_sta')
    s2.close()
    s2 = conn()
    s2.sendall(json.dumps({"token": TA})[:30].encode())
    s2.close()
check(call(s, r, {"type": "heartbeat"}) == {"type": "ok"}, "clients vanishing mid-line")

# 200 concurrent clients (100 per agent), all served.
results = []
lock = threading.Lock()


def client(i):
    try:
        c, cr, hello = auth(TOKENS[i % 4])
        ok = hello == {"type": "ok"}
        for k in range(5):
            ok = ok and call(c, cr, {"type": "heartbeat", "id": k}) == {"type": "ok", "id": k}
        barrier.wait(timeout=T * 2)  # all 200 are connected at once here
        ok = ok and call(c, cr, {"type": "heartbeat"}) == {"type": "ok"}
        c.close()
    except Exception as e:  # noqa: BLE001 - any failure counts
        ok = False
        print(f"client {i}: {e!r}", flush=True)
    with lock:
        results.append(ok)


# 200 clients held open together, 50 per agent (the cap is 64 per agent).
s.close()
barrier = threading.Barrier(200)
threads = [threading.Thread(target=client, args=(i,)) for i in range(200)]
for t in threads:
    t.start()
for t in threads:
    t.join(T * 3)
check(len(results) == 200 and all(results), "200 concurrent clients served")

# The per-agent cap: the 65th connection of one token is refused.
held = []
for i in range(64):
    c, cr, hello = auth(TB)
    assert hello == {"type": "ok"}, hello
    held.append(c)
c, cr, hello = auth(TB)
check(hello == {"type": "error", "message": "too many connections for this agent"},
      "the 65th connection of one agent is refused")
c.close()
c, cr, hello = auth(TA)
check(hello == {"type": "ok"}, "another agent is not affected by that cap")
c.close()
for c in held:
    c.close()
time.sleep(0.3)

# A's token acts for A only.
s, r, _ = auth(TA)
check(call(s, r, {"type": "set_status", "status": "done"}) == {"type": "ok"}, "A sets its status")
for req in ({"type": "merge", "handle": "agent-b"}, {"type": "close", "handle": "agent-b"}):
    reply = call(s, r, req)
    check(reply["type"] == "error" and "only" in reply["message"],
          f"A's token cannot {req['type']} B: {reply['message']}")
check("asked to merge 'agent-b': refused" in log_text(), "the attempt is logged")
s.close()
print("rpc protocol: all checks passed", flush=True)
