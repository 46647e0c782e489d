#!/usr/bin/env python3
"""A stand-in agent for the web view's tests: prints in colour, asks, and
says what it was answered; its status through `workrex set-status`, as a
hook would. With "hostile", it prints markup that must stay text."""
import subprocess
import sys

hostile = len(sys.argv) > 1 and sys.argv[1] == "hostile"


def status(word):
    subprocess.run(["workrex", "set-status", word], check=False)


print("\x1b[31mRED-TEXT\x1b[0m \x1b[1;32mbold-green\x1b[0m ready", flush=True)
if hostile:
    print('<script>window.__pwned=1</script>', flush=True)
    print('<img src=x onerror="window.__pwned=2">', flush=True)
    print('<a href="javascript:window.__pwned=3">click</a>', flush=True)
status("working")
while True:
    status("waiting")
    print("question: go on? [y/n]", flush=True)
    line = sys.stdin.readline()
    if not line:
        break
    status("working")
    print("got: " + line.strip(), flush=True)
    if line.strip() == "y":
        # Its work, committed as an agent does, then done; later lines
        # (a review's comments) are only said.
        with open("from-agent.txt", "w") as f:
            f.write("line one\nline two\n")
        subprocess.run(["git", "add", "from-agent.txt"], check=True)
        subprocess.run(["git", "commit", "-qm", "agent work"], check=True)
        status("done")
        print("finished", flush=True)
        for more in sys.stdin:
            print("got: " + more.strip(), flush=True)
        break
