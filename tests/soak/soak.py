#!/usr/bin/env python3
"""tests/soak/soak.py - workrex under a day's abuse, compressed.

A project with up to --agents stand-in agents (standin.py: they print,
commit, ask, flood, finish, exit and crash), a dashboard in a real tmux,
and for --minutes random operations as a person and a hostile machine would
do them: add, send, type, capture, status, list, merge (three strategies,
and -k), remove, rename, detach and attach, kill -9 of the dashboard, of a
keeper and of a command part way, resize, config reload. After each one,
the invariants of the crash tests (tests/crash/lib.sh); every minute, the
dashboard's and the keepers' memory and open files, and the keeper count.

It fails on a broken invariant, a sanitizer report, a dashboard that died
unasked, a keeper count that is not the panes', or memory or open files
that grow where the load did not. Everything it runs is bounded in time.
"""
import argparse
import glob
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "standin.py")


class Broken(Exception):
    pass


class Soak:
    def __init__(self, args):
        self.wrx = os.path.abspath(args.workrex)
        self.rnd = random.Random(args.seed)
        self.seed = args.seed
        self.max_agents = args.agents
        self.tmp = tempfile.mkdtemp(prefix="wrx-soak.")
        self.repo = os.path.join(self.tmp, "work", "proj")
        self.asan = os.path.join(self.tmp, "asan")
        os.makedirs(self.asan)
        home = os.path.join(self.tmp, "home")
        run = os.path.join(self.tmp, "run")
        os.makedirs(run, mode=0o700)
        os.makedirs(os.path.join(home, ".config", "workrex"))
        self.env = dict(os.environ)
        for k in ("TMUX", "COLORTERM", "WORKREX_FAULT"):
            self.env.pop(k, None)
        self.env.update({
            "HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "XDG_STATE_HOME": os.path.join(home, ".local", "state"), "XDG_RUNTIME_DIR": run,
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "SHELL": "/bin/bash",
            "GIT_AUTHOR_NAME": "Soak", "GIT_AUTHOR_EMAIL": "soak@example.com",
            "GIT_COMMITTER_NAME": "Soak", "GIT_COMMITTER_EMAIL": "soak@example.com",
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
            "SOAK_WORKREX": self.wrx,
            "ASAN_OPTIONS": f"log_path={self.asan}/asan:detect_leaks=0:abort_on_error=1:"
                            "quarantine_size_mb=16",
            "UBSAN_OPTIONS": f"log_path={self.asan}/ubsan:print_stacktrace=1:halt_on_error=1",
        })
        self.run_mark = "XDG_RUNTIME_DIR=" + run
        self.sock = f"wrx-soak-{os.getpid()}"
        # A dashboard that dies stays on the screen (remain-on-exit), for the report.
        self.tmux_conf = os.path.join(self.tmp, "tmux.conf")
        with open(self.tmux_conf, "w") as f:
            f.write("set -g remain-on-exit on\nset -g status off\n")
        self.config = os.path.join(home, ".config", "workrex", "config.yaml")
        self.ops = {}
        self.faults = 0
        self.samples = []
        self.serial = 0
        self.main_seen = []  # every rev main had: none may be lost
        self.dash_pid = None

    # --- running things, bounded -------------------------------------------------

    def sh(self, *argv, timeout=60, ok=(0,), cwd=None, inp=None):
        p = subprocess.run(argv, cwd=cwd or self.repo, env=self.env, input=inp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=timeout, check=False)
        if ok is not None and p.returncode not in ok:
            raise Broken(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()[-400:]}")
        return p

    def w(self, *argv, timeout=90, ok=(0,)):
        p = self.sh(self.wrx, *argv, timeout=timeout, ok=ok)
        self.trace(f"{' '.join(argv)} -> {p.returncode}")
        return p

    def trace(self, what):
        """SOAK_TRACE=1: each command and fault on stderr, to read beside workrex.log."""
        if os.environ.get("SOAK_TRACE"):
            print(f"soak: {time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)

    def git(self, *argv, ok=(0,), cwd=None):
        return self.sh("git", *argv, ok=ok, cwd=cwd)

    def tm(self, *argv, ok=(0,)):
        return self.sh("tmux", "-L", self.sock, "-f", self.tmux_conf, *argv, timeout=20, ok=ok)

    def ours(self, pattern):
        pids = []
        for p in subprocess.run(["pgrep", "-f", "--", pattern], stdout=subprocess.PIPE,
                                text=True, check=False).stdout.split():
            try:
                with open(f"/proc/{p}/environ", "rb") as f:
                    if self.run_mark.encode() in f.read().split(b"\0"):
                        pids.append(int(p))
            except OSError:
                pass
        return pids

    def keepers(self):
        return self.ours("__keeper$")

    # --- the project and the dashboard ---------------------------------------------

    def setup(self):
        os.makedirs(self.repo)
        self.git("init", "-q", "-b", "main")
        with open(os.path.join(self.repo, "README"), "w") as f:
            f.write("soak\n")
        self.git("add", "README")
        self.git("commit", "-qm", "init")
        self.write_config(scrollback=2000)
        self.start_dashboard()

    def write_config(self, scrollback):
        with open(self.config + ".new", "w") as f:
            f.write(f"agent: python3 {STANDIN}\nscrollback: {scrollback}\n"
                    "panes:\n  - command: <agent>\n")
        os.replace(self.config + ".new", self.config)

    def start_dashboard(self):
        self.tm("kill-server", ok=None)
        cols, rows = self.rnd.choice([(200, 50), (120, 40), (80, 24)])
        env = " ".join(f"{k}={v}" for k, v in (("ASAN_OPTIONS", self.env["ASAN_OPTIONS"]),
                                                ("UBSAN_OPTIONS", self.env["UBSAN_OPTIONS"])))
        # The old server may take a moment to go: tried again, a few times.
        for tries in range(5):
            p = self.tm("new-session", "-d", "-x", str(cols), "-y", str(rows), "-c", self.repo,
                        f"exec env TERM=tmux-256color {env} {self.wrx}", ok=None)
            if p.returncode == 0:
                break
            time.sleep(0.5)
        else:
            raise Broken(f"tmux new-session: {p.stderr.strip()}")
        deadline = time.time() + 60
        while time.time() < deadline:
            if "? help" in self.screen():
                pid = self.tm("display", "-p", "#{pane_pid}").stdout.strip()
                self.dash_pid = int(pid)
                return
            time.sleep(0.2)
        raise Broken("the dashboard did not start:\n" + self.screen())

    def screen(self):
        p = self.tm("capture-pane", "-p", ok=None)
        return p.stdout if p.returncode == 0 else ""

    def dashboard_alive(self):
        p = self.tm("display", "-p", "#{pane_dead}", ok=None)
        return p.returncode == 0 and p.stdout.strip() == "0"

    def agents(self):
        return json.loads(self.w("list", "--json").stdout or "[]")

    # --- the operations -------------------------------------------------------------

    def op_add(self):
        if len(self.agents()) >= self.max_agents:
            return self.op_send()
        self.serial += 1
        self.w("add", "-b", f"s{self.serial}")

    def pick(self, want_panes=None):
        a = self.agents()
        if want_panes is not None:
            a = [x for x in a if (x.get("panes", 0) > 0) == want_panes]
        return self.rnd.choice(a) if a else None

    def op_send(self):
        a = self.pick(want_panes=True)
        if a:
            self.w("send", a["handle"], self.rnd.choice(["y", "n", "go on", "x" * 300]),
                   ok=(0, 1))

    def op_type(self):
        """Keys as a person types them: focus an agent by number, type, Enter."""
        n = len(self.agents())
        if n:
            self.tm("send-keys", "C-b")
            self.tm("send-keys", str(self.rnd.randint(2, min(9, n + 1))))
            self.tm("send-keys", "-l", "yes please")
            self.tm("send-keys", "Enter")

    def op_capture(self):
        a = self.pick(want_panes=True)
        if a:
            self.w("capture", a["handle"], "-n", "200", ok=(0, 1))

    def op_status(self):
        self.w("status", "--json")
        self.w("list")

    def op_merge(self):
        a = self.pick()
        if a is None:
            return
        flags = self.rnd.choice([[], ["--squash"], ["--rebase"], ["-k"]])
        # Refusals (a conflict, uncommitted work, a rebase of uncommitted work) change nothing.
        self.w("merge", *flags, "--ignore-uncommitted", a["handle"], ok=(0, 1))

    def op_remove(self):
        a = self.pick()
        if a:
            self.w("rm", "-f", a["handle"], ok=(0, 1))

    def op_rename(self):
        a = self.pick()
        if a is None:
            return
        self.w("close", a["handle"], ok=(0, 1))
        self.serial += 1
        self.w("rename", a["handle"], f"r{self.serial}", ok=(0, 1))

    def op_open(self):
        a = self.pick(want_panes=False)
        if a:
            self.w("open", a["handle"], ok=(0, 1))

    def op_detach(self):
        self.trace("detach")
        self.tm("send-keys", "C-b")
        self.tm("send-keys", "d")
        deadline = time.time() + 30
        while self.dashboard_alive() and time.time() < deadline:
            time.sleep(0.1)
        self.start_dashboard()

    def op_kill_dashboard(self):
        self.faults += 1
        os.kill(self.dash_pid, signal.SIGKILL)
        self.trace("kill -9 of the dashboard")
        self.start_dashboard()

    def op_kill_keeper(self):
        k = self.keepers()
        if k:
            self.faults += 1
            pid = self.rnd.choice(k)
            os.kill(pid, signal.SIGKILL)
            self.trace(f"kill -9 of keeper {pid}")

    def op_kill_command(self):
        """A command killed part way, at a random moment: the next one settles it."""
        self.serial += 1
        argv = self.rnd.choice([["add", "-b", f"k{self.serial}"], ["merge", "--squash"],
                                ["rm", "-f"], ["rename"]])
        a = self.pick()
        if argv[0] != "add":
            if a is None:
                return
            argv = argv + [a["handle"]] + ([f"k{self.serial}"] if argv[0] == "rename" else [])
        p = subprocess.Popen([self.wrx] + argv, cwd=self.repo, env=self.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        time.sleep(self.rnd.uniform(0, 0.4))
        if p.poll() is None:
            self.faults += 1
            p.kill()
        p.wait(timeout=30)
        self.trace(f"{' '.join(argv)} killed part way -> {p.returncode}")
        # The git it was running goes on to its end, as it would after a
        # kill -9 of workrex alone: its own config.lock or index.lock is
        # its while it runs, not one left. Waited for (bounded), then checked.
        self.orphans_end(p.pid)

    def orphans_end(self, pgid, limit=20.0):
        """Until no git of process group pgid runs, at most limit seconds."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            left = []
            for stat in glob.glob("/proc/[0-9]*/stat"):
                try:
                    with open(stat) as f:
                        text = f.read()
                except OSError:
                    continue
                comm = text[text.index("(") + 1:text.rindex(")")]
                fields = text[text.rindex(")") + 2:].split()
                if int(fields[2]) == pgid and comm.startswith("git"):
                    left.append(comm)
            if not left:
                return
            time.sleep(0.05)
        self.trace(f"the killed command's git still ran after {limit} s")

    def op_resize(self):
        cols, rows = self.rnd.choice([(200, 50), (120, 40), (80, 24), (40, 10), (1, 1)])
        self.tm("resize-window", "-x", str(cols), "-y", str(rows), ok=None)

    def op_reload(self):
        self.write_config(scrollback=self.rnd.choice([1000, 2000, 5000]))
        self.w("config", "reload", ok=(0, 1))

    OPS = [("add", 14), ("send", 8), ("type", 6), ("capture", 6), ("status", 6), ("merge", 4),
           ("remove", 2), ("rename", 2), ("open", 4), ("detach", 1), ("kill_dashboard", 1),
           ("kill_keeper", 2), ("kill_command", 3), ("resize", 3), ("reload", 2)]

    # --- the invariants -------------------------------------------------------------

    def invariants(self):
        bad = []
        # The next command first: it settles what a killed one left (worktree_recover).
        listed = {a["handle"]: a for a in self.agents()}
        # main never loses a commit it had: each main seen holds the one before
        # it, so it is enough that this one holds the last.
        main = self.git("rev-parse", "main").stdout.strip()
        old = self.main_seen[-1] if self.main_seen else main
        if self.git("merge-base", "--is-ancestor", old, main, ok=None).returncode != 0:
            bad.append(f"main lost {old}")
        if not self.main_seen or self.main_seen[-1] != main:
            self.main_seen.append(main)
        fsck = self.fsck()
        if fsck:
            bad.append("git fsck: " + fsck)
        gitdir = os.path.join(self.repo, ".git")
        # Locks: none of ours; git's own only while a stand-in commits (not older than 30 s).
        for lock in glob.glob(gitdir + "/**/*.lock", recursive=True):
            try:
                if time.time() - os.stat(lock).st_mtime > 30:
                    bad.append(f"lock file left: {lock}")
            except OSError:
                pass
        left = [f for f in os.listdir(os.path.join(gitdir, "workrex-intents"))
                if not f.startswith(".")] if os.path.isdir(
                    os.path.join(gitdir, "workrex-intents")) else []
        if left:
            bad.append(f"intents left: {left}")
        records = {}
        cfg = self.git("config", "--get-regexp", r"^workrex\.worktree\..*\.path$", ok=(0, 1))
        for line in cfg.stdout.splitlines():
            key, path = line.split(" ", 1)
            records[key[len("workrex.worktree."):-len(".path")]] = path
        trees = []
        for line in self.git("worktree", "list", "--porcelain").stdout.splitlines():
            if line.startswith("worktree ") and line[9:] != self.repo:
                trees.append(line[9:])
        for t in trees:
            if t not in records.values():
                bad.append(f"worktree without a record: {t}")
        for h, path in records.items():
            if not os.path.isdir(path) and not listed.get(h, {}).get("missing"):
                bad.append(f"record of {h} without its worktree")
        # A keeper closed while it was still starting is ended as its start
        # answers (core/runner.c): a moment later under load. One that outlives
        # that by 10 s is left behind.
        strays = self.stray_keepers(records)
        deadline = time.time() + 10
        while strays and time.time() < deadline:
            time.sleep(0.25)
            strays = self.stray_keepers(records)
        for h in strays:
            bad.append(f"a keeper runs for {h}, which has no record (for 10 s)")
        reports = glob.glob(self.asan + "/*")
        if reports:
            bad.append("sanitizer reports: " + "".join(open(r).read()[:3000] for r in reports))
        if not self.dashboard_alive():
            bad.append("the dashboard died unasked:\n" + self.screen())
        if bad:
            raise Broken("; ".join(bad))

    def stray_keepers(self, records):
        """The agents whose keeper answers on its socket but which have no record."""
        strays = []
        for link in glob.glob(self.env["XDG_RUNTIME_DIR"] + "/**/*.agent", recursive=True):
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(2)
            try:
                s.connect(link[:-len(".agent")] + ".sock")
                h = os.readlink(link)
                if h != "proj" and h not in records:
                    strays.append(h)
            except OSError:
                pass
            finally:
                s.close()
        return strays

    def fsck(self):
        """git fsck's complaints, but for its race with the stand-ins committing meanwhile:
        it lists the objects before it reads the reflogs, so a commit made between is
        "missing". What is missing must be missing still, and fsck fail again."""
        for attempt in range(3):
            p = self.git("fsck", "--no-progress", ok=None)
            if p.returncode == 0:
                return None
            out = p.stdout + p.stderr
            gone = [w.split()[2] for w in out.splitlines() if w.startswith("missing ")]
            still = [x for x in gone if self.git("cat-file", "-e", x, ok=None).returncode != 0]
            other = [w for w in out.splitlines() if not w.startswith(("missing ", "dangling "))
                     and "invalid reflog entry" not in w]
            if still or other:
                return (" ".join(still) + " " + " ".join(other))[-600:]
            time.sleep(0.5)
        return None

    # --- what it costs --------------------------------------------------------------

    @staticmethod
    def rss_kb(pid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    @staticmethod
    def fds(pid):
        try:
            return len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            return 0

    def sample(self, minute):
        ks = self.keepers()
        agents = self.agents()
        panes = sum(a.get("panes", 0) for a in agents)
        s = {"minute": minute, "agents": len(agents), "panes": panes, "keepers": len(ks),
             "dash_rss_mb": self.rss_kb(self.dash_pid) / 1024, "dash_fds": self.fds(self.dash_pid),
             "keeper_rss_mb_max": max([self.rss_kb(k) for k in ks] or [0]) / 1024,
             "keeper_fds_max": max([self.fds(k) for k in ks] or [0])}
        self.samples.append(s)
        print("soak: minute {minute:3d}: {agents:2d} agents, {panes:2d} panes, {keepers:2d} "
              "keepers; dashboard {dash_rss_mb:6.1f} MB {dash_fds:3d} fds; keeper at most "
              "{keeper_rss_mb_max:5.1f} MB {keeper_fds_max:3d} fds".format(**s), flush=True)
        return s

    def flat(self):
        """Open files: the second half of the run no higher than the first allows, per pane.
        Memory: the same once every agent runs (it grows with each agent and its history
        until then); a soak with fewer than four samples of that is not judged on it."""
        half = len(self.samples) // 2
        if half < 2:
            return []
        first, second = self.samples[:half], self.samples[half:]
        bad = []
        # The dashboard's open files: a few of its own, and a few per pane.
        per = max(s["dash_fds"] - 2 * s["panes"] for s in first)
        for s in second:
            if s["dash_fds"] - 2 * s["panes"] > per + 8:
                bad.append(f"dashboard fds grew: {s}")
        kfd = max(s["keeper_fds_max"] for s in first)
        for s in second:
            if s["keeper_fds_max"] > kfd + 4:
                bad.append(f"a keeper's fds grew: {s['keeper_fds_max']}")
        # Every agent running: from the first sample with all but two (removes come and go).
        at = next((i for i, s in enumerate(self.samples)
                   if s["agents"] >= self.max_agents - 2), len(self.samples))
        full = self.samples[at:]
        if len(full) < 4:
            print(f"soak: memory not judged: {len(full)} samples with every agent running, "
                  "4 needed", flush=True)
            return bad
        half = len(full) // 2
        first, second = full[:half], full[half:]
        top = max(s["dash_rss_mb"] for s in first)
        for s in second:
            if s["dash_rss_mb"] > top * 1.5 + 16:
                bad.append(f"dashboard memory grew: {s['dash_rss_mb']:.1f} MB, "
                           f"{top:.1f} MB at most in the first half")
        ktop = max(s["keeper_rss_mb_max"] for s in first)
        for s in second:
            if s["keeper_rss_mb_max"] > ktop * 1.5 + 16:
                bad.append(f"a keeper's memory grew: {s['keeper_rss_mb_max']:.1f} MB")
        return bad

    # --- the run --------------------------------------------------------------------

    def run(self, minutes, max_ops=0):
        self.setup()
        names = [n for n, wt in self.OPS for _ in range(wt)]
        start = time.time()
        end = start + minutes * 60
        next_sample = start
        minute = 0
        n = 0
        while time.time() < end and (max_ops == 0 or n < max_ops):
            if time.time() >= next_sample:
                s = self.sample(minute)
                # No keeper without its pane (the project's own is not an agent's; a
                # pane whose keeper was killed stays, saying so, until closed).
                if s["keepers"] > s["panes"] + 1:
                    time.sleep(3)
                    s = self.sample(minute)
                    if s["keepers"] > s["panes"] + 1:
                        raise Broken(f"{s['keepers']} keepers for {s['panes']} panes")
                minute += 1
                next_sample = start + minute * 60
            op = self.rnd.choice(names)
            self.trace(f"operation {n + 1}: {op}")
            try:
                getattr(self, "op_" + op)()
            except subprocess.TimeoutExpired as e:
                raise Broken(f"{op}: timed out: {e}")
            except Broken as e:
                raise Broken(f"{op}: {e}")
            n += 1
            self.ops[op] = self.ops.get(op, 0) + 1
            time.sleep(self.rnd.uniform(0, 0.5))
            try:
                self.invariants()
            except Broken as e:
                raise Broken(f"after {op} (operation {n}): {e}")
        self.sample(minute)
        bad = self.flat()
        if bad:
            raise Broken("; ".join(bad[:5]))
        # A clean end: the dashboard and every keeper go when asked.
        self.w("shutdown", "-y")
        deadline = time.time() + 30
        while self.keepers() and time.time() < deadline:
            time.sleep(0.2)
        if self.keepers():
            raise Broken(f"{len(self.keepers())} keepers left after shutdown")
        self.invariants_after_shutdown()
        return n

    def invariants_after_shutdown(self):
        reports = glob.glob(self.asan + "/*")
        if reports:
            raise Broken("sanitizer reports: " + "".join(open(r).read()[:3000] for r in reports))

    def cleanup(self):
        self.tm("kill-server", ok=None)
        for k in self.keepers():
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)


def soak_once(args, seed, minutes, max_ops=0):
    """One soak of seed for minutes (or max_ops operations): 0 when every invariant held."""
    args.seed = seed
    soak = Soak(args)
    print(f"soak: {minutes:g} minutes{f' or {max_ops} operations' if max_ops else ''}, "
          f"up to {args.agents} agents, seed {seed}", flush=True)
    t0 = time.time()
    try:
        n = soak.run(minutes, max_ops)
    except Broken as e:
        print(f"not ok - soak (seed {seed}): {e}", flush=True)
        print("soak: ops " + json.dumps(soak.ops), flush=True)
        print(f"soak: add the line '{seed} {sum(soak.ops.values()) + 1}' to tests/soak/seeds "
              "to run it in every round", flush=True)
        if os.environ.get("SOAK_KEEP"):
            print(f"soak: kept {soak.tmp}", flush=True)
            soak.tm("kill-server", ok=None)
            return 1
        soak.cleanup()
        return 1
    peak = {k: max(s[k] for s in soak.samples) for k in
            ("agents", "keepers", "dash_rss_mb", "dash_fds", "keeper_rss_mb_max",
             "keeper_fds_max")}
    print(f"soak: {n} operations in {(time.time() - t0) / 60:.1f} minutes, {soak.faults} "
          f"faults injected; ops {json.dumps(soak.ops)}", flush=True)
    print(f"soak: peaks {json.dumps({k: round(v, 1) for k, v in peak.items()})}", flush=True)
    print(f"ok - soak (seed {seed}): {n} operations, every invariant held after each",
          flush=True)
    soak.cleanup()
    return 0


def replay(args):
    """Each seed of the file ("SEED OPS [why]" a line) again, to OPS operations and 10% past,
    in --minutes in all, shared by their operations."""
    failed = 0
    with open(args.replay) as f:
        lines = [ln.split() for ln in f if ln.strip() and not ln.startswith("#")]
    total = sum(int(words[1]) for words in lines) or 1
    for words in lines:
        seed, ops = int(words[0]), int(words[1])
        failed += soak_once(args, seed, args.minutes * ops / total, ops + ops // 10)
    print(f"soak seeds: {len(lines) - failed} passed, {failed} failed", flush=True)
    return 1 if failed or not lines else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workrex", required=True)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--agents", type=int, default=20)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--ops", type=int, default=0, help="stop after this many operations")
    ap.add_argument("--replay", help="a file of seeds that once failed, each run again")
    args = ap.parse_args()
    if args.replay:
        return replay(args)
    return soak_once(args, args.seed, args.minutes, args.ops)


if __name__ == "__main__":
    sys.exit(main())
