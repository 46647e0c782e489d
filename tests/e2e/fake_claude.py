#!/usr/bin/env python3
"""A stand-in for Claude Code's background agents, for the adopt e2e test:
installed as `claude` on PATH, it keeps the registry Claude Code keeps,
in the same files and fields (as 2.1.197 writes them):

  ~/.claude/sessions/PID.json   one per running session: pid, sessionId,
                                cwd, kind (interactive | bg), jobId,
                                status (busy | idle | waiting), waitingFor,
                                startedAt, statusUpdatedAt
  ~/.claude/jobs/ID/state.json  one per background job: state (working |
                                blocked | done | failed), sessionId, cwd,
                                name, intent, createdAt, updatedAt

  claude --bg PROMPT...          starts a job and returns at once ("job ID")
  claude agents --json [--all]   lists sessions and jobs as Claude does
  claude attach ID               the job in this terminal: each line typed
                                 is the job's next step: "ask" (it waits
                                 for a permission), "go" (it works),
                                 "finish" (its turn ends: done, the job
                                 over), "fail" (it dies: failed)

No hooks: a job says its status only through these files.
"""
import json, os, secrets, select, socket, sys, time, uuid

home = os.environ["HOME"]
conf = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
sessions = os.path.join(conf, "sessions")
jobs = os.path.join(conf, "jobs")


def now():
    return int(time.time() * 1000)


def write(path, obj):
    """As Claude writes them: whole, through a temporary file renamed in."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.rename(tmp, path)


def read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def worker(job):
    """The job's process: its session file says what it does; attach drives it."""
    state_path = os.path.join(jobs, job, "state.json")
    state = read(state_path)
    me = os.path.join(sessions, f"{os.getpid()}.json")
    entry = dict(pid=os.getpid(), sessionId=state["sessionId"], cwd=state["cwd"], kind="bg",
                 jobId=job, name=state["name"], startedAt=now(), status="busy",
                 updatedAt=now(), statusUpdatedAt=now())
    write(me, entry)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = os.path.join(jobs, job, "sock")
    sock.bind(path)
    sock.listen(4)
    # One terminal at a time, as claude attach: a new one takes the job over.
    conn, buf, ended = None, b"", None
    while ended is None:
        ready, _, _ = select.select([sock] + ([conn] if conn else []), [], [])
        if sock in ready:
            if conn:
                conn.close()
            conn, _ = sock.accept()
            buf = b""
            conn.sendall(f"attached to job {job}: {state['intent']}\n".encode())
            continue
        data = conn.recv(4096)
        if not data:
            conn.close()
            conn = None
            continue
        buf += data
        while b"\n" in buf and ended is None:
            line, buf = buf.split(b"\n", 1)
            word = line.decode(errors="replace").strip()
            status, why, st = {"ask": ("waiting", "permission prompt", "blocked"),
                               "go": ("busy", None, "working"),
                               "finish": ("idle", None, "done"),
                               "fail": ("idle", None, "failed")}.get(word, (None, None, None))
            if status is None:
                conn.sendall(f"job {job}: {word}?\n".encode())
                continue
            entry.update(status=status, statusUpdatedAt=now(), updatedAt=now())
            entry.pop("waitingFor", None)
            if why:
                entry["waitingFor"] = why
            write(me, entry)
            state.update(state=st, updatedAt=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            write(state_path, state)
            conn.sendall(f"job {job}: {st}\n".encode())
            if st in ("done", "failed"):
                ended = st
    if conn:
        conn.close()
    os.unlink(me)
    os.unlink(path)


def start(prompt):
    job = secrets.token_hex(4)
    state = dict(state="working", tempo="active", sessionId=str(uuid.uuid4()), cwd=os.getcwd(),
                 name=prompt.split()[0] if prompt.split() else "job", intent=prompt,
                 createdAt=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), backend="daemon")
    write(os.path.join(jobs, job, "state.json"), state)
    if os.fork() == 0:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        worker(job)
        os._exit(0)
    deadline = time.time() + 10
    while not os.path.exists(os.path.join(jobs, job, "sock")) and time.time() < deadline:
        time.sleep(0.05)
    print(f"job {job} started in the background (claude attach {job})")


def agents(show_all):
    out, live = [], {}
    for name in sorted(os.listdir(sessions)) if os.path.isdir(sessions) else []:
        e = read(os.path.join(sessions, name)) if name.endswith(".json") else None
        if e and alive(e["pid"]):
            live[e.get("jobId") or e["sessionId"]] = e
    for job in sorted(os.listdir(jobs)) if os.path.isdir(jobs) else []:
        st = read(os.path.join(jobs, job, "state.json"))
        if st is None:
            continue
        e = live.pop(job, None)
        state = "working" if e and e["status"] == "busy" else (
            "blocked" if e and e["status"] == "waiting" else st["state"])
        if not show_all and not e and state not in ("working", "blocked"):
            continue
        row = dict(id=job, cwd=st["cwd"], kind="background", sessionId=st["sessionId"],
                   name=st["name"], state=state, startedAt=0)
        if e:
            row.update(pid=e["pid"], startedAt=e["startedAt"],
                       status={"busy": "busy", "waiting": "waiting"}.get(e["status"], "idle"))
        out.append(row)
    for e in live.values():
        out.append(dict(pid=e["pid"], cwd=e["cwd"], kind="interactive", startedAt=e["startedAt"],
                        sessionId=e["sessionId"], status=e["status"]))
    print(json.dumps(out, indent=2))


def attach(job):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.path.join(jobs, job, "sock"))
    except OSError:
        st = read(os.path.join(jobs, job, "state.json"))
        print(f"job {job} is not running ({st['state'] if st else 'no such job'})")
        sys.exit(1)
    f = sock.makefile("rw")
    print(f.readline(), end="", flush=True)
    for line in sys.stdin:
        f.write(line)
        f.flush()
        answer = f.readline()
        print(answer, end="", flush=True)
        if not answer or answer.rstrip().endswith(("done", "failed")):
            break
    sys.exit(0)


args = sys.argv[1:]
if args[:1] in (["--bg"], ["--background"]):
    start(" ".join(args[1:]))
elif args[:1] == ["agents"] and "--json" in args:
    agents("--all" in args)
elif args[:1] == ["attach"] and len(args) == 2:
    attach(args[1])
else:
    print(f"fake claude: not a command it knows: {args}", file=sys.stderr)
    sys.exit(2)
