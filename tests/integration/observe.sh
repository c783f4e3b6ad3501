#!/usr/bin/env bash
# observe.sh - seeing a run: the timeline (`--trace`) and the progress lines.
# The timeline of a small run against the plan:
# Every kernel launch, output copy and file write of the traced steps appears
# once, on its stream's track (the writer thread's for writes), in step order; the event dependencies the workflow states
# (`after: [step@n-2]`, `after: [snapshot@n-3]`) are flow arrows between the
# right slices; --trace-steps bounds what is kept; counter tracks follow the
# bytes held per memory space and the staging buffers in use; a launch's slice
# holds its kernel's scalar arguments; --timing-sample times what it says.
# Progress, when stderr is not a terminal: timestamped lines, steps rising;
# none with --quiet.
# Pictures: `gflow view` and the image task, decoded here without gflow and
# checked pixel by pixel against the field values through the colormap; one
# picture against a stored checksum; a run that fails keeps no picture.
#   observe.sh GFLOW REPO
set -uo pipefail
gflow=$1
repo=$2
. "$repo/tests/integration/lib.sh"
command -v python3 >/dev/null || { echo "trace.sh needs python3"; exit 1; }

check() { # check TRACE FIRST END: the structure of the trace of steps FIRST..END-1
  python3 - "$@" <<'PY'
import json, sys
path, first, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
events = json.load(open(path))["traceEvents"]
tracks = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
slices = [e for e in events if e["ph"] == "X"]
problems = []
def expect(cond, what):
    if not cond: problems.append(what)
steps = [s["args"]["step"] for s in slices if s["args"]["step"] >= 0]
expect(steps and min(steps) == first and max(steps) == end - 1, f"steps {min(steps)}..{max(steps)}, expected {first}..{end - 1}")
for n in range(first, end):
    launches = [s for s in slices if s["name"] == "step" and s["args"]["step"] == n]
    expect(len(launches) == 1 and tracks[launches[0]["tid"]] == "compute", f"step {n}: launches {launches}")
    expect(launches and launches[0]["args"]["task"] == "kernel wave2d_4o", f"step {n}: the launch's kernel")
    copies = [s for s in slices if s["name"] == "snapshot" and s["cat"] == "copy" and s["args"]["step"] == n]
    if not 1 < n < 63:  # `when: n > 1 and n < nt - 1`
        expect(not copies, f"step {n}: a snapshot that should not run")
        continue
    expect(len(copies) == 1 and tracks[copies[0]["tid"]] == f"io[{n % 5}]", f"step {n}: snapshot copies {copies}")
    expect(copies and copies[0]["args"]["bytes"] == 32 * 32 * 4, f"step {n}: copy bytes")
    writes = [s for s in slices if s["name"] == "snapshot" and s["cat"] == "file write" and s["args"]["step"] == n]
    expect(len(writes) == 1 and tracks[writes[0]["tid"]] == "writer thread", f"step {n}: file writes {writes}")
    expect(writes and writes[0]["args"]["task"] == "output array_out.dat", f"step {n}: the write's task")
    expect(writes and copies and writes[0]["ts"] >= copies[0]["ts"], f"step {n}: written before it was copied")
for tid in tracks:  # a track's slices run one after another, in issue order
    on = sorted((s for s in slices if s["tid"] == tid and s["args"]["step"] >= 0), key=lambda s: s["ts"])
    for a, b in zip(on, on[1:]):
        expect(a["args"]["step"] <= b["args"]["step"], f"{tracks[tid]}: step {b['args']['step']} after {a['args']['step']}")
        expect(a["ts"] + a["dur"] <= b["ts"] + 1e-3, f"{tracks[tid]}: overlapping slices at steps {a['args']['step']}, {b['args']['step']}")
def slice_at(tid, ts, start):
    for s in slices:
        if s["tid"] == tid and (abs(s["ts"] - ts) < 2e-3 if start else s["ts"] <= ts <= s["ts"] + s["dur"]):
            return s
flows = {}
for e in events:
    if e["ph"] in "sf": flows.setdefault(e["id"], {})[e["ph"]] = e
pairs = set()
for f in flows.values():
    p, c = slice_at(f["s"]["tid"], f["s"]["ts"], False), slice_at(f["f"]["tid"], f["f"]["ts"], True)
    expect(p is not None and c is not None, f"a flow arrow joins no slice: {f}")
    if p and c: pairs.add((p["name"], p["args"]["step"], c["name"], c["args"]["step"]))
for n in range(first, end):
    if n - 2 >= first and 1 < n < 63:
        expect(("step", n - 2, "snapshot", n) in pairs, f"no arrow step@{n - 2} -> snapshot@{n}")
    if n - 3 >= first and 1 < n - 3 < 63:
        expect(("snapshot", n - 3, "step", n) in pairs, f"no arrow snapshot@{n - 3} -> step@{n}")
for p in problems[:10]: print("FAIL:", p)
sys.exit(1 if problems else 0)
PY
}

wave="$repo/workflows/wave2d.yaml"
# one copy and one write per plane (batch: 1), which the trace's structure follows step by step
small=(--set 'grid.shape=[32,32]' --set params.nt=64 --set loop.tasks.1.output.batch=1 --backend cpu --quiet)
expect_exit 0 "a traced run" -- "$gflow" run "$wave" "${small[@]}" --out "$tmp/o" --trace "$tmp/t.json" --trace-steps 20:30
[ -s "$tmp/t.json" ] && pass || fail "no trace written"
check "$tmp/t.json" 20 30 && pass || fail "trace of steps 20..29"
cmp -s "$tmp/o/array_out.dat" <("$gflow" run "$wave" "${small[@]}" --out "$tmp/p" >/dev/null 2>&1; cat "$tmp/p/array_out.dat") &&
  pass || fail "tracing changed the output"
expect_exit 0 "the whole run traced" -- "$gflow" run "$wave" "${small[@]}" --out "$tmp/q" --trace "$tmp/all.json"
check "$tmp/all.json" 0 64 && pass || fail "trace of every step"
# counters: bytes held per memory space (the fields, then the staging
# buffers), staging buffers in use; a launch's slice carries its scalar
# arguments, dt and the Ricker amplitude of its step (computed here)
python3 - "$tmp/all.json" <<'PY' && pass || fail "counters or launch arguments"
import json, math, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
def series(name, key): return [e["args"][key] for e in sorted((e for e in events if e["ph"] == "C" and e["name"] == name), key=lambda e: e["ts"])]
problems = []
device = series("memory held: device", "bytes")
if not device or max(device) != 6 * 32 * 32 * 4: problems.append(f"device bytes {device[-3:]}")  # U ring 5 + V
pinned = series("memory held: pinned", "bytes")
if not pinned or max(pinned) < 8 * 32 * 32 * 4: problems.append(f"pinned bytes {pinned[-3:]}")  # staging, the check's results
staging = series("output staging buffers in use", "buffers")
if not staging or max(staging) < 1 or staging[-1] != 0 or len(staging) != 2 * 61:  # planes 2..62
    problems.append(f"staging {len(staging)} samples, last {staging[-1:]}")
import struct
def f32(x): return struct.unpack("f", struct.pack("f", x))[0]
vel = 343.0  # workflows/ricker.lua, in float as the seed computes it
dt = 0.4 / vel
fm = vel / 10
td = f32(math.sqrt(6) / (3.141592 * fm))
pi, fdt, fm = f32(3.141592), f32(dt), f32(fm)
def ricker(n):
    t = f32(f32(n * fdt) - 2.0 * td)
    a = f32(f32(f32(f32(f32(pi * pi) * fm) * fm) * t) * t)
    return f32(f32(1.0 - 2.0 * a) * f32(math.exp(-a)))
launches = [e for e in events if e.get("cat") == "launch" and e["name"] == "step"]
if len(launches) != 64: problems.append(f"{len(launches)} launches")
for e in launches:
    n = e["args"]["step"]
    if e["args"].get("dt") != dt or e["args"].get("amplitude") != ricker(n):
        problems.append(f"step {n}: args {e['args']}"); break
print(problems) if problems else None
sys.exit(1 if problems else 0)
PY
# --timing-sample K: the backend times the second of every K instances of a
# task (and each one in the traced steps); timings.json says how many and
# scales the busy time up
expect_exit 0 "a sampled, traced run" -- "$gflow" run "$wave" "${small[@]}" --out "$tmp/s" \
  --timing-sample 8 --trace "$tmp/s.json" --trace-steps 20:30
check "$tmp/s.json" 20 30 && pass || fail "a sampled run's trace of steps 20..29"
python3 - "$tmp/s/timings.json" "$tmp/q/timings.json" <<'PY' && pass || fail "sampled timings"
import json, sys
sampled, full = (json.load(open(p))["tasks"] for p in sys.argv[1:3])
# step: instances 0..63, timed 1, 9, ..., 57 and steps 20..29 (25 on both lists)
# snapshot: steps 2..62 are instances 0..60, timed 1, 9, ... 57 (steps 3, 11, ...) and steps 20..29 (27 on both)
want = {"step": 8 + 10 - 1, "snapshot": 8 + 10 - 1}
ok = all(t["timed"] == want[t["name"]] and t["busy_ms"] > 0 for t in sampled)
ok = ok and all(t["timed"] == t["count"] for t in full)
print(sampled, full) if not ok else None
sys.exit(0 if ok else 1)
PY
expect_exit 64 "a bad step range" -- "$gflow" run "$wave" "${small[@]}" --out "$tmp/r" --trace "$tmp/x.json" --trace-steps 9:3
expect_contains "$err" "--trace-steps takes A:B with 0 <= A < B, not '9:3'" "the range message"

# the graph in other formats
# a copy per plane keeps the seed's declared ring (batches would be read from a grown one)
auto=(--set schedule=auto --set 'loop.tasks.0.after=[]' --set 'loop.tasks.1.after=[]' --set loop.tasks.1.output.batch=1 --step 10)
expect_exit 0 "dag as Mermaid" -- "$gflow" dag "$wave" "${auto[@]}" --format mermaid
expect_contains "$out" "flowchart LR" "a Mermaid flowchart"
expect_contains "$out" 't1_3 -.->|"writes after read U[2:254, 2:254] (event)"| t0_0' "a Mermaid edge with its cells"
[ "$(printf '%s\n' "$out" | grep -c '^  t0_2\["step@n-2"\]$')" -eq 1 ] && pass || fail "an earlier step's node drawn twice"
expect_exit 0 "dag as SVG" -- "$gflow" dag "$wave" --format svg
expect_contains "$out" "<svg" "an SVG picture"
expect_exit 64 "an unknown format" -- "$gflow" dag "$wave" --format gif
expect_contains "$err" "--format takes dot, mermaid, svg or png, not 'gif'" "the format message"

# progress without a terminal: timestamped lines with rising steps, then the report
expect_exit 0 "progress lines" -- "$gflow" run "$wave" --set params.nt=400 --backend cpu --out "$tmp/g" --progress 0.01
lines=$(printf '%s\n' "$err" | grep -E '^gflow: [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} wave2d: step [0-9]+ of 400 \([0-9.]+%\), t = [0-9.e-]+, [0-9.e+-]+ GPts/s, .* to go, .* written$')
[ "$(printf '%s\n' "$lines" | grep -c .)" -ge 2 ] && pass || fail "expected progress lines, got: $err"
printf '%s\n' "$lines" | sed 's/.* step \([0-9]*\) of.*/\1/' | sort -c -n && pass || fail "steps do not rise: $lines"
expect_contains "$err" "wave2d: 400 steps in" "the report follows the progress"
expect_exit 0 "quiet" -- "$gflow" run "$wave" --set params.nt=400 --backend cpu --out "$tmp/h" --progress 0.01 --quiet
printf '%s' "$err" | grep -q ' step [0-9]* of ' && fail "--quiet printed progress: $err" || pass

# pictures: an independent PNG decoder and colormap (not gflow's) for the checks below
cat > "$tmp/pictures.py" <<'PY'
import hashlib, struct, zlib
def colour(v, lo, hi):
    t = min(max((v - lo) / (hi - lo), 0), 1)
    if t < 0.5: s = t / 0.5; return (round(255 * s), round(255 * s), 255)
    s = (t - 0.5) / 0.5; return (255, round(255 * (1 - s)), round(255 * (1 - s)))
def decode(path):  # (width, height, unfiltered RGB rows)
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR": width, height, depth, ctype = struct.unpack(">IIBB", body[:10]); assert (depth, ctype) == (8, 2)
        if kind == b"IDAT": idat += body
        pos += 12 + n
    rows = zlib.decompress(idat)
    stride = 1 + 3 * width
    assert all(rows[r * stride] == 0 for r in range(height))  # unfiltered
    return width, height, b"".join(rows[r * stride + 1:(r + 1) * stride] for r in range(height))
def pixels(path):
    w, h, rgb = decode(path)
    return w, h, [tuple(rgb[3 * i:3 * i + 3]) for i in range(w * h)]
def checksum(path):  # of the picture, not of its compressed bytes (which depend on zlib's version)
    w, h, rgb = decode(path)
    return hashlib.sha256(struct.pack(">II", w, h) + rgb).hexdigest()
def mismatches(px, values, lo, hi):
    return sum(1 for a, v in zip(px, values) if max(abs(x - y) for x, y in zip(a, colour(v, lo, hi))) > 1)
PY
export PYTHONPATH="$tmp"

# `gflow view`: one PNG per valid plane chosen, and its pixels are the
# plane's values through the diverging colormap
expect_exit 0 "a run to view" -- "$gflow" run "$wave" "${small[@]}" --out "$tmp/v"
expect_exit 0 "view" -- "$gflow" view "$tmp/v" --every 10 --sheet
expect_contains "$out" "array_out.dat: 7 planes as pictures in $tmp/v/view/" "view's report"
[ "$(ls "$tmp/v/view" | grep -c '^array_out.dat-0000[0-9][0-9].png$')" -eq 7 ] && pass || fail "frames: $(ls "$tmp/v/view")"
[ -s "$tmp/v/view/array_out.dat-sheet.png" ] && pass || fail "no contact sheet"
python3 - "$tmp/v" <<'PY' && pass || fail "pixels do not match the field through the colormap"
import json, pictures, struct, sys
d = sys.argv[1]
meta = json.load(open(f"{d}/array_out.dat.json"))
planes, rows, cols = meta["shape"]
raw = open(f"{d}/array_out.dat", "rb").read()
def plane(p): return struct.unpack_from(f"<{rows * cols}f", raw, p * rows * cols * 4)
valid = [p for a, b in meta["valid_planes"] for p in range(a, b + 1)]
chosen = valid[::10]
m = max(abs(v) for p in chosen for v in plane(p)) or 1
bad = 0
for p in chosen:
    w, h, px = pictures.pixels(f"{d}/view/array_out.dat-{p:06d}.png")
    assert (w, h) == (cols, rows)
    bad += pictures.mismatches(px, plane(p), -m, m)
sys.exit(1 if bad else 0)
PY
# the image task: pictures while the run goes on, one per step it runs, under
# their final names only at the end; a 2-D field's pixels are the values the
# output task wrote at the same step (symmetric range, then a fixed one), a
# 3-D field's slice shows its known values; and a stored checksum of one
# picture (of its pixels: the compressed bytes depend on zlib's version)
images="$repo/tests/integration/image.yaml"
expect_exit 0 "a run drawing pictures" -- "$gflow" run "$images" --backend cpu --quiet --out "$tmp/im"
[ "$(cd "$tmp/im" && ls *.png | tr '\n' ' ')" = "cut_000.png fixed_29.png wave_00009.png wave_00019.png wave_00029.png " ] &&
  pass || fail "pictures: $(ls -a "$tmp/im")"
python3 - "$tmp/im" <<'PY' && pass || fail "pictures do not show the fields through the colormap"
import json, pictures, struct, sys
d = sys.argv[1]
raw = open(f"{d}/u.dat", "rb").read()
rows, cols = 24, 32
def plane(p): return struct.unpack_from(f"<{rows * cols}f", raw, p * rows * cols * 4)
bad = []
for n in (9, 19, 29):
    w, h, px = pictures.pixels(f"{d}/wave_{n:05d}.png")
    values = plane(n)
    m = max(abs(v) for v in values) or 1
    if (w, h) != (cols, rows) or pictures.mismatches(px, values, -m, m): bad.append(n)
    if n == 29:
        w, h, px = pictures.pixels(f"{d}/fixed_29.png")
        if pictures.mismatches(px, values, -0.25, 0.25) or all(p in ((0, 0, 255), (255, 0, 0)) for p in px): bad.append("fixed")
w, h, px = pictures.pixels(f"{d}/cut_000.png")  # C[i0, 2, i2] = i0 * 42 + 14 + i2 - 100, rows along axis 0
values = [i0 * 42 + 14 + i2 - 100 for i0 in range(5) for i2 in range(7)]
m = max(abs(v) for v in values)
if (w, h) != (7, 5) or pictures.mismatches(px, values, -m, m): bad.append("cut")
print("mismatched:", bad) if bad else None
sys.exit(1 if bad else 0)
PY
[ "$(python3 -c 'import pictures, sys; print(pictures.checksum(sys.argv[1]))' "$tmp/im/wave_00029.png")" = \
  88603521237531ce94975c95cde7e3fb9d1ea8ff76aadfb3fb26a9736dab7014 ] && pass || fail "wave_00029.png differs from the stored checksum"
expect_exit 0 "the pictures on the plan" -- "$gflow" validate "$images"
expect_contains "$out" "image     wave_%05d.png: 3 pictures of U" "validate names the pictures"
expect_exit 0 "the pictures traced" -- "$gflow" run "$images" --backend cpu --quiet --out "$tmp/it" --trace "$tmp/it.json"
python3 - "$tmp/it.json" <<'PY' && pass || fail "each picture is a file write on the writer thread"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
writes = sorted(e["args"]["step"] for e in events if e.get("cat") == "file write" and e["name"] == "wave")
sys.exit(0 if writes == [9, 19, 29] else 1)
PY
# a run whose outputs cannot be finished (u.dat cannot get its full size)
# keeps no picture, not even under a temporary name
expect_exit 74 "a run that cannot finish" -- bash -c 'ulimit -f 40; exec "$@"' - "$gflow" run "$images" \
  --backend cpu --quiet --out "$tmp/if" --set 'loop.tasks.1.when=n == 9'
expect_contains "$err" "cannot size $tmp/if/u.dat" "the reason"
[ -z "$(ls -A "$tmp/if" | grep -v '^.gflow.lock$')" ] && pass || fail "files left: $(ls -A "$tmp/if")"

expect_exit 66 "view of a folder without outputs" -- "$gflow" view "$tmp"
expect_contains "$err" "holds no output files (NAME.dat with NAME.dat.json)" "view's message"
finish
