#!/usr/bin/env python3
"""trace_png.py - a gflow trace (gflow run --trace) as a PNG timeline.

    scripts/trace_png.py --out timeline.png [--width 1400] LABEL=TRACE.json...

One panel per trace, stacked, all on one time scale so that panels compare:
a row per track (the host, the streams as the workflow names them, the
writer thread), a box per operation coloured by what it is (kernel launch
red, copy blue, file write green, host wait grey, host call orange), a light
line every 10 us (every 100 us, 1 ms ... when that is too dense), the
panel's label and span on its first row. The span is that of the host and
stream tracks; the writer thread's boxes beyond it are cut. Only the standard library (zlib for
the PNG), so it runs where numpy is not installed. Trace a few steps
(--trace-steps A:B) to see single operations.
"""
import argparse
import json
import struct
import sys
import zlib

COLOURS = {"launch": (217, 74, 56), "copy": (59, 125, 216), "file write": (60, 160, 90),
           "host wait": (150, 150, 150), "host call": (230, 160, 40)}

# A 3x5 pixel font, upper case: each glyph five rows of three columns.
FONT = {
    "A": ["010", "101", "111", "101", "101"], "B": ["110", "101", "110", "101", "110"],
    "C": ["011", "100", "100", "100", "011"], "D": ["110", "101", "101", "101", "110"],
    "E": ["111", "100", "110", "100", "111"], "F": ["111", "100", "110", "100", "100"],
    "G": ["011", "100", "101", "101", "011"], "H": ["101", "101", "111", "101", "101"],
    "I": ["111", "010", "010", "010", "111"], "J": ["001", "001", "001", "101", "010"],
    "K": ["101", "101", "110", "101", "101"], "L": ["100", "100", "100", "100", "111"],
    "M": ["101", "111", "111", "101", "101"], "N": ["110", "101", "101", "101", "101"],
    "O": ["010", "101", "101", "101", "010"], "P": ["110", "101", "110", "100", "100"],
    "Q": ["010", "101", "101", "110", "011"], "R": ["110", "101", "110", "101", "101"],
    "S": ["011", "100", "010", "001", "110"], "T": ["111", "010", "010", "010", "010"],
    "U": ["101", "101", "101", "101", "111"], "V": ["101", "101", "101", "101", "010"],
    "W": ["101", "101", "111", "111", "101"], "X": ["101", "101", "010", "101", "101"],
    "Y": ["101", "101", "010", "010", "010"], "Z": ["111", "001", "010", "100", "111"],
    "0": ["111", "101", "101", "101", "111"], "1": ["010", "110", "010", "010", "111"],
    "2": ["110", "001", "010", "100", "111"], "3": ["110", "001", "010", "001", "110"],
    "4": ["101", "101", "111", "001", "001"], "5": ["111", "100", "110", "001", "110"],
    "6": ["011", "100", "111", "101", "111"], "7": ["111", "001", "010", "010", "010"],
    "8": ["111", "101", "111", "101", "111"], "9": ["111", "101", "111", "001", "110"],
    "[": ["011", "010", "010", "010", "011"], "]": ["110", "010", "010", "010", "110"],
    "(": ["001", "010", "010", "010", "001"], ")": ["100", "010", "010", "010", "100"],
    ".": ["000", "000", "000", "000", "010"], ",": ["000", "000", "000", "010", "100"],
    ":": ["000", "010", "000", "010", "000"], "-": ["000", "000", "111", "000", "000"],
    "_": ["000", "000", "000", "000", "111"], "/": ["001", "001", "010", "100", "100"],
    "^": ["010", "101", "000", "000", "000"], " ": ["000", "000", "000", "000", "000"],
}
SCALE = 2  # font pixels per glyph pixel
ROW = 16   # pixels per track
LABEL_W = 150


class Canvas:
    def __init__(self, width, height):
        self.w, self.h = width, height
        self.px = bytearray(b"\xff" * (width * height * 3))

    def rect(self, x0, y0, x1, y1, rgb):
        x0, x1 = max(0, int(x0)), min(self.w, int(x1))
        y0, y1 = max(0, int(y0)), min(self.h, int(y1))
        for y in range(y0, y1):
            row = (y * self.w + x0) * 3
            self.px[row:row + 3 * (x1 - x0)] = bytes(rgb) * (x1 - x0)

    def text(self, x, y, s, rgb=(0, 0, 0)):
        for ch in s.upper():
            glyph = FONT.get(ch, FONT[" "])
            for r, bits in enumerate(glyph):
                for c, bit in enumerate(bits):
                    if bit == "1":
                        self.rect(x + c * SCALE, y + r * SCALE, x + (c + 1) * SCALE, y + (r + 1) * SCALE, rgb)
            x += 4 * SCALE

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))
        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
        data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
        with open(path, "wb") as f:
            f.write(data)


def load(path):
    """The tracks (name, sort) with their slices of the loop, and the span."""
    events = json.load(open(path))["traceEvents"]
    names, sort = {}, {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_sort_index":
            sort[e["tid"]] = e["args"]["sort_index"]
    slices = [e for e in events if e["ph"] == "X" and e["args"].get("step", -1) >= 0]
    if not slices:
        sys.exit(f"{path}: no operation of the time loop in the trace")
    # the span of the host and the streams: the writer thread may write the
    # traced steps' planes long after (its boxes are cut at the span's end)
    timed = [s for s in slices if names.get(s["tid"]) != "writer thread"] or slices
    t0 = min(s["ts"] for s in timed)
    t1 = max(s["ts"] + s["dur"] for s in timed)
    used = sorted({s["tid"] for s in slices}, key=lambda t: (sort.get(t, 0), t))
    return [(names.get(t, str(t)), [s for s in slices if s["tid"] == t]) for t in used], t0, t1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("traces", nargs="+", metavar="LABEL=TRACE.json")
    a = ap.parse_args()
    panels = []
    for spec in a.traces:
        label, _, path = spec.partition("=")
        if not path:
            sys.exit(f"expected LABEL=TRACE.json, got '{spec}'")
        panels.append((label,) + load(path))
    span = max(t1 - t0 for _, _, t0, t1 in panels)
    plot_w = a.width - LABEL_W - 10
    scale = plot_w / span  # pixels per microsecond, shared by every panel
    grid = 10.0
    while grid * scale < 12:
        grid *= 10
    height = sum(ROW * (len(tracks) + 1) + 8 for _, tracks, _, _ in panels) + 4
    c = Canvas(a.width, height)
    y = 4
    for label, tracks, t0, t1 in panels:
        c.text(4, y + 2, f"{label}: {(t1 - t0) / 1000:.3f} ms", (0, 0, 0))
        c.text(a.width - 4 - 4 * SCALE * len(f"grid {grid:g} us"), y + 2, f"grid {grid:g} us", (120, 120, 120))
        y += ROW
        top = y
        bottom = y + ROW * len(tracks)
        t = 0.0
        while t <= t1 - t0:
            x = LABEL_W + t * scale
            c.rect(x, top, x + 1, bottom, (225, 225, 225))
            t += grid
        for name, slices in tracks:
            c.text(4, y + 3, name, (40, 40, 40))
            c.rect(LABEL_W, y + ROW - 1, LABEL_W + plot_w, y + ROW, (235, 235, 235))
            for s in slices:
                x0 = LABEL_W + (s["ts"] - t0) * scale
                x1 = max(x0 + 1, LABEL_W + (s["ts"] + s["dur"] - t0) * scale)
                x0, x1 = min(x0, LABEL_W + plot_w), min(x1, LABEL_W + plot_w)
                c.rect(x0, y + 2, x1, y + ROW - 2, COLOURS.get(s.get("cat"), (0, 0, 0)))
            y += ROW
        y += 8
    c.png(a.out)


if __name__ == "__main__":
    main()
