#!/usr/bin/env python3
"""Shows what a program gets from its terminal: it asks for bracketed paste,
then prints each read as GOT[<repr>] on a line of its own."""
import os, sys, tty

tty.setraw(0)
sys.stdout.write("\x1b[?2004hshow-input ready\r\n")
sys.stdout.flush()
while True:
    data = os.read(0, 65536)
    if not data:
        break
    sys.stdout.write("GOT[%s]\r\n" % repr(data.decode("utf-8", "replace"))[1:-1])
    sys.stdout.flush()
