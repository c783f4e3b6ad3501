#!/usr/bin/env bash
# cli.sh GFLOW REPO - the gflow command as a user meets it: exit codes,
# messages with the source line and a caret, every bad input of the corpus,
# validate's summary, dag's DOT and kernels' listing.
set -uo pipefail
gflow=$1 repo=$2
. "$(dirname "$0")/lib.sh"
wave=$repo/workflows/wave2d.yaml

expect_exit 64 "no arguments" -- "$gflow"
expect_contains "$err" "usage: gflow COMMAND" "no arguments prints usage"
expect_exit 0 "--version" -- "$gflow" --version
expect_contains "$out" "gflow 0.1.0" "--version"
expect_exit 64 "unknown command" -- "$gflow" bogus
expect_contains "$err" "gflow: unknown command 'bogus'" "unknown command"
expect_exit 64 "run without a file" -- "$gflow" run
expect_contains "$err" "gflow: 'run' needs a workflow FILE" "run without a file"
expect_exit 64 "bad backend" -- "$gflow" run "$wave" --backend tpu
expect_contains "$err" "gflow: --backend must be auto, cpu or gpu, not 'tpu'" "bad backend"
expect_exit 0 "run --help" -- "$gflow" run --help
expect_contains "$out" "--set KEY=VALUE" "run --help"

# Usage errors: exit 64, one line and where to read more, never the whole usage.
expect_equal() { if [ "$1" = "$2" ]; then pass; else fail "$3: got '$1', expected '$2'"; fi; }
expect_exit 64 "--set without a value" -- "$gflow" run "$wave" --set
expect_equal "$err" "gflow: option '--set' needs a value (KEY=VALUE); see 'gflow run --help'" "--set without a value"
expect_exit 64 "--out without a value" -- "$gflow" run "$wave" --out --quiet
expect_equal "$err" "gflow: option '--out' needs a value (DIR); see 'gflow run --help'" "--out followed by an option"
expect_exit 64 "unknown option, one line" -- "$gflow" validate "$wave" --frob
expect_equal "$err" "gflow: unknown option '--frob'; see 'gflow validate --help'" "unknown option, one line"
expect_exit 64 "unknown command, one line" -- "$gflow" bogus
expect_equal "$err" "gflow: unknown command 'bogus'; see 'gflow help'" "unknown command, one line"
expect_exit 64 "option of another command" -- "$gflow" validate "$wave" --step 3
expect_equal "$err" "gflow: --step is not an option of 'validate'; see 'gflow validate --help'" "option of another command"
expect_exit 64 "flag with a value" -- "$gflow" run "$wave" --quiet=yes
expect_equal "$err" "gflow: option '--quiet' takes no value; see 'gflow run --help'" "flag with a value"
expect_exit 64 "bad --threads" -- "$gflow" run "$wave" --threads 0
expect_equal "$err" "gflow: --threads takes a positive count, not '0'; see 'gflow run --help'" "bad --threads"
expect_exit 64 "second FILE" -- "$gflow" run "$wave" "$wave"
expect_equal "$err" "gflow: unexpected argument '$wave'; see 'gflow run --help'" "second FILE"
expect_exit 0 "--set=KEY=VALUE" -- "$gflow" validate "$wave" --set=schedule=auto
expect_contains "$out" "schedule auto" "--set=KEY=VALUE"

# help COMMAND is that command's help
for cmd in run validate dag kernels; do
  expect_exit 0 "help $cmd" -- "$gflow" help $cmd
  expect_contains "$out" "usage: gflow $cmd " "help $cmd"
  [ "$out" = "$("$gflow" $cmd --help)" ] && pass || fail "'gflow help $cmd' differs from 'gflow $cmd --help'"
done
expect_contains "$("$gflow" help dag)" "--step N" "help dag lists --step"
printf '%s' "$("$gflow" help validate)" | grep -qF -- "--backend" && fail "help validate lists run's --backend" || pass
expect_exit 0 "help" -- "$gflow" help
expect_contains "$out" "usage: gflow COMMAND" "help"
expect_exit 64 "help bogus" -- "$gflow" help bogus
expect_equal "$err" "gflow: unknown command 'bogus'; see 'gflow help'" "help bogus"
expect_exit 66 "missing file" -- "$gflow" validate "$tmp/none.yaml"
expect_contains "$err" "gflow: cannot read $tmp/none.yaml: No such file or directory" "missing file"

# validate: the summary of the seed workflow
expect_exit 0 "validate wave2d" -- "$gflow" validate "$wave"
expect_contains "$out" "workflow 'wave2d' is valid" "validate"
expect_contains "$out" "steps     640, schedule events" "validate steps"
expect_contains "$out" "streams   7: compute io[0] io[1] io[2] io[3] io[4] drain" "validate streams"
expect_contains "$out" "snapshot     output array_out.dat  on io[n % 5]    runs at 637 of 640 steps" "validate tasks"
expect_contains "$out" "device      1.5 MiB (U 5 x 256.0 KiB, V 256.0 KiB)" "validate memory"
# the ghost cells' stream goes ahead of the interior's blocks
expect_exit 0 "validate ghost_exchange" -- "$gflow" validate "$repo/workflows/ghost_exchange.yaml" \
  --set 'grid.shape=[44,44]' --set 'decomposition=[1,1]'
expect_contains "$out" "streams   2: compute halo (high priority)" "validate halo stream"
expect_exit 0 "validate with --set" -- "$gflow" validate "$wave" --set 'grid.shape=[512,512]' --set schedule=auto
expect_contains "$out" "steps     1280, schedule auto" "--set changes steps through nt"

# Every bad input: exit 65, the exact message, the source line, a caret under the column.
for f in "$repo"/tests/bad/*.yaml "$repo"/tests/bad_plan/*.yaml; do
  rel=${f#"$repo"/tests/}
  expected=$(head -1 "$f" | sed 's/^# expect: //')
  (cd "$repo/tests" && "$gflow" validate "$rel" >/dev/null 2>"$tmp/stderr")
  status=$?
  first=$(head -1 "$tmp/stderr")
  if [ $status -ne 65 ] || [ "$first" != "gflow: $expected" ]; then
    fail "$rel: exit $status, got '$first', expected 'gflow: $expected'"
    continue
  fi
  loc=$(printf '%s' "$expected" | sed -E 's/^[^:]+:([0-9]+):([0-9]+):.*/\1 \2/')
  line=${loc% *} col=${loc#* }
  if [ "$line" != "$expected" ] && [ "$line" -ge 1 ] 2>/dev/null; then
    file_line=$(sed -n "${line}p" "$f")
    src=$(sed -n 2p "$tmp/stderr")
    caret=$(sed -n 3p "$tmp/stderr")
    if [ "${#file_line}" -le 100 ]; then
      if [ "$src" != "  $file_line" ]; then fail "$rel: source line '$src', expected '  $file_line'"; continue; fi
      if [ "${#caret}" -ne $((col + 2)) ] || [ "${caret: -1}" != "^" ]; then
        fail "$rel: caret line '$caret' does not point at column $col"
        continue
      fi
    else
      # A long line: 100 columns of it around the caret, `...` where it is cut,
      # the caret under the same character.
      at=$((${#caret} - 1))
      if [ "${#src}" -gt $((2 + 3 + 100 + 3)) ] || [[ "$src" != "  ..."* && "$src" != *"..." ]]; then
        fail "$rel: a line of ${#file_line} characters quoted as '$src'"
        continue
      fi
      if [ "${caret: -1}" != "^" ] || [ "${src:at:1}" != "${file_line:col-1:1}" ] ||
        [ "${src:at-20:41}" != "${file_line:col-21:41}" ]; then
        fail "$rel: caret line '$caret' is not under column $col of '$src'"
        continue
      fi
    fi
  fi
  pass
done

expect_exit 65 "bad --set" -- "$gflow" validate "$wave" --set 'grid.shap=[1]'
expect_contains "$err" "gflow: --set grid.shap=[1]:1:6: unknown key 'shap' in grid" "bad --set"
# Judged after loading (the decomposition, an expression's function), still located in the --set
expect_exit 65 "decomposition from --set" -- "$gflow" validate "$repo/workflows/ghost_exchange.yaml" \
  --ranks 4 --set 'decomposition=[3,3]'
expect_contains "$err" "gflow: --set decomposition=[3,3]:1:15: decomposition [3, 3] needs 9 ranks; this run has 4" \
  "a decomposition from --set is located in the --set"
expect_contains "$err" "  decomposition=[3,3]" "the --set is quoted"
expect_exit 65 "unknown function from --set" -- "$gflow" validate "$wave" --set 'params.cfl=foo(1)'
expect_contains "$err" "gflow: --set params.cfl=foo(1):1:12: unknown function 'foo'" \
  "an expression's error is located in the --set"

# dag: DOT with a cluster per stream and labelled edges
expect_exit 0 "dag" -- "$gflow" dag "$wave"
expect_contains "$out" 'digraph "wave2d"' "dag header"
expect_contains "$out" 'subgraph "cluster_compute"' "dag stream cluster"
expect_contains "$out" '"step@n-2" -> "snapshot@n" [label="after (event)"' "dag edge"
if command -v dot >/dev/null 2>&1; then
  printf '%s' "$out" | dot -Tsvg >/dev/null 2>"$tmp/dot.err" && pass || fail "dot rejects the DAG: $(cat "$tmp/dot.err")"
fi
# a copy per plane keeps the seed's declared ring (batches would be read from a grown one)
expect_exit 0 "dag auto" -- "$gflow" dag "$wave" --set schedule=auto --set 'loop.tasks.0.after=[]' --set 'loop.tasks.1.after=[]' --set loop.tasks.1.output.batch=1 --step 10
expect_contains "$out" '"step@n-2" -> "snapshot@n" [label="reads after write U (event)"' "dag auto RAW edge"
expect_contains "$out" '"snapshot@n-3" -> "step@n" [label="writes after read U[2:254, 2:254] (event)"' "dag auto WAR edge: the kernel writes the interior"

# kernels
expect_exit 0 "kernels" -- "$gflow" kernels
expect_contains "$out" "wave2d_4o" "kernels lists wave2d_4o"
expect_contains "$out" "amplitude  real" "kernels lists parameters"

# backends and outputs
expect_exit 70 "forced gpu" -- "$gflow" run "$wave" --backend gpu
expect_contains "$err" "gflow: --backend gpu cannot run here:" "forced gpu says why"
# The banner says which backend and why; --quiet prints neither it nor the report.
nogpu="gflow was built without GPU support (configure with -DGFLOW_GPU=CUDA or HIP)"
expect_exit 0 "backend cpu banner" -- "$gflow" run "$wave" --backend cpu --set loop.steps=2 --out "$tmp/b1"
expect_contains "$(printf '%s' "$err" | head -1)" "gflow: backend cpu: asked for with --backend cpu; CPU backend: " "forced cpu banner"
expect_exit 0 "quiet run" -- "$gflow" run "$wave" --set loop.steps=2 --out "$tmp/b2" --quiet
expect_equal "$err" "" "--quiet prints nothing"
plugin=$(dirname "$gflow")/plugins/gflow_heat2d.so
if "$gflow" run "$wave" --backend gpu 2>&1 | grep -qF "$nogpu"; then
  # Built without GPU support: auto takes the CPU and says why, with a
  # CPU-only plugin kernel too; forced gpu fails before anything runs.
  expect_exit 0 "auto without GPU support" -- "$gflow" run "$wave" --set loop.steps=2 --out "$tmp/b3"
  expect_contains "$(printf '%s' "$err" | head -1)" "gflow: backend cpu: $nogpu; CPU backend: " "auto banner"
  if [ -f "$plugin" ]; then
    expect_exit 0 "auto with a CPU-only kernel" -- "$gflow" run "$repo/plugins/heat2d.yaml" --plugin "$plugin" --out "$tmp/h1"
    expect_contains "$(printf '%s' "$err" | head -1)" "gflow: backend cpu: $nogpu; CPU backend: " "auto banner, heat2d"
    expect_exit 70 "gpu with a CPU-only kernel" -- "$gflow" run "$repo/plugins/heat2d.yaml" --plugin "$plugin" --backend gpu --out "$tmp/h2"
    expect_equal "$err" "gflow: --backend gpu cannot run here: $nogpu" "forced gpu, heat2d"
    [ ! -e "$tmp/h2" ] && pass || fail "forced gpu with heat2d created its output folder"
  else
    fail "$plugin not built"
  fi
fi
touch "$tmp/file"
expect_exit 73 "unwritable output folder" -- "$gflow" run "$wave" --backend cpu --set loop.steps=4 --out "$tmp/file/sub"
expect_contains "$err" "cannot create output folder $tmp/file/sub: Not a directory" "unwritable output folder"
expect_exit 0 "small run" -- "$gflow" run "$wave" --backend cpu --set 'grid.shape=[32,32]' --out "$tmp/small"
expect_contains "$err" "gflow: wave2d: 80 steps in" "run report"
expect_contains "$err" "GPts/s" "run report throughput"
[ -s "$tmp/small/timings.json" ] && pass || fail "timings.json missing"
# Every task kind: a hook-initialised field, copies, a hook task, outputs.
for schedule in events auto sync; do
  expect_exit 0 "tasks.yaml $schedule" -- "$gflow" run "$repo/tests/integration/tasks.yaml" --backend cpu \
    --quiet --set schedule=$schedule --out "$tmp/tasks-$schedule"
  printf '%s\n' "$err" | grep -qx "$(printf 'gflow: lua: tick\t1')" && pass ||
    fail "the hook task did not print 'tick<TAB>1' at step 1 ($schedule): $err"
  want=$(for p in 0 1 2; do for i in 0 1 2 3; do for j in 0 1 2 3 4; do
    awk -v i=$i -v j=$j 'BEGIN { printf "%g\n", 10 * i + j + 2 * j / 4 }'; done; done; done)
  got=$(od -A n -t f8 -v -w8 "$tmp/tasks-$schedule/x.dat" | awk '{ printf "%g\n", $1 }')
  [ "$got" = "$want" ] && pass || fail "x.dat ($schedule): the copies of W are not 10*i0 + i1 + x1/4"
  got=$(od -A n -t f8 -v -w8 "$tmp/tasks-$schedule/y.dat" | awk '{ printf "%g\n", $1 }' | sort -u)
  [ "$got" = "-1" ] && pass || fail "y.dat ($schedule): X[1] at step 0 should still be -1, got $got"
done
finish
