"""The keepers a test started: found by the XDG_RUNTIME_DIR in their
environment, and ended (a killed tmux only detaches workrex, whose panes
go on in their keepers)."""
import os
import signal
import time


def keepers(runtime_dir):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if not f.read().endswith(b"\0__keeper\0"):
                    continue
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if ("XDG_RUNTIME_DIR=" + runtime_dir).encode() in env:
            found.append(int(pid))
    return found


def end_keepers(runtime_dir, timeout=5.0):
    """SIGTERM (the keeper hangs its program up), then SIGKILL what is left."""
    for pid in keepers(runtime_dir):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = time.time() + timeout
    while keepers(runtime_dir) and time.time() < end:
        time.sleep(0.05)
    for pid in keepers(runtime_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def rss_kb(pid):
    """A process's resident set, in kB (0 once it is gone)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
