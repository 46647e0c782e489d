#!/usr/bin/env python3
"""A stand-in agent CLI that is hard to type into, as the real ones are.

It asks for bracketed paste, reads its terminal only every 0.8 s (slow to
read), and does what Claude Code's input box does with a paste: a carriage
return that arrives in the same read as the end of a paste is part of the
text (a newline), not a submission. A carriage return read on its own
submits: it prints SUBMITTED[text]. After the text "go deaf" it reads on
but never draws again (a program that does not react)."""
import os, sys, time, tty

tty.setraw(0)
out = sys.stdout
out.write("\x1b[?2004hslow agent ready\r\n> ")
out.flush()
buf, deaf = "", False
START, END = "\x1b[200~", "\x1b[201~"
while True:
    time.sleep(0.8)
    data = os.read(0, 65536).decode("utf-8", "replace")
    if not data:
        break
    i, pasted = 0, False
    while i < len(data):
        if data.startswith(START, i):
            j = data.find(END, i)
            j = len(data) if j < 0 else j
            buf += data[i + len(START):j]
            i, pasted = j + len(END), True
        elif data[i] == "\r" and pasted:
            buf += "\n"  # in the same read as a paste: a newline, as Claude Code's box has it
            i += 1
        elif data[i] == "\r":
            if not deaf:
                out.write("\r\nSUBMITTED[%s]\r\n> " % buf.replace("\n", "\\n"))
            deaf = deaf or buf == "go deaf"
            buf, i = "", i + 1
        else:
            buf += data[i]
            i += 1
    if not deaf:
        out.write("\r\x1b[K> " + buf.replace("\n", "\\n"))
    out.flush()
