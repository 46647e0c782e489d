#!/usr/bin/env python3
"""A scripted stand-in for an agent CLI's hooks, for the status e2e tests:
fake_agent.py claude | codex | gemini.

It reads the hooks `workrex setup` wrote ($CLAUDE_CONFIG_DIR/settings.json or
~/.claude/settings.json; $CODEX_HOME/hooks.json or ~/.codex/hooks.json;
~/.gemini/settings.json) and runs them the way the
CLI does: each matching hook's "command" through `sh -c`, exactly as
written, with the event's JSON on stdin, in the agent's environment. The
test drives it by typing lines: "go" submits a prompt and runs a tool,
"ask" asks for permission, "idle" is a notification that is not one,
"finish" ends the turn, "quit" exits; for Claude Code also "perm" (a
PermissionRequest), "elicit" (an MCP Elicitation), "sub" (a subagent's
SubagentStop), "fail" (StopFailure, an API error), "limit" (StopFailure,
a rate limit) and "end" (SessionEnd);
for Codex "interrupt" (the user interrupted the turn). Gemini reads a hook's stdout as
JSON: anything else on it is reported as "bad stdout".
"""
import json, os, re, socket, subprocess, sys

kind = sys.argv[1] if len(sys.argv) > 1 else "claude"
if kind == "claude":
    conf = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.environ["HOME"], ".claude")
    events = {"go": [("UserPromptSubmit", None, {"prompt": "go"}),
                     ("PostToolUse", "Bash", {"tool_name": "Bash"})],
              "ask": [("Notification", "permission_prompt",
                       {"notification_type": "permission_prompt",
                        "message": "Claude needs your permission to use Bash"})],
              "idle": [("Notification", "idle_prompt", {"notification_type": "idle_prompt"})],
              "perm": [("PermissionRequest", "Bash", {"tool_name": "Bash"})],
              "elicit": [("Elicitation", "docs", {"mcp_server_name": "docs", "message": "Which?"})],
              "sub": [("SubagentStop", None, {"agent_id": "a1", "agent_type": "Explore"})],
              "fail": [("StopFailure", "server_error",
                        {"error": "server_error", "error_details": "API Error: 500 overloaded"})],
              "limit": [("StopFailure", "rate_limit",
                         {"error": "rate_limit", "error_details": "usage limit reached; resets 5pm"})],
              "end": [("SessionEnd", "clear", {"reason": "clear"})],
              "finish": [("Stop", None, {"stop_hook_active": False})]}
    timeout_unit = 1
    hooks_file = os.path.join(conf, "settings.json")
elif kind == "codex":
    conf = os.environ.get("CODEX_HOME") or os.path.join(os.environ["HOME"], ".codex")
    events = {"go": [("UserPromptSubmit", None, {"prompt": "go"}),
                     ("PostToolUse", "shell", {"tool_name": "shell"})],
              "ask": [("PermissionRequest", "shell", {"tool_name": "shell"})],
              "interrupt": [("Interrupt", None, {})],
              "finish": [("Stop", None, {"last_assistant_message": "done"})]}
    timeout_unit = 1
    hooks_file = os.path.join(conf, "hooks.json")
else:
    conf = os.path.join(os.environ["HOME"], ".gemini")
    events = {"go": [("BeforeAgent", None, {"prompt": "go"}),
                     ("AfterTool", "run_shell_command", {"tool_name": "run_shell_command"})],
              "ask": [("Notification", "ToolPermission", {"notification_type": "ToolPermission",
                                                          "message": "Allow run_shell_command?"})],
              "finish": [("AfterAgent", None, {"prompt_response": "done"})]}
    timeout_unit = 1000
    hooks_file = os.path.join(conf, "settings.json")
with open(hooks_file) as f:
    hooks = json.load(f).get("hooks", {})


def fire(event, match_on, payload):
    # Its own session, as a real CLI's: an id no other agent has.
    payload = dict(payload, hook_event_name=event, session_id="fake-%d" % os.getpid(), cwd=os.getcwd())
    for group in hooks.get(event, []):
        m = group.get("matcher", "")
        if m and m != "*" and match_on is not None and not re.fullmatch(m, match_on):
            continue
        for h in group.get("hooks", []):
            if h.get("type") != "command":
                continue
            data = json.dumps(payload).encode()
            if kind == "claude":
                # Claude Code gives its hooks the event on a socket, not a pipe.
                mine, theirs = socket.socketpair()
                mine.sendall(data)
                mine.shutdown(socket.SHUT_WR)
                p = subprocess.run(["sh", "-c", h["command"]], stdin=theirs, capture_output=True,
                                   timeout=h.get("timeout", 60) / timeout_unit)
                mine.close()
                theirs.close()
            else:
                p = subprocess.run(["sh", "-c", h["command"]], input=data, capture_output=True,
                                   timeout=h.get("timeout", 60) / timeout_unit)
            print(f"hook {event} rc={p.returncode}", flush=True)
            out = p.stdout.decode(errors="replace").strip()
            if kind == "gemini" and out:
                try:
                    json.loads(out)
                except ValueError:
                    print(f"bad stdout: {out}", flush=True)
            if p.stderr:
                print(p.stderr.decode(errors="replace").strip(), flush=True)


print(f"fake {kind} ready", flush=True)
for line in sys.stdin:
    word = line.strip()
    if word == "quit":
        break
    for event, match_on, payload in events.get(word, []):
        fire(event, match_on, payload)
    if word == "go":
        print("thinking...", flush=True)
