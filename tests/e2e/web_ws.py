#!/usr/bin/env python3
"""A WebSocket client for the web view's door tests, on a raw socket (the
upgrade is the part under test): web_ws.py BASE [--cookie C] [--origin O]
[--host H] --expect agents|refused; or web_ws.py BASE --flood N: N bad
requests of every kind, each on its own connection, bounded in time."""
import base64
import os
import socket
import sys
import time


def request(host, port, text, timeout=5):
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        s.sendall(text)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data and (b"101 " in data.split(b"\r\n")[0] and len(data) > 200
                                        or b"content-length: 0" in data.lower()):
                break
            if b"101 " not in data[:20] and b"\r\n\r\n" in data:
                break
        return data
    finally:
        s.close()


def upgrade(base, cookie=None, origin=None, host=None):
    hp = base.split("//", 1)[1]
    h, p = hp.rsplit(":", 1)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = ["GET /ws HTTP/1.1", "Host: " + (host or hp), "Upgrade: websocket",
             "Connection: Upgrade", "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13",
             "Origin: " + (origin or base)]
    if cookie:
        lines.append("Cookie: " + cookie)
    return request(h, int(p), ("\r\n".join(lines) + "\r\n\r\n").encode())


def frame(text):
    """A client's text frame, masked as a client's must be."""
    data = text.encode()
    mask = os.urandom(4)
    n = len(data)
    head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big"))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def messages(buf):
    """The server's text frames in buf (unmasked), as strings."""
    out, i = [], 0
    while i + 2 <= len(buf):
        n = buf[i + 1] & 0x7f
        j = i + 2
        if n == 126:
            n, j = int.from_bytes(buf[j:j + 2], "big"), j + 2
        elif n == 127:
            n, j = int.from_bytes(buf[j:j + 8], "big"), j + 8
        if j + n > len(buf):
            break
        out.append(buf[j:j + n].decode(errors="replace"))
        i = j + n
    return out


def say(base, cookie, text, want):
    """Upgrade, send text, and wait (bounded) for a message holding want."""
    hp = base.split("//", 1)[1]
    h, p = hp.rsplit(":", 1)
    key = base64.b64encode(os.urandom(16)).decode()
    head = ("GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nOrigin: %s\r\nCookie: %s\r\n\r\n"
            % (hp, key, base, cookie))
    s = socket.create_connection((h, int(p)), timeout=10)
    s.sendall(head.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(65536)
    if b" 101 " not in buf.split(b"\r\n", 1)[0]:
        raise SystemExit("upgrade refused")
    buf = buf.split(b"\r\n\r\n", 1)[1]
    s.sendall(frame(text))
    deadline = time.time() + 10
    while time.time() < deadline:
        for m in messages(buf):
            if want in m:
                print("  ok: %s -> %s" % (text, m[:160]))
                return
        try:
            buf += s.recv(65536)
        except socket.timeout:
            break
    raise SystemExit("no reply with %r to %s; got %r" % (want, text, messages(buf)))


def main():
    base = sys.argv[1]
    args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
    if "--say" in args:
        return say(base, args["--cookie"], args["--say"], args["--want"])
    if "--flood" in args:
        n = int(args["--flood"])
        hp = base.split("//", 1)[1]
        h, p = hp.rsplit(":", 1)
        bad = [b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n",
               b"GET /pair HTTP/1.1\r\nHost: " + hp.encode() + b"\r\nAuthorization: Bearer " +
               b"0" * 64 + b"\r\n\r\n",
               b"\x16\x03\x01garbage\r\n\r\n",
               b"GET /" + b"A" * 9000 + b" HTTP/1.1\r\n\r\n",
               b"POST / HTTP/1.1\r\nHost: " + hp.encode() + b"\r\nContent-Length: 5\r\n\r\nhello"]
        deadline = time.time() + 120
        for i in range(n):
            if time.time() > deadline:
                raise SystemExit("flood: only %d requests in 120 s" % i)
            try:
                request(h, int(p), bad[i % len(bad)], timeout=2)
            except OSError:
                pass
        print("  ok: %d bad requests sent" % n)
        return
    got = upgrade(base, args.get("--cookie"), args.get("--origin"), args.get("--host"))
    first = got.split(b"\r\n", 1)[0]
    agents = b"101 " in first and b'"t":"agents"' in got or b'"t":"hello"' in got
    if args["--expect"] == "agents" and not (b"101 " in first):
        raise SystemExit("upgrade refused: %r" % first)
    if args["--expect"] == "refused" and b"101 " in first:
        raise SystemExit("upgrade accepted, should be refused: %r" % got[:200])
    print("  ok: %s -> %s" % (" ".join(sys.argv[2:]), first.decode(errors="replace")))
    _ = agents


if __name__ == "__main__":
    main()
