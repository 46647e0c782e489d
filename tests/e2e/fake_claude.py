#!/usr/bin/env python3
"""A scripted stand-in for Claude Code, for the status-hook e2e test.

It reads the hooks from $CLAUDE_CONFIG_DIR/settings.json (or
~/.claude/settings.json) and runs them the way Claude Code does: each
matching hook's "command" through `sh -c`, exactly as written, with the
event's JSON on stdin, in the agent's environment. The test drives it by
typing lines: "go" submits a prompt (UserPromptSubmit, then PostToolUse),
"ask" asks for permission (Notification, notification_type
permission_prompt), "finish" ends the turn (Stop), "quit" exits.
"""
import json, os, re, subprocess, sys

conf = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.environ["HOME"], ".claude")
with open(os.path.join(conf, "settings.json")) as f:
    hooks = json.load(f).get("hooks", {})


def fire(event, match_on=None, **payload):
    payload.update(hook_event_name=event, session_id="fake", cwd=os.getcwd())
    for group in hooks.get(event, []):
        m = group.get("matcher", "")
        if m and m != "*" and match_on is not None and not re.fullmatch(m, match_on):
            continue
        for h in group.get("hooks", []):
            if h.get("type") != "command":
                continue
            p = subprocess.run(["sh", "-c", h["command"]], input=json.dumps(payload).encode(),
                               capture_output=True, timeout=h.get("timeout", 60))
            print(f"hook {event} rc={p.returncode}", flush=True)
            if p.stderr:
                print(p.stderr.decode(errors="replace").strip(), flush=True)


print("fake claude ready", flush=True)
for line in sys.stdin:
    word = line.strip()
    if word == "go":
        fire("UserPromptSubmit", prompt="go")
        fire("PostToolUse", match_on="Bash", tool_name="Bash")
        print("thinking...", flush=True)
    elif word == "ask":
        fire("Notification", match_on="permission_prompt", notification_type="permission_prompt",
             message="Claude needs your permission to use Bash")
    elif word == "idle":
        fire("Notification", match_on="idle_prompt", notification_type="idle_prompt")
    elif word == "finish":
        fire("Stop", stop_hook_active=False)
    elif word == "quit":
        break
