#!/usr/bin/env python3
"""make bench: workrex against tmux, measured in the same run.

Both programs run attached to a pseudo-terminal of the same size that this
script drains as fast as it can, so each pays for its own parsing and
drawing and nothing else. Figures are printed with the ratio workrex/tmux.

  (a) throughput: 50 MB of mixed text and SGR through one pane, until its
      last line shows on the outer terminal;
  (b) idle: CPU time and wake-ups over 10 s with 8 idle panes;
  (c) memory: RSS with 16 panes each holding 10000 lines of scrollback;
  (d) latency: keystroke to echo in one pane while another floods output.
  (e) `workrex add` against `git worktree add` on 20000 files;
  (f) `workrex list --json` with 100 agents made by `workrex add`;
  (g) the RPC bridge: set-status round trips over the unix socket from a
      persistent client and from fresh processes, and a hook's set-status
      until the icon is on the outer terminal;
  (h) sandbox start: `workrex add -S` until the agent's first output is on the
      outer terminal, against a bare `podman run --rm -it` of the same image
      and command (real podman, runc, the sandbox tests' own image).
  (i) import: `workrex list` bringing 100 commits made inside a sandbox into
      the host repository (verified, git/private.c), against a plain
      `git fetch` with transfer.fsckObjects of 100 such commits from a
      local repository, and `workrex list` with nothing to import.
  (j) reflow: a pane with a 100,000-line history narrowed from 120 to 80
      columns (every line wraps) and widened back, every line checked
      (bench/reflow.c, in process), against tmux's resize-window of a pane
      holding the same history (less a tmux command's own round trip).
  (k) attach: a dashboard started on a project whose 20 panes' keepers
      each hold 10,000 lines of history, until its first frame is on the
      outer terminal (every pane taken over, history and all), against the
      same start with no keepers; and tmux attach to a server with 20
      such windows.
  (l) host commands: a host pane's `exec` of `true` over its RPC socket
      (bubblewrap, streamed reply), against the same bwrap started
      directly; and 64 MB of a command's output through the bridge.
  (m) image paste: a 5 MB PNG from a real X clipboard (Xvfb, xclip) to its
      path on the outer terminal, against xclip reading it alone.
  (o) the network proxy (policy: deny), as root: an upstream in a network
      namespace of the bench's own behind a veth; one tunnel's download
      throughput through workrex's proxy and through tinyproxy (Debian),
      against a direct connection; the time to a CONNECT's 200 (median of
      200) against a direct TCP connect; 1,000 idle tunnels held, and the
      proxy's memory with them.
  (p) agents on a server (add --remote), over a real sshd of the bench's own
      on loopback, the server being this machine as a second user
      environment: keystroke to echo in the remote agent's pane (its keeper
      there, through the ssh master) against the dashboard's local pane in
      the same run; `workrex add --remote` against a local `workrex add` in
      the same repository and a bare `ssh srv true` (one handshake).
  (n) image paste from the terminal's clipboard (OSC 5522, as over SSH): a
      5 MB PNG from the stand-in terminal (tests/e2e/kitty_terminal.py) to
      its path on the outer terminal, against a program that only reads the
      same answer through the same terminal and decodes it.
  (q) scale: 100 agents made by `workrex add` with no dashboard (two panes
      each, so 200 keepers; a third dirty, a third ahead): add's time for
      the first 10 and the last 10, list --json, a hook's set-status with
      no dashboard (its connects, by strace), the keepers' PSS, the
      dashboard's first frame and re-attach (after a detach and a kill -9),
      its idle wake-ups, and the loop's longest stall while 20 panes open
      (the dashboard's own meter, WORKREX_STALL_MS). Goals from issue 29.
  (r) the review view (C-b D) on an agent's 50,000-line diff: the time to
      its first screen and to its last line read, against `git diff | cat`
      of the same diff, and the loop's longest turn while it streams.

  (s) a group (issue 31): `add -n 10` against ten `add` calls one after
      another, same repository, no dashboard (each agent's keeper started
      by add, as without one); `compare --json` over 20 candidates (each
      with a commit and a kept check), median of 10, and the dashboard's
      C-b = to its 20 rows (goals < 100 ms); `add -n 20` while a dashboard
      runs, and its loop's longest turn meanwhile.
  (t) a flood hidden and shown (issue 33): the dashboard's CPU time and
      its keeper's while one pane prints the 50 MB of (a), first laid out
      nowhere (another pane zoomed: its keeper holds its rows back), then
      shown alone.
  (v) the web view (issue 48), in headless Chromium over WebDriver: the
      time from opening the page to the agent list, and from a tap to the
      first paint of a pane, against the page's own load (its files over
      loopback, the same browser); the server's CPU time and the frames a
      page got while 20 agents flood and the page shows one, against the
      keepers' CPU time for the flood; its wake-ups in 10 s with a page
      open and every agent idle (goal: zero).
  (u) gVisor (issue 45): podman run's start and a build's file work inside
      (300 files, git add and commit) under runsc against runc; then (h)
      under sandbox.runtime: gvisor, against a bare runsc podman run.
  (w) dev containers (issue 49): (h) under sandbox.backend: devcontainer,
      a devcontainer.json naming the same image (the dev container CLI read
      in each `workrex add`), against the same bare podman run.
  (x) ports (issue 51): requests to a sandboxed agent's server through the
      forward of its port (its keeper's), against the same server on the host's
      loopback: 200 small ones alternating, and a 20 MB answer.

Every workrex pane runs in a keeper (issue 14): (a), (d) go through one;
(b) counts the keepers' wake-ups too; (c) adds up their memory.

Sections can be named (`bench.py c d`). To look into a failure:
WRX_BENCH_KEEP=1 keeps the scratch directory (the dashboards' logs),
WRX_BENCH_GDB=1 prints the stuck program's stack when a wait times out.
"""
import os, pty, random, select, shutil, signal, statistics, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from keepers import end_keepers, keepers, rss_kb  # noqa: E402

WORKREX = os.environ.get("WORKREX") or sys.exit("set WORKREX to the binary")
ROWS, COLS = 40, 120
TMP = tempfile.mkdtemp(prefix="wrx-bench.")
SOCK = "wrx-bench-%d" % os.getpid()


class Term:
    """A program on a pty whose output is read (and kept) by a thread."""

    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            import fcntl, struct, termios
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
            os.execvpe(argv[0], argv, env)
        import fcntl, struct, termios
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        self.out = bytearray()
        self.cv = threading.Condition()
        self.alive = True
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            try:
                b = os.read(self.fd, 1 << 16)
                why = "end of file"
            except OSError as e:
                b, why = b"", str(e)
            with self.cv:
                if not b:
                    self.alive = False
                    self.end_reason = why
                    self.cv.notify_all()
                    return
                self.out += b
                self.cv.notify_all()

    def mark(self):
        with self.cv:
            return len(self.out)

    def wait_for(self, needle, start=0, timeout=60.0):
        begin = time.monotonic()
        end = begin + timeout
        with self.cv:
            while True:
                if self.out.find(needle, start) >= 0:
                    return time.monotonic()
                left = end - time.monotonic()
                if left <= 0 or not self.alive:
                    # Where the program is stuck, for the one who reads this.
                    try:
                        state = open("/proc/%d/stat" % self.pid).read().split()[2] + " in " + \
                            open("/proc/%d/wchan" % self.pid).read()
                    except OSError:
                        state = "gone"
                    if os.environ.get("WRX_BENCH_GDB"):
                        subprocess.run(["gdb", "-batch", "-p", str(self.pid), "-ex",
                                        "thread apply all bt 20"], stdout=sys.stderr,
                                       stderr=sys.stderr)
                    raise TimeoutError("no %r after %.1fs (%s; program %s); last output: %r"
                                       % (needle, time.monotonic() - begin,
                                          "still reading" if self.alive else
                                          "its terminal closed: %s" % self.end_reason,
                                          state, bytes(self.out[-300:])))
                self.cv.wait(min(left, 0.5))

    def trim(self):
        with self.cv:
            self.out = bytearray()

    def send(self, b):
        os.write(self.fd, b)

    def close(self, keep=False):
        # A signalled dashboard detaches: its keepers go on until ended here.
        if self.pid > 0:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
        # The reader must be done before the fd is closed: a later pty gets the
        # same number, and a reader still running would steal its output (what
        # looked like a dashboard that stopped drawing, in earlier runs).
        self.reader.join(10)
        if not self.reader.is_alive():
            os.close(self.fd)
        if not keep:
            end_keepers(TMP)


def env_for(shell):
    e = dict(os.environ)
    # Direct colour on (issue 13): workrex draws RGB as RGB, through its own entry.
    e.update(TERM="tmux-256color", COLORTERM=os.environ.get("BENCH_COLORTERM", "truecolor"), SHELL=shell, LANG="C.UTF-8", LC_ALL="C.UTF-8",
             HOME=TMP, XDG_CONFIG_HOME=TMP + "/cfg", XDG_STATE_HOME=TMP + "/state",
             XDG_RUNTIME_DIR=TMP, PS1="$ ")
    e.pop("TMUX", None)
    return e


def script(name, body):
    p = os.path.join(TMP, name)
    with open(p, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(p, 0o755)
    return p


def tmux(*args):
    return subprocess.run(["tmux", "-L", SOCK, "-f", "/dev/null"] + list(args),
                          capture_output=True, text=True)


def tmux_server_pid():
    return int(tmux("display", "-p", "#{pid}").stdout.strip())


def start_workrex(shell):
    # In a scratch directory: not this repository, whose agents it would list.
    return Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (TMP, WORKREX)], env_for(shell))


def start_tmux(shell, first=None):
    tmux("kill-server")
    argv = ["tmux", "-L", SOCK, "-f", "/dev/null", "new-session", "-x", str(COLS), "-y", str(ROWS)]
    if first:
        argv.append(first)
    t = Term(argv, env_for(shell))
    deadline = time.monotonic() + 10
    while tmux("has-session").returncode != 0:
        if time.monotonic() > deadline:
            raise TimeoutError("tmux did not start")
        time.sleep(0.05)
    tmux("set", "-g", "history-limit", "10000")
    return t


def stop_tmux(t):
    tmux("kill-server")
    t.close()


def pid_of_workrex(term):
    # The pty child execs workrex directly.
    return term.pid


def proc_stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(parts[11]) + int(parts[12])) / ticks
    sw = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                sw += int(line.split()[1])
    return cpu, sw


def pss_kb(pid):
    """Proportional set size: shared pages (the binary, libc) counted once overall."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def ratio(a, b):
    return "%.2f" % (a / b) if b else "n/a"


# ---- (a) throughput ----------------------------------------------------------

MARK_PAUSE = 0.3


def make_flood(path, size):
    rnd = random.Random(42)
    words = ["agent", "worktree", "merge", "status", "pane", "libvterm", "curses", "loop",
             "commit", "branch", "\u4e2d\u6587", "caf\u00e9", "ok", "error", "warning"]
    chunks, n = [], 0
    while n < size:
        line = []
        for _ in range(rnd.randint(3, 14)):
            w = rnd.choice(words)
            r = rnd.random()
            if r < 0.15:
                w = "\033[1;3%dm%s\033[0m" % (rnd.randint(1, 7), w)
            elif r < 0.22:
                w = "\033[38;5;%dm%s\033[39m" % (rnd.randint(16, 231), w)
            elif r < 0.26:
                w = "\033[38;2;%d;%d;%dm%s\033[m" % (rnd.randint(0, 255), rnd.randint(0, 255),
                                                   rnd.randint(0, 255), w)
            line.append(w)
        s = (" ".join(line) + "\n").encode()
        chunks.append(s)
        n += len(s)
    with open(path, "wb") as f:
        f.write(b"".join(chunks))


def bench_throughput():
    path = os.path.join(TMP, "flood.txt")
    make_flood(path, 50 * 1000 * 1000)
    # The marker goes on a screen cleared in an earlier frame: a renderer that
    # diffs cells against what is shown rightly skips the marker's letters that
    # happen to be there already. The pause is taken off both tools' times.
    sh = script("cat.sh", "cat %s; printf '\\033[2J'; sleep %s; printf 'WRX-%%s\\n' FLOOD-END; "
                "exec sleep 1000" % (path, MARK_PAUSE))
    runs = {"workrex": [], "tmux": []}
    cpu = {"dashboard": [], "keeper": []}
    # Alternate the two, three times each: single runs vary by a third here.
    for _ in range(3):
        t0 = time.monotonic()
        w = start_workrex(sh)
        runs["workrex"].append(w.wait_for(b"WRX-FLOOD-END", timeout=600) - t0 - MARK_PAUSE)
        cpu["dashboard"].append(proc_stat(pid_of_workrex(w))[0])
        cpu["keeper"].append(sum(proc_stat(k)[0] for k in keepers(TMP)))
        w.close()
        t0 = time.monotonic()
        t = start_tmux(sh)
        runs["tmux"].append(t.wait_for(b"WRX-FLOOD-END", timeout=600) - t0 - MARK_PAUSE)
        stop_tmux(t)
    res = {k: statistics.median(v) for k, v in runs.items()}
    mb = os.path.getsize(path) / 1e6
    print("(a) 50 MB through one pane, median of 3: workrex %.2f s (%.1f MB/s), tmux %.2f s "
          "(%.1f MB/s), ratio %s (goal <= 0.55); runs workrex %s, tmux %s; CPU: dashboard "
          "%.2f s, keeper %.2f s (medians)"
          % (res["workrex"], mb / res["workrex"], res["tmux"], mb / res["tmux"],
             ratio(res["workrex"], res["tmux"]), " ".join("%.2f" % x for x in runs["workrex"]),
             " ".join("%.2f" % x for x in runs["tmux"]), statistics.median(cpu["dashboard"]),
             statistics.median(cpu["keeper"])))


# ---- (t) a flood hidden and shown ----------------------------------------------

def bench_hidden():
    """The dashboard's CPU while one pane floods 50 MB: hidden (another pane
    zoomed: its keeper holds the rows back) and shown."""
    path = os.path.join(TMP, "flood.txt")
    if not os.path.exists(path):
        make_flood(path, 50 * 1000 * 1000)
    go, done = os.path.join(TMP, "go-"), os.path.join(TMP, "done-")
    sh = script("hflood.sh", 'while [ ! -e %s$WORKREX_PANE ]; do sleep 0.05; done; cat %s; '
                'touch %s$WORKREX_PANE; printf "WRX-%%s\n" HFLOOD-END; exec sleep 1000'
                % (go, path, done))
    res = {}
    for case in ("hidden", "shown"):
        for f in os.listdir(TMP):
            if f.startswith(("go-", "done-")):
                os.unlink(os.path.join(TMP, f))
        w = start_workrex(sh)
        time.sleep(1)
        if case == "hidden":
            w.send(b"c")  # a second pane, zoomed: the first is laid out nowhere
            time.sleep(0.5)
            w.send(b"z")
            time.sleep(0.5)
        pid = pid_of_workrex(w)
        k = keepers(TMP)
        c0, k0, t0 = proc_stat(pid)[0], sum(proc_stat(x)[0] for x in k), time.monotonic()
        open(go + "1", "w").close()
        deadline = time.monotonic() + 600
        while not os.path.exists(done + "1") and time.monotonic() < deadline:
            time.sleep(0.02)
        wall = time.monotonic() - t0
        if case == "shown":
            w.wait_for(b"WRX-HFLOOD-END", timeout=60)
        else:
            time.sleep(0.5)  # its last held update
        res[case] = (proc_stat(pid)[0] - c0, sum(proc_stat(x)[0] for x in k) - k0, wall)
        w.close()
    h, v = res["hidden"], res["shown"]
    print("(t) 50 MB flooding one pane: hidden (another zoomed), the dashboard %.2f s CPU "
          "(keeper %.2f s, %.2f s wall; goal: near zero); shown, the dashboard %.2f s CPU "
          "(keeper %.2f s, %.2f s wall; %.0f %% of one core)"
          % (h[0], h[1], h[2], v[0], v[1], v[2], 100 * v[0] / v[2] if v[2] else 0))


# ---- (b) idle ------------------------------------------------------------------

def measure_idle(pid, seconds=10.0):
    c0, s0 = proc_stat(pid)
    time.sleep(seconds)
    c1, s1 = proc_stat(pid)
    return c1 - c0, s1 - s0


def eight_shells():
    """A dashboard with 8 idle shell panes, settled: it and its keepers' pids."""
    w = start_workrex("/bin/sh")
    w.wait_for(b"$")
    for _ in range(7):
        w.send(b"\x02c")
        time.sleep(0.3)
    time.sleep(2)
    return w, keepers(TMP)


def bench_idle():
    w, ks = eight_shells()
    k0 = [proc_stat(k) for k in ks]
    wc, ws = measure_idle(pid_of_workrex(w))
    k1 = [proc_stat(k) for k in ks]
    kc = sum(b[0] - a[0] for a, b in zip(k0, k1))
    kw = sum(b[1] - a[1] for a, b in zip(k0, k1))
    w.close()
    t = start_tmux("/bin/sh")
    for _ in range(7):
        tmux("split-window", "-d")
        tmux("select-layout", "tiled")
    time.sleep(2)
    tc, tsw = measure_idle(tmux_server_pid())
    stop_tmux(t)
    print("(b) idle, 8 panes, 10 s: workrex %.3f s CPU, %d wake-ups, its %d keepers %.3f s CPU, "
          "%d wake-ups; tmux %.3f s CPU, %d wake-ups (goal: zero wake-ups)"
          % (wc, ws, len(ks), kc, kw, tc, tsw))


# ---- (c) memory ----------------------------------------------------------------

def bench_rss():
    line = "line %g of the scrollback benchmark: some words, a path /usr/lib/x, a number 12345"
    sh = script("hist.sh", "seq -f '%s' 1 10000; printf '\\033[2J'; sleep %s; "
                "printf 'WRX-%%s\\n' HIST; exec sleep 1000" % (line, MARK_PAUSE))
    # Keepers idle first: 8 shells that printed a prompt (the keeper's program shared).
    w, ks = eight_shells()
    idle = (statistics.mean(pss_kb(k) for k in ks), statistics.mean(rss_kb(k) for k in ks))
    w.close()
    w = start_workrex(sh)
    w.wait_for(b"WRX-HIST")
    for _ in range(15):
        w.send(b"\x02c")
        time.sleep(0.3)
    time.sleep(4)
    wd = rss_kb(pid_of_workrex(w))
    ks = keepers(TMP)
    kr = [rss_kb(k) for k in ks]
    wr = wd + sum(kr)
    kp = [pss_kb(k) for k in ks]
    wp = pss_kb(pid_of_workrex(w)) + sum(kp)
    w.close()
    t = start_tmux(sh)
    for _ in range(15):
        tmux("new-window", "-d", sh)
    time.sleep(4)
    spid = tmux_server_pid()
    tr = rss_kb(spid) + rss_kb(t.pid)
    tp = pss_kb(spid) + pss_kb(t.pid)
    stop_tmux(t)
    print("(c) RSS, 16 panes x 10000 lines of history: workrex %.1f MB (dashboard %.1f MB + "
          "%d keepers, %.1f MB each, PSS %.1f MB each), tmux %.1f MB (server + client), ratio "
          "%s; PSS workrex %.1f MB, tmux %.1f MB, ratio %s; 8 keepers idle: PSS %.2f MB, RSS "
          "%.2f MB each (goals 0.5, 2)"
          % (wr / 1024, wd / 1024, len(kr), statistics.mean(kr) / 1024 if kr else 0,
             statistics.mean(kp) / 1024 if kp else 0, tr / 1024, ratio(wr, tr), wp / 1024,
             tp / 1024, ratio(wp, tp), idle[0] / 1024, idle[1] / 1024))


# ---- (d) latency ---------------------------------------------------------------

# Characters that never occur in the escape sequences either program writes.
# Alternate sets per line, so a cell never gets back the character it showed
# before the line was erased (a renderer may rightly skip such a no-change).
MARKS = (b"!#%&*+^|}{", b"~_=,.'`\"/$")


def echo_latencies(term, n=200):
    lat = []
    for i in range(n):
        marks = MARKS[(i // 10) % 2]
        ch = marks[i % 10:i % 10 + 1]
        start = term.mark()
        t0 = time.monotonic()
        term.send(ch)
        lat.append((term.wait_for(ch, start, timeout=10) - t0) * 1000)
        if i % 10 == 9:
            term.send(b"\x15")  # C-u: erase the line so old marks never reappear
            time.sleep(0.05)
        time.sleep(0.01)
        if len(term.out) > 1 << 24:
            term.trim()
    lat.sort()
    return statistics.median(lat), lat[int(len(lat) * 0.99) - 1]


def bench_latency():
    w = start_workrex("/bin/sh")
    w.wait_for(b"$")
    w.send(b"exec yes\r")
    time.sleep(0.5)
    m = w.mark()
    w.send(b"\x02c")
    # The new pane's prompt ("$": nothing else on screen draws one; a
    # cell-diffing renderer may skip the blank after it, so not "$ ").
    w.wait_for(b"$", m, timeout=20)
    time.sleep(0.5)
    m = w.mark()
    w.send(b"exec cat >/dev/null\r")
    w.wait_for(b"null", m, timeout=20)
    time.sleep(0.5)
    wp50, wp99 = echo_latencies(w)
    w.close()
    t = start_tmux("/bin/sh", "exec yes")
    tmux("split-window", "exec cat >/dev/null")
    time.sleep(1)
    tp50, tp99 = echo_latencies(t)
    stop_tmux(t)
    print("(d) keystroke to echo while another pane floods: workrex p50 %.1f ms p99 %.1f ms; "
          "tmux p50 %.1f ms p99 %.1f ms; p99 ratio %s (goal p99 < 50 ms)"
          % (wp50, wp99, tp50, tp99, ratio(wp99, tp99)))


# ---- (e), (f) worktrees -------------------------------------------------------

def git(*args, cwd=None):
    subprocess.run(["git"] + list(args), cwd=cwd, check=True, capture_output=True)


def genv():
    e = env_for("/bin/sh")
    e.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="B",
             GIT_AUTHOR_EMAIL="b@example.com", GIT_COMMITTER_NAME="B",
             GIT_COMMITTER_EMAIL="b@example.com")
    return e


def timed(argv, cwd):
    t0 = time.monotonic()
    subprocess.run(argv, cwd=cwd, env=genv(), check=True, capture_output=True)
    return time.monotonic() - t0


def bench_add():
    repo = os.path.join(TMP, "big")
    os.makedirs(repo)
    git("init", "-q", "-b", "main", cwd=repo)
    for d in range(200):
        sub = os.path.join(repo, "d%03d" % d)
        os.makedirs(sub)
        for f in range(100):
            with open(os.path.join(sub, "f%03d.txt" % f), "w") as fh:
                fh.write("file %d/%d\n" % (d, f) * 8)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "20000 files", cwd=repo)
    g, w, l = [], [], []
    lg2 = os.environ.get("LG2_ADD")
    # Warm the caches once, then alternate, so neither side gets the cold run.
    timed(["git", "worktree", "add", "-q", "-b", "warm", os.path.join(TMP, "big__worktrees", "warm")], repo)
    # Nine each: this machine's disk makes single runs vary threefold. Each run
    # starts with the previous one's writes on disk (sync), and the order turns
    # every round, so none pays for another's writeback.
    runs = [(g, lambda i: ["git", "worktree", "add", "-q", "-b", "g%d" % i,
                           os.path.join(TMP, "big__worktrees", "g%d" % i)]),
            (w, lambda i: [WORKREX, "add", "w%d" % i])]
    if lg2:
        runs.append((l, lambda i: [lg2, repo, os.path.join(TMP, "big__worktrees", "l%d" % i),
                                   "l%d" % i]))
    for i in range(9):
        for out, argv in (runs if i % 2 == 0 else runs[::-1]):
            os.sync()
            out.append(timed(argv(i), repo))
    gm, wm = statistics.median(g), statistics.median(w)
    print("(e) add on 20000 files: workrex add %.3f s, git worktree add %.3f s (median of 9), "
          "ratio %s (goal <= 1.0)" % (wm, gm, ratio(wm, gm)))
    if l:
        lm = statistics.median(l)
        print("    the same checkout by libgit2 alone (git_worktree_add, no filters): %.3f s, "
              "%s x the git CLI" % (lm, ratio(lm, gm)))


def bench_list():
    repo = new_repo("many", "a\n")
    # Real agents, as `workrex add` makes them (records in the repository's
    # config), 30 with uncommitted files and 30 with a commit ahead.
    for i in range(100):
        subprocess.run([WORKREX, "add", "-b", "b%03d" % i], cwd=repo, env=genv(), check=True,
                       capture_output=True)
        wt = os.path.join(TMP, "many__worktrees", "b%03d" % i)
        if i < 30:
            with open(os.path.join(wt, "dirty.txt"), "w") as fh:
                fh.write("x\n")
        elif i < 60:
            with open(os.path.join(wt, "c.txt"), "w") as fh:
                fh.write("c\n")
            subprocess.run(["git", "add", "c.txt"], cwd=wt, env=genv(), check=True)
            subprocess.run(["git", "commit", "-qm", "c"], cwd=wt, env=genv(), check=True)
    times = sorted(timed([WORKREX, "list", "--json"], repo) for _ in range(10))
    print("(f) list --json with 100 agents (30 dirty, 30 ahead): median %.1f ms, max %.1f ms "
          "(goal < 50 ms)" % (statistics.median(times) * 1000, times[-1] * 1000))


# ---- (g) status over the RPC bridge ---------------------------------------------

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def pane_token(repo, handle):
    """The RPC socket and token of the agent's pane, as its own shell sees them."""
    tok = os.path.join(TMP, handle + ".tok")
    subprocess.run([WORKREX, "send", handle, "printf '%%s %%s' \"$WORKREX_RPC_SOCKET\" "
                    "\"$WORKREX_RPC_TOKEN\" >%s.tmp && mv %s.tmp %s" % (tok, tok, tok)],
                   cwd=repo, env=genv(), check=True, capture_output=True)
    deadline = time.monotonic() + 20
    while not os.path.exists(tok):
        if time.monotonic() > deadline:
            raise TimeoutError("the agent pane did not write its token")
        time.sleep(0.05)
    return open(tok).read().split()


def rpc_connect(sock_path, token):
    import json, socket
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(sock_path)
    f = s.makefile("rb")  # buffered: replies are read a line at a time
    s.sendall(json.dumps({"token": token}).encode() + b"\n")
    assert json.loads(f.readline())["type"] == "ok"
    return s, f


def bench_status():
    import json, socket
    repo = new_repo("st")
    env = env_for("/bin/sh")
    term = Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], env)
    try:
        term.wait_for(b"$ ")
        subprocess.run([WORKREX, "add", "st", "-b"], cwd=repo, env=genv(), check=True,
                       capture_output=True)
        sock_path, token = pane_token(repo, "st")
        # Persistent client.
        s, f = rpc_connect(sock_path, token)
        reqs = [json.dumps({"type": "set_status", "status": st}).encode() + b"\n"
                for st in ("working", "waiting", "done", "clear")]
        rtt = []
        t_all = time.perf_counter()
        for i in range(10000):
            t0 = time.perf_counter()
            s.sendall(reqs[i % 4])
            line = f.readline()
            rtt.append(time.perf_counter() - t0)
            if b'"ok"' not in line:
                raise RuntimeError("set_status failed: %r" % line)
        total = time.perf_counter() - t_all
        s.close()
        print("(g) set-status round trip, persistent client, 10000 calls: p50 %.3f ms, "
              "p99 %.3f ms, %.0f requests/s (goal p99 < 1 ms)"
              % (pct(rtt, 0.5) * 1e3, pct(rtt, 0.99) * 1e3, 10000 / total))
        e2 = dict(env, WORKREX_RPC_SOCKET=sock_path, WORKREX_RPC_TOKEN=token)
        guest = os.environ.get("WORKREX_GUEST")
        for name, exe, n in (("static guest client", guest, 10000), ("host binary", WORKREX, 2000)):
            if not exe:
                continue
            lat = []
            for i in range(n):
                t0 = time.perf_counter()
                subprocess.run([exe, "set-status", ("working", "waiting", "done", "clear")[i % 4]],
                               env=e2, check=True)
                lat.append(time.perf_counter() - t0)
            print("    fresh processes (%s), %d calls: p50 %.2f ms, p99 %.2f ms, %.0f calls/s"
                  % (name, n, pct(lat, 0.5) * 1e3, pct(lat, 0.99) * 1e3, n / sum(lat)))
        # A hook's set-status until its icon reaches the outer terminal.
        icons = {"working": "\u25cf", "waiting": "\u25c6", "done": "\u2713"}
        seq = ["working", "waiting", "working", "done"] * 10
        lat = []
        time.sleep(0.3)
        for st in seq:
            mark = term.mark()
            t0 = time.monotonic()
            subprocess.run([WORKREX, "set-status", st], env=e2, check=True)
            t1 = term.wait_for(icons[st].encode(), mark, timeout=10)
            lat.append(t1 - t0)
            time.sleep(0.05)
        print("    hook `workrex set-status` to icon on screen, %d changes: p50 %.1f ms, "
              "p99 %.1f ms" % (len(lat), pct(lat, 0.5) * 1e3, pct(lat, 0.99) * 1e3))
    finally:
        term.close()


# ---- (h) sandboxed agent start ---------------------------------------------------

def sandbox_conf(section):
    """The sandbox tests' podman settings and image (built once); None if it cannot be."""
    here = os.path.dirname(os.path.abspath(__file__))
    conf = os.path.join(here, "..", "tests", "sandbox", "containers.conf")
    os.environ["CONTAINERS_CONF"] = conf
    if subprocess.run([os.path.join(here, "..", "tests", "sandbox", "image.sh")]).returncode:
        print("(%s) skipped: the test image could not be built" % section)
        return None
    return conf


def new_repo(name, a_txt=None):
    """A repository under TMP with one commit (of a.txt holding A_TXT, or
    empty), and the global config's directory made."""
    repo = os.path.join(TMP, name)
    os.makedirs(repo)
    git("init", "-q", "-b", "main", cwd=repo)
    if a_txt is None:
        git("commit", "-q", "--allow-empty", "-m", "a", cwd=repo)
    else:
        with open(os.path.join(repo, "a.txt"), "w") as f:
            f.write(a_txt)
        git("add", "a.txt", cwd=repo)
        git("commit", "-qm", "a", cwd=repo)
    os.makedirs(os.path.join(TMP, "cfg", "workrex"), exist_ok=True)
    return repo


RUNSC = ["--runtime=runsc", "--runtime-flag=network=host", "--runtime-flag=host-uds=open"]


DEVCONTAINER_CLI = "/var/cache/workrex-test/npm/node_modules/.bin/devcontainer"


def bench_sandbox(runtime="default"):
    devc = runtime == "devcontainer"
    label = "h" if runtime == "default" else "w, devcontainer" if devc else "h, gvisor"
    conf = sandbox_conf(label)
    if conf is None:
        return
    if runtime == "gvisor" and not shutil.which("runsc"):
        print("(%s) skipped: runsc is not installed (apt-get install runsc)" % label)
        return
    if devc and not os.access(DEVCONTAINER_CLI, os.X_OK):
        print("(%s) skipped: the dev container CLI is not in the tests' npm cache (make test "
              "installs it)" % label)
        return
    image = "workrex-test:latest"
    marker = "READY-%d" % os.getpid()
    cmd = "echo %s; sleep 20" % marker
    env = env_for("/bin/sh")
    env["CONTAINERS_CONF"] = conf
    # workrex: a dashboard in a repository; each add -S makes a worktree and a container.
    repo = new_repo("sbx" if runtime == "default" else "sbx-" + runtime)
    with open(os.path.join(TMP, "cfg", "workrex", "config.yaml"), "w") as f:
        f.write("agent: marker\nagents:\n  marker:\n    command: sh\n"
                "    args: [\"-c\", \"%s\"]\npanes: [\"<agent>\"]\n"
                "sandbox:\n  image: %s\n  runtime: %s\n" % (cmd, image, "default" if devc else runtime))
        if devc:
            f.write("  backend: devcontainer\n  devcontainer:\n    cli: %s\n" % DEVCONTAINER_CLI)
    if devc:
        os.makedirs(os.path.join(repo, ".devcontainer"))
        with open(os.path.join(repo, ".devcontainer", "devcontainer.json"), "w") as f:
            f.write('{"image": "localhost/%s"}\n' % image)
    term = Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], env)
    ref, wrx, adds = [], [], []
    runs = 21
    try:
        term.wait_for(b"sbx")
        time.sleep(0.5)
        # Alternate the two, so drift on a shared machine hits both alike.
        for i in range(runs):
            t0 = time.monotonic()
            t = Term(["podman"] + (RUNSC if runtime == "gvisor" else []) +
                     ["run", "--rm", "-it", "--name", "wrx-bench-ref-%d" % i, image,
                      "sh", "-c", cmd], env)
            try:
                ref.append(t.wait_for(marker.encode(), timeout=60) - t0)
            finally:
                # Removed first: the shell in it (PID 1) would ignore the SIGTERM.
                subprocess.run(["podman", "rm", "-f", "--time=0", "wrx-bench-ref-%d" % i],
                               capture_output=True, env=env)
                t.close()
            time.sleep(0.3)
            mark = term.mark()
            t0 = time.monotonic()
            r = subprocess.run([WORKREX, "add", "s%d" % i, "-S", "-b"], cwd=repo,
                               env=dict(genv(), CONTAINERS_CONF=conf), capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError("workrex add failed: " + r.stderr.strip())
            adds.append(time.monotonic() - t0)
            wrx.append(term.wait_for(marker.encode(), mark, timeout=60) - t0)
            subprocess.run([WORKREX, "close", "s%d" % i], cwd=repo, env=genv(), capture_output=True)
            time.sleep(0.3)
    finally:
        term.close()
        subprocess.run(["sh", "-c", "podman ps -aq --filter label=workrex.project=%s | "
                        "xargs -r podman rm -f --time=0" % repo], capture_output=True, env=env)
    # The first run of each warms caches; the median of the others.
    rm, wm = statistics.median(ref[1:]), statistics.median(wrx[1:])
    print("(%s) sandboxed agent start: workrex add -S to first output %.3f s, bare podman run "
          "--rm -it %.3f s (median of %d, alternating), ratio %s (%s)"
          % (label, wm, rm, runs - 1, ratio(wm, rm),
             "no goal: add runs the dev container CLI" if devc else "goal <= 1.15"))
    if devc:
        # The add runs the dev container CLI (Node) once; the pane after it is podman's start.
        pane = statistics.median([w - a for w, a in zip(wrx[1:], adds[1:])])
        print("    the pane after add: %.3f s, ratio %s against the bare run (goal <= 1.15)"
              % (pane, ratio(pane, rm)))
    print("    of which `workrex add -S` itself (worktree, record, the dashboard starting the "
          "pane): median %.3f s" % statistics.median(adds[1:]))
    print("    single runs: workrex %s; podman %s" % (
        " ".join("%.3f" % x for x in wrx[1:]), " ".join("%.3f" % x for x in ref[1:])))

# ---- (x) a sandboxed agent's forwarded port ------------------------------------------

# An HTTP-ish server on $WORKREX_PORT: "ok" to a request, 20 MB to one for /big.
PORT_SERVER = r"""use IO::Socket::INET;
my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ENV{WORKREX_PORT},
                              Listen => 128, ReuseAddr => 1) or die "listen: $!";
my $big = "x" x (20 << 20);
$| = 1; print "SERVING\n";
while (my $c = $s->accept) { my $l = <$c>; print $c ($l =~ /big/ ? $big : "ok\n"); close $c }
"""


def bench_ports():
    import socket
    conf = sandbox_conf("x")
    if conf is None:
        return
    repo = new_repo("ports")
    with open(os.path.join(repo, "srv.pl"), "w") as f:
        f.write(PORT_SERVER)
    git("add", "srv.pl", cwd=repo)
    git("commit", "-qm", "server", cwd=repo)
    with open(os.path.join(TMP, "cfg", "workrex", "config.yaml"), "w") as f:
        f.write("agent: server\nagents:\n  server:\n    command: perl\n    args: [srv.pl]\n"
                "panes: [\"<agent>\"]\nports: 1\nsandbox:\n  image: workrex-test:latest\n")
    env = env_for("/bin/sh")
    env["CONTAINERS_CONF"] = conf
    term = Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], env)
    ref = None

    def get(port, path="/"):
        t0 = time.monotonic()
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"GET %s HTTP/1.0\r\n\r\n" % path.encode())
        n = 0
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            n += len(b)
        s.close()
        return time.monotonic() - t0, n

    try:
        term.wait_for(b"ports")
        r = subprocess.run([WORKREX, "add", "srv", "-S", "-b"], cwd=repo,
                           env=dict(genv(), CONTAINERS_CONF=conf), capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("workrex add failed: " + r.stderr.strip())
        term.wait_for(b"SERVING", timeout=60)
        r = subprocess.run([WORKREX, "list", "--json"], cwd=repo, env=genv(), capture_output=True,
                           text=True)
        port = [a["ports"][0] for a in __import__("json").loads(r.stdout) if a["handle"] == "srv"][0]
        # The same server on the host's loopback, on a port of its own.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            host_port = probe.getsockname()[1]
        ref = subprocess.Popen(["perl", os.path.join(repo, "srv.pl")], stdout=subprocess.PIPE,
                               env=dict(os.environ, WORKREX_PORT=str(host_port)))
        assert ref.stdout.readline().strip() == b"SERVING"
        n = 200
        fwd, direct = [], []
        for _ in range(n):  # alternating, so drift hits both alike
            fwd.append(get(port)[0])
            direct.append(get(host_port)[0])
        big_f = [get(port, "/big") for _ in range(5)]
        big_d = [get(host_port, "/big") for _ in range(5)]
    finally:
        if ref:
            ref.kill()
        term.close()
        subprocess.run(["sh", "-c", "podman ps -aq --filter label=workrex.project=%s | "
                        "xargs -r podman rm -f --time=0" % repo], capture_output=True, env=env)
    fm, dm = statistics.median(fwd), statistics.median(direct)
    print("(x) a sandboxed agent's port: a request through its keeper's forward %.2f ms, to the "
          "same server on the host's loopback %.2f ms (median of %d, alternating), ratio %s"
          % (fm * 1e3, dm * 1e3, n, ratio(fm, dm)))
    print("    p95: forward %.2f ms, direct %.2f ms; slowest forward %.2f ms"
          % (pct(fwd, 0.95) * 1e3, pct(direct, 0.95) * 1e3, max(fwd) * 1e3))
    mb = 20 * (1 << 20) / 1e6
    tf = statistics.median([t for t, _ in big_f])
    td = statistics.median([t for t, _ in big_d])
    assert all(k == 20 << 20 for _, k in big_f + big_d)
    print("    20 MB answer: forward %.0f MB/s, direct %.0f MB/s (median of 5), ratio %s"
          % (mb / tf, mb / td, ratio(tf, td)))

# ---- (u) gVisor against runc ---------------------------------------------------------

def bench_gvisor():
    """A container's start, and a build's file work inside it (300 files
    written, git add and commit), under runsc against runc, alternating;
    then workrex's own sandboxed start under sandbox.runtime: gvisor."""
    conf = sandbox_conf("u")
    if conf is None:
        return
    if not shutil.which("runsc"):
        print("(u) skipped: runsc is not installed (apt-get install runsc)")
        return
    env = dict(os.environ, CONTAINERS_CONF=conf)
    work = ("cd /tmp && git init -q w && cd w && for i in $(seq 300); do echo $i >f$i; done && "
            "git add . && git -c user.name=b -c user.email=b@b commit -qm w")
    times = {(rt, what): [] for rt in ("runc", "runsc") for what in ("start", "build")}
    for _ in range(11):
        for rt in ("runc", "runsc"):
            for what, cmd in (("start", "true"), ("build", work)):
                t0 = time.monotonic()
                r = subprocess.run(["podman"] + (RUNSC if rt == "runsc" else []) +
                                   ["run", "--rm", "workrex-test:latest", "sh", "-c", cmd],
                                   env=env, capture_output=True, text=True)
                if r.returncode:
                    raise RuntimeError("podman run (%s) failed: %s" % (rt, r.stderr.strip()))
                times[(rt, what)].append(time.monotonic() - t0)
    med = {k: statistics.median(v[1:]) for k, v in times.items()}
    print("(u) gVisor: podman run --rm true under runsc %.3f s, runc %.3f s, ratio %s; a build's "
          "file work inside (300 files, git add, commit) runsc %.3f s, runc %.3f s, ratio %s "
          "(medians of 10, alternating)"
          % (med[("runsc", "start")], med[("runc", "start")],
             ratio(med[("runsc", "start")], med[("runc", "start")]),
             med[("runsc", "build")], med[("runc", "build")],
             ratio(med[("runsc", "build")], med[("runc", "build")])))
    bench_sandbox("gvisor")


# ---- (i) importing a sandbox's commits ---------------------------------------------

def bench_import():
    conf = sandbox_conf("i")
    if conf is None:
        return
    repo = new_repo("imp")
    with open(os.path.join(TMP, "cfg", "workrex", "config.yaml"), "w") as f:
        f.write("sandbox:\n  image: workrex-test:latest\n")
    env = dict(genv(), CONTAINERS_CONF=conf)
    subprocess.run([WORKREX, "add", "imp", "-S", "-b"], cwd=repo, env=env, check=True,
                   capture_output=True)
    # The reference: a plain repository that gets 100 commits, fetched by plain git.
    src = os.path.join(TMP, "imp-src")
    subprocess.run(["git", "clone", "-q", repo, src], check=True, env=env, capture_output=True)
    commits = ("for i in $(seq 100); do echo $i-$1 >f$i; git add f$i; "
               "git -c user.name=a -c user.email=b commit -qm c$i-$1; done")
    wrx, ref, idle = [], [], []
    for r in range(5):
        subprocess.run([WORKREX, "sandbox", "shell", "imp", "--", "sh", "-c", commits, "sh",
                        str(r)], cwd=repo, env=env, check=True, capture_output=True)
        subprocess.run(["sh", "-c", commits, "sh", str(r)], cwd=src, env=env, check=True,
                       capture_output=True)
        os.sync()
        ref.append(timed(["git", "-c", "transfer.fsckObjects=true", "fetch", "-q", src,
                          "+main:refs/bench/r%d" % r], repo))
        wrx.append(timed([WORKREX, "list"], repo))
        idle.append(timed([WORKREX, "list"], repo))
    out = subprocess.run(["git", "rev-list", "--count", "imp"], cwd=repo, env=env,
                         capture_output=True, text=True).stdout.strip()
    wm, rm, im = statistics.median(wrx), statistics.median(ref), statistics.median(idle)
    print("(i) import of 100 sandbox commits: workrex list %.1f ms (list alone %.1f ms), plain "
          "git fetch --fsck %.1f ms (median of 5), ratio %s; the branch has %s commits"
          % (wm * 1000, im * 1000, rm * 1000, ratio(wm, rm), out))


# ---- (j) reflow -------------------------------------------------------------

def bench_reflow():
    lines = 100000
    out = subprocess.run([os.environ["REFLOW"], str(lines), "120", "80"], capture_output=True,
                         text=True)
    f = out.stdout.split()
    w = dict(zip(f[0::2], f[1::2]))
    path = os.path.join(TMP, "history.txt")
    words = "reflow keeps every character of the history, and colours, wrapped at the margin, joined again; "
    with open(path, "w") as fh:
        for i in range(lines):
            wide = "" if i % 10 else "\u4e2d\u6587 "
            room = 110 - (0 if i % 10 else 5)
            fh.write("\033[3%dm%06d\033[0m %s%s\r\n" % (i % 8, i, wide,
                     "".join(words[(i + k) % len(words)] for k in range(room))))
    t = start_tmux("/bin/sh")
    tmux("set", "-g", "history-limit", str(lines))
    tmux("new-window", "cat %s; exec sleep 1000" % path)
    deadline = time.monotonic() + 300
    while int(tmux("display", "-p", "#{history_size}").stdout.strip() or 0) < lines - ROWS:
        if time.monotonic() > deadline:
            raise TimeoutError("tmux did not take the history")
        time.sleep(0.2)
    def cmd_ms(*args):
        t0 = time.monotonic()
        tmux(*args)
        return (time.monotonic() - t0) * 1000
    noop = statistics.median(cmd_ms("display", "-p", "x") for _ in range(9))
    narrow, widen = [], []
    for _ in range(3):
        narrow.append(cmd_ms("resize-window", "-x", "80") - noop)
        widen.append(cmd_ms("resize-window", "-x", "120") - noop)
    hist = int(tmux("display", "-p", "#{history_size}").stdout.strip() or 0)
    stop_tmux(t)
    tn, tw = statistics.median(narrow), statistics.median(widen)
    wn, ww = float(w.get("narrow", "nan")), float(w.get("widen", "nan"))
    print("(j) reflow of a %d-line history, 120 -> 80 -> 120 columns: workrex %.1f + %.1f ms, "
          "every line the same: %s; tmux %.1f + %.1f ms (history %d after); ratio %s "
          "(goal < 50 ms)" % (lines, wn, ww, "yes" if w.get("same") == "1" else "NO",
                              tn, tw, hist, ratio(wn + ww, tn + tw)))


# ---- (k) attach --------------------------------------------------------------

def detach(w):
    """prefix d: the dashboard exits by itself, its keepers stay."""
    w.send(b"\x02d")
    os.waitpid(w.pid, 0)
    w.pid = -1
    w.close(keep=True)


def bench_attach():
    panes, lines = 20, 10000
    line = "line %g of the attach benchmark: words, a path /usr/lib/x, \033[31mred\033[0m, 12345"
    sh = script("attach.sh", "seq -f '%s' 1 %d; exec sleep 1000" % (line, lines))
    # 20 panes with their history, then a detach (C-b d): the keepers stay.
    w = start_workrex(sh)
    w.wait_for(b"C-b ? help")
    for _ in range(panes - 1):
        w.send(b"\x02c")
        time.sleep(0.2)
    deadline = time.monotonic() + 120
    while len(keepers(TMP)) < panes and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(3)  # every seq done
    detach(w)
    runs, empty = [], []
    for _ in range(5):
        t0 = time.monotonic()
        w = start_workrex(sh)
        runs.append((w.wait_for(b"C-b ? help", timeout=60) - t0) * 1000)
        detach(w)
    n = len(keepers(TMP))
    end_keepers(TMP)
    for _ in range(5):
        t0 = time.monotonic()
        w = start_workrex("/bin/sh")
        empty.append((w.wait_for(b"C-b ? help", timeout=60) - t0) * 1000)
        w.close()
    # tmux: a server with 20 such windows, and a client attaching to it.
    t = start_tmux(sh)
    for _ in range(panes - 1):
        tmux("new-window", "-d", sh)
    time.sleep(3)
    stop_tmux_client = t
    tr = []
    for _ in range(5):
        t0 = time.monotonic()
        a = Term(["tmux", "-L", SOCK, "-f", "/dev/null", "attach"], env_for(sh))
        tr.append((a.wait_for(b"line 10000 of the attach", timeout=60) - t0) * 1000)
        tmux("detach-client", "-a")
        a.close(keep=True)
    stop_tmux(stop_tmux_client)
    wm, em, tm = statistics.median(runs), statistics.median(empty), statistics.median(tr)
    print("(k) attach to %d keepers x %d lines of history: dashboard start to first frame %.0f ms "
          "(%.0f ms with no keepers: %.0f ms for taking them over); tmux attach %.0f ms; "
          "runs %s (goal < 200 ms)" % (n, lines, wm, em, wm - em, tm,
                                       " ".join("%.0f" % x for x in runs)))


# ---- (p) agents on a server ----------------------------------------------------------

def remote_server():
    """An sshd of our own on loopback; ssh reaches it as "srv" (a wrapper adds -F)."""
    d, srv = os.path.join(TMP, "sshd"), os.path.join(TMP, "srv")
    for sub in ("home", "run", "xdg"):
        os.makedirs(os.path.join(srv, sub), mode=0o700)
    os.makedirs(d)
    os.makedirs("/run/sshd", exist_ok=True)
    for k in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(d, k)],
                       check=True)
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with open(os.path.join(d, "sshd_config"), "w") as f:
        f.write("Port %d\nListenAddress 127.0.0.1\nHostKey %s/host_key\n"
                "AuthorizedKeysFile %s/user_key.pub\nPidFile %s/sshd.pid\nStrictModes no\n"
                "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                "PermitRootLogin prohibit-password\n"
                "SetEnv HOME=%s/home XDG_RUNTIME_DIR=%s/xdg WORKREX_RUNTIME_DIR=%s/run\n"
                % (port, d, d, d, srv, srv, srv))
    with open(os.path.join(d, "ssh_config"), "w") as f:
        f.write("Host srv\n  HostName 127.0.0.1\n  Port %d\n  IdentityFile %s/user_key\n"
                "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
                % (port, d))
    bindir = os.path.join(TMP, "bin")
    os.makedirs(bindir, exist_ok=True)
    with open(os.path.join(bindir, "ssh"), "w") as f:
        f.write('#!/bin/sh\nexec /usr/bin/ssh -F %s/ssh_config "$@"\n' % d)
    os.chmod(os.path.join(bindir, "ssh"), 0o755)
    subprocess.run(["/usr/sbin/sshd", "-f", os.path.join(d, "sshd_config"), "-E",
                    os.path.join(d, "log")], check=True)
    os.environ["PATH"] = bindir + ":" + os.environ["PATH"]
    deadline = time.monotonic() + 10
    while subprocess.run(["ssh", "srv", "true"], capture_output=True).returncode:
        if time.monotonic() > deadline:
            raise TimeoutError("the bench's sshd does not answer")
        time.sleep(0.1)
    return srv, os.path.join(d, "sshd.pid")


def bench_remote():
    if not os.path.exists("/usr/sbin/sshd"):
        print("(p) FAILED: sshd (openssh-server) is not installed")
        return
    srv, pidfile = remote_server()
    repo = new_repo("rproj", "one\n")
    cfg = TMP + "/cfg/workrex/config.yaml"
    with open(cfg, "w") as f:
        f.write("agent: /bin/sh\npanes:\n  - command: <agent>\n"
                "remote:\n  hosts:\n    srv: {ssh: srv, path: %s/clone}\n" % srv)
    try:
        # Keystroke to echo: the remote agent's pane, then the project's own local one.
        timed([WORKREX, "add", "--remote", "srv", "echo"], repo)  # copies the build there too
        w = Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], env_for("/bin/sh"))
        w.wait_for(b"echo @srv", timeout=30)
        time.sleep(1)

        def pane_echo(key):  # focus pane `key`, quiet its shell, time its echo
            m = w.mark()
            w.send(b"\x02" + key)
            w.send(b"exec cat >/dev/null\r")
            w.wait_for(b"null", m, timeout=20)
            time.sleep(0.5)
            return echo_latencies(w)

        rp50, rp99 = pane_echo(b"2")
        lp50, lp99 = pane_echo(b"1")
        w.send(b"\x02q")
        w.close()
        end_keepers(srv + "/xdg")
        # add --remote against a local add of the same repository, alternating.
        r, l, h = [], [], []
        for i in range(9):
            runs = [(r, [WORKREX, "add", "--remote", "srv", "r%d" % i]),
                    (l, [WORKREX, "add", "l%d" % i]), (h, ["ssh", "srv", "true"])]
            for out, argv in (runs if i % 2 == 0 else runs[::-1]):
                out.append(timed(argv, repo))
        rm, lm, hm = statistics.median(r), statistics.median(l), statistics.median(h)
        print("(p) a pane on a server over loopback ssh: keystroke to echo p50 %.1f ms p99 %.1f ms; "
              "a local pane p50 %.1f ms p99 %.1f ms; p99 ratio %s" % (rp50, rp99, lp50, lp99,
                                                                     ratio(rp99, lp99)))
        print("    add --remote %.3f s (median of 9), a local add %.3f s, ratio %s; "
              "a bare ssh connection %.3f s" % (rm, lm, ratio(rm, lm), hm))
    finally:
        end_keepers(srv + "/xdg")
        os.remove(cfg)
        try:
            os.kill(int(open(pidfile).read()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


# ---- (l) host commands ---------------------------------------------------------------

def bench_hostexec():
    import base64, json
    if subprocess.run(["which", "bwrap"], capture_output=True).returncode:
        print("(l) skipped: bubblewrap is not installed")
        return
    repo = new_repo("hx")
    cfg = os.path.join(TMP, "cfg", "workrex", "config.yaml")
    with open(cfg, "w") as f:
        f.write('sandbox:\n  host_commands: ["true", cat]\n')
    term = Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], env_for("/bin/sh"))
    try:
        term.wait_for(b"$ ")
        subprocess.run([WORKREX, "add", "hxa", "-b"], cwd=repo, env=genv(), check=True,
                       capture_output=True)
        wt = subprocess.run([WORKREX, "path", "hxa"], cwd=repo, env=genv(), check=True,
                            capture_output=True, text=True).stdout.strip()
        big = os.path.join(wt, "big.bin")
        size = 64 << 20
        with open(big, "wb") as f:
            f.write(os.urandom(size))
        s, f = rpc_connect(*pane_token(repo, "hxa"))

        def call(cmd, args=()):
            s.sendall(json.dumps({"type": "exec", "command": cmd, "args": list(args)}).encode()
                      + b"\n")
            n, err = 0, b""
            while True:
                r = json.loads(f.readline())
                if r["type"] == "exec_exit":
                    if r["code"]:
                        raise RuntimeError("host-exec %s: status %d: %s" % (cmd, r["code"], err))
                    return n, r["code"]
                if r["type"] == "error":
                    raise RuntimeError(r["message"])
                if r["type"] == "exec_stderr":
                    err += base64.b64decode(r["data"])
                else:
                    n += len(base64.b64decode(r["data"]))

        # The peer: the same bubblewrap around the same program, started directly.
        ref_argv = ["bwrap", "--die-with-parent", "--new-session", "--unshare-pid",
                    "--unshare-ipc", "--unshare-uts", "--ro-bind", "/", "/", "--dev", "/dev",
                    "--proc", "/proc", "--tmpfs", "/tmp", "--bind", wt, wt, "--chdir", wt, "--"]
        wrx, ref = [], []
        for i in range(300):
            t0 = time.perf_counter()
            if call("true") != (0, 0):
                raise RuntimeError("host-exec true failed")
            wrx.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run(ref_argv + ["/usr/bin/true"], check=True)
            ref.append(time.perf_counter() - t0)
        print("(l) host-exec round trip of `true`, 300 calls: p50 %.2f ms, p99 %.2f ms; bwrap "
              "true started directly p50 %.2f ms, p99 %.2f ms; p50 ratio %s"
              % (pct(wrx, 0.5) * 1e3, pct(wrx, 0.99) * 1e3, pct(ref, 0.5) * 1e3,
                 pct(ref, 0.99) * 1e3, ratio(pct(wrx, 0.5), pct(ref, 0.5))))
        # Throughput: the static guest client, as in a sandbox, to /dev/null.
        guest = os.environ.get("WORKREX_GUEST") or WORKREX
        sock_path, token = pane_token(repo, "hxa")
        genv_x = dict(env_for("/bin/sh"), WORKREX_RPC_SOCKET=sock_path, WORKREX_RPC_TOKEN=token)
        tw, tr = [], []
        for i in range(3):
            t0 = time.perf_counter()
            with open(os.devnull, "wb") as null:
                subprocess.run([guest, "host-exec", "cat", big], env=genv_x, stdout=null,
                               check=True)
            tw.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            with open(os.devnull, "wb") as null:
                subprocess.run(ref_argv + ["/usr/bin/cat", big], stdout=null, check=True)
            tr.append(time.perf_counter() - t0)
        out = subprocess.run([guest, "host-exec", "cat", big], env=genv_x, capture_output=True,
                             check=True).stdout
        if out != open(big, "rb").read():
            raise RuntimeError("host-exec cat: the bytes differ")
        mw, mr = statistics.median(tw), statistics.median(tr)
        print("    64 MB of output (cat) through the guest client, median of 3: %.2f s (%.0f MB/s); "
              "bwrap cat to /dev/null %.2f s (%.0f MB/s); ratio %s"
              % (mw, 64 / mw, mr, 64 / mr, ratio(mw, mr)))
        s.close()
    finally:
        term.close()
        os.unlink(cfg)


# ---- (m) image paste ---------------------------------------------------------------

def tail_input():
    """An agent that shows at once, on a line of its own, the end of all it read so far."""
    tail = os.path.join(TMP, "tail_input.py")
    with open(tail, "w") as t:
        t.write("import os, sys, tty\ntty.setraw(0)\nseen = ''\nwhile True:\n"
                "    seen += os.read(0, 1 << 16).decode()\n"
                "    seen = seen.replace('\\x1b[200~', '').replace('\\x1b[201~', '')\n"
                "    sys.stdout.write('\\r\\n' + seen[-11:]); sys.stdout.flush()\n")
    return tail


def bench_paste():
    for tool in ("Xvfb", "xclip"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            print("(m) skipped: %s is not installed" % tool)
            return
    here = os.path.dirname(os.path.abspath(__file__))
    e2e = os.path.join(here, "..", "tests", "e2e")
    disp = ":%d" % (600 + os.getpid() % 300)
    x = subprocess.Popen(["Xvfb", disp, "-nolisten", "tcp", "-screen", "0", "320x240x24"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    clip = None
    try:
        sock = "/tmp/.X11-unix/X" + disp[1:]
        deadline = time.monotonic() + 10
        while not os.path.exists(sock):
            if time.monotonic() > deadline:
                raise TimeoutError("Xvfb did not start")
            time.sleep(0.05)
        png = os.path.join(TMP, "five.png")
        subprocess.run([os.path.join(e2e, "make_png.py"), png, str(5 << 20)], check=True)
        size = os.path.getsize(png)
        xenv = dict(os.environ, DISPLAY=disp)
        clip = subprocess.Popen(["xclip", "-quiet", "-selection", "clipboard", "-t", "image/png",
                                 "-i", png], env=xenv, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        repo = new_repo("paste")
        cfg = os.path.join(TMP, "cfg", "workrex", "config.yaml")
        with open(cfg, "w") as f:
            f.write("agent: python3 %s\npanes: [\"<agent>\"]\n" % tail_input())
        env = dict(env_for("/bin/sh"), DISPLAY=disp)
        term = Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], env)
        try:
            term.wait_for(b"help")
            subprocess.run([WORKREX, "add", "pst"], cwd=repo, env=dict(genv(), DISPLAY=disp),
                           check=True, capture_output=True)
            time.sleep(0.5)
            wrx, ref = [], []
            for i in range(10):
                mark = term.mark()
                t0 = time.monotonic()
                r = subprocess.run([WORKREX, "paste-image", "pst"], cwd=repo,
                                   env=dict(genv(), DISPLAY=disp), capture_output=True, text=True)
                if r.returncode:
                    raise RuntimeError("paste-image: " + r.stderr.strip())
                # Its end: the pane is narrow, the whole path wraps there.
                name = os.path.basename(r.stdout.strip()).encode()[-11:]
                wrx.append(term.wait_for(name, mark, timeout=30) - t0)
                t0 = time.monotonic()
                out = subprocess.run(["xclip", "-selection", "clipboard", "-t", "image/png", "-o"],
                                     env=xenv, capture_output=True).stdout
                ref.append(time.monotonic() - t0)
                if len(out) != size:
                    raise RuntimeError("xclip gave %d bytes of %d" % (len(out), size))
            mw, mr = statistics.median(wrx), statistics.median(ref)
            print("(m) image paste of a %.1f MB PNG (paste-image to its path on the outer "
                  "terminal), median of 10: %.0f ms; xclip -o of it alone %.0f ms; ratio %s"
                  % (size / 1e6, mw * 1e3, mr * 1e3, ratio(mw, mr)))
        finally:
            term.close()
            os.unlink(cfg)
    finally:
        if clip:
            clip.kill()
        x.kill()


# ---- (o) the network proxy -----------------------------------------------------------

UPSTREAM_O = r"""
import asyncio, struct
async def serve(r, w):
    try:
        cmd = await r.readexactly(1)
        if cmd == b"D":
            n = struct.unpack(">Q", await r.readexactly(8))[0]
            chunk = b"x" * (1 << 20)
            while n > 0:
                w.write(chunk[:min(n, len(chunk))]); n -= min(n, len(chunk))
                await w.drain()
        elif cmd == b"I":
            await r.read()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    w.close()
async def main():
    s = await asyncio.start_server(serve, "198.51.100.2", 443, backlog=2048)
    print("up", flush=True)
    await s.serve_forever()
asyncio.run(main())
"""


def bench_proxy():
    import json, socket, struct
    if os.geteuid() != 0:
        print("(o) skipped: the proxy bench needs root (a network namespace of its own)")
        return
    for tool in ("ip", "unshare", "tinyproxy"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            print("(o) skipped: %s is not installed" % tool)
            return
    tag = str(os.getpid())
    ns, vh, vn = "wrxb" + tag, "wbh" + tag, "wbn" + tag
    procs = []

    def run(*a):
        subprocess.run(a, check=True, capture_output=True)
    try:
        run("ip", "netns", "add", ns)
        run("ip", "link", "add", vh, "type", "veth", "peer", "name", vn)
        run("ip", "link", "set", vn, "netns", ns)
        run("ip", "addr", "add", "198.51.100.1/24", "dev", vh)
        run("ip", "link", "set", vh, "up")
        run("ip", "netns", "exec", ns, "ip", "addr", "add", "198.51.100.2/24", "dev", vn)
        run("ip", "netns", "exec", ns, "ip", "link", "set", vn, "up")
        run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        up = subprocess.Popen(["ip", "netns", "exec", ns, "python3", "-c", UPSTREAM_O],
                              stdout=subprocess.PIPE, text=True)
        procs.append(up)
        assert up.stdout.readline().strip() == "up"
        hosts = os.path.join(TMP, "hosts")
        with open(hosts, "w") as f:
            f.write("127.0.0.1 localhost\n198.51.100.2 bench.test\n")
        sock = os.path.join(TMP, "proxy.sock")
        token = "bench-" + os.urandom(6).hex()
        spec = {"socket": sock, "token": token, "max_connections": 1024,
                "allowed_domains": [{"host": "bench.test"}]}
        wrap = "mount --make-rprivate / && mount --bind '%s' /etc/hosts && exec " % hosts
        px = subprocess.Popen(["unshare", "-m", "sh", "-c", wrap + "'%s' __proxy" % WORKREX],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(px)
        px.stdin.write(json.dumps(spec))
        px.stdin.close()
        assert px.stdout.readline().strip() == "listening"
        threading.Thread(target=lambda: [None for _ in px.stdout], daemon=True).start()
        tconf = os.path.join(TMP, "tinyproxy.conf")
        with open(tconf, "w") as f:
            f.write("Port 8899\nListen 127.0.0.1\nTimeout 600\nMaxClients 2000\n"
                    "ConnectPort 443\nAllow 127.0.0.1\nLogLevel Critical\n")
        tp = subprocess.Popen(["unshare", "-m", "sh", "-c", wrap + "tinyproxy -d -c '%s'" % tconf],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(tp)
        auth = "Proxy-Authorization: Basic %s\r\n" % __import__("base64").b64encode(
            ("workrex:" + token).encode()).decode()

        def open_direct():
            s = socket.create_connection(("198.51.100.2", 443), timeout=30)
            return s

        def open_via(kind):
            if kind == "workrex":
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(30)
                s.connect(sock)
                s.sendall(("CONNECT bench.test:443 HTTP/1.1\r\n%s\r\n" % auth).encode())
            else:
                s = socket.create_connection(("127.0.0.1", 8899), timeout=30)
                s.sendall(b"CONNECT bench.test:443 HTTP/1.1\r\nHost: bench.test:443\r\n\r\n")
            got = b""
            while b"\r\n\r\n" not in got:
                b = s.recv(4096)
                if not b:
                    raise RuntimeError("%s: no answer to CONNECT" % kind)
                got += b
            if b" 200 " not in got.split(b"\r\n")[0]:
                raise RuntimeError("%s: %r" % (kind, got[:80]))
            return s

        deadline = time.monotonic() + 10
        while True:
            try:
                open_via("tinyproxy").close()
                break
            except (OSError, RuntimeError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        size = 512 << 20
        buf = bytearray(4 << 20)

        def download(opener):
            s = opener()
            t0 = time.monotonic()
            s.sendall(b"D" + struct.pack(">Q", size))
            n = 0
            while True:
                k = s.recv_into(buf)
                if not k:
                    break
                n += k
            dt = time.monotonic() - t0
            s.close()
            if n != size:
                raise RuntimeError("got %d of %d bytes" % (n, size))
            return dt
        rates = {}
        for name, opener in (("direct", open_direct), ("workrex", lambda: open_via("workrex")),
                             ("tinyproxy", lambda: open_via("tinyproxy"))):
            rates[name] = statistics.median([size / download(opener) / 1e6 for _ in range(3)])
        print("(o) one tunnel, 512 MiB down, median of 3: direct %.0f MB/s; workrex's proxy %.0f "
              "MB/s (%s of direct); tinyproxy %.0f MB/s (%s of direct)"
              % (rates["direct"], rates["workrex"], ratio(rates["workrex"], rates["direct"]),
                 rates["tinyproxy"], ratio(rates["tinyproxy"], rates["direct"])))
        lat = {}
        for name, opener in (("direct", open_direct), ("workrex", lambda: open_via("workrex")),
                             ("tinyproxy", lambda: open_via("tinyproxy"))):
            xs = []
            for _ in range(200):
                t0 = time.monotonic()
                s = opener()
                xs.append(time.monotonic() - t0)
                s.close()
            lat[name] = statistics.median(xs) * 1e3
        print("(o) time to a tunnel (CONNECT to 200), median of 200: workrex %.2f ms, tinyproxy "
              "%.2f ms; a direct TCP connect %.2f ms (added by workrex: %.2f ms)"
              % (lat["workrex"], lat["tinyproxy"], lat["direct"], lat["workrex"] - lat["direct"]))
        base = pss_kb(px.pid)
        held = []
        for _ in range(1000):
            s = open_via("workrex")
            s.sendall(b"I")
            held.append(s)
        time.sleep(0.5)
        full = pss_kb(px.pid)
        print("(o) 1,000 idle tunnels held: the proxy's memory %.1f MB -> %.1f MB (%.1f KB a tunnel)"
              % (base / 1024, full / 1024, (full - base) / 1000))
        for s in held:
            s.close()
    finally:
        for p in procs:
            p.kill()
            p.wait()
        subprocess.run(["ip", "link", "del", vh], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


# ---- (n) image paste through the terminal (OSC 5522) -------------------------------

READ_5522 = r"""
import base64, os, sys, tty
tty.setraw(0)
sys.stdout.write("ready\r\n"); sys.stdout.flush()
while True:
    os.read(0, 64)
    sys.stdout.write("\033]5522;type=read;%s\033\\" % base64.b64encode(b"image/png").decode())
    sys.stdout.flush()
    got, n = bytearray(), 0
    while b"status=DONE" not in got[-64:]:
        got += os.read(0, 1 << 16)
    for p in got.split(b"\033\\"):
        if b"status=DATA" in p:
            n += len(base64.b64decode(p.split(b";")[-1]))
    sys.stdout.write("read %d\r\n" % n); sys.stdout.flush()
"""


def bench_paste_terminal():
    here = os.path.dirname(os.path.abspath(__file__))
    e2e = os.path.join(here, "..", "tests", "e2e")
    kitty = os.path.join(e2e, "kitty_terminal.py")
    png = os.path.join(TMP, "five-5522.png")
    subprocess.run([os.path.join(e2e, "make_png.py"), png, str(5 << 20)], check=True)
    size = os.path.getsize(png)
    log = os.path.join(TMP, "requests")
    reader = os.path.join(TMP, "read_5522.py")
    with open(reader, "w") as f:
        f.write(READ_5522)
    ref = []
    term = Term(["python3", kitty, log, png, "python3", reader], env_for("/bin/sh"))
    try:
        term.wait_for(b"ready")
        for i in range(10):
            mark = term.mark()
            t0 = time.monotonic()
            os.write(term.fd, b"g")
            ref.append(term.wait_for(b"read %d" % size, mark, timeout=30) - t0)
    finally:
        term.close()
    repo = new_repo("paste5522")
    cfg = os.path.join(TMP, "cfg", "workrex", "config.yaml")
    with open(cfg, "w") as f:
        f.write("agent: python3 %s\npanes: [\"<agent>\"]\n" % tail_input())
    env = dict(env_for("/bin/sh"), SSH_CONNECTION="127.0.0.1 1 127.0.0.1 22")
    env.pop("DISPLAY", None)
    term = Term(["python3", kitty, log, png, "/bin/sh", "-c",
                 "cd '%s' && exec '%s'" % (repo, WORKREX)], env)
    wrx = []
    try:
        term.wait_for(b"help")
        subprocess.run([WORKREX, "add", "pst"], cwd=repo, env=genv(), check=True,
                       capture_output=True)
        time.sleep(0.5)
        for i in range(10):
            mark = term.mark()
            t0 = time.monotonic()
            r = subprocess.run([WORKREX, "paste-image", "pst"], cwd=repo, env=genv(),
                               capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError("paste-image: " + r.stderr.strip())
            name = os.path.basename(r.stdout.strip()).encode()[-11:]
            wrx.append(term.wait_for(name, mark, timeout=30) - t0)
    finally:
        term.close()
        os.unlink(cfg)
    mw, mr = statistics.median(wrx), statistics.median(ref)
    print("(n) image paste of a %.1f MB PNG through the terminal (OSC 5522, stand-in kitty), "
          "median of 10: %.0f ms; the same answer read and decoded alone %.0f ms; ratio %s"
          % (size / 1e6, mw * 1e3, mr * 1e3, ratio(mw, mr)))


# ---- (q) scale: 100 agents with keepers ---------------------------------------------

def agent_env(handle_pid):
    with open("/proc/%d/environ" % handle_pid, "rb") as f:
        return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)


def agent_panes():
    """The environments of the agents' programs (the keepers' children) that a hook would have."""
    out = []
    for k in keepers(TMP):
        try:
            kids = open("/proc/%d/task/%d/children" % (k, k)).read().split()
        except OSError:
            continue
        for c in kids:
            try:
                if open("/proc/%s/cmdline" % c, "rb").read() != b"sleep\x00100000\x00":
                    continue  # the agent (its first pane), whatever workrex started it
                e = agent_env(int(c))
                cwd = os.readlink("/proc/%s/cwd" % c)
            except OSError:
                continue
            out.append(({a.decode(): b.decode() for a, b in e.items()}, cwd))
    return out


def stalls_since(log, offset):
    with open(log, "rb") as f:
        f.seek(offset)
        text = f.read().decode(errors="replace")
    out = []
    for l in text.splitlines():
        if "loop: stalled " in l:
            words = l.rsplit("stalled ", 1)[1].replace("(", " ").split()
            out.append((float(words[0]), float(words[2])))
    return out


def bench_scale():
    n = 100
    repo = new_repo("scale", "a\n")
    cfg = os.path.join(TMP, "cfg", "workrex", "config.yaml")
    with open(cfg, "w") as f:
        f.write("agent: sleep 100000\npanes:\n  - command: <agent>\n  - command: sleep 100001\n")
    adds = []
    for i in range(n):
        t0 = time.monotonic()
        subprocess.run([WORKREX, "add", "-b", "s%03d" % i], cwd=repo, env=genv(), check=True,
                       capture_output=True)
        adds.append((time.monotonic() - t0) * 1000)
        wt = os.path.join(TMP, "scale__worktrees", "s%03d" % i)
        if i % 3 == 0:
            with open(os.path.join(wt, "dirty.txt"), "w") as fh:
                fh.write("x\n")
        elif i % 3 == 1:
            with open(os.path.join(wt, "c.txt"), "w") as fh:
                fh.write("c\n")
            subprocess.run(["git", "add", "c.txt"], cwd=wt, env=genv(), check=True)
            subprocess.run(["git", "commit", "-qm", "c"], cwd=wt, env=genv(), check=True)
    first, last = statistics.median(adds[:10]), statistics.median(adds[-10:])
    nk = len(keepers(TMP))
    lists = sorted(timed([WORKREX, "list", "--json"], repo) * 1000 for _ in range(10))
    # A hook's set-status with no dashboard, in an agent pane's own environment.
    panes = agent_panes()
    hook = dict(genv())
    hook.update(panes[len(panes) // 2][0] if panes else {})
    where = panes[len(panes) // 2][1] if panes else repo  # a hook runs in its worktree
    strace = os.path.join(TMP, "hook.strace")
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect", "-o", strace, WORKREX,
                    "set-status", "waiting"], env=hook, cwd=where, capture_output=True)
    connects = sum(1 for l in open(strace) if "connect(" in l) if os.path.exists(strace) else -1
    hooks = []
    for _ in range(10):
        t0 = time.monotonic()
        r = subprocess.run([WORKREX, "set-status", "waiting"], env=hook, cwd=where,
                           capture_output=True)
        hooks.append((time.monotonic() - t0) * 1000)
    hook_ok = r.returncode == 0
    pss = sum(pss_kb(k) for k in keepers(TMP)) / 1024
    # The dashboard: its first frame, re-attach after a detach and after kill -9.
    denv = env_for("/bin/sh")
    denv["WORKREX_STALL_MS"] = "1"

    def dash():
        return Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], denv)
    frames, detached, killed = [], [], []
    for i in range(3):
        t0 = time.monotonic()
        w = dash()
        (frames if i == 0 else detached).append((w.wait_for(b"C-b ? help", timeout=60) - t0) * 1000)
        detach(w)
    for _ in range(3):
        t0 = time.monotonic()
        w = dash()
        killed.append((w.wait_for(b"C-b ? help", timeout=60) - t0) * 1000)
        os.kill(w.pid, signal.SIGKILL)
        os.waitpid(w.pid, 0)
        w.pid = -1
        w.close(keep=True)
    w = dash()
    w.wait_for(b"C-b ? help", timeout=60)
    time.sleep(1)
    cpu, wakes = measure_idle(w.pid)
    log = os.path.join(TMP, "state", "workrex", "workrex.log")
    at = os.path.getsize(log)
    before = len(keepers(TMP))
    for _ in range(20):
        w.send(b"\x02c")
        time.sleep(0.1)
    deadline = time.monotonic() + 60
    while len(keepers(TMP)) < before + 20 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1)
    stalls = stalls_since(log, at)
    opened = len(keepers(TMP)) - before
    detach(w)
    os.unlink(cfg)
    print("(q) scale, %d agents made by add (%d keepers; a third dirty, a third ahead): add %.0f ms "
          "for the first 10, %.0f ms for the last 10 (x%s; goal <= 1.5)" % (
              n, nk, first, last, ratio(last, first)))
    print("    list --json median %.1f ms (goal < 50); set-status with no dashboard %.1f ms, "
          "%d connects (goal <= 2)%s; keepers' PSS %.1f MB in all" % (
              statistics.median(lists), statistics.median(hooks), connects,
              "" if hook_ok else " FAILED", pss))
    print("    dashboard first frame %.0f ms, re-attach after detach %.0f ms, after kill -9 %.0f ms "
          "(medians; goal < 150)" % (frames[0], statistics.median(detached),
                                     statistics.median(killed)))
    print("    %d panes opened by C-b c: the loop's longest turn %.1f ms wall, %.1f ms of its own "
          "CPU (goal <= 5), %d turns past 1 ms; idle 10 s: %.3f s CPU, %d wake-ups" % (
              opened, max((s[0] for s in stalls), default=0.0),
              max((s[1] for s in stalls), default=0.0), len(stalls), cpu, wakes))


# ---- (s) a group of agents ---------------------------------------------------------

def bench_group():
    repo = new_repo("group", "a\n")
    with open(os.path.join(TMP, "cfg", "workrex", "config.yaml"), "w") as f:
        f.write("agent: sh\ncheck: 'true'\n")
    rm = lambda names: subprocess.run([WORKREX, "rm", "-f"] + names, cwd=repo, env=genv(),
                                      check=True, capture_output=True)
    seq, grp = [], []
    for r in range(3):
        # Ten one after another, then the same ten as one group; both removed after.
        t0 = time.monotonic()
        for i in range(10):
            subprocess.run([WORKREX, "add", "-b", "s%d-%d" % (r, i)], cwd=repo, env=genv(),
                           check=True, capture_output=True)
        seq.append(time.monotonic() - t0)
        rm(["s%d-%d" % (r, i) for i in range(10)])
        grp.append(timed([WORKREX, "add", "-b", "-n", "10", "g%d" % r], repo))
        rm(["g%d-%d" % (r, i) for i in range(1, 11)])
    sm, gm = statistics.median(seq), statistics.median(grp)
    print("(s) 10 agents: add -n 10 %.2f s, ten adds %.2f s (median of 3), ratio %s"
          % (gm, sm, ratio(gm, sm)))
    # Twenty candidates, each with a commit ahead and its check kept.
    subprocess.run([WORKREX, "add", "-b", "-n", "20", "cand"], cwd=repo, env=genv(), check=True,
                   capture_output=True)
    for i in range(1, 21):
        wt = os.path.join(TMP, "group__worktrees", "cand-%d" % i)
        with open(os.path.join(wt, "s.txt"), "w") as fh:
            fh.write("solution %d\n" % i)
        subprocess.run(["git", "add", "s.txt"], cwd=wt, env=genv(), check=True)
        subprocess.run(["git", "commit", "-qm", "s"], cwd=wt, env=genv(), check=True)
    subprocess.run([WORKREX, "compare", "cand", "--check"], cwd=repo, env=genv(), check=True,
                   capture_output=True)
    times = sorted(timed([WORKREX, "compare", "cand", "--json"], repo) for _ in range(10))
    print("    compare --json over 20 candidates: median %.1f ms, max %.1f ms (goal < 100 ms)"
          % (statistics.median(times) * 1000, times[-1] * 1000))
    # The dashboard: C-b = to its 20 rows; then add -n 20 while it runs, its loop's turns.
    denv = env_for("/bin/sh")
    denv["WORKREX_STALL_MS"] = "1"
    w = Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], denv)
    w.wait_for(b"C-b ? help", timeout=60)
    w.send(b"\x022")  # cand-1, focused
    time.sleep(1)
    views = []
    for _ in range(5):
        m = w.mark()
        t0 = time.monotonic()
        w.send(b"\x02=")
        views.append((w.wait_for(b"20 candidates", start=m) - t0) * 1000)
        time.sleep(0.3)
        m = w.mark()
        w.send(b"q")
        w.wait_for(b"cand-1:sh", start=m)
        time.sleep(0.3)
    log = os.path.join(TMP, "state", "workrex", "workrex.log")
    at = os.path.getsize(log)
    t0 = time.monotonic()
    subprocess.run([WORKREX, "add", "-b", "-n", "20", "more"], cwd=repo, env=genv(), check=True,
                   capture_output=True)
    added = time.monotonic() - t0
    time.sleep(2)  # the twenty open their panes
    stalls = stalls_since(log, at)
    detach(w)
    print("    C-b = to its 20 rows: median %.0f ms, max %.0f ms (goal < 100 ms)"
          % (statistics.median(views), max(views)))
    print("    add -n 20 with the dashboard up: %.2f s; the loop's longest turn meanwhile %.1f ms "
          "wall, %.1f ms of its CPU, %d turns past 1 ms" % (
              added, max((s[0] for s in stalls), default=0.0),
              max((s[1] for s in stalls), default=0.0), len(stalls)))
    end_keepers(TMP)


# ---- (r) the review view on a long diff -----------------------------------------------

def diff_children():
    """pids of the `workrex diff` children running (the review view's)."""
    out = subprocess.run(["pgrep", "-f", "^%s diff --" % WORKREX], capture_output=True, text=True)
    return out.stdout.split()


def bench_review():
    n = 25000  # lines changed: 25,000 removed and 25,000 added, 50,000 in the diff
    repo = new_repo("review", "a\n")
    with open(os.path.join(repo, "big.txt"), "w") as f:
        f.write("".join("line %d of the original\n" % i for i in range(n)))
    git("add", "big.txt", cwd=repo)
    git("commit", "-qm", "big", cwd=repo)
    cfg = os.path.join(TMP, "cfg", "workrex", "config.yaml")
    with open(cfg, "w") as f:
        f.write("agent: sleep 100000\n")
    subprocess.run([WORKREX, "add", "-b", "rv"], cwd=repo, env=genv(), check=True,
                   capture_output=True)
    wt = os.path.join(TMP, "review__worktrees", "rv")
    with open(os.path.join(wt, "big.txt"), "w") as f:
        f.write("".join("LINE %d OF THE CHANGE\n" % i for i in range(n)))
    lines = subprocess.run("git diff HEAD | wc -l", shell=True, cwd=wt, env=genv(),
                           capture_output=True, text=True).stdout.strip()
    refs = []
    for _ in range(5):
        t0 = time.monotonic()
        subprocess.run("git diff HEAD | cat >/dev/null", shell=True, cwd=wt, env=genv(), check=True)
        refs.append((time.monotonic() - t0) * 1000)
    denv = env_for("/bin/sh")
    denv["WORKREX_STALL_MS"] = "1"
    w = Term(["/bin/sh", "-c", "cd '%s' && exec '%s'" % (repo, WORKREX)], denv)
    w.wait_for(b"C-b ? help", timeout=60)
    w.send(b"\x022")  # the agent, focused
    time.sleep(1)
    log = os.path.join(TMP, "state", "workrex", "workrex.log")
    at = os.path.getsize(log)
    firsts, wholes = [], []
    for _ in range(5):
        m = w.mark()
        t0 = time.monotonic()
        w.send(b"\x02D")
        firsts.append((w.wait_for(b"@@ -1,", start=m) - t0) * 1000)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # its child ended: every line read
            if not diff_children():
                break
            time.sleep(0.002)
        wholes.append((time.monotonic() - t0) * 1000)
        time.sleep(0.3)
        m = w.mark()
        w.send(b"q")
        w.wait_for(b"rv:sleep", start=m)  # the panes again
        time.sleep(0.3)
    stalls = stalls_since(log, at)
    detach(w)
    os.unlink(cfg)
    ref = statistics.median(refs)
    print("(r) review view on a %s-line diff: first screen %.0f ms, every line read %.0f ms; "
          "git diff | cat %.0f ms (x%s first screen, x%s all; medians of 5)" % (
              lines, statistics.median(firsts), statistics.median(wholes), ref,
              ratio(statistics.median(firsts), ref), ratio(statistics.median(wholes), ref)))
    print("    the loop's longest turn meanwhile %.1f ms wall, %.1f ms of its own CPU (goal < 5), "
          "%d turns past 1 ms" % (max((s[0] for s in stalls), default=0.0),
                                  max((s[1] for s in stalls), default=0.0), len(stalls)))


# ---- (v) the web view ---------------------------------------------------------

def web_server(repo, env):
    """workrex web on a free loopback port: its process and the pairing link."""
    p = subprocess.Popen([WORKREX, "web", "--listen", "127.0.0.1:0"], cwd=repo, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline().strip()
    if not line.startswith("web: "):
        sys.exit("bench (v): workrex web said %r" % line)
    return p, line[5:]


def bench_web():
    import web_browser
    if not shutil.which("chromium") or not shutil.which("chromedriver"):
        print("(v) skipped: chromium and chromedriver are not installed")
        return
    env = env_for("/bin/sh")
    repo = new_repo("web")
    flood = os.path.join(TMP, "web-flood.sh")
    with open(flood, "w") as f:
        f.write("#!/bin/sh\necho idle; read go\n"
                "i=0; while :; do i=$((i+1)); printf '\\033[3%dmline %d of the flood\\033[0m\\n' "
                "$((i % 8)) $i; done\n")
    os.chmod(flood, 0o755)
    with open(os.path.join(TMP, "cfg", "workrex", "config.yaml"), "w") as f:
        f.write("agents:\n  flood:\n    command: %s\n" % flood)
    for i in range(20):
        subprocess.run([WORKREX, "add", "f%02d" % i, "-a", "flood", "-b"], cwd=repo, env=env,
                       check=True, stdout=subprocess.DEVNULL)
    p, url = web_server(repo, env)
    b = web_browser.Browser()
    try:
        loads, lists, paints = [], [], []
        for _ in range(5):
            t0 = time.time()
            b.go(url.split("#")[0] + "?" + str(t0) + "#" + url.split("#")[1])
            b.until("listed", "return document.querySelectorAll('#agents li').length === 20")
            lists.append(time.time() - t0)
            loads.append(b.js("const n = performance.getEntriesByType('navigation')[0];"
                              "return n.loadEventEnd / 1000"))
            t1 = time.time()
            b.js("document.querySelector('#agents li').click()")
            b.until("painted", "return document.getElementById('screen').textContent.includes('idle')")
            paints.append(time.time() - t1)
        # Idle: every agent waiting, one page open on a pane (after the
        # page loads' HTTP connections timed out, 10 s).
        time.sleep(12)
        ic, isw = measure_idle(p.pid)
        # Flood: all 20 print as fast as they can; the page shows one.
        for i in range(20):
            subprocess.run([WORKREX, "send", "f%02d" % i, "go"], cwd=repo, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1)
        ks = keepers(TMP)
        b.js("window.__f = 0; const on = ws.onmessage; ws.onmessage = (e) => {"
             "if (e.data.startsWith('{\"t\":\"pane\"')) window.__f++; on(e); }")
        k0 = [proc_stat(k) for k in ks]
        fc, fsw = measure_idle(p.pid)
        k1 = [proc_stat(k) for k in ks]
        frames = b.js("return window.__f")
        kc = sum(y[0] - x[0] for x, y in zip(k0, k1))
    finally:
        b.close()
        p.terminate()
        p.wait(10)
    print("(v) web view, 20 agents: page load %.0f ms, to the agent list %.0f ms (%s the load), "
          "to a pane's first paint %.0f ms (median of 5)"
          % (1000 * statistics.median(loads), 1000 * statistics.median(lists),
             ratio(statistics.median(lists), statistics.median(loads)),
             1000 * statistics.median(paints)))
    print("    idle with a page open, 10 s: %.3f s CPU, %d wake-ups (goal: zero); 20 agents flooding, "
          "one shown, 10 s: the server %.2f s CPU, %d frames to the page (at most %d), the %d "
          "keepers %.2f s CPU (%s the server's)"
          % (ic, isw, fc, frames, 10000 // 66, len(ks), kc, ratio(fc, kc)))


def main():
    for tool in ("tmux",):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            sys.exit("bench: %s is required" % tool)
    which = sys.argv[1:] or ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o",
                             "p", "q", "r", "s", "t", "u", "v", "w", "x"]
    # The repositories made here need no identity or settings of the machine's.
    os.environ.update({k: v for k, v in genv().items() if k.startswith("GIT_")})
    print("workrex bench: %s vs %s, outer terminal %dx%d" % (
        WORKREX, subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip(),
        COLS, ROWS))
    try:
        if "a" in which:
            bench_throughput()
        if "t" in which:
            bench_hidden()
        if "b" in which:
            bench_idle()
        if "c" in which:
            bench_rss()
        if "d" in which:
            bench_latency()
        if "e" in which:
            bench_add()
        if "f" in which:
            bench_list()
        if "g" in which:
            bench_status()
        if "h" in which:
            bench_sandbox()
        if "u" in which:
            bench_gvisor()
        if "w" in which:
            bench_sandbox("devcontainer")
        if "x" in which:
            bench_ports()
        if "i" in which:
            bench_import()
        if "j" in which:
            bench_reflow()
        if "k" in which:
            bench_attach()
        if "l" in which:
            bench_hostexec()
        if "m" in which:
            bench_paste()
        if "n" in which:
            bench_paste_terminal()
        if "o" in which:
            bench_proxy()
        if "p" in which:
            bench_remote()
        if "q" in which:
            bench_scale()
        if "r" in which:
            bench_review()
        if "s" in which:
            bench_group()
        if "v" in which:
            bench_web()
    finally:
        tmux("kill-server")
        end_keepers(TMP)
        if os.environ.get("WRX_BENCH_KEEP"):
            print("bench: kept %s (logs in state/workrex/)" % TMP)
        else:
            subprocess.run(["rm", "-rf", TMP])


if __name__ == "__main__":
    main()
