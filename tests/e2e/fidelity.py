#!/usr/bin/env python3
"""fidelity.py - workrex's panes against tmux's, cell by cell.

Each case runs one program twice at the same size (COLS x ROWS): in a plain
tmux pane, and in a workrex pane (the dashboard in a tmux window two rows
taller, its sidebar hidden, so that its one pane is rows 1..ROWS of the
window). Both screens are read the same way: capture-pane -e of the tmux
that shows them, over the pane's region, parsed into cells (text,
attributes, colours) and compared cell by cell; the cursor too.

A case may resize the pane, type keys, wait for a screen, and compare again,
the screen or the whole history as text (tmux's capture-pane -S - against
`workrex capture`), or `workrex capture --screen` and `-e` as cells against
tmux's capture-pane -e.
Where tmux itself is wrong, the case (or the step) says so (`tmux_wrong`,
with the reason and what xterm and vttest expect) and checks workrex
against that answer instead.

Prints "ok - fidelity: NAME (cells)" or "not ok - ..." per case and the
cells that differ, and at the end the share of cells that match.
Every wait is bounded; only local tmux servers on private sockets are used.
FID_DUMP=1 prints both screens at every comparison; naming cases (any part
of their names) runs only those; FID_CASES=module takes the cases from
another module beside this one.
"""
import os, re, shutil, subprocess, sys, tempfile, time, unicodedata

WORKREX = os.environ.get("WORKREX") or sys.exit("set WORKREX to the binary under test")
COLS, ROWS = 80, 24
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from keepers import end_keepers  # noqa: E402
TMP = tempfile.mkdtemp(prefix="wrx-fidelity.")
ENV = dict(os.environ)
ENV.update(HOME=TMP + "/home", XDG_CONFIG_HOME=TMP + "/home/.config",
           XDG_STATE_HOME=TMP + "/home/.local/state", XDG_RUNTIME_DIR=TMP + "/run",
           LANG="C.UTF-8", LC_ALL="C.UTF-8", TERM="tmux-256color", COLORTERM="truecolor")
ENV.pop("TMUX", None)
for d in ("home", "run", "work"):
    os.makedirs(os.path.join(TMP, d), mode=0o700, exist_ok=True)

# The program starts once its terminal has the case's size, in both tmuxes.
WRAPPER = os.path.join(TMP, "run-case.sh")
with open(WRAPPER, "w") as f:
    f.write("""#!/bin/sh
i=0
while [ "$(stty size 2>/dev/null)" != "$FID_ROWS $FID_COLS" ]; do
	i=$((i + 1)); [ $i -gt 200 ] && { echo "FIDELITY: size $(stty size), not $FID_ROWS $FID_COLS"; exec sleep 60; }
	sleep 0.05
done
cd "$FID_DIR" && exec sh -c "$FID_CMD"
""")
os.chmod(WRAPPER, 0o755)
# The agents' command, for the cases run as an agent (see Side).
AGENT_CONF = os.path.join(TMP, "home", ".config", "workrex", "config.yaml")
os.makedirs(os.path.dirname(AGENT_CONF), exist_ok=True)
CONF = os.path.join(TMP, "tmux.conf")
with open(CONF, "w") as f:
    f.write("set -g status off\nset -g history-limit 10000\nset -g default-terminal xterm-256color\n"
            "set-environment -gu LD_PRELOAD\n")
# Both tmuxes count as a terminal of today does, by Unicode 15: Debian 12's C
# library stops at 14, and tmux 3.3 takes a character it has no width for as
# one column. So they load workrex's own table for wcwidth (not their panes:
# the line above).
WCWIDTH = os.path.join(TMP, "wcwidth15.so")
subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", WCWIDTH,
                os.path.join(HERE, "..", "..", "src", "term", "wcwidth.c")], check=True)
TMUX_ENV = dict(ENV, LD_PRELOAD=WCWIDTH)


class Tmux:
    def __init__(self, name):
        self.sock = "wrx-fid-%s-%d" % (name, os.getpid())

    def __call__(self, *args, check=True):
        r = subprocess.run(["tmux", "-L", self.sock, "-f", CONF] + list(args),
                           capture_output=True, text=True, env=TMUX_ENV, timeout=20)
        if check and r.returncode:
            raise RuntimeError("tmux %s: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout

    def kill(self):
        self("kill-server", check=False)


# ---- reading a captured screen ------------------------------------------------

DEFAULT = (0, "", "", "", "")  # attrs, underline style, fg, bg, underline colour
ATTR = {1: 1, 2: 2, 3: 4, 5: 8, 7: 16, 8: 32, 9: 64, 53: 128}
OFF = {22: 1 | 2, 23: 4, 25: 8, 27: 16, 28: 32, 29: 64, 55: 128}
ATTR_NAMES = ["bold", "dim", "italic", "blink", "reverse", "hidden", "strike", "overline"]


def colour(params, i):
    """A 38/48/58 colour starting at params[i]; returns (value, next index)."""
    p = params[i]
    if ":" in p:  # the colon form: 38:5:n, 38:2::r:g:b or 38:2:r:g:b
        sub = p.split(":")
        if len(sub) > 2 and sub[1] == "5":
            return "i%s" % sub[2], i + 1
        if len(sub) > 4 and sub[1] == "2":
            rgb = sub[-3:]
            return "#%02x%02x%02x" % tuple(int(x or 0) for x in rgb), i + 1
        return "", i + 1
    if i + 2 < len(params) + 1 and i + 1 < len(params) and params[i + 1] == "5":
        return "i%s" % params[i + 2], i + 3
    if i + 1 < len(params) and params[i + 1] == "2":
        rgb = params[i + 2:i + 5]
        return "#%02x%02x%02x" % tuple(int(x or 0) for x in rgb), i + 5
    return "", i + 1


def sgr(state, params):
    attrs, ul, fg, bg, uc = state
    params = params or ["0"]
    i = 0
    while i < len(params):
        p = params[i]
        head = p.split(":")[0]
        n = int(head) if head.isdigit() else -1
        if p == "5:3":  # tmux 3.3's capture-pane -e writes overline (53) so
            n, p = 53, "53"
        if n == 0:
            attrs, ul, fg, bg, uc = DEFAULT
        elif n == 4:
            ul = "single" if ":" not in p else {"0": "", "1": "single", "2": "double",
                                               "3": "curly", "4": "dotted", "5": "dashed"}.get(
                                                   p.split(":")[1], "single")
        elif n == 21:
            ul = "double"
        elif n == 24:
            ul = ""
        elif n in ATTR:
            attrs |= ATTR[n]
        elif n in OFF:
            attrs &= ~OFF[n]
        elif 30 <= n <= 37:
            fg = "i%d" % (n - 30)
        elif 90 <= n <= 97:
            fg = "i%d" % (n - 90 + 8)
        elif 40 <= n <= 47:
            bg = "i%d" % (n - 40)
        elif 100 <= n <= 107:
            bg = "i%d" % (n - 100 + 8)
        elif n == 39:
            fg = ""
        elif n == 49:
            bg = ""
        elif n == 59:
            uc = ""
        elif n in (38, 48, 58):
            v, i = colour(params, i)
            if n == 38:
                fg = v
            elif n == 48:
                bg = v
            else:
                uc = v
            continue
        i += 1
    return attrs, ul, fg, bg, uc


def zero_width(ch):
    return unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf") or \
        ch in "\u200d\ufe0f\ufe0e"


# tmux writes cells of the DEC line-drawing set as SO, the ASCII letter, SI.
DEC_GRAPHICS = dict(zip("`afghijklmnopqrstuvwxyz{|}~", "◆▒°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·"))


def parse(text):
    """capture-pane -e output -> rows of [text, style] cells (state runs on across lines)."""
    rows, state, acs = [], DEFAULT, False
    for line in text.split("\n"):
        cells, i = [], 0
        while i < len(line):
            if line[i] in "\x0e\x0f":
                acs = line[i] == "\x0e"
                i += 1
                continue
            if line[i] == "\x1b":
                m = re.match(r"\x1b\[([0-9;:]*)m", line[i:])
                if m:
                    state = sgr(state, [x for x in m.group(1).split(";")] if m.group(1) else [])
                    i += m.end()
                    continue
                m = re.match(r"\x1b\][^\x07\x1b]*(\x07|\x1b\\)", line[i:])  # hyperlinks
                i += m.end() if m else 1
                continue
            ch = DEC_GRAPHICS.get(line[i], line[i]) if acs else line[i]
            if cells and zero_width(ch):
                cells[-1][0] += ch
            else:
                cells.append([ch, state])
            i += 1
        rows.append(cells)
    return rows


def screen_of(lines):
    """Plain text lines as the cells a capture of them would give."""
    return [[[ch, DEFAULT] for ch in line] for line in lines]


def trimmed(cells):
    while cells and cells[-1][0] == " " and cells[-1][1][3] == "" and \
            not cells[-1][1][0] & 16 and cells[-1][1][1] == "":
        cells = cells[:-1]
    return cells


def describe(cell):
    if cell is None:
        return "(nothing)"
    text, (attrs, ul, fg, bg, uc) = cell
    bits = [ATTR_NAMES[k] for k in range(8) if attrs & (1 << k)]
    if ul:
        bits.append("underline " + ul)
    for name, v in (("fg", fg), ("bg", bg), ("ul-colour", uc)):
        if v:
            bits.append("%s %s" % (name, v))
    return "%r %s" % (text, " ".join(bits) or "plain")


def compare(want, got):
    """(matching cells, total cells, first differences)."""
    same = total = 0
    diffs = []
    for r in range(max(len(want), len(got))):
        a = trimmed(want[r]) if r < len(want) else []
        b = trimmed(got[r]) if r < len(got) else []
        for c in range(max(len(a), len(b))):
            x = a[c] if c < len(a) else None
            y = b[c] if c < len(b) else None
            total += 1
            if x == y or (x is None and y[0] == " " and y[1] == DEFAULT) or \
                    (y is None and x[0] == " " and x[1] == DEFAULT):
                same += 1
            elif len(diffs) < 4:
                diffs.append("row %d cell %d: tmux %s, workrex %s" % (r, c, describe(x),
                                                                      describe(y)))
    return same, total, diffs


# ---- running a case in both ---------------------------------------------------

def wait(pred, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise TimeoutError(what)


class Side:
    """One program in a plain tmux pane (ref) or in workrex's pane (wrx)."""

    def __init__(self, kind, case, cols, rows):
        # The panes' programs see what workrex gives its panes (session.c).
        self.kind, self.case = kind, case
        self.t = Tmux(kind)
        self.t.kill()
        self.cols, self.rows = cols, rows
        env = ["FID_CMD=" + case["cmd"], "FID_DIR=" + TMP + "/work",
               "FID_COLS=%d" % cols, "FID_ROWS=%d" % rows]
        if kind == "ref":
            self.t("new-session", "-d", "-x", str(cols), "-y", str(rows),
                   "env %s %s" % (" ".join(sh_quote(e) for e in env), WRAPPER))
        elif not case.get("agent"):
            self.t("new-session", "-d", "-x", str(cols), "-y", str(rows + 2), "-c", TMP + "/work",
                   "env TERM=tmux-256color %s SHELL=%s %s; sleep 60" % (" ".join(sh_quote(e) for e in env),
                                                    WRAPPER, WORKREX))
            wait(lambda: "C-b ? help" in self.t("capture-pane", "-p"), 10, "workrex to start")
            self.hide_sidebar()
        else:
            # An agent's pane (so that `workrex capture` reads its history): the
            # program is the agent, its pane zoomed to the whole area.
            repo = TMP + "/repo"
            if not os.path.isdir(repo):
                subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
                subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t",
                                "commit", "-q", "--allow-empty", "-m", "init"], check=True)
            with open(AGENT_CONF, "w") as f:
                f.write("agent: %s\npanes:\n  - command: <agent>\n" % WRAPPER)
            self.t("new-session", "-d", "-x", str(cols), "-y", str(rows + 2), "-c", repo,
                   "env TERM=tmux-256color %s %s; sleep 60" % (" ".join(sh_quote(e) for e in env),
                                                           WORKREX))
            wait(lambda: "C-b ? help" in self.t("capture-pane", "-p"), 10, "workrex to start")
            r = subprocess.run(["env"] + env + [WORKREX, "add", "fid"], capture_output=True,
                               text=True, env=ENV, cwd=repo, timeout=30)
            if r.returncode:
                raise RuntimeError("workrex add: " + r.stderr.strip())
            wait(lambda: ":" in self.t("capture-pane", "-p").split("\n")[0] and
                 "fid" in self.t("capture-pane", "-p"), 10, "the agent's pane")
            self.hide_sidebar()
            self.t("send-keys", "C-b", "z")

    def hide_sidebar(self):
        """C-b s, if the sidebar shows: a project keeps it hidden once it was (ui's view)."""
        if self.t("capture-pane", "-p").startswith(" workrex "):
            self.t("send-keys", "C-b", "s")
            wait(lambda: not self.t("capture-pane", "-p").startswith(" workrex "), 10,
                 "the sidebar to hide")

    def region(self):
        """The pane's rows as captured (with -e), and the cursor."""
        out = self.t("capture-pane", "-p", "-e").split("\n")
        cur = self.t("display", "-p", "#{cursor_x} #{cursor_y}").split()
        x, y = int(cur[0]), int(cur[1])
        if self.kind == "wrx":
            return "\n".join(out[1:1 + self.rows]), (x, y - 1)
        return "\n".join(out[:self.rows]), (x, y)

    def text(self):
        return re.sub(r"\x1b\[[0-9;:]*m", "", self.region()[0])

    def resize(self, cols, rows):
        self.cols, self.rows = cols, rows
        self.t("resize-window", "-x", str(cols), "-y", str(rows + (2 if self.kind == "wrx" else 0)))

    def settle(self, done):
        """Until `done` shows and the screen holds still for 0.3 s."""
        wait(lambda: re.search(done, self.text(), re.M) or
             re.search(done, self.text().replace("\n", "")), 15,
             "%s: %r on the screen" % (self.kind, done))
        last, since = None, time.monotonic()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            now = self.region()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since > 0.3:
                return now
            time.sleep(0.05)
        return last


def history_lines(text):
    lines = [line.rstrip(" ") for line in text.split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def compare_history(sides):
    """The history and the screen as text, line by line: tmux's against workrex capture's."""
    ref, wrx = sides
    want = history_lines(ref.t("capture-pane", "-p", "-S", "-", "-E", "-"))
    r = subprocess.run([WORKREX, "capture", "fid"], capture_output=True, text=True, env=ENV,
                       cwd=TMP + "/repo", timeout=20)
    got = history_lines(r.stdout) if r.returncode == 0 else ["(capture: %s)" % r.stderr.strip()]
    same, diffs = 0, []
    for i in range(max(len(want), len(got))):
        a = want[i] if i < len(want) else None
        b = got[i] if i < len(got) else None
        if a == b:
            same += 1
        elif len(diffs) < 4:
            diffs.append("line %d of %d: tmux %r, workrex %r" % (i, len(want), a, b))
    return same, max(len(want), len(got)), diffs


def compare_capture(sides):
    """`workrex capture --screen` and `capture -e` (history too) against tmux's captures, as cells."""
    ref, wrx = sides
    same = total = 0
    diffs = []
    # -N: tmux's capture would drop a row's trailing blanks, coloured ones too.
    for flags, tmux_args in ((["--screen"], ["-e", "-N"]), (["-e"], ["-e", "-N", "-S", "-"])):
        want = ref.t("capture-pane", "-p", *tmux_args).rstrip("\n")
        r = subprocess.run([WORKREX, "capture", "fid"] + flags, capture_output=True, text=True,
                           env=ENV, cwd=TMP + "/repo", timeout=20)
        got = r.stdout.rstrip("\n") if r.returncode == 0 else "(capture: %s)" % r.stderr.strip()
        if flags == ["-e"]:  # capture leaves out the blank rows at the end
            want = "\n".join(history_lines(want))
        a, b, d = compare(parse(want), parse(got))
        same += a
        total += b
        diffs += ["%s: %s" % (" ".join(flags), x) for x in d]
    return same, total, diffs


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


TOTAL = [0, 0]


def run_case(case):
    name = case["name"]
    cols, rows = case.get("size", (COLS, ROWS))
    sides = [Side("ref", case, cols, rows), Side("wrx", case, cols, rows)]
    problems, same, total, wrong = [], 0, 0, []
    try:
        steps = [("done", case.get("done", "FIDELITY-END"))] + case.get("steps", [])
        for k, step in enumerate(steps):
            if step[0] == "keys":
                for s in sides:
                    s.t("send-keys", *step[1])
                continue
            if step[0] == "resize":
                for s in sides:
                    s.resize(step[1], step[2])
                continue
            if step[0] in ("capture", "history"):
                check = compare_capture if step[0] == "capture" else compare_history
                a, b, diffs = check(sides)
                same += a
                total += b
                problems += ["%s after step %d: %s" % (step[0], k, d) for d in diffs]
                continue
            # ("done", REGEX): compare once both show it and hold still; ("wait", REGEX): only wait.
            shots = [s.settle(step[1]) for s in sides]
            if step[0] == "wait":
                continue
            want, got = parse(shots[0][0]), parse(shots[1][0])
            if os.environ.get("FID_DUMP"):  # both screens, to look at a case
                for kind, shot in zip(("tmux", "workrex"), shots):
                    print("--- %s, step %d, cursor %s" % (kind, k, shot[1]))
                    print(re.sub(r"\x1b\[[0-9;:]*m", "", shot[0]))
            fix = step[2] if len(step) > 2 else case.get("tmux_wrong")
            if fix:
                want = fix[1](want, shots[0][0])
                wrong.append(fix[0])
            a, b, diffs = compare(want, got)
            same += a
            total += b
            where = "after step %d" % k if k else "first screen"
            problems += ["%s: %s" % (where, d) for d in diffs]
            if case.get("cursor", True) and shots[0][1] != shots[1][1]:
                problems.append("%s: cursor at %s in tmux, %s in workrex" % (where, shots[0][1],
                                                                             shots[1][1]))
    except (TimeoutError, RuntimeError) as e:
        problems.append("%s" % e)
        for s in sides:
            problems.append("%s screen:\n%s" % (s.kind, s.text()))
    finally:
        for s in sides:
            s.t.kill()
        end_keepers(ENV["XDG_RUNTIME_DIR"])
        if case.get("agent"):
            os.unlink(AGENT_CONF)
            subprocess.run([WORKREX, "remove", "-f", "fid"], capture_output=True, env=ENV,
                           cwd=TMP + "/repo", timeout=30)
    TOTAL[0] += same
    TOTAL[1] += total
    note = "".join(" (tmux is wrong here: %s)" % w for w in dict.fromkeys(wrong))
    if problems:
        print("not ok - fidelity: %s, %d of %d cells%s" % (name, same, total, note))
        for p in problems:
            print("  " + p.replace("\n", "\n  "))
        return False
    print("ok - fidelity: %s, %d of %d cells%s" % (name, same, total, note))
    return True


def main():
    sys.path.insert(0, HERE)
    from fidelity_cases import CASES
    if os.environ.get("FID_CASES"):
        CASES = __import__(os.environ["FID_CASES"]).CASES
    only = sys.argv[1:]
    ok = True
    try:
        for case in CASES:
            if only and not any(o in case["name"] for o in only):
                continue
            ok &= run_case(case)
    finally:
        end_keepers(ENV["XDG_RUNTIME_DIR"])
        shutil.rmtree(TMP, ignore_errors=True)
    if TOTAL[1]:
        print("fidelity: %d of %d cells match (%.1f%%)" % (TOTAL[0], TOTAL[1],
                                                          100.0 * TOTAL[0] / TOTAL[1]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
