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


def main():
    base = sys.argv[1]
    args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
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
