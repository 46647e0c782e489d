#!/usr/bin/env python3
"""A model API on loopback for Codex (wire_api = "responses"), offline.

fake_responses.py PORT LOG: each POST .../responses is answered, streamed
as server-sent events, with one assistant message that names the request's
last user text ("answer to: ..."), then completed; its requests are
appended to LOG (one JSON line each: the path and that text). Anything
else is 404. At most 200 requests, then it ends: no test loops for ever.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, LOG = int(sys.argv[1]), sys.argv[2]
served = 0


def last_user_text(body):
    text = ""
    for item in body.get("input") or []:
        if item.get("type") == "message" and item.get("role") == "user":
            for c in item.get("content") or []:
                if c.get("type") == "input_text":
                    text = c.get("text", "")
    return text


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        global served
        served += 1
        n = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            body = {}
        if not self.path.rstrip("/").endswith("/responses"):
            self.do_GET()
            return
        said = last_user_text(body).strip().splitlines()
        said = said[-1] if said else ""
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "said": said}) + "\n")
        rid = "resp_%d" % served
        events = [
            {"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.done",
             "item": {"type": "message", "role": "assistant", "id": "msg_%d" % served,
                      "content": [{"type": "output_text", "text": "answer to: " + said}]}},
            {"type": "response.completed",
             "response": {"id": rid, "usage": {
                 "input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
                 "output_tokens_details": None, "total_tokens": 2}}},
        ]
        out = "".join("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e)) for e in events)
        data = out.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        if served >= 200:
            raise SystemExit(0)


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
