#!/usr/bin/env python3
"""A terminal that speaks kitty's clipboard protocol (OSC 5522), before tmux.

kitty_terminal.py LOG CLIP CMD...: runs CMD on a pty and relays bytes between
it and this process's own terminal (a tmux pane), as a terminal emulator's
front does, but answers itself what kitty answers:

  CSI ? 5522 $ p                          -> CSI ? 5522 ; 1 $ y
  OSC 5522 ; type=read ; <b64 mime list> ST -> status=OK, status=DATA packets
                                             (4096 bytes each), status=DONE

CLIP is a file that holds what the clipboard does, read at each request:
bytes served as image/png, or "text:..." (only text/plain), or "eperm"
(the user refuses the read); or CLIP is "none", a terminal without the
protocol (DECRQM gets Ps 0, reads no answer). Each
request is appended to LOG as one line: "decrqm" or "read <mime list>".
Debian 12's kitty (0.26) predates the protocol, so this stands in for it.
"""
import base64, fcntl, os, pty, select, signal, struct, sys, termios, tty

DECRQM = b"\033[?5522$p"
OSC = b"\033]5522;"


def size_of(fd):
    try:
        return fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
    except OSError:
        return struct.pack("HHHH", 30, 100, 0, 0)


def b64(s):
    return base64.b64encode(s).decode()


def answer(clip, mimes):
    """The packets kitty would send for a read of mimes."""
    if clip == "none":
        return b""
    held = open(clip, "rb").read()
    if held == b"eperm":
        return b"\033]5522;type=read:status=EPERM\033\\"
    out = [b"\033]5522;type=read:status=OK\033\\"]
    have = {"text/plain": held} if held.startswith(b"text:") else {"image/png": held}
    for mime in mimes:
        data = have.get(mime)
        if data is None:
            continue
        for i in range(0, max(len(data), 1), 4096):
            m, d = b64(mime.encode()), b64(data[i : i + 4096])
            out.append(("\033]5522;type=read:status=DATA:mime=%s;%s\033\\" % (m, d)).encode())
    out.append(b"\033]5522;type=read:status=DONE\033\\")
    return b"".join(out)


def main():
    log, clip, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, size_of(sys.stdin.fileno()))
        os.execvp(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, size_of(0))
    signal.signal(signal.SIGWINCH, lambda *_: fcntl.ioctl(fd, termios.TIOCSWINSZ, size_of(0)))
    tty.setraw(0)
    os.set_blocking(fd, False)
    pending = b""  # program output not yet relayed: may end in part of a sequence
    to_child = b""  # keys and answers not yet written (the program may be slow to read)
    while True:
        try:
            r, w, _ = select.select([0, fd], [fd] if to_child else [], [], 1.0)
        except InterruptedError:
            continue
        if fd in w:
            try:
                to_child = to_child[os.write(fd, to_child) :]
            except BlockingIOError:
                pass
        if 0 in r:
            data = os.read(0, 65536)
            if not data:
                break
            to_child += data
        if fd in r:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError:
                break
            if not data:
                break
            pending += data
            out = b""
            while True:
                found = [k for k in (pending.find(DECRQM), pending.find(OSC)) if k >= 0]
                if not found:
                    # Hold back a tail that may begin a sequence.
                    keep = 0
                    for n in range(1, min(len(pending), len(OSC)) + 1):
                        if DECRQM.startswith(pending[-n:]) or OSC.startswith(pending[-n:]):
                            keep = n
                    out += pending[: len(pending) - keep]
                    pending = pending[len(pending) - keep :]
                    break
                cut = min(found)
                out += pending[:cut]
                pending = pending[cut:]
                if pending.startswith(DECRQM):
                    pending = pending[len(DECRQM) :]
                    open(log, "a").write("decrqm\n")
                    to_child += b"\033[?5522;%d$y" % (0 if clip == "none" else 1)
                    continue
                end = pending.find(b"\033\\")
                if end < 0:
                    break  # the rest of it comes later
                body = pending[len(OSC) : end].decode(errors="replace")
                pending = pending[end + 2 :]
                meta, _, payload = body.partition(";")
                if "type=read" in meta:
                    mimes = base64.b64decode(payload).decode().split()
                    open(log, "a").write("read %s\n" % " ".join(mimes))
                    to_child += answer(clip, mimes)
            if out:
                os.write(1, out)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
