#!/usr/bin/env python3
"""key_echo.py LOG [app]: a raw-mode program that appends, for every burst of
bytes its terminal sends (reads within 0.15 s of each other), one line of
their hex to LOG. With "app" it asks for application cursor and keypad keys.
It always asks for bracketed paste, focus events and SGR mouse reports, as
Claude Code and Codex do; typed QUIT-KEY-ECHO ends it. t_keys.sh runs it in a workrex pane and in a tmux
pane and compares the two logs key by key."""
import os, select, sys, tty

log = open(sys.argv[1], "a", buffering=1)
tty.setraw(0)
modes = "\x1b[?2004h\x1b[?1004h\x1b[?1000h\x1b[?1006h"
if len(sys.argv) > 2 and sys.argv[2] == "app":
    modes += "\x1b[?1h\x1b="
sys.stdout.write(modes + "key-echo ready\r\n")
sys.stdout.flush()
while True:
    data = os.read(0, 4096)
    if not data:
        break
    while select.select([0], [], [], 0.15)[0]:
        more = os.read(0, 4096)
        if not more:
            break
        data += more
    if data == b"QUIT-KEY-ECHO":
        break
    log.write(data.hex() + "\n")
    sys.stdout.write("got %d\r\n" % len(data))
    sys.stdout.flush()
