#!/usr/bin/env python3
"""make_png.py FILE [BYTES]: a valid PNG of random pixels, about BYTES long
(default a small one), for the image paste tests and bench."""
import os, struct, sys, zlib


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


size = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
side = max(8, int((size / 3) ** 0.5))
rows = b"".join(b"\0" + os.urandom(side * 3) for _ in range(side))
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(rows, 0)) + chunk(b"IEND", b""))
with open(sys.argv[1], "wb") as f:
    f.write(png)
