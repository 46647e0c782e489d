#!/usr/bin/env python3
"""Shows what a program gets from its terminal: it asks for bracketed paste,
then prints what arrives as GOT[<repr>] on a line of its own, reads that
come within 0.2 s of each other together (a paste may come in pieces)."""
import os, select, sys, tty

tty.setraw(0)
sys.stdout.write("\x1b[?2004hshow-input ready\r\n")
sys.stdout.flush()
while True:
    data = os.read(0, 65536)
    if not data:
        break
    while select.select([0], [], [], 0.2)[0]:
        more = os.read(0, 65536)
        if not more:
            break
        data += more
    sys.stdout.write("GOT[%s]\r\n" % repr(data.decode("utf-8", "replace"))[1:-1])
    sys.stdout.flush()
