#!/usr/bin/env python3
"""The web view in a real Chromium, driven over WebDriver (chromedriver) as
a person uses it: open the link, read the list, open a pane, type, press.

  web_browser.py SCENARIO URL [ARGS...]

Each scenario prints what it checked and exits non-zero at the first thing
that is not so. Loopback only; every wait bounded."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

TIMEOUT = float(os.environ.get("WEB_TIMEOUT", "20"))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Browser:
    def __init__(self, width=1000, height=800):
        self.port = free_port()
        self.driver = subprocess.Popen(
            ["chromedriver", "--port=%d" % self.port, "--allowed-ips=127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.profile = tempfile.mkdtemp(prefix="wrx-chromium.")
        deadline = time.time() + TIMEOUT
        while True:
            try:
                self.call("GET", "/status")
                break
            except OSError:
                if time.time() > deadline:
                    raise SystemExit("chromedriver did not start")
                time.sleep(0.1)
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                "--user-data-dir=" + self.profile, "--window-size=%d,%d" % (width, height)]
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}}}}
        self.sid = self.call("POST", "/session", caps)["sessionId"]

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=data,
                                     method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return json.loads(r.read() or b"{}").get("value")
        except urllib.error.HTTPError as e:
            raise SystemExit("webdriver %s %s: %s" % (method, path, e.read()[:300]))

    def s(self, method, path, body=None):
        return self.call(method, "/session/%s%s" % (self.sid, path), body)

    def go(self, url):
        if not url.startswith(("http://", "https://")):
            raise SystemExit("not a link: %r" % url)
        self.s("POST", "/url", {"url": url})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def find(self, css):
        v = self.s("POST", "/element", {"using": "css selector", "value": css})
        return list(v.values())[0]

    def click(self, css):
        self.s("POST", "/element/%s/click" % self.find(css), {})

    def type(self, css, text):
        self.s("POST", "/element/%s/value" % self.find(css), {"text": text})

    def until(self, what, script, *args, timeout=TIMEOUT):
        deadline = time.time() + timeout
        while True:
            v = self.js(script, *args)
            if v:
                return v
            if time.time() > deadline:
                raise SystemExit("not so after %gs: %s" % (timeout, what))
            time.sleep(0.05)

    def close(self):
        try:
            self.s("DELETE", "")
        finally:
            self.driver.terminate()
            self.driver.wait(10)
            subprocess.run(["rm", "-rf", self.profile])


ROW = "return [...document.querySelectorAll('#agents li')].map(l => l.textContent)"


def row_of(b, handle):
    for text in b.js(ROW) or []:
        if handle in text:
            return text
    return ""


def ok(what):
    print("  ok: " + what, flush=True)


def scenario_pair_and_use(b, url, repo):
    """Pair, the list of three, a status change, a pane, an answer, a notification."""
    base = url.split("#")[0]
    b.go(url)
    b.until("three agents listed",
            "return document.querySelectorAll('#agents li').length === 3")
    ok("paired with the link; three agents listed")
    if "#token" in b.js("return location.href"):
        raise SystemExit("the token stayed in the address bar")
    ok("the token left the address bar")
    # A notification when an agent waits: the page's own Notification, counted.
    b.js("""window.__notes = [];
            const N = window.Notification;
            window.Notification = function (t, o) { window.__notes.push(t); };
            window.Notification.permission = 'granted';""")
    # a status change within 1 s: a2 answered from the command line reports
    # done the way its hooks would; timed from when send returned.
    b.until("a2 waits", "return [...document.querySelectorAll('#agents li')]"
            ".some(l => l.dataset.handle === 'a2' && l.className === 'st-waiting')")
    subprocess.run([os.environ["WORKREX"], "send", "a2", "y"], cwd=repo, check=True,
                   stdout=subprocess.DEVNULL)
    t0 = time.time()
    b.until("a2 shown done", "return [...document.querySelectorAll('#agents li')]"
            ".some(l => l.dataset.handle === 'a2' && l.className === 'st-done')", timeout=5)
    took = time.time() - t0
    if took > 1.0:
        raise SystemExit("the status change took %.2fs to show" % took)
    ok("a2's status change shown %.0f ms after send returned" % (took * 1000))
    b.until("a notification for a2", "return (window.__notes || []).some(t => t.includes('a2'))")
    ok("a notification raised: %s" % b.js("return window.__notes.join(', ')"))
    # a1's pane: text and colours
    b.js("[...document.querySelectorAll('#agents li')].find(l => l.dataset.handle === 'a1').click()")
    b.until("a1's pane shows its text", "return document.getElementById('screen').textContent.includes('RED-TEXT')")
    colour = b.js("""const s = [...document.querySelectorAll('#screen span')].find(e => e.textContent.includes('RED-TEXT'));
                    return s && getComputedStyle(s).color""")
    if colour not in ("rgb(205, 0, 0)", "rgb(128, 0, 0)"):
        raise SystemExit("RED-TEXT is not red: %s" % colour)
    bold = b.js("""const s = [...document.querySelectorAll('#screen span')].find(e => e.textContent.includes('bold-green'));
                  return s && getComputedStyle(s).fontWeight""")
    if str(bold) not in ("700", "bold"):
        raise SystemExit("bold-green is not bold: %s" % bold)
    ok("a1's pane: RED-TEXT in %s, bold-green bold" % colour)
    b.until("a1 asks", "return document.getElementById('screen').textContent.includes('go on?')")
    # An answer typed as a person types it, then the send button.
    b.type("#text", "maybe later")
    b.click("#answer button")
    b.until("the answer reached a1", "return document.getElementById('screen').textContent.includes('got: maybe later')")
    b.until("the page says sent", "return document.getElementById('said').textContent === 'sent'")
    ok("a typed answer reached the agent, and it went on")
    b.click("#quick button[data-key=y]")
    b.until("y reached a1", "return document.getElementById('screen').textContent.includes('got: y')")
    b.until("a1 done", "return document.getElementById('meta').textContent.includes('done')")
    ok("the quick answer y reached the agent; it reported done")
    # Review: its branch's diff, a comment on a hunk, sent to the agent.
    b.click("#show-branch")
    b.until("the branch's diff", "return document.getElementById('diff').textContent.includes('from-agent.txt')")
    b.until("its added line", "return [...document.querySelectorAll('#diff .add')].some(e => e.textContent === '+line two')")
    b.click(".hunk button")
    b.type(".hunk textarea", "please say why")
    b.click(".hunk form button")
    b.until("the comment added", "return document.getElementById('said').textContent !== 'sending…'")
    b.until("the list counts it", "return agents.some(a => a.handle === 'a1' && a.comments === 1)")
    said = b.js("return document.getElementById('said').textContent")
    if said != "comment added":
        raise SystemExit("the comment: " + said)
    b.click("#review-send")
    b.until("the comment reached a1", "return document.getElementById('screen').textContent.includes('please say why')")
    # Its delivery ends when the agent took it (a moment after it shows): then the merge, which
    # closes the agent's pane. Merged sooner, the delivery would end with "its program ended".
    b.until("the comments sent", "return document.getElementById('said').textContent === 'comments sent to the agent'", timeout=30)
    ok("a review comment on a hunk reached the agent")
    # Merge: the question C-b m asks, answered yes.
    b.click("#merge-ask")
    b.until("the merge question", "return !document.getElementById('ask').classList.contains('hidden')")
    q = b.js("return document.getElementById('question').textContent")
    if not q.startswith("merge a1 and remove its worktree? (y/n"):
        raise SystemExit("not C-b m's question: " + q)
    b.click("#yes")
    b.until("merged", "return document.getElementById('said').textContent !== 'sending…'", timeout=60)
    said = b.js("return document.getElementById('said').textContent")
    if said != "merged":
        raise SystemExit("the merge: " + said)
    log = subprocess.run(["git", "-C", repo, "log", "--format=%s", "main"], capture_output=True,
                         text=True).stdout
    if "agent work" not in log:
        raise SystemExit("main lacks the agent's commit: " + log)
    ok("merged from the page after: %s; main has 'agent work'" % q)
    b.click("#back")
    width = b.js("return document.documentElement.scrollWidth <= window.innerWidth")
    if not width:
        raise SystemExit("the page scrolls sideways")


def scenario_phone(b, url):
    """At 360x740: the list and a pane, no sideways scroll but inside the pane."""
    b.s("POST", "/window/rect", {"width": 360, "height": 740})
    b.go(url)
    b.until("agents listed", "return document.querySelectorAll('#agents li').length >= 1")
    inner = b.js("return window.innerWidth")
    if not b.js("return document.documentElement.scrollWidth <= window.innerWidth"):
        raise SystemExit("the list scrolls sideways at %d px" % inner)
    ok("the list fits %d px" % inner)
    b.js("document.querySelector('#agents li').click()")
    b.until("a pane", "return document.querySelectorAll('#screen div').length > 0")
    if not b.js("return document.documentElement.scrollWidth <= window.innerWidth"):
        raise SystemExit("the pane view scrolls sideways at %d px" % inner)
    ok("the pane view fits; its screen scrolls inside itself")
    if os.environ.get("WEB_SHOT"):  # the README's picture of it
        import base64
        b.js("document.getElementById('back').click()")
        time.sleep(0.3)
        with open(os.environ["WEB_SHOT"], "wb") as f:
            f.write(base64.b64decode(b.s("GET", "/screenshot")))


def scenario_hostile(b, url):
    """A pane printing markup: shown as text, nothing run."""
    b.go(url)
    b.until("agents listed", "return document.querySelectorAll('#agents li').length >= 1")
    b.js("[...document.querySelectorAll('#agents li')].find(l => l.dataset.handle === 'evil').click()")
    b.until("the hostile pane drawn", "return document.getElementById('screen').textContent.includes('RED-TEXT')")
    time.sleep(0.5)
    b.js("document.querySelectorAll('#screen span, #screen a').forEach(s => s.click())")
    pwned = b.js("return window.__pwned === undefined ? null : window.__pwned")
    if pwned is not None:
        raise SystemExit("the pane's markup ran: __pwned=%s" % pwned)
    for css in ("#screen script", "#screen img", "#screen a"):
        if b.js("return document.querySelectorAll(%s).length" % json.dumps(css)):
            raise SystemExit("the pane made an element: " + css)
    text = b.js("return document.getElementById('screen').textContent")
    for markup in ('<script>window.__pwned=1</script>', '<img src=x onerror="window.__pwned=2">',
                   '<a href="javascript:window.__pwned=3">click</a>'):
        if markup not in text:
            raise SystemExit("not shown as text: " + markup)
    ok("<script>, <img onerror> and a javascript: link printed by the agent ran nothing")


def scenario_unpaired(b, url):
    """Without the token (or with a revoked one): nothing listed."""
    b.go(url)
    b.until("the page says it is not paired", "return document.getElementById('message').textContent.length > 0")
    if b.js("return document.querySelectorAll('#agents li').length"):
        raise SystemExit("agents listed without pairing")
    ok("no agent shown: " + b.js("return document.getElementById('message').textContent"))


def scenario_status(b, url, repo, handle, answer, status):
    """handle, answered from the command line, reaches status on the page."""
    b.go(url)
    b.until("%s listed" % handle, "return [...document.querySelectorAll('#agents li')]"
            ".some(l => l.dataset.handle === arguments[0])", handle)
    subprocess.run([os.environ["WORKREX"], "send", handle, answer], cwd=repo, check=True,
                   stdout=subprocess.DEVNULL)
    b.until("%s shown %s" % (handle, status), "return [...document.querySelectorAll('#agents li')]"
            ".some(l => l.dataset.handle === arguments[0] && l.className === 'st-' + arguments[1])",
            handle, status)
    ok("%s shown %s" % (handle, status))


def scenario_answer(b, url, text, word):
    """A question of the dashboard's, holding text, answered word (yes, no) on the page."""
    b.go(url)
    b.until("the question on the page", "return [...document.querySelectorAll('#asks li')]"
            ".some(l => l.textContent.includes(arguments[0]))", text)
    q = b.js("return document.querySelector('#asks li .q').textContent")
    b.js("[...document.querySelectorAll('#asks li')].find(l => l.textContent.includes(arguments[0]))"
         ".querySelector('button[data-answer=' + arguments[1] + ']').click()", text, word)
    b.until("the question gone", "return document.querySelectorAll('#asks li').length === 0")
    ok("answered %s on the page: %s" % (word, q))


def scenario_escape(b, url):
    """The Esc button reaches the program as the Escape key."""
    b.go(url)
    b.until("keys listed", "return document.querySelectorAll('#agents li').length >= 1")
    b.js("[...document.querySelectorAll('#agents li')].find(l => l.dataset.handle === 'keys').click()")
    b.until("its program ready", "return document.getElementById('screen').textContent.includes('show-input ready')")
    b.click("#quick button[data-key=escape]")
    b.until("Escape reached it", "return document.getElementById('screen').textContent.includes('GOT[\\\\x1b]')")
    ok("Esc on the page reached the program as \\x1b")


def main():
    scenario, url = sys.argv[1], sys.argv[2]
    b = Browser()
    try:
        if scenario == "use":
            scenario_pair_and_use(b, url, sys.argv[3])
        elif scenario == "phone":
            scenario_phone(b, url)
        elif scenario == "hostile":
            scenario_hostile(b, url)
        elif scenario == "answer":
            scenario_answer(b, url, sys.argv[3], sys.argv[4])
        elif scenario == "escape":
            scenario_escape(b, url)
        elif scenario == "status":
            scenario_status(b, url, *sys.argv[3:7])
        elif scenario == "unpaired":
            scenario_unpaired(b, url)
        else:
            raise SystemExit("no scenario " + scenario)
    finally:
        b.close()


if __name__ == "__main__":
    main()
