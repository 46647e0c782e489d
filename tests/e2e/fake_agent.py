#!/usr/bin/env python3
"""A scripted stand-in for an agent CLI's hooks, for the status e2e tests:
fake_agent.py claude | codex | gemini | qwen | grok | copilot | cursor | kiro.

It reads the hooks `workrex setup` wrote where that CLI reads them, in
that CLI's shape, and runs them the way the CLI does: each matching hook's
command through `sh -c`, exactly as written, with the event's JSON on stdin
(Claude Code: on a socket), in the agent's environment, with the event's
fields named as that CLI names them. Claude Code's shape (groups with a
matcher, each a list of hooks) is Claude's, Codex's, Gemini's, Qwen's and
Grok's; Copilot CLI, Cursor and Kiro CLI list handlers under each event
(Copilot's command is "bash"; Kiro's file is the agent it was started with,
`--agent NAME`, and without one it runs no hook at all).

The test drives it by typing lines: "go" submits a prompt and runs a tool,
"ask" asks for permission, "idle" is a notification that is not one,
"finish" ends the turn, "fail" ends it with an error, "limit" with a rate
limit, "end" ends the session, "quit" exits; "late" (Copilot) runs a
tool's hook stamped 5 s ago; for Claude Code also "perm" (a
PermissionRequest), "elicit" (an MCP Elicitation), "sub" (a subagent's
SubagentStop); for Codex "interrupt"; for Cursor "abort" (the user stopped
the turn). Gemini reads a hook's stdout as JSON: anything else on it is
reported as "bad stdout".
"""
import glob, json, os, re, socket, subprocess, sys, time

kind = sys.argv[1] if len(sys.argv) > 1 else "claude"
home = os.environ["HOME"]


def conf(env, rel):
    return (env and os.environ.get(env)) or os.path.join(home, rel)


# Claude Code's events; Qwen Code and Grok took them (Grok names fields in camelCase).
CLAUDE = {"go": [("UserPromptSubmit", None, {"prompt": "go"}),
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

# Each kind: its files (globbed), its shape, its timeout unit, its events, how it names fields.
KINDS = {
    "claude": dict(files=[os.path.join(conf("CLAUDE_CONFIG_DIR", ".claude"), "settings.json")],
                   events=CLAUDE),
    "qwen": dict(files=[os.path.join(home, ".qwen", "settings.json")], unit=1000,
                 events={k: CLAUDE[k] for k in ("go", "ask", "idle", "end", "finish")}),
    "grok": dict(files=sorted(glob.glob(os.path.join(home, ".grok", "hooks", "*.json"))),
                 camel=True,
                 events={k: CLAUDE[k] for k in ("go", "ask", "fail", "limit", "end", "finish")}),
    "codex": dict(files=[os.path.join(conf("CODEX_HOME", ".codex"), "hooks.json")],
                  events={"go": [("UserPromptSubmit", None, {"prompt": "go"}),
                                 ("PostToolUse", "shell", {"tool_name": "shell"})],
                          "ask": [("PermissionRequest", "shell", {"tool_name": "shell"})],
                          "interrupt": [("Interrupt", None, {})],
                          "end": [("SessionEnd", None, {"reason": "exit"})],
                          "finish": [("Stop", None, {"last_assistant_message": "done"})]}),
    "gemini": dict(files=[os.path.join(home, ".gemini", "settings.json")], unit=1000,
                   events={"go": [("BeforeAgent", None, {"prompt": "go"}),
                                  ("AfterTool", "run_shell_command",
                                   {"tool_name": "run_shell_command"})],
                           "ask": [("Notification", "ToolPermission",
                                    {"notification_type": "ToolPermission",
                                     "message": "Allow run_shell_command?"})],
                           "finish": [("AfterAgent", None, {"prompt_response": "done"})]}),
    "copilot": dict(files=sorted(glob.glob(os.path.join(conf("COPILOT_HOME", ".copilot"),
                                                        "hooks", "*.json"))),
                    listed="bash", timeout="timeoutSec", camel=True, stamp=True,
                    events={"go": [("userPromptSubmitted", None, {"prompt": "go"}),
                                   ("postToolUse", None, {"toolName": "bash"})],
                            "ask": [("notification", "permission_prompt",
                                     {"notification_type": "permission_prompt",
                                      "message": "Allow bash?"})],
                            "idle": [("notification", "agent_idle",
                                      {"notification_type": "agent_idle"})],
                            "finish": [("agentStop", None, {})],
                            "fail": [("errorOccurred", None,
                                      {"error": {"message": "model request failed: 500",
                                                 "name": "APIError"}})],
                            "limit": [("errorOccurred", None,
                                       {"error": {"message": "rate limit exceeded; resets in 2h",
                                                  "name": "RateLimitError"}})],
                            "end": [("sessionEnd", None, {"reason": "user_ended"})],
                            # A tool's hook stamped 5 s ago, run only now: late.
                            "late": [("postToolUse", None, {"toolName": "bash",
                                                            "timestamp": -5000})]}),
    "cursor": dict(files=[os.path.join(home, ".cursor", "hooks.json")], listed="command",
                   timeout="timeout", cursor=True,
                   events={"go": [("beforeSubmitPrompt", None, {"prompt": "go"}),
                                  ("postToolUse", None, {"tool_name": "Shell"})],
                           "finish": [("stop", None, {"status": "completed", "loop_count": 0})],
                           "fail": [("stop", None, {"status": "error", "loop_count": 0})],
                           "abort": [("stop", None, {"status": "aborted", "loop_count": 0})],
                           "end": [("sessionEnd", None, {"reason": "completed"})]}),
    "kiro": dict(files=[], listed="command", timeout="timeout_ms", unit=1000,
                 events={"go": [("userPromptSubmit", None, {"prompt": "go"}),
                                ("postToolUse", "fs_write", {"tool_name": "fs_write"})],
                         "finish": [("stop", None, {})]}),
}
spec = KINDS[kind]
if kind == "kiro" and "--agent" in sys.argv:
    spec["files"] = [os.path.join(home, ".kiro", "agents",
                                  sys.argv[sys.argv.index("--agent") + 1] + ".json")]
unit = spec.get("unit", 1)
hooks = {}
for path in spec["files"]:
    with open(path) as f:
        for event, entries in json.load(f).get("hooks", {}).items():
            hooks.setdefault(event, []).extend(entries)


def handlers(event, match_on):
    """The commands that event runs, with their timeouts in seconds."""
    for entry in hooks.get(event, []):
        m = entry.get("matcher", "")
        if m and m != "*" and match_on is not None and not re.fullmatch(m, match_on):
            continue
        if spec.get("listed"):
            if spec["listed"] in entry:
                yield entry[spec["listed"]], entry.get(spec["timeout"], 60 * unit) / unit
            continue
        for h in entry.get("hooks", []):
            if h.get("type") == "command":
                yield h["command"], h.get("timeout", 60 * unit) / unit


def fire(event, match_on, payload):
    # Its own session, as a real CLI's: an id no other agent has.
    sid = "fake-%d" % os.getpid()
    if spec.get("cursor"):
        base = dict(hook_event_name=event, conversation_id=sid, generation_id="g1",
                    workspace_roots=[os.getcwd()])
    elif spec.get("camel"):
        base = dict(hookEventName=event, sessionId=sid, cwd=os.getcwd())
    else:
        base = dict(hook_event_name=event, session_id=sid, cwd=os.getcwd())
    if spec.get("stamp"):
        base["timestamp"] = int(time.time() * 1000)
    ev = dict(base, **payload)
    if ev.get("timestamp", 0) < 0:  # that long ago
        ev["timestamp"] = int(time.time() * 1000) + ev["timestamp"]
    data = json.dumps(ev).encode()
    for command, timeout in handlers(event, match_on):
        if kind == "claude":
            # Claude Code gives its hooks the event on a socket, not a pipe.
            mine, theirs = socket.socketpair()
            mine.sendall(data)
            mine.shutdown(socket.SHUT_WR)
            p = subprocess.run(["sh", "-c", command], stdin=theirs, capture_output=True,
                               timeout=timeout)
            mine.close()
            theirs.close()
        else:
            p = subprocess.run(["sh", "-c", command], input=data, capture_output=True,
                               timeout=timeout)
        print(f"hook {event} rc={p.returncode}", flush=True)
        out = p.stdout.decode(errors="replace").strip()
        if kind == "gemini" and out:
            try:
                json.loads(out)
            except ValueError:
                print(f"bad stdout: {out}", flush=True)
        if p.stderr:
            print(p.stderr.decode(errors="replace").strip(), flush=True)


print(f"fake {kind} ready ({len(hooks)} events hooked)", flush=True)
for line in sys.stdin:
    word = line.strip()
    if word == "quit":
        break
    for event, match_on, payload in spec["events"].get(word, []):
        fire(event, match_on, payload)
    if word == "go":
        print("thinking...", flush=True)
