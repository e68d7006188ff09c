#!/usr/bin/python3
"""check_plots.py FLOTILLA FILE.h5 KIND OUTDIR [extra plot options] — `flotilla results plot` draws a
non-empty PNG and SVG of exactly the requested size (read from the PNG header and the <svg> element).
"""
import json
import os
import re
import struct
import subprocess
import sys

flotilla, h5, kind, outdir, *extra = sys.argv[1:]
os.makedirs(outdir, exist_ok=True)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        sys.exit(f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


def svg_size(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    match = re.search(r'<svg\b[^>]*\bwidth="(\d+)"[^>]*\bheight="(\d+)"', text, re.S)
    if not match or "</svg>" not in text:
        sys.exit(f"{path}: no complete <svg> element with width and height")
    return int(match.group(1)), int(match.group(2))


for ext, size, (width, height) in (("png", "800x500", (800, 500)), ("svg", "640x480", (640, 480))):
    out = os.path.join(outdir, f"{kind}.{ext}")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([flotilla, "results", "plot", h5, "--kind", kind, "-o", out, "--size", size, "--json", *extra],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"plot {kind} {ext} failed ({p.returncode}): {p.stderr}")
    reply = json.loads(p.stdout)
    got = png_size(out) if ext == "png" else svg_size(out)
    if os.path.getsize(out) < 1000 or got != (width, height) or (reply["width"], reply["height"]) != (width, height):
        sys.exit(f"{out}: {os.path.getsize(out)} bytes, {got[0]}x{got[1]}, wanted {width}x{height}")
    print(f"ok: {kind} as {ext}: {got[0]}x{got[1]}, {os.path.getsize(out)} bytes")
