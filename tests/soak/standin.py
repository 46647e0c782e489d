#!/usr/bin/env python3
"""tests/soak/standin.py - an agent stand-in for the soak: it prints, commits,
asks (and waits for an answer), floods, finishes, exits and crashes, at random,
reporting its status the way an agent's hooks do (workrex set-status)."""
import os
import random
import select
import signal
import subprocess
import sys
import time

WRX = os.environ.get("SOAK_WORKREX", "workrex")
rnd = random.Random(os.getpid() ^ int(time.time()))


def status(word):
    subprocess.run([WRX, "set-status", word], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=10, check=False)


def commit(n):
    name = f"soak-{os.getpid()}-{n}.txt"
    with open(name, "w") as f:
        f.write(f"work {n}\n" * rnd.randint(1, 50))
    subprocess.run(["git", "add", name], check=False, timeout=30)
    subprocess.run(["git", "commit", "-qm", f"stand-in work {n}"], check=False, timeout=30)
    print(f"committed {name}", flush=True)


def ask():
    status("waiting")
    print("Proceed? [y/n] ", end="", flush=True)
    ready, _, _ = select.select([sys.stdin], [], [], rnd.uniform(1, 20))
    if ready:
        print(f"answer: {sys.stdin.readline().strip()!r}", flush=True)
    status("working")


def flood():
    line = "flood " + "x" * rnd.randint(10, 200) + "\n"
    sys.stdout.write(line * rnd.randint(1000, 20000))
    sys.stdout.flush()


def main():
    status("working")
    n = 0
    while True:
        n += 1
        r = rnd.random()
        if r < 0.45:
            for i in range(rnd.randint(1, 30)):
                print(f"\x1b[3{i % 8}mstep {n}.{i}\x1b[0m thinking about the task", flush=True)
        elif r < 0.65:
            commit(n)
        elif r < 0.75:
            ask()
        elif r < 0.80:
            flood()
        elif r < 0.81:
            status("done")
            print("done", flush=True)
            return 0
        elif r < 0.815:
            os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(rnd.uniform(0.1, 1.5))


if __name__ == "__main__":
    sys.exit(main())
