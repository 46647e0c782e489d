#!/usr/bin/env python3
"""An outer terminal that stops reading for a while.

slow_terminal.py WORKREX DIR: runs the dashboard on a pty in DIR, has its
shell flood the pane with whole new screens (so that frames are large) and
then print a marker, reads nothing for 3 s (the pty fills: a dashboard
that wrote its frames blocking stopped there), then reads again. The dashboard
must wait rather than spin meanwhile (under 1 s of CPU in those 3 s), yet
not stop: a command (workrex list) gets its answer meanwhile. And every
byte it meant for the terminal must arrive: the marker is drawn, and it
still answers keys. Exit 0 when it does, 1 with the tail of
the output when not. Every wait is bounded.
"""
import fcntl, os, pty, select, signal, struct, subprocess, sys, termios, time

ROWS, COLS = 40, 120


def read_until(fd, out, needle, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if needle in out:
            return True
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                b = os.read(fd, 1 << 16)
            except OSError:
                return needle in out
            if not b:
                break
            out += b
    return needle in out


def cpu_seconds(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def main():
    workrex, cwd = sys.argv[1], sys.argv[2]
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        os.chdir(cwd)
        os.execv(workrex, [workrex])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    out = bytearray()
    ok = False
    try:
        if not read_until(fd, out, b"wrx$", 10):
            print("no shell prompt", file=sys.stderr)
            return 1
        flood = os.path.join(os.path.dirname(os.path.abspath(cwd)), "flood.sh")
        with open(flood, "w") as f:
            f.write("i=0; while [ $i -lt 3000 ]; do i=$((i+1)); printf '\\033[H'; j=0\n"
                    "while [ $j -lt 36 ]; do j=$((j+1))\n"
                    "printf '\\033[3%dm%0100d\\n' $((j%7)) $((i*j)); done; done\n"
                    "printf '\\033[m'\n")
        # Split so the typed command line itself never contains the marker.
        os.write(fd, b"sh %s; echo FLOOD-''ENDS-HERE\r" % flood.encode())
        busy, start = cpu_seconds(pid), time.monotonic()
        time.sleep(1)  # not reading: the dashboard's frames fill the pty
        try:
            answered = subprocess.run([workrex, "list"], cwd=cwd, capture_output=True,
                                      timeout=1.5).returncode == 0
        except subprocess.TimeoutExpired:
            answered = False
        time.sleep(max(0.0, 3 - (time.monotonic() - start)))
        busy = cpu_seconds(pid) - busy
        if not answered:
            print("workrex list got no answer while the terminal did not read",
                  file=sys.stderr)
            return 1
        print("dashboard CPU while the terminal did not read for 3 s: %.2f s" % busy)
        if busy > 1.0:
            print("it spun on the full terminal instead of waiting", file=sys.stderr)
            return 1
        if not read_until(fd, out, b"FLOOD-ENDS-HERE", 15):
            print("the marker never reached the terminal", file=sys.stderr)
            return 1
        os.write(fd, b"echo STILL-''ANSWERING\r")
        if not read_until(fd, out, b"STILL-ANSWERING", 10):
            print("the dashboard no longer answers", file=sys.stderr)
            return 1
        ok = True
        return 0
    finally:
        if not ok:
            sys.stderr.write("last output: %r\n" % bytes(out[-400:]))
        os.kill(pid, signal.SIGTERM)
        os.close(fd)  # a dashboard stuck writing gets EIO, and ends
        for _ in range(100):
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


if __name__ == "__main__":
    sys.exit(main())
