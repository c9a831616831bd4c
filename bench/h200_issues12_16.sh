#!/usr/bin/env bash
# The H200 proofs still to take for issues 12-16, in three calls of the device tool made back to back
# (the toolchain wheels, nvidia-cutlass-dsl's 92 MB library and tileiras, are larger than one call carries;
# /tmp persists only while the machine is warm):
#   stage  carry .whl (small wheels, the harness's own requirements too) + .w3 (the first half of the CuTe DSL
#          archive, the cudnn frontend headers); issue 12: timing_accuracy.py, every case with the peers, one run
#   c1     carry .w4 (the second half, tileiras) + .sol (SOL-ExecBench's examples): the hand-over tests,
#          the stream cheats, the SOL examples the stream fix and the tileiras mode affect
#   c2     carry .w4 + .sol: make bench (every rmsnorm language, cold), harness_cost with FlashInfer-Bench,
#          run-bench perf-counter with the operator as its own baseline (every raw sample printed)
# The 2026-12-04 sessions ran this script as of f839db0 and a5069f9 (docs/hardware.md).
# Usage: [STAGE_S=sec] [T2_S=sec] bash bench/h200_issues12_16.sh stage|t2|tl|c1|c2   (writes under $OUT)
# Order for a 30-minute session (2026-12-05, thirteenth): c2 (C_S=560, carry .whl .w6 .sol), t2 (T2_S=330), tl
#   tl     carry .w5 (tilelang==0.1.15's wheel, 50 MB): the TileLang rmsnorm (its dependencies came in t2's .w5a)
#   t2     carry .whl + .w5a (tilelang's dependencies: z3-solver 4.15.4.0, torch-c-dlpack-ext, cloudpickle,
#          ml-dtypes, psutil, tqdm): issue 12's kernels from 50 us (each case takes ~55 s on the H200 with every timer: the 13
#          cases do not fit one call; stage has the 7 under 50 us). The 2026-12-05 stage call was cut by its limit
#          in the 8th case and printed no table: each case's row is now printed as it finishes
# Making the carried folders here (each listed in .git/info/exclude):
#   D="python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp
#      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_24_x86_64
#      --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64"
#   .whl: $D jsonschema==4.26.0 jsonschema-specifications referencing rpds-py pydantic==2.14.4 pydantic-core
#         annotated-types typing-inspection typing-extensions flashinfer-bench==0.1.2 cuda-bench==0.3.0
#         nvidia-cutlass==4.2.0.0 cuda-tile==1.7.0 apache-tvm-ffi==0.1.12 nvidia-cutlass-dsl==4.8.1
#         nvidia-cutlass-dsl-libs-base==4.8.1 nvidia-cutlass-dsl-libs-core==4.8.1 docstring-parser
#         pyyaml==6.0.3 tabulate==0.10.0 rich==15.0.0 markdown-it-py mdurl pygments safetensors==0.8.0
#         (the harness's requirements.txt but numpy, which the device's torch has: `make bench` finds them on
#         PYTHONPATH when its offline install fails)
#   .w3, .w4: unzip nvidia-cutlass-dsl-libs-cu13==4.8.1 and nvidia-cuda-tileiras==13.5.37 and the
#         cudnn frontend wheel's include/; `tar cf - . | xz -6 -T2` each; split -b 33100000 the DSL archive
#         into dsl.part00 (.w3, with cudnnfe.tar.xz) and dsl.part01 (.w4, with tileiras.tar.xz)
#   .sol: git -C <SOL-ExecBench mirror> archive 8d2237d examples | tar x -C .sol
#   .w6: tileiras.tar.xz alone: a cold machine's c2 in one call, carry .whl + .w6 + .sol (cute_dsl UNSUPPORTED then)
# Since 2026-12-06 (fourteenth session) the toolchains travel as one archive in parts (big.part0, big.part1, ... and
# big.count, their number, in .w3, .w4, ...), unpacked to /tmp/site and /tmp/cudnnfe once all are on the machine.
# /tmp/site: cuTile's compiler as it must run: tileiras, ptxas and libnvvm.so.4 of nvidia-cuda-tileiras,
# nvidia-cuda-nvcc and nvidia-nvvm 13.4.92 with their dist-info (cuda.tile runs the wheel's tileiras only beside nvcc
# and nvvm of its version; tileiras alone exits 5 "failed to compile Tile IR program", the H100's cutile failure of
# 2026-12-05); optionally nvidia-cutlass-dsl-libs-cu13 4.8.1 unzipped (92 MB more: a third call). /tmp/cudnnfe/include:
# the cudnn frontend's headers. `tar cf - site cudnnfe | xz -6 -T2`, split so that each call carries under 64 MiB.
# .s235/sol235.tar.xz: SOL-ExecBench's 235 problems (see sol_census.py).
# 2026-12-06's calls, back to back: census (carry .whl .w3 .s235), langs (carry .w4 .sol).
# 2026-12-06 (fifteenth session): one call got a machine, so it ran `BOTH_S=420 CEN_ONLY="L2/ Quant/ FlashInfer"
#   both` (carry .whl .s235 .sol .w8): make bench cold and warm without the toolchains archive, then the census.
# 2026-12-06 (sixteenth session): `s16` (carry .whl .s235 .w8) twice, then `s16b` (carry .whl .s235 .w8 .sol): why
#   cudnn-graph dies, the census's rest, make bench with the fix the diagnosis found. `act` was refused (no time left).
# 2026-12-07 (seventeenth session): everything in one archive, the .whl wheels too, installed for Python 3.12 with
#   `pip install --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 ... --target site`
#   (the .whl list above, nvidia-cutlass-dsl-libs-cu13 4.8.1, nvidia-cuda-tileiras/-nvcc/nvidia-nvvm 13.4.92 pruned to
#   tileiras, ptxas and libnvvm.so.4, tilelang 0.1.15 and its dependencies; site/bin removed), all in ONE pip command:
#   a second `pip install --target` skips top-level folders already there (the CuTe DSL lost `cutlass.cute` that way
#   on 2026-12-07 and was unzipped over it in a follow-up call): 182 MB of xz in three
#   parts, `split -n 3`, one a call (carry .w3 .w8 .s235, then .w4, then .w5 with the work: nothing runs before).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/h200}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site CUDNN_FRONTEND_DIR=/tmp/cudnnfe
export PATH="/tmp/site/nvidia/cu13/bin:$PATH"  # tileiras, unpacked from its wheel: cuda.tile looks on $PATH
step() { printf '\n===== %s  [%s]\n' "$*" "$(date +%T)"; }
bench_run() {  # $1: label, $2: folder to run in (default .), $3: time limit: make bench cold or warm as it is, its
  # exit and wall, then its run clock, builds, rows and timers; the whole output in $OUT/bench-$1.txt
  step "make bench $1"
  mkdir -p /tmp/rep
  local start=$(date +%s.%N)
  (cd "${2:-.}" && timeout "${3:-150}" env PIP_NO_INDEX=1 make bench MANIFEST=rmsnorm.yaml OUT="/tmp/rep/$1" > "$OUT/bench-$1.txt" 2>&1)
  echo "exit $? after $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
  python3 -c "import glob, json, sys; r = json.load(open(glob.glob(sys.argv[1] + '/*.json')[0])); t = r['traces']; print('run clock', r['environment'].get('run_clock_s'), '| prebuild', r['environment'].get('prebuild'), '|', sum(x['status'] == 'PASSED' for x in t), 'of', len(t), 'PASSED;', 'rows own %.1f s' % sum((x.get('cost_s') or {}).get('total', 0) for x in t), '| NOISY', sum('NOISY' in str(x.get('flags')) for x in t), '| timers', sorted({(x.get('timing') or {}).get('mode') for x in t} - {None}))" "/tmp/rep/$1"
}
spin_probe() {  # $@: tracers in order (direct|profiler): 20 spin kernels of 20000 cycles traced by each, the median
  # CUPTI duration beside events' time a spin (CUPTI's durations after a torch.profiler session)
  step "spin kernels of 20000 cycles traced by: $*"
  timeout 60 python3 -c "
import sys, torch
from harness.measure.devices.cuda import CudaDevice
from harness.measure.devices.tracers import ProfilerTracer
dev = CudaDevice(0); dev.setup()
def spins():
    with dev.stream():
        for _ in range(20): torch.cuda._sleep(20000)
def events():
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); torch.cuda._sleep(400000); e.record(); torch.cuda.synchronize(); return round(s.elapsed_time(e) * 1000 / 20, 3)
tracers = {'direct': dev.tracer(), 'profiler': ProfilerTracer('compared')}
for label in sys.argv[1:]:
    acts = tracers[label].trace(spins, dev.synchronize)
    print(label, len(acts), 'median us', round(sorted(a.dur_us for a in acts)[10], 3), '| events, us a spin:', events())
" "$@" 2>&1 | grep -v -i warn | tail -"$#"
}
phases() {  # $1: label of a bench_run: each row's phases (bench/harness_cost.py's table) and the run clock
  python3 -c "import glob, json, sys; sys.path.insert(0, 'bench'); import harness_cost as h; r = json.load(open(glob.glob(sys.argv[1] + '/*.json')[0])); print(r['environment'].get('run_clock_s')); print(h.table([h.row_cost(t) for t in r['traces'] if t['status'] not in ('SKIPPED', 'UNSUPPORTED')]))" "/tmp/rep/$1"
}
ab() {  # $1: label, $2: python run before the CLI (a setting of the old way) or "": harness run rmsnorm.yaml, warm;
  # the report in /tmp/rep/ab-$1 (`phases ab-$1`)
  local s=$(date +%s.%N) d=/tmp/rep/ab-$1
  rm -rf "$d"; timeout 90 python3 -c "$2
from harness.cli import cli; cli()" run rmsnorm.yaml --device cuda --quiet --out "$d" > "$d.txt" 2>&1
  echo "$1: exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s $(python3 -c "import glob, json; r = json.load(open(glob.glob('$d/*.json')[0])); t = r['traces']; c = r['environment'].get('run_clock_s', {}); print('runner', c.get('runner'), 'ref ready', c.get('reference_ready'), 'rows done', c.get('rows_done'), '| rows own %.1f s' % sum((x.get('cost_s') or {}).get('total', 0) for x in t), '| samples a side', sorted(len((x.get('timing') or {}).get('samples_ms') or []) for x in t if x['status'] == 'PASSED')[::4], '| NOISY', sum('NOISY' in str(x.get('flags')) for x in t))" 2>&1 | tail -1)"
}
handoff_tests() {  # $1: seconds; the CUDA IPC hand-over tests, the whole output in handoff.txt
  step "hand-over tests (CUDA IPC), the whole output in handoff.txt"
  timeout "$1" python3 -m pytest -q -p no:cacheprovider tests/execute/test_handoff.py > "$OUT/handoff.txt" 2>&1
  grep -E "^(FAILED|ERROR)|Error|error|assert|passed|failed" "$OUT/handoff.txt" | head -20
}

for part in .w*/big.part* .w*/big.count .w9/*.whl; do  # the toolchains archive, in parts over consecutive calls
  [ -f "$part" ] && mkdir -p /tmp/stash && cp "$part" /tmp/stash/
done
if [ ! -f /tmp/.big_unpacked ] && [ -f /tmp/stash/big.count ] && [ "$(ls /tmp/stash/big.part* | wc -l)" = "$(cat /tmp/stash/big.count)" ]; then
  mkdir -p /tmp/site && cat /tmp/stash/big.part* | xz -d | tar x -C /tmp \
    && chmod -R a+rX /tmp/site /tmp/cudnnfe && touch /tmp/.big_unpacked && echo "toolchains unpacked: /tmp/site, /tmp/cudnnfe"
fi
if [ -f /tmp/.big_unpacked ] && ls /tmp/stash/nvidia_cutlass_dsl*.whl > /dev/null 2>&1 && [ ! -f /tmp/.dsl_fixed ]; then
  # the CuTe DSL's two wheels the archive lost (carried in .w9 with any of the archive's parts)
  for w in /tmp/stash/nvidia_cutlass_dsl*.whl; do python3 -m zipfile -e "$w" /tmp/site; done
  chmod -R a+rX /tmp/site && touch /tmp/.dsl_fixed && echo "CuTe DSL wheels unzipped over /tmp/site"
fi
if [ -f .w8/cudnnfe.tar.xz ] && [ ! -d /tmp/cudnnfe/include ]; then  # the cudnn frontend's headers alone (0.3 MB)
  tar xJf .w8/cudnnfe.tar.xz -C /tmp && chmod -R a+rX /tmp/cudnnfe
fi
for d in .whl .w5a .w5; do  # each carried wheel folder once per warm machine
  if [ -d "$d" ] && ls "$d"/*.whl > /dev/null 2>&1 && [ ! -f "/tmp/site/.installed$d" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$d"/*.whl \
      && touch "/tmp/site/.installed$d" || echo "wheel install FAILED: $d"
  fi
done

case "${1:-}" in
stash)  # one part of the toolchains archive carried (copied to /tmp/stash above): nothing else runs
  ls -la /tmp/stash; [ -f /tmp/.big_unpacked ] && echo "all parts here: unpacked"
  ;;
stage|small)
  step versions
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  python3 -c 'import sys, torch, triton, jsonschema, pydantic, flashinfer_bench, cuda.bench, tvm_ffi, cutlass_library, cuda.tile
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__,
      "tvm_ffi", tvm_ffi.__version__, torch.cuda.get_device_name(0))'
  nvcc --version | tail -2; nproc; free -g | head -2
  step "timing accuracy, the kernels under 50 us: ncu, opbench (default and events), do_bench, FIB, cuda-bench"
  # the most telling first (the floor, the small kernels, the multi-kernel call): the deadline cuts the tail
  timeout "${STAGE_S:-500}" python3 bench/timing_accuracy.py run --max-time-s 1.0 --deadline-s "$(( ${STAGE_S:-500} - 30 ))" \
    --out "$OUT" --cases add-fp32-1 add-fp32-1M triton-rmsnorm-256x4096 matmul-bias-relu-bf16-2048 gemm-bf16-1024 \
    softmax-bf16-256x4096 add-fp32-16M triton-rmsnorm-4096x8192 2>&1 | tail -40
  ;;
t2)  # also carries .w5a (tilelang's dependencies: z3-solver, ...), installed above
  step "timing accuracy, the kernels from 50 us (CUDA C++ first: its nvcc build)"
  timeout "${T2_S:-560}" python3 bench/timing_accuracy.py run --max-time-s 1.0 --deadline-s "$(( ${T2_S:-560} - 30 ))" \
    --out "$OUT" --cases cuda-rmsnorm-4096x8192 gemm-bf16-8192 add-fp32-256M softmax-bf16-8192x8192 gemm-bf16-4096 2>&1 | tail -40
  ;;
tl)  # carries .w5 (the tilelang wheel), installed above: the TileLang rmsnorm on every workload
  step "tilelang: manifests/rmsnorm's tilelang-row"
  [ -f /tmp/site/.installed.w5a ] || echo "NO .w5a INSTALLED (cold machine since t2): tilelang's dependencies are missing"
  python3 -c 'import tilelang, tvm_ffi; print("tilelang", tilelang.__version__, "tvm_ffi", tvm_ffi.__version__)'
  timeout 200 python3 -m harness run rmsnorm.yaml --device cuda --solution tilelang-row --solution pytorch-fused \
    --max-time-s 1 --out /tmp/rep/tl --table-format github 2>&1 | grep -vE '^\[ ' | tail -30
  handoff_tests 90
  ;;
ct)  # cutile's tileiras exit 5 on the H100 (2026-12-05): its full stderr, from the kernel's dumped bytecode
  mkdir -p /tmp/ctd && chmod 0777 /tmp/ctd
  [ -f /tmp/site/.unpacked ] || { tar xJf .w6/tileiras.tar.xz -C /tmp/site && chmod -R a+rX /tmp/site && touch /tmp/site/.unpacked; }
  CUDA_TILE_DUMP_BYTECODE=/tmp/ctd CUDA_TILE_DUMP_TILEIR=/tmp/ctd timeout 100 python3 -m harness run rmsnorm.yaml --device cuda \
    --solution cutile-row --workload small-bf16 --max-time-s 0.3 --out /tmp/rep/ct --quiet > /dev/null 2>&1
  ls -la /tmp/ctd; tileiras --version | tail -1
  for bc in /tmp/ctd/*.tileirbc; do
    for arch in sm_90 sm_90a sm_100; do
      echo "--- tileiras $arch"; tileiras "$bc" -o /tmp/ctd/x.cubin --gpu-name "$arch" -O3 2>&1 | head -c 1500; echo "rc ${PIPESTATUS[0]}"
    done
  done
  head -c 2500 /tmp/ctd/*.tileir 2>/dev/null
  ;;
s16)  # carry .whl .s235 .w8: why cudnn-graph dies (bench/cudnn_diag.py), then the census of what is left
  began_s16=$(date +%s)
  step "cudnn-graph's SIGSEGV: the launcher alone and in a torch extension, with cuDNN's logs and a native backtrace"
  timeout 240 python3 bench/cudnn_diag.py > "$OUT/cudnn_diag.txt" 2>&1; echo "exit $?"; cut -c1-220 "$OUT/cudnn_diag.txt" | tail -120
  CEN_S=$(( ${S16_S:-560} - ($(date +%s) - began_s16) )) bash "$0" census
  ;;
s16b)  # carry .whl .s235 .w8 .sol: the cudnn-graph fix tried four ways, the first that runs put in its solution's build,
  # then make bench cold and warm, then the census's last out-of-memory problems, one at a time
  began_s16=$(date +%s)
  step "cudnn-graph: four builds of its extension at once"
  timeout 200 python3 bench/cudnn_diag.py > "$OUT/cudnn_diag.txt" 2>&1; echo "exit $?"
  grep -E "^=====|^rc |^loaded|defines|^c\+\+|max error|cflags|FIX:|_ZN14cudnn|_ZNSo|codecvt" "$OUT/cudnn_diag.txt" | cut -c1-260 | head -60
  python3 - "$(grep '^FIX:' "$OUT/cudnn_diag.txt" | cut -c6-)" <<'PY'
import json, sys, yaml
fix = json.loads(sys.argv[1] or "null")
path = "manifests/rmsnorm/solutions/cudnn.yaml"
doc = yaml.safe_load(open(path))
if fix:
    build = doc.setdefault("build", {})
    build["extra_cflags"] = [f for f in build.get("extra_cflags", []) if not (f.startswith("-O") and any(c.startswith("-O") for c in fix["extra_cflags"]))] + fix["extra_cflags"]
    build["extra_ldflags"] = build.get("extra_ldflags", []) + fix["extra_ldflags"]
    yaml.safe_dump(doc, open(path, "w"), sort_keys=False)
print("cudnn-graph's build for make bench:", doc.get("build"))
PY
  C_S=$(( ${S16_S:-540} - ($(date +%s) - began_s16) - 90 )) C2_COST=0 bash "$0" c2 | tail -75
  CEN_S=$(( ${S16_S:-540} - ($(date +%s) - began_s16) )) CEN_JOBS=1 bash "$0" census
  ;;
act)  # carry .whl .w8: cudnn-graph's device work as CUPTI records it, and its rows with the events timer
  timeout 120 python3 bench/cudnn_diag.py activities > "$OUT/cudnn_act.txt" 2>&1; echo "exit $?"; cut -c1-200 "$OUT/cudnn_act.txt" | tail -75
  timeout 90 python3 -m harness run rmsnorm.yaml --device cuda --solution cudnn-graph --workload small-bf16 --timer events \
    --max-time-s 0.5 --out /tmp/rep/act --table-format github 2>&1 | grep -vE '^\[ ' | cut -c1-240 | tail -8
  ;;
both)  # carry .whl .s235 .sol .w8, one call: make bench cold and warm (no tileiras: cutile UNSUPPORTED), then the census
  began_both=$(date +%s)
  C_S=${LANGS_S:-210} C2_COST=0 bash "$0" c2 | tail -75
  CEN_S=$(( ${BOTH_S:-550} - ($(date +%s) - began_both) )) bash "$0" census
  ;;
census)  # carry .whl + .s235 (+ a toolchains part): SOL-ExecBench's 235 problems, each reference run as its solution
  [ -d /tmp/s235/sol235 ] || { mkdir -p /tmp/s235 && tar xJf .s235/sol235.tar.xz -C /tmp/s235 && chmod -R a+rX /tmp/s235; }
  [ -n "${CEN_VALIDATE:-}" ] && { step "census: validate (as hpc-bench reads each problem)"; python3 bench/sol_census.py validate /tmp/s235/sol235 2>&1 | tail -9; }
  step "census: each reference as its solution, first workload, CEN_JOBS (6) at once, then the rest alone: ${CEN_ONLY:-all}"
  # shellcheck disable=SC2086
  timeout "${CEN_S:-430}" python3 bench/sol_census.py run /tmp/s235/sol235 --jobs "${CEN_JOBS:-6}" --workloads 1 \
    --deadline-s "$(( ${CEN_S:-430} - 25 ))" --again-alone ${CEN_ONLY:+--only $CEN_ONLY} > "$OUT/census.txt" 2>&1
  echo "exit $?"; grep -vE ": PASSED \(" "$OUT/census.txt" | cut -c1-260 | tail -70
  ;;
langs)  # carry the last part of the toolchains (+ .sol): every rmsnorm language through make bench
  [ -f /tmp/.big_unpacked ] || echo "TOOLCHAINS NOT UNPACKED (a cold machine since census/small?)"
  step "cuTile's compiler as cuda.tile finds it, and the probe the build runs"
  python3 -c 'import nvidia.cu13 as m, importlib.metadata as md; print(list(m.__path__)); print([(p, md.version(p)) for p in ("nvidia-cuda-tileiras", "nvidia-nvvm", "nvidia-cuda-nvcc")])' 2>&1 | tail -2
  python3 -c 'from harness.execute.solutions.cutile_probe import compile_error; print("probe:", compile_error("sm_90"))' 2>&1 | tail -3
  C_S=${C_S:-560} C2_COST=0 bash "$0" c2
  step "SOL-ExecBench's cutile example (jamba_attn_proj), unmodified"
  timeout 100 python3 -c 'import sys; from harness.cli.hpcbench import main; sys.exit(main())' .sol/examples/cutile/jamba_attn_proj \
    --solution .sol/examples/cutile/jamba_attn_proj/solution_cutile.json --max-time-s 0.5 2>&1 | grep -vE '^\[ ' | tail -8
  ;;
c1|c2)
  part=$1  # each part ends within C_S (580) s: every step's timeout is cut to what is left (lim)
  began=$(date +%s); REP=/tmp/rep; mkdir -p "$REP"; exec > >(tee "$OUT/c-all.txt") 2>&1; lim() { local l=$(( ${C_S:-580} - ($(date +%s) - began) )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 5 ] && l=5; echo "$l"; }
  if [ ! -f /tmp/site/.unpacked ] && [ ! -f /tmp/.big_unpacked ]; then
    if [ -f /tmp/stash/dsl.part00 ]; then cat /tmp/stash/dsl.part00 .w4/dsl.part01 | xz -d | tar x -C /tmp/site; else echo "NO STAGED PART: cold machine"; fi
    for t in .w4/tileiras.tar.xz .w6/tileiras.tar.xz; do [ -f "$t" ] && tar xJf "$t" -C /tmp/site && break; done
    chmod -R a+rX /tmp/site && touch /tmp/site/.unpacked  # the unzipped tileiras is 0744
  fi
  if [ "$part" = c1 ]; then
  handoff_tests "$(lim 90)"
  step "cheats: the stream rows and the forged handle (blocking harness stream)"
  timeout "$(lim 110)" python3 -m harness run cheats.yaml --device cuda --out "$REP/cheats" --table-format github --quiet \
    --solution honest --solution side-stream --solution switch-stream --solution legacy-stream --solution forged-handle \
    --solution lazy-graph --solution compiled 2>&1 | cut -c1-160
  echo "exit ${PIPESTATUS[0]}"
  python3 -c "import json, glob; r = json.load(open(glob.glob('$REP/cheats/*.json')[0])); print('harness stream:', r['environment']['device'].get('harness_stream'), '| output handoff:', r['environment'].get('output_handoff')); [print(t['solution'], t['status'], (t.get('message') or '')[:200]) for t in r['traces']]"
  step "SOL examples that were HIDDEN_WORK / UNSUPPORTED: flux_rope, cute_dsl and cutile jamba_attn_proj"
  pids=()
  for sol in .sol/examples/cuda_cpp/flux_rope/solution_cuda.json .sol/examples/cute_dsl/jamba_attn_proj/solution_cute_dsl.json \
             .sol/examples/cutile/jamba_attn_proj/solution_cutile.json; do
    n=$(basename "$sol" .json)
    timeout "$(lim 240)" python3 -c 'import sys; from harness.cli.hpcbench import main; sys.exit(main())' "$(dirname "$sol")" \
      --solution "$sol" -o "$REP/$n.jsonl" --json --max-time-s 0.5 > "$REP/$n.txt" 2>&1 &
    pids+=("$!")
  done
  wait "${pids[@]}"  # not a bare `wait`: that also waits for the `tee` above, which never ends
  python3 - "$REP" <<'PY'
import json, sys
from pathlib import Path
for f in sorted(Path(sys.argv[1]).glob("solution_*.txt")):
    lines = [l for l in f.read_text().splitlines() if l.startswith("{")]
    print(f.stem, [(json.loads(l)["evaluation"]["status"], (json.loads(l)["evaluation"].get("performance") or {}).get("latency_ms")) for l in lines] or f.read_text()[-600:])
    for l in lines[:1]:
        ev = json.loads(l)["evaluation"]
        if ev["status"] != "PASSED":
            print("   log:", (ev.get("log") or "")[:500])
PY
  fi
  if [ "$part" = c2 ]; then
  # run-bench's torch-module and triton-wrapper modules ran in three modes on 2026-12-05 (H100, docs/hardware.md)
  step "make bench MANIFEST=rmsnorm.yaml, cold build cache (every rmsnorm language)"
  start=$(date +%s.%N)
  # PIP_NO_INDEX: no registry here, so the Makefile's pinned install fails at once (not after pip's retries)
  # and falls back to the installed versions, which it names
  timeout "$(lim 150)" env PIP_NO_INDEX=1 make bench MANIFEST=rmsnorm.yaml OUT="$REP/bench-cold" > "$OUT/bench-cold.txt" 2>&1
  echo "exit $? after $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
  grep -E 'PASSED|INCORRECT|ERROR|UNSUPPORTED|SKIPPED|HIDDEN|TIMEOUT|took|exit|opbench:' "$OUT/bench-cold.txt" | cut -c1-130 | tail -45
  grep -E 'built in' "$OUT/bench-cold.txt" | cut -c1-110
  step "make bench again: a warm build cache (each cuda_cpp row loads what the first run built)"
  start=$(date +%s.%N)
  timeout "$(lim 100)" env PIP_NO_INDEX=1 make bench MANIFEST=rmsnorm.yaml OUT="$REP/bench-warm" > "$OUT/bench-warm.txt" 2>&1
  echo "exit $? after $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
  grep -E 'built in|-> ' "$OUT/bench-warm.txt" | cut -c1-110 | tail -50
  python3 - "$REP/bench-warm" <<'PY'
import glob, json, sys
for f in glob.glob(f"{sys.argv[1]}/*.json"):  # why each row that did not pass, in full (the table cuts it)
    seen, r = set(), json.load(open(f))
    rows = sum((t.get("cost_s") or {}).get("total", 0) for t in r["traces"])
    print("run clock (s since the harness process started):", r["environment"].get("run_clock_s"), f"| rows' own total {rows:.1f} s")
    for t in r["traces"]:
        if t["status"] != "PASSED" and t["solution"] not in seen:
            seen.add(t["solution"])
            print(t["solution"], t["status"], (t.get("message") or "")[:900].replace("\n", " | "))
PY
  [ "${C2_COST:-1}" = 1 ] || exit 0
  step "harness_cost: rmsnorm (warm build cache), a 1 GiB add, FlashInfer-Bench 0.1.2 on the same TraceSet"
  timeout "$(lim 330)" python3 bench/harness_cost.py --device cuda --add-gib 1 --vs-fib --timeout-s 90 --out "$OUT" 2>&1 | cut -c1-230
  step "run-bench perf-counter, the triton-wrapper against itself (the first operator read 2-5x slower on 2026-12-05)"
  for w in 0 25; do  # --warmup-ms 0: the count alone, as before 2026-12-05's fix; 25: the default time floor
  echo "--- --warmup-ms $w"
  timeout "$(lim 45)" python3 -m harness run-bench --bench-file manifests/bench_rmsnorm/bench_rmsnorm_op.py \
    --operator-file manifests/bench_rmsnorm/rmsnorm_op.py --baseline-operator-file manifests/bench_rmsnorm/rmsnorm_op.py \
    --bench-mode perf-counter -m total-op --warmup-ms "$w" --out "$REP/pc$w" --output "$REP/pc$w/perf.txt" 2>&1 | cut -c1-200 | tail -7
  python3 - "$REP/pc$w" <<'PY'
import json, statistics, sys
from pathlib import Path
for f in sorted(Path(sys.argv[1]).glob("*/*.json")):  # candidate, then baseline: every raw sample kept
    for t in json.loads(f.read_text())["traces"]:
        s = (t.get("timing") or {}).get("samples_ms") or []
        if s:
            us = [x * 1e3 for x in s]
            print(f"{f.parent.name} {t['workload']}: n {len(us)} min {min(us):.1f} median {statistics.median(us):.1f} "
                  f"mean {statistics.fmean(us):.1f} max {max(us):.1f} us; first 5 {[round(x) for x in us[:5]]}")
PY
  done
  fi
  ;;
s18)  # carry .w5 .w9 (the archive's last part, the CuTe DSL's two wheels): make bench cold and warm with the JIT
  # caches kept in the build folders; then the start order A/B (spares.FIRST, in the tree at 79d8cab only: it lost,
  # and is gone; on 2026-12-07 this part ran with .whl .w8 instead, the toolchains coming after in c2)
  began18=$(date +%s); left() { echo $(( ${S18_S:-560} - ($(date +%s) - began18) )); }
  C_S=$(( $(left) - 150 )) C2_COST=0 bash "$0" c2 | tail -75
  for first in 8 1; do
    step "harness run rmsnorm.yaml, warm, spares.FIRST=$first (8: every prepared worker beside the reference, as before)"
    s=$(date +%s.%N)
    timeout "$(( $(left) / 2 > 20 ? $(left) / 2 : 20 ))" python3 -c "import sys, harness.run.spares as sp; sp.FIRST=$first; from harness.cli import main; sys.exit(main(sys.argv[1:]))" \
      run rmsnorm.yaml --device cuda --out "/tmp/rep/first$first" --quiet > "/tmp/rep/first$first.txt" 2>&1
    echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s"
    python3 -c "import json, glob, collections; r = json.load(open(glob.glob('/tmp/rep/first$first/*.json')[0])); t = r['traces']; print('clock', r['environment']['run_clock_s'], dict(collections.Counter(x['status'] for x in t)), 'rows', round(sum((x.get('cost_s') or {}).get('total', 0) for x in t), 1), 's; by solution', {n: round(sum((x.get('cost_s') or {}).get('total', 0) for x in t if x['solution'] == n), 1) for n in dict.fromkeys(x['solution'] for x in t)})" 2>&1 | tail -2
  done
  [ "$(left)" -gt 120 ] && S18_S=$(left) bash "$0" s18b
  ;;
s18b)  # no carry needed once s18 ran on this machine: the cheats on CUDA, then harness_cost with FlashInfer-Bench and the 1 GiB add
  began18=$(date +%s); left() { echo $(( ${S18_S:-560} - ($(date +%s) - began18) )); }
  step "cheats.yaml on the GPU (skip-probe among them)"
  timeout "$(( $(left) > 170 ? 170 : $(left) - 5 ))" python3 -m harness run cheats.yaml --device cuda --out /tmp/rep/cheats --table-format github --quiet --max-time-s 0.5 > "$OUT/cheats.txt" 2>&1
  echo "exit $?"; python3 -c "import json, glob; r = json.load(open(glob.glob('/tmp/rep/cheats/*.json')[0])); [print(t['solution'], t['workload'], t['status'], 'expected', t.get('expected_status'), (t.get('message') or '')[:150]) for t in r['traces']]" 2>&1 | cut -c1-260 | tail -60
  step "harness_cost: rmsnorm (warm build cache), a 1 GiB add, FlashInfer-Bench 0.1.2 on the same TraceSet"
  [ "$(left)" -gt 60 ] && timeout "$(( $(left) - 5 ))" python3 bench/harness_cost.py --device cuda --add-gib 1 --vs-fib --timeout-s 120 --out "$OUT" 2>&1 | cut -c1-230
  ;;
s19)  # carry .whl .w8 (or, after the archive's parts, .w5 .w9): first the CPU device on this 16-core host with libgomp's
  # default wait policy against PASSIVE (isolation.WORKER_ENV): the order tests PASSIVE fixed, and the rmsnorm rows; then
  # make bench cold and warm (the three-chunk rule, the reference killed at the end, its Prepare on the run clock)
  began19=$(date +%s); left() { echo $(( ${S19_S:-560} - ($(date +%s) - began19) )); }; mkdir -p /tmp/rep
  nproc
  for pol in "" PASSIVE ""; do
    step "the order tests, OMP_WAIT_POLICY='$pol' (empty: libgomp's default, idle threads spin)"
    timeout 60 env OMP_WAIT_POLICY="$pol" python3 -m pytest -q -p no:cacheprovider \
      tests/execute/test_containment.py -k "slower or burners" 2>&1 | grep -E "passed|failed|assert|reported" | head -6
  done
  for pol in "" PASSIVE; do
    step "harness run rmsnorm.yaml --device cpu, OMP_WAIT_POLICY='$pol'"
    s=$(date +%s.%N)
    timeout 60 env OMP_WAIT_POLICY="$pol" python3 -m harness run rmsnorm.yaml --device cpu \
      --solution pytorch-fused --out "/tmp/rep/cpu$pol" --quiet > "/tmp/rep/cpu$pol.txt" 2>&1
    echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s"
    python3 -c "
import json, glob
r = json.load(open(glob.glob('/tmp/rep/cpu$pol/*.json')[0]))
print('clock', r['environment']['run_clock_s'], 'threads', r['environment']['device'].get('torch_threads'))
for t in r['traces']:
    a, b = t.get('timing') or {}, t.get('reference_timing') or {}
    if a: print(t['workload'], 'sol', round(a['median_ms'], 4), 'n', a['n'], 'rse', round(a['rse'], 4), '| ref', round(b['median_ms'], 4), 'n', b['n'], 'rse', round(b['rse'], 4), t.get('flags'), 'row', round(t['cost_s']['total'], 1))
" 2>&1 | tail -6
  done
  rm -rf /var/tmp/opbench-cache
  C_S=$(( $(left) - 5 )) C2_COST=0 bash "$0" c2 | tail -75
  ;;
s20)  # carry .whl .w8: s19, then warm runs A/B: the reference's process started before the parent imports torch
  # (execute/spawn.Early, the default) against started by the runner as before (early_reference patched to None)
  began20=$(date +%s); left() { echo $(( ${S20_S:-560} - ($(date +%s) - began20) )); }
  S19_S=$(( $(left) - 150 )) bash "$0" s19
  for early in yes no yes no; do
    [ "$(left)" -lt 35 ] && break
    step "harness run rmsnorm.yaml --device cuda, warm, early reference: $early"
    s=$(date +%s.%N)
    timeout "$(( $(left) - 5 < 60 ? $(left) - 5 : 60 ))" python3 -c "import sys, harness.cli.run as r
if '$early' == 'no': r.early_reference = lambda *a, **k: None
from harness.cli import main; sys.exit(main(sys.argv[1:]))" run rmsnorm.yaml --device cuda --out "/tmp/rep/early$early" --quiet > "/tmp/rep/early$early.txt" 2>&1
    echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s"
    python3 -c "import json, glob, collections; r = json.load(open(glob.glob('/tmp/rep/early$early/*.json')[0])); t = r['traces']; print('clock', r['environment']['run_clock_s'], dict(collections.Counter(x['status'] for x in t)), 'rows', round(sum((x.get('cost_s') or {}).get('total', 0) for x in t), 1))" 2>&1 | tail -2
  done
  ;;
s21)  # carry .whl .w8: make bench cold and warm; then warm runs A/B: early processes for the first workers (the default:
  # reference and prepared solution workers) against none (early_workers patched), and the first three chunks whole
  # (chunk_size as before 2026-12-07's split)
  began21=$(date +%s); left() { echo $(( ${S21_S:-560} - ($(date +%s) - began21) )); }; mkdir -p /tmp/rep
  C_S=$(( $(left) > 300 ? 260 : $(left) - 40 )) C2_COST=0 bash "$0" c2 | grep -E "exit|run clock|=====" | tail -8
  for v in early none early none whole; do
    [ "$(left)" -lt 40 ] && break
    step "harness run rmsnorm.yaml --device cuda, warm: $v"
    s=$(date +%s.%N)
    timeout "$(( $(left) - 5 < 70 ? $(left) - 5 : 70 ))" python3 -c "import sys, harness.cli.run as r, harness.measure.timing as t, harness.run.runner as rr
if '$v' == 'none': r.early_workers = lambda *a, **k: ()
if '$v' == 'whole':
    f = t.chunk_size; rr.chunk_size = lambda cfg, mode, s, chunks=0: f(cfg, mode, s, t.MIN_CHUNKS)
from harness.cli import main; sys.exit(main(sys.argv[1:]))" run rmsnorm.yaml --device cuda --out "/tmp/rep/w$v" --quiet > "/tmp/rep/w$v.txt" 2>&1
    echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s"
    python3 -c "import json, glob, collections; r = json.load(open(glob.glob('/tmp/rep/w$v/*.json')[0])); t = r['traces']; print('clock', r['environment']['run_clock_s'], dict(collections.Counter(x['status'] for x in t)), 'rows', round(sum((x.get('cost_s') or {}).get('total', 0) for x in t), 1), 'noisy', sum(any(f.startswith('NOISY') for f in x.get('flags', [])) for x in t)); [print('  ', x['solution'], x['workload'], 'n', x['timing']['n'], x['reference_timing']['n'], 'rse %.4f' % x['timing']['rse'], 'med %.2f us' % (1e3 * x['timing']['median_ms']), 'wpc %.3f ms' % x['timing']['wall_per_call_ms'], {k: round(v, 2) for k, v in x['cost_s'].items() if k in ('timing_start', 'sampling', 'total')}) for x in t if x.get('timing') and x['solution'] in ('triton-row', 'cuda-warp-reduce')]" 2>&1 | tail -9
  done
  ;;
cost)  # carry .whl: where a timed sample's 1.0-1.5 ms of wall time goes on the GPU (bench/sample_cost.py)
  for case in "triton-row medium-bf16" "pytorch-fused small-bf16" "pytorch-fused large-bf16"; do
    set -- $case
    step "sample_cost $1 $2"
    timeout 100 python3 bench/sample_cost.py rmsnorm.yaml --solution "$1" --workload "$2" --device cuda --top "${TOP:-18}" 2>&1 | cut -c1-150
  done
  ;;
s22)  # carry .whl .w8: a sample's wall with the bisected attribution against every window scanned (the old way,
  # tests/measure/devices/test_activities._scanned), then make bench cold and warm, and one more warm run
  began22=$(date +%s); left() { echo $(( ${S22_S:-560} - ($(date +%s) - began22) )); }; mkdir -p /tmp/rep
  for how in bisect scan bisect scan; do
    step "sample_cost triton-row medium-bf16, attribution: $how"
    timeout 60 python3 -c "import sys; sys.path[:0] = ['bench', 'tests', 'tests/measure/devices']
sys.argv = ['sample_cost', 'rmsnorm.yaml', '--solution', 'triton-row', '--workload', 'medium-bf16', '--top', '6', '--samples', '100']
import harness.measure.timing as t, sample_cost
if '$how' == 'scan':
    import test_activities as ta
    t.call_times_us = lambda acts: ta._scanned(acts, 0.01, 1.0)[0]
    t.escaped = lambda acts: ta._scanned(acts, 0.01, 1.0)[1]
sys.exit(sample_cost.main())" 2>&1 | grep -E "samples |timer" | cut -c1-150
  done
  C_S=$(( $(left) - 90 )) C2_COST=0 bash "$0" c2 | grep -E "exit|run clock|=====" | tail -8
  step "harness run rmsnorm.yaml --device cuda, warm"
  s=$(date +%s.%N)
  timeout "$(( $(left) - 5 < 70 ? $(left) - 5 : 70 ))" python3 -m harness run rmsnorm.yaml --device cuda --out /tmp/rep/w --quiet > /tmp/rep/w.txt 2>&1
  echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s"
  python3 -c "import json, glob, collections; r = json.load(open(glob.glob('/tmp/rep/w/*.json')[0])); t = r['traces']; print('clock', r['environment']['run_clock_s'], dict(collections.Counter(x['status'] for x in t)), 'rows', round(sum((x.get('cost_s') or {}).get('total', 0) for x in t), 1), 'noisy', sum(any(f.startswith('NOISY') for f in x.get('flags', [])) for x in t)); [print('  ', x['solution'], x['workload'], 'n', x['timing']['n'], x['reference_timing']['n'], 'med %.2f us' % (1e3 * x['timing']['median_ms']), 'wpc %.3f ms' % x['timing']['wall_per_call_ms'], {k: round(v, 2) for k, v in x['cost_s'].items() if k in ('timing_start', 'sampling', 'total')}) for x in t if x.get('timing') and x['solution'] in ('triton-row',)]" 2>&1 | tail -5
  ;;
s23)  # carry .whl .w8: a chunk's fixed cost (its profiler session) against its cost per sample, then make bench
  # cold and warm at the session's last commit
  began23=$(date +%s); left() { echo $(( ${S23_S:-560} - ($(date +%s) - began23) )); }; mkdir -p /tmp/rep
  for case in "triton-row medium-bf16" "pytorch-fused large-bf16"; do
    set -- $case
    step "sample_cost $1 $2, chunks of 34, 100 and 300 samples"
    timeout 70 python3 bench/sample_cost.py rmsnorm.yaml --solution "$1" --workload "$2" --samples 34 --sizes 100,300 --top 8 2>&1 | grep -E "samples |timer|activities|profiler|_sample" | cut -c1-150
  done
  C_S=$(( $(left) - 10 )) C2_COST=0 bash "$0" c2 | grep -E "exit|run clock|=====" | tail -8
  ;;
s24)  # carry .whl .w8 .w10 (git archive of the last session's commit, old.tgz): a worker's start-up phases alone and
  # beside 8 others; make bench cold and warm with the rows that need no build run beside the C++ builds, then
  # the same cold at the old commit (builds first, then every row); a warm harness run cut at its marks
  began24=$(date +%s); left() { echo $(( ${S24_S:-560} - ($(date +%s) - began24) )); }
  step "worker start-up phases, 1 and 9 at once"
  timeout 90 python3 bench/startup_cost.py --device cuda --procs 1,9,1 2>&1 | tail -5
  rm -rf /var/tmp/opbench-cache; bench_run new-cold; bench_run new-warm . 100
  if [ -f .w10/old.tgz ] && [ "$(left)" -gt 150 ]; then
    mkdir -p /tmp/old && tar xzf .w10/old.tgz -C /tmp/old && rm -rf /var/tmp/opbench-cache
    bench_run old-cold /tmp/old
  fi
  step "a warm harness run, cut at its marks"
  timeout "$(( $(left) - 5 ))" python3 bench/startup_cost.py --device cuda --procs "" --run rmsnorm.yaml 2>&1 | tail -5
  ;;
s25)  # carry .whl .w8: worker start-up phases (to $OUT/probe.txt); the Makefile's own steps offline; make bench cold
  # (compiled solutions' builds going on beside the GPU rows, at nice 19) and warm, each row's latency in both;
  # a warm harness run under cProfile (the parent), cut at its marks
  began25=$(date +%s); left() { echo $(( ${S25_S:-560} - ($(date +%s) - began25) )); }; mkdir -p /tmp/rep
  step "worker start-up phases, 1 and 9 at once"
  timeout 90 python3 bench/startup_cost.py --device cuda --procs 1,9,1 > "$OUT/probe.txt" 2>&1; cat "$OUT/probe.txt"
  step "the Makefile's dependency steps alone, offline (PIP_NO_INDEX=1), twice"
  for i in 1 2; do /usr/bin/time -f "make -s launch-deps deps: %e s" env PIP_NO_INDEX=1 make -s launch-deps deps 2>&1 | tail -2; done
  rm -rf /var/tmp/opbench-cache
  for run in cold warm; do
    step "make bench $run"
    start=$(date +%s.%N)
    timeout 150 env PIP_NO_INDEX=1 make bench MANIFEST=rmsnorm.yaml OUT="/tmp/rep/$run" > "$OUT/bench-$run.txt" 2>&1
    echo "exit $? after $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
    grep -E 'built in|waiting' "$OUT/bench-$run.txt" | cut -c1-100 | head -12
  done
  python3 - <<'PY'
import glob, json
reps = {k: json.load(open(glob.glob(f"/tmp/rep/{k}/*.json")[0])) for k in ("cold", "warm")}
for k, r in reps.items():
    t = r["traces"]
    print(k, "run clock", r["environment"].get("run_clock_s"), "| prebuild", r["environment"].get("prebuild"), "|",
          sum(x["status"] == "PASSED" for x in t), "of", len(t), "PASSED; rows own %.1f s" % sum((x.get("cost_s") or {}).get("total", 0) for x in t))
med = {k: {(x["solution"], x["workload"]): ((x.get("timing") or {}).get("median_ms"), (x.get("reference_timing") or {}).get("median_ms"), x.get("flags"))
           for x in r["traces"]} for k, r in reps.items()}
print("row: cold median / warm median (us), reference cold / warm, flags")
for key in med["warm"]:
    c, w = med["cold"].get(key, (None, None, None)), med["warm"][key]
    if w[0]:
        print(f"  {key[0]:17s} {key[1]:12s} {c[0] * 1e3 if c[0] else float('nan'):9.2f} / {w[0] * 1e3:9.2f}   ref {c[1] * 1e3 if c[1] else float('nan'):8.2f} / {w[1] * 1e3:8.2f}  {c[2] or ''} {w[2] or ''}")
PY
  step "a warm harness run, the parent under cProfile"
  timeout "$(( $(left) - 5 ))" python3 -m cProfile -o "$OUT/parent.prof" -m harness run rmsnorm.yaml --device cuda --out /tmp/rep/prof --quiet > /dev/null 2>&1
  python3 -c "import pstats; pstats.Stats('$OUT/parent.prof').sort_stats('cumulative').print_stats(45)" 2>&1 | grep -E '^ +[0-9]' | cut -c1-160 | head -45
  ;;
s26)  # carry .whl .w8 .w10 (old.tgz: git archive of 9e878a4): the first profiler session step by step; make bench cold
  # at the old commit (every build before the first row) and at this one (rows beside the builds), then warm each
  began26=$(date +%s); left() { echo $(( ${S26_S:-560} - ($(date +%s) - began26) )); }; mkdir -p /tmp/rep /tmp/old
  tar xzf .w10/old.tgz -C /tmp/old
  step "worker start-up phases, one at a time"
  timeout 60 python3 bench/startup_cost.py --device cuda --procs 1,1 > "$OUT/probe.txt" 2>&1; cat "$OUT/probe.txt"
  rm -rf /var/tmp/opbench-cache; bench_run old-cold /tmp/old
  rm -rf /var/tmp/opbench-cache; bench_run new-cold
  bench_run old-warm /tmp/old
  bench_run new-warm
  grep -E 'built in|waiting' "$OUT/bench-new-cold.txt" | cut -c1-100 | head -12
  ;;
s27)  # carry .whl .w8 .w10: the first profiler session before the device's context and after it; make bench cold at
  # this commit, then warm at the old commit (9e878a4) and at this one, alternating, twice each
  mkdir -p /tmp/rep /tmp/old; tar xzf .w10/old.tgz -C /tmp/old
  step "worker start-up phases: device first, then profiler first (twice)"
  for order in device-first profiler-first profiler-first; do
    timeout 40 python3 bench/startup_cost.py --device cuda --procs 1 --order "$order" 2>&1 | grep -v -i warn
  done | tee "$OUT/probe.txt"
  rm -rf /var/tmp/opbench-cache; bench_run new-cold
  grep -E 'built in|waiting' "$OUT/bench-new-cold.txt" | cut -c1-100 | head -12
  bench_run old-warm1 /tmp/old; bench_run new-warm1; bench_run old-warm2 /tmp/old; bench_run new-warm2
  ;;
s28)  # carry .whl .w8: the CUDA device tests; make bench cold, then warm twice (ran on 2026-12-07 with a Prepare
  # that started the profiler before the device's context; not kept: docs/hardware.md)
  mkdir -p /tmp/rep
  step "tests/measure/devices on the GPU"
  timeout 100 python3 -m pytest -q -p no:cacheprovider tests/measure/devices 2>&1 | tail -3
  rm -rf /var/tmp/opbench-cache; bench_run cold
  grep -E 'built in|waiting' "$OUT/bench-cold.txt" | cut -c1-100 | head -12
  bench_run warm1; bench_run warm2
  grep -E 'PASSED|INCORRECT' "$OUT/bench-warm2.txt" | cut -c1-80 | head -12
  ;;
s29)  # carry .whl .w8 .w11 (py-spy, cupti-python 13.0.1, cuda-bindings 13.0.3, cuda-pathfinder): where CUPTI's
  # first session goes (bench/cupti_probe.py: kineto against direct CUPTI, in a thread beside torch's import), then
  # make bench cold and warm twice as the baseline of the call
  pip install -q --no-deps --no-index --target /tmp/site2 .w11/*.whl 2>&1 | tail -2
  export PYTHONPATH="$PYTHONPATH:/tmp/site2" PATH="$PATH:/tmp/site2/bin"
  python3 -c "import torch, glob, os; print(torch.__version__, glob.glob(os.path.dirname(torch.__file__) + '/../nvidia/**/libcupti*', recursive=True))"
  pip list 2>/dev/null | grep -i -E "cupti|cuda-bindings|nvidia-cuda" | head
  step "probe, alternating"
  for i in 1 2 3; do for m in kineto ctypes cuptipy ctypes-thread cuptipy-thread; do
    timeout 60 python3 bench/cupti_probe.py $m 2>&1 | tail -1 | cut -c1-400; done; done
  step "kineto's log"
  KINETO_LOG_LEVEL=0 timeout 60 python3 bench/cupti_probe.py kineto > "$OUT/kineto-log.txt" 2>&1; tail -c 1500 "$OUT/kineto-log.txt"
  step "py-spy --native on kineto's first session"
  timeout 90 py-spy record --native -r 200 --format raw -o "$OUT/pyspy-kineto.txt" -- python3 bench/cupti_probe.py kineto 2>&1 | tail -3
  timeout 90 py-spy record --native -r 200 --format raw -o "$OUT/pyspy-ctypes.txt" -- python3 bench/cupti_probe.py ctypes 2>&1 | tail -3
  ls -la "$OUT"
  rm -rf /var/tmp/opbench-cache; bench_run cold
  bench_run warm1; bench_run warm2
  ;;
s30)  # carry .whl .w8 .w10 (old.tgz: git archive a551071) .w11: CUPTI directly (cupti-python) against torch.profiler:
  # the CUDA device tests, worker start-up both ways, make bench cold then warm new/old/new, the CUDA cheats that touch
  # the timer, and whether torch's import compiles its source here (no usable .pyc)
  pip install -q --no-deps --no-index --target /tmp/site2 .w11/*.whl 2>&1 | grep -v WARNING | tail -2
  export PYTHONPATH="$PYTHONPATH:/tmp/site2" PATH="$PATH:/tmp/site2/bin"
  mkdir -p /tmp/rep /tmp/old; tar xzf .w10/old.tgz -C /tmp/old
  step "tests/measure/devices/test_cuda.py on the GPU"
  timeout 60 python3 -m pytest -q -p no:cacheprovider tests/measure/devices/test_cuda.py 2>&1 | grep -E "passed|failed|Error|assert" | head -12
  step "worker start-up, CUPTI directly against torch.profiler"
  timeout 60 python3 bench/startup_cost.py --device cuda --procs 1 --tracers auto,profiler,auto 2>&1 | tail -4
  rm -rf /var/tmp/opbench-cache; bench_run cold
  grep -o '"activity_source": "[^"]*"' /tmp/rep/cold/*.json | sort | uniq -c
  bench_run new-warm1; bench_run old-warm /tmp/old; bench_run new-warm2
  step "cheats that touch the timer, on CUDA"
  timeout 100 python3 -m harness run manifests/cheats.yaml --device cuda --quiet --out /tmp/rep/cheats $(for s in honest side-stream forged-activities stand-in-tracer legacy-stream compiled; do echo --solution $s; done) > "$OUT/cheats.txt" 2>&1; echo "exit $?"
  grep -E "^(honest|side-stream|forged|stand-in|legacy|compiled)" "$OUT/cheats.txt" | cut -c1-150 | head -14
  step "bytecode: PYTHON env, site-packages writable?, torch import plain and with a pycache prefix"
  env | grep -E "^PYTHON" ; python3 -c "import sys; print(sys.dont_write_bytecode, sys.pycache_prefix)"
  d=$(python3 -c "import torch, os; print(os.path.dirname(torch.__file__))"); ls "$d"/__pycache__ 2>&1 | head -3; touch "$d/.w" 2>&1 && echo writable && rm -f "$d/.w"
  for i in 1 2; do /usr/bin/time -f "plain %e s" python3 -c "import torch" ; done 2>&1
  for i in 1 2 3; do PYTHONPYCACHEPREFIX=/tmp/pyc /usr/bin/time -f "prefix %e s" python3 -c "import torch"; done 2>&1
  ;;
s31)  # carry .whl .w8 .w11: spin kernels traced directly, through torch.profiler, then directly again (CUPTI's
  # durations after a torch.profiler session, against events); a sample's cost with each tracer
  [ -n "${S31_ONLY:-}" ] || pip install -q --no-deps --no-index --target /tmp/site2 .w11/*.whl 2>&1 | grep -v WARNING | tail -2
  export PYTHONPATH="$PYTHONPATH:/tmp/site2" PATH="$PATH:/tmp/site2/bin"
  spin_probe direct direct profiler direct direct profiler direct
  for tr in auto profiler; do
    step "sample_cost triton-row medium-bf16, $tr tracer"
    timeout 60 python3 bench/sample_cost.py rmsnorm.yaml --solution triton-row --workload medium-bf16 --device cuda --samples 100 --tracer $tr --top 14 2>&1 | cut -c1-150 | grep -v "^---" | head -24
  done
  ;;
s32)  # carry .whl .w8 .w11: s31's two questions, then where a warm make bench's time goes: each row's phases,
  # the parent and its workers under py-spy, and what a pycache the processes may fill would save
  pip install -q --no-deps --no-index --target /tmp/site2 .w11/*.whl 2>&1 | grep -v WARNING | tail -2
  export PYTHONPATH="$PYTHONPATH:/tmp/site2" PATH="$PATH:/tmp/site2/bin"
  S31_ONLY=1 bash "$0" s31
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache; bench_run cold
  for r in warm1 warm2; do bench_run $r; phases $r; done
  step "a warm run under py-spy (the parent and its workers, 100 Hz, CPU only), the top frames per process"
  timeout 120 py-spy record -r 100 --nonblocking --subprocesses --format raw -o /tmp/spy.txt -- \
    python3 -m harness run rmsnorm.yaml --device cuda --quiet --out /tmp/rep/spy > /dev/null 2>&1; echo "exit $?"
  python3 bench/spy_top.py /tmp/spy.txt --top 12 --processes 8 2>&1 | cut -c1-170 | head -230
  step "bytecode: torch's import with writing allowed into a pycache prefix (three runs, the first fills it)"
  for i in 1 2 3; do env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=/tmp/pyc /usr/bin/time -f "prefix, writing %e s" python3 -c "import torch"; done 2>&1
  for r in pyc1 pyc2; do PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=/tmp/pyc bench_run $r; done
  ;;
s33)  # carry .whl .w8 .w10 (old.tgz: git archive b2dfedc) .w11: CUPTI's records read straight from its buffers
  # (ctypes) against cupti-python's per-record objects (b2dfedc): the tests, a chunk's cost, make bench's rows
  pip install -q --no-deps --no-index --target /tmp/site2 .w11/*.whl 2>&1 | grep -v WARNING | tail -2
  export PYTHONPATH="$PYTHONPATH:/tmp/site2" PATH="$PATH:/tmp/site2/bin"
  mkdir -p /tmp/old /tmp/rep; tar xzf .w10/old.tgz -C /tmp/old
  step "libcupti: mapped after torch's import, after the CUDA context; the tracer in use"
  timeout 60 python3 -c "
import torch
from harness.measure.devices.tracers import mapped
print('after import:', mapped('libcupti.so')); torch.zeros(1, device='cuda'); print('after the context:', mapped('libcupti.so'))
from harness.measure.devices.cuda import CudaDevice
d = CudaDevice(0); d.setup(); print('tracer:', d.tracer().source)" 2>&1 | tail -4
  step "tests/measure/devices: test_cuda.py, test_tracers.py"
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/measure/devices/test_cuda.py tests/measure/devices/test_tracers.py 2>&1 | grep -E "passed|failed|Error|assert" | head -12
  spin_probe direct direct profiler direct direct
  for dir in . /tmp/old; do
    step "sample_cost triton-row medium-bf16 in $dir (. = ctypes reader, /tmp/old = cupti-python's objects)"
    (cd $dir && timeout 60 python3 bench/sample_cost.py rmsnorm.yaml --solution triton-row --workload medium-bf16 --device cuda --samples 100 --tracer auto --top 12 2>&1 | cut -c1-150 | grep -v "^---" | head -20)
  done
  step "cheats that touch the timer, on CUDA"
  timeout 100 python3 -m harness run manifests/cheats.yaml --device cuda --quiet --out /tmp/rep/cheats $(for s in honest side-stream forged-activities stand-in-tracer legacy-stream compiled; do echo --solution $s; done) > /tmp/cheats.txt 2>&1; echo "exit $?"
  grep -E "^(honest|side-stream|forged|stand-in|legacy|compiled)" /tmp/cheats.txt | cut -c1-150 | head -14
  rm -rf /var/tmp/opbench-cache; bench_run cold
  bench_run new-warm1; phases new-warm1; bench_run old-warm /tmp/old; phases old-warm; bench_run new-warm2; phases new-warm2
  step "a warm run under py-spy: the top frames per process"
  timeout 120 py-spy record -r 100 --nonblocking --subprocesses --format raw -o "$OUT/spy.txt" -- \
    python3 -m harness run rmsnorm.yaml --device cuda --quiet --out /tmp/rep/spy > /dev/null 2>&1; echo "exit $?"
  python3 bench/spy_top.py "$OUT/spy.txt" --top 12 --processes 3 2>&1 | cut -c1-170 | head -90
  ;;
s34)  # carry .whl .w8 .w11: CUPTI's clock put back in ns after a torch.profiler session (tracers.in_ns), then
  # the tests, the timer cheats and make bench cold and warm at this commit
  pip install -q --no-deps --no-index --target /tmp/site2 .w11/*.whl 2>&1 | grep -v WARNING | tail -2
  export PYTHONPATH="$PYTHONPATH:/tmp/site2" PATH="$PATH:/tmp/site2/bin"
  mkdir -p /tmp/rep
  spin_probe direct profiler direct direct
  step "tests/measure/devices: test_cuda.py, test_tracers.py"
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/measure/devices/test_cuda.py tests/measure/devices/test_tracers.py 2>&1 | grep -E "passed|failed|Error|assert" | head -12
  step "cheats that touch the timer, on CUDA"
  timeout 100 python3 -m harness run manifests/cheats.yaml --device cuda --quiet --out /tmp/rep/cheats $(for s in honest side-stream forged-activities stand-in-tracer legacy-stream compiled; do echo --solution $s; done) > /tmp/cheats.txt 2>&1; echo "exit $?"
  grep -E "^(honest|side-stream|forged|stand-in|legacy|compiled)" /tmp/cheats.txt | cut -c1-120 | head -14
  rm -rf /var/tmp/opbench-cache; bench_run cold; bench_run warm; phases warm
  ;;
s35)  # carry .whl .w8 .w11: the sweep's scan order (a kept build's children never taken for strays): make bench cold, warm
  pip install -q --no-deps --no-index --target /tmp/site2 .w11/*.whl 2>&1 | grep -v WARNING | tail -2
  export PYTHONPATH="$PYTHONPATH:/tmp/site2" PATH="$PATH:/tmp/site2/bin"
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache; bench_run cold; bench_run warm
  ;;
s36)  # after `stash` with .w3 .w9 and `stash` with .w4, carry .w5: every rmsnorm language. Issue 13 on whatever card
  # comes: make bench cold (the sweep's fixes: no build child killed) and warm twice, harness_cost (the 1 GiB add,
  # FlashInfer-Bench on one TraceSet); issue 12's small kernels and the floor through harness run (no peers)
  began36=$(date +%s); left() { echo $(( ${S36_S:-540} - ($(date +%s) - began36) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  for m in cutlass.cute cuda.tile tilelang tvm_ffi cudnn flashinfer_bench; do python3 -c "import $m" > /dev/null 2>&1 && echo "$m ok" || echo "$m MISSING"; done
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache; bench_run cold . 150
  grep -c "exited with status" "$OUT/bench-cold.txt"; grep -o "ninja exited with status [0-9]*" "$OUT/bench-cold.txt" | sort | uniq -c
  bench_run warm . 90; bench_run warm2 . 90; phases warm2
  step "harness_cost: rmsnorm (warm), a 1 GiB add, FlashInfer-Bench 0.1.2 and opbench on one TraceSet"
  timeout "$(( $(left) - 130 ))" python3 bench/harness_cost.py --device cuda --add-gib 1 --vs-fib --timeout-s 120 --out "$OUT" 2>&1 | cut -c1-230 | tail -60
  step "issue 12: CUPTI's serialized KERNEL records against CONCURRENT_KERNEL's and ncu's, the floor first"
  timeout "$(( $(left) > 170 ? 150 : $(left) - 20 ))" python3 bench/timing_accuracy.py kinds add-fp32-1 add-fp32-1M triton-rmsnorm-256x4096 gemm-bf16-1024 \
    softmax-bf16-256x4096 matmul-bias-relu-bf16-2048 2>&1 | grep -v -i warn | tail -14
  step "issue 12: the floor and the small kernels through harness run, against ncu"
  timeout "$(( $(left) - 10 ))" python3 bench/timing_accuracy.py run --skip peers --max-time-s 1.0 --deadline-s "$(( $(left) - 60 ))" \
    --out "$OUT" --cases add-fp32-1 add-fp32-1M triton-rmsnorm-256x4096 gemm-bf16-1024 softmax-bf16-256x4096 2>&1 | tail -25
  ;;
s37)  # carry .whl .w8 .w11: the flush as one read (an int32 sum had torch copy the buffer to int64 first): the GPU
  # tests, CUPTI's two kernel records against ncu, issue 12's small kernels; FlashInfer-Bench against opbench alternating
  # three rounds; make bench cold and warm with what time is left
  began37=$(date +%s); left() { echo $(( ${S37_S:-540} - ($(date +%s) - began37) )); }
  pip install -q --no-deps --no-index --target /tmp/site2 .w11/*.whl 2>&1 | grep -v WARNING | tail -2
  export PYTHONPATH="$PYTHONPATH:/tmp/site2" PATH="$PATH:/tmp/site2/bin"
  step versions; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  step "GPU tests: test_cuda.py, test_tracers.py, test_cpu.py"
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/measure/devices/test_cuda.py tests/measure/devices/test_tracers.py tests/measure/devices/test_cpu.py 2>&1 | grep -E "passed|failed|Error|assert" | head -12
  step "issue 12: CUPTI's serialized KERNEL records against CONCURRENT_KERNEL's and ncu's, the floor first"
  timeout 150 python3 bench/timing_accuracy.py kinds add-fp32-1 add-fp32-1M triton-rmsnorm-256x4096 gemm-bf16-1024 \
    softmax-bf16-256x4096 matmul-bias-relu-bf16-2048 2>&1 | grep -v -i warn | tail -14
  step "issue 12: the floor and the small kernels through harness run, against ncu"
  timeout 170 python3 bench/timing_accuracy.py run --skip peers --max-time-s 1.0 --deadline-s 130 \
    --out "$OUT" --cases add-fp32-1 add-fp32-1M triton-rmsnorm-256x4096 gemm-bf16-1024 softmax-bf16-256x4096 2>&1 | tail -16
  step "issue 13: FlashInfer-Bench 0.1.2 and opbench on one TraceSet, alternating, three rounds"
  timeout "$(( $(left) > 150 ? 140 : $(left) - 10 ))" python3 bench/harness_cost.py --device cuda --vs-fib --fib-rounds 3 --fib-only --out "$OUT" 2>&1 | grep -E "^round|^flashinfer|^opbench|^\| (torch|triton)-rmsnorm / b" | head -30
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache
  [ "$(left)" -gt 75 ] && bench_run cold . "$(( $(left) - 5 ))"
  [ "$(left)" -gt 35 ] && bench_run warm . "$(( $(left) - 5 ))"
  ;;
s38)  # carry .whl .w8: the hold sized from what a sample queues after it (events had read Triton's launch once the
  # flush was one pass): issue 12's small kernels, the timer cheats, make bench cold and warm with what time is left
  began38=$(date +%s); left() { echo $(( ${S38_S:-330} - ($(date +%s) - began38) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  step "issue 12: the floor and the small kernels through harness run, against ncu"
  timeout "$(( $(left) - 10 ))" python3 bench/timing_accuracy.py run --skip peers --max-time-s 1.0 --deadline-s "$(( $(left) > 150 ? 110 : $(left) - 45 ))" \
    --out "$OUT" --cases ${CASES38:-add-fp32-1 add-fp32-1M triton-rmsnorm-256x4096 gemm-bf16-1024 softmax-bf16-256x4096} 2>&1 | tail -24
  [ "$(left)" -lt 80 ] && exit 0
  step "cheats that touch the timer, on CUDA"
  timeout 90 python3 -m harness run manifests/cheats.yaml --device cuda --quiet --out /tmp/rep/cheats $(for s in honest side-stream forged-activities stand-in-tracer legacy-stream compiled; do echo --solution $s; done) > /tmp/cheats.txt 2>&1; echo "exit $?"
  grep -E "^(honest|side-stream|forged|stand-in|legacy|compiled)" /tmp/cheats.txt | cut -c1-120 | head -14
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache
  [ "$(left)" -gt 70 ] && bench_run cold . "$(( $(left) - 5 ))"
  [ "$(left)" -gt 30 ] && bench_run warm . "$(( $(left) - 3 ))"
  ;;
acc)  # carry .whl .w8 .w9: issue 12's proof in ONE run: every case with every timer and peer (one process per timer:
  # the peers, harness run of a suite of all cases with the default timer and with events, ncu over all cases), then
  # the GPU tests with what time is left. .w9 (the CuTe DSL's two wheels) only rides along to /tmp/stash for s39
  began=$(date +%s); left() { echo $(( ${ACC_S:-570} - ($(date +%s) - began) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  step "issue 12: timing_accuracy.py run, all 13 cases, every timer and peer, one run"
  timeout "$(( $(left) - 10 ))" python3 bench/timing_accuracy.py run --max-time-s 1.0 --deadline-s "$(( $(left) - 90 ))" \
    --out "$OUT" 2>&1 | grep -v -i warn | cut -c1-420 | tail -70
  if [ "$(left)" -gt 100 ]; then
    step "GPU tests: test_cuda.py, test_tracers.py, test_cpu.py, test_timing.py"
    timeout "$(( $(left) - 10 ))" python3 -m pytest -q -p no:cacheprovider tests/measure/devices/test_cuda.py \
      tests/measure/devices/test_tracers.py tests/measure/devices/test_cpu.py tests/measure/test_timing.py 2>&1 | grep -E "passed|failed|Error|assert" | head -12
  fi
  ;;
s39)  # after `acc` (carry .whl .w8 .w9), `stash` with .w3 and `stash` with .w4, carry .w5: every rmsnorm language.
  # Issue 13: make bench cold (compile included) and warm twice, each row's phases; harness_cost: the 1 GiB add and
  # FlashInfer-Bench 0.1.2 against opbench on one TraceSet, alternating, three rounds
  began=$(date +%s); left() { echo $(( ${S39_S:-560} - ($(date +%s) - began) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  for m in cutlass.cute cuda.tile tilelang tvm_ffi cudnn flashinfer_bench; do python3 -c "import $m" > /dev/null 2>&1 && echo "$m ok" || echo "$m MISSING"; done
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache; bench_run cold . 150
  grep -o "ninja exited with status [0-9]*" "$OUT/bench-cold.txt" | sort | uniq -c
  bench_run warm . 90; bench_run warm2 . 90; phases warm2
  grep -cE "UNSUPPORTED|COMPILE_ERROR|RUNTIME_ERROR" "$OUT/bench-warm2.txt"; grep -E "UNSUPPORTED|COMPILE_ERROR|RUNTIME_ERROR" "$OUT/bench-warm2.txt" | cut -c1-160 | head -8
  step "issue 13: harness_cost, the 1 GiB add; FlashInfer-Bench 0.1.2 and opbench on one TraceSet, three rounds"
  timeout "$(( $(left) - 10 ))" python3 bench/harness_cost.py --device cuda --add-gib 1 --vs-fib --fib-rounds 3 --timeout-s 120 \
    --out "$OUT" 2>&1 | cut -c1-230 | tail -50
  if [ "$(left)" -gt 100 ]; then  # issue 13's cost model: what two shards of one run cost, against the whole
    step "issue 13: rmsnorm.yaml warm, whole and as 2 shards one after the other (harness run), then merged"
    rm -rf /tmp/rep/shard-* /tmp/rep/merged
    for sh in whole 1/2 2/2; do
      t0=$(date +%s.%N); d=/tmp/rep/shard-${sh/\//of}
      timeout "$(( ($(left) - 10) / 3 ))" python3 -m harness run manifests/rmsnorm.yaml --device cuda --quiet --out "$d" $([ "$sh" = whole ] || echo --shard "$sh") > "$d.txt" 2>&1
      echo "$sh: exit $? after $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s, $(python3 -c "import glob, json; r = json.load(open(glob.glob('$d/*.json')[0])); print(len(r['traces']), 'traces, rows done at', r['environment'].get('run_clock_s', {}).get('rows_done'))" 2>&1 | tail -1)"
    done
    timeout 30 python3 -m harness merge /tmp/rep/shard-1of2/*.json /tmp/rep/shard-2of2/*.json --out /tmp/rep/merged/merged.json 2>&1 | tail -3
  fi
  ;;
s40)  # carry .whl .w8: issue 13's fixed costs on a warm run (7 languages: no toolchains archive). (1) bytecode kept in
  # opbench's cache where torch has none beside it (harness/bytecode.py) against none; (2) a CUPTI chunk's fixed cost
  # with the direct tracer (sample_cost --sizes); (3) CUPTI chunks of at least 100 samples against 30. A and B alternate.
  began=$(date +%s); left() { echo $(( ${S40_S:-560} - ($(date +%s) - began) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  python3 -c "import importlib.util as u, os, sys; o = u.find_spec('torch').origin; print('PYTHONDONTWRITEBYTECODE', repr(os.environ.get('PYTHONDONTWRITEBYTECODE')), '| torch bytecode beside its source:', os.path.exists(u.cache_from_source(o)), '| torch folder writable:', os.access(os.path.dirname(o), os.W_OK))"
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache; bench_run cold . 150
  ls /var/tmp/opbench-cache; du -sh /var/tmp/opbench-cache/pycache 2>&1 | tail -1
  step "(1) bytecode kept (new) against none (old), alternating"
  for r in 1 2; do ab "bytecode-none-$r" "import harness.bytecode as b; b.use_cache = lambda *a, **k: None"; ab "bytecode-kept-$r" ""; done
  step "(2) a chunk's wall, direct CUPTI tracer: fixed part and part per sample"
  timeout 120 python3 bench/sample_cost.py rmsnorm.yaml --solution triton-row --workload medium-bf16 --device cuda --samples 100 --sizes 10,30,100,300 --top 12 2>&1 | tail -30
  step "(3) CUPTI chunks of at least 100 samples (old) against 30 (new), alternating"
  for r in 1 2; do [ "$(left)" -gt 60 ] && ab "chunk100-$r" "import harness.measure.timing as t; t.CUPTI_CHUNK = 100"; [ "$(left)" -gt 30 ] && ab "chunk30-$r" "import harness.measure.timing as t; t.CUPTI_CHUNK = 30"; done
  ;;
s41)  # after `stash` with .w3 and `stash` with .w4, carry .w5 .w9: every rmsnorm language (40 rows). make bench cold, then
  # warm through harness run: the old way (no bytecode kept, CUPTI chunks of 100) against the new, alternating, each
  # row's phases (to $OUT/phases-old.txt, phases-new.txt); make's own steps before the run; a CUPTI chunk's fixed cost
  began=$(date +%s); left() { echo $(( ${S41_S:-560} - ($(date +%s) - began) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  for m in cutlass.cute cuda.tile tilelang tvm_ffi cudnn flashinfer_bench; do python3 -c "import $m" > /dev/null 2>&1 && echo "$m ok" || echo "$m MISSING"; done
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache; bench_run cold . 150
  ls -la /var/tmp/opbench-cache/build/*/cuda_cpp/cudnn-plan-* 2>&1 | cut -c1-200 | head -5; du -sh /var/tmp/opbench-cache/pycache
  step "make's own steps before the run (launch-deps, deps), twice"
  for r in 1 2; do s=$(date +%s.%N); PIP_NO_INDEX=1 make deps > /dev/null 2>&1; echo "make deps: exit $? $(python3 -c "print(f'{$(date +%s.%N) - $s:.2f}')") s"; done
  step "a chunk's wall, direct CUPTI tracer: fixed part and part per sample"
  timeout 100 python3 bench/sample_cost.py rmsnorm.yaml --solution triton-row --workload medium-bf16 --device cuda --samples 100 --sizes 10,30,100,300 --top 8 2>&1 | tail -22
  step "warm, harness run: old (no bytecode kept, CUPTI chunks of 100), b100 (bytecode kept, chunks of 100), new; alternating"
  old="import harness.bytecode as b, harness.measure.timing as t; b.use_cache = lambda *a, **k: None; t.CUPTI_CHUNK = 100"
  for r in 1 2; do
    [ "$(left)" -gt 100 ] && ab "old-$r" "$old"
    [ "$(left)" -gt 70 ] && ab "b100-$r" "import harness.measure.timing as t; t.CUPTI_CHUNK = 100"
    [ "$(left)" -gt 40 ] && ab "new-$r" ""
  done
  for v in old new; do phases "ab-$v-1" > "$OUT/phases-$v.txt" 2>&1; head -1 "$OUT/phases-$v.txt"; done
  ;;
s42)  # after `stash` with .w3 and `stash` with .w4, carry .w5 .w9: the README's command with every rmsnorm language
  # (40 rows): make bench with every build cache emptied, then warm twice (the last run's phases to $OUT); issue 12's
  # smaller cases against ncu with CUPTI chunks of 30
  began=$(date +%s); left() { echo $(( ${S42_S:-300} - ($(date +%s) - began) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache; bench_run cold . 150
  for r in 1 2; do [ "$(left)" -gt 40 ] && bench_run "warm$r" . 60; done
  phases warm2 > "$OUT/phases-warm2.txt" 2>&1
  step "issue 12 with CUPTI chunks of 30: ncu, CUPTI, events on six cases (no peers)"
  [ "$(left)" -gt 60 ] && timeout "$(( $(left) - 5 ))" python3 bench/timing_accuracy.py run --max-time-s 1.0 --deadline-s "$(( $(left) - 15 ))" \
    --skip peers --cases add-fp32-1 add-fp32-1M triton-rmsnorm-256x4096 gemm-bf16-1024 add-fp32-16M cuda-rmsnorm-4096x8192 \
    --out "$OUT" 2>&1 | grep -v -i warn | cut -c1-300 | tail -30
  ;;
s43)  # carry .whl .w8, one call: the README's make bench (7 languages: no toolchains archive) with every build cache
  # emptied, then warm twice, at the review fixes (bytecode kept from `python -m harness`'s first line, cudnn-graph's
  # plan cache that removes a damaged file)
  began=$(date +%s); left() { echo $(( ${S43_S:-170} - ($(date +%s) - began) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache; bench_run cold . 110
  for r in 1 2; do [ "$(left)" -gt 25 ] && bench_run "warm$r" . 40; done
  ls /var/tmp/opbench-cache/build/*/cuda_cpp/ 2>/dev/null | grep -c cudnn-plan
  grep -E "COMPILE_ERROR|RUNTIME_ERROR" "$OUT/bench-warm2.txt" | cut -c1-200 | head -5
  ;;
s44)  # after `stash` with .w3 and `stash` with .w4, carry .w5 .w9: the README's make bench with every rmsnorm language
  # (40 rows), cold then warm twice; issue 12's table (all 13 cases, every timer and peer, one run); the bytecode of
  # what only workers import (bytecode.compile_behind) against none, each with its own cache (old: a copy of the build
  # cache, primed once); cudnn-graph with one kept plan damaged
  began=$(date +%s); left() { echo $(( ${S44_S:-575} - ($(date +%s) - began) )); }
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  for m in cutlass.cute cuda.tile tilelang tvm_ffi flashinfer_bench cuda.bench; do python3 -c "import $m" > /dev/null 2>&1 && echo "$m ok" || echo "$m MISSING"; done
  mkdir -p /tmp/rep; rm -rf /var/tmp/opbench-cache /var/tmp/opbench-old; bench_run cold . 150
  for r in 1 2; do [ "$(left)" -gt 330 ] && bench_run "warm$r" . 60; done
  phases warm2 > "$OUT/phases-warm2.txt" 2>&1; head -1 "$OUT/phases-warm2.txt"
  for pkg in harness torch/utils setuptools triton tilelang cutlass cuda/tile tvm_ffi; do
    printf '%s: %s pyc  ' "$pkg" "$(find /var/tmp/opbench-cache/pycache -path "*/$pkg/*" -name '*.pyc' 2>/dev/null | wc -l)"; done; echo
  step "issue 12: timing_accuracy.py run, all 13 cases, every timer and peer, one run"
  [ "$(left)" -gt 200 ] && timeout "$(( $(left) - 75 ))" python3 bench/timing_accuracy.py run --max-time-s 1.0 \
    --deadline-s "$(( $(left) - 150 ))" --out "$OUT" 2>&1 | grep -v -i warn | cut -c1-420 | tail -45
  step "warm, harness run: workers' bytecode compiled behind the parent (new) against not (old, its own cache)"
  mkdir -p /var/tmp/opbench-old && cp -a /var/tmp/opbench-cache/build /var/tmp/opbench-old/
  old="import os; os.environ['OPBENCH_CACHE_DIR'] = '/var/tmp/opbench-old'; import harness.bytecode as b; b.compile_behind = lambda *a, **k: None"
  [ "$(left)" -gt 90 ] && ab old-prime "$old"
  [ "$(left)" -gt 60 ] && ab old-1 "$old"
  [ "$(left)" -gt 35 ] && ab new-1 ""
  for v in old-1 new-1; do phases "ab-$v" > "$OUT/phases-$v.txt" 2>&1; done
  step "cudnn-graph with one kept plan damaged"
  plan=$(ls /var/tmp/opbench-cache/build/*/cuda_cpp/cudnn-plan-* 2>/dev/null | head -1)
  if [ -n "$plan" ] && [ "$(left)" -gt 12 ]; then
    head -c 3000 /dev/urandom > "$plan"; timeout "$(( $(left) - 3 ))" python3 -m harness run rmsnorm.yaml --device cuda \
      --solution cudnn-graph --quiet --out /tmp/rep/damaged > /tmp/rep/damaged.txt 2>&1; echo "exit $?"
    grep -E "PASSED|FAIL|ERROR" /tmp/rep/damaged.txt | cut -c1-160 | head -6; ls -la "$plan" | cut -c1-200
  fi
  ;;
s45)  # after s44 on the same machine, `stash` with .w3 and `stash` with .w4, carry .w5 .w9: every rmsnorm language
  # (40 rows): make bench once to fill the three languages s44 lacked, then warm twice (phases to $OUT); then harness
  # run with workers' bytecode compiled behind the parent (new) against not (old, its own cache, primed once), alternating
  began=$(date +%s); left() { echo $(( ${S45_S:-480} - ($(date +%s) - began) )); }
  for m in cutlass.cute cuda.tile tilelang tvm_ffi; do python3 -c "import $m" > /dev/null 2>&1 && echo "$m ok" || echo "$m MISSING"; done
  bench_run fill . 150
  for r in 1 2; do [ "$(left)" -gt 60 ] && bench_run "all-warm$r" . 60; done
  phases all-warm2 > "$OUT/phases-all-warm2.txt" 2>&1; head -1 "$OUT/phases-all-warm2.txt"
  for pkg in harness torch/utils setuptools triton tilelang cutlass cuda/tile tvm_ffi; do
    printf '%s: %s pyc  ' "$pkg" "$(find /var/tmp/opbench-cache/pycache -path "*/$pkg/*" -name '*.pyc' 2>/dev/null | wc -l)"; done; echo
  step "warm, harness run, 40 rows: workers' bytecode compiled behind the parent (new) against not (old, its own cache)"
  rm -rf /var/tmp/opbench-old; mkdir -p /var/tmp/opbench-old && cp -a /var/tmp/opbench-cache/build /var/tmp/opbench-old/
  old="import os; os.environ['OPBENCH_CACHE_DIR'] = '/var/tmp/opbench-old'; import harness.bytecode as b; b.compile_behind = lambda *a, **k: None"
  [ "$(left)" -gt 150 ] && ab all-old-prime "$old"
  for r in 1 2; do [ "$(left)" -gt 50 ] && ab "all-old-$r" "$old"; [ "$(left)" -gt 25 ] && ab "all-new-$r" ""; done
  for v in old-2 new-2; do phases "ab-all-$v" > "$OUT/phases-all-$v.txt" 2>&1; done
  ;;
s46)  # after s45 on the same machine (the toolchains unpacked): every rmsnorm language, make bench with every cache
  # emptied (builds, JIT caches, bytecode), then once warm
  rm -rf /var/tmp/opbench-cache /var/tmp/opbench-old; bench_run cold40 . 150; bench_run warm40 . 60
  phases cold40 > "$OUT/phases-cold40.txt" 2>&1; head -1 "$OUT/phases-cold40.txt"
  ;;
s47)  # carry .whl .w8, one call (ran 2026-12-08 at the commit that dropped PASSIVE, since put back): the CPU device on
  # this 16-core host with a 10 ms resume before each chunk: the order tests, then harness run rmsnorm.yaml --device
  # cpu with libgomp's default wait policy against OMP_WAIT_POLICY=PASSIVE, alternating; the CPU-side tests on the GPU
  # machine; make bench (7 languages) cold and warm: the GPU rows unchanged
  began=$(date +%s); left() { echo $(( ${S47_S:-560} - ($(date +%s) - began) )); }; mkdir -p /tmp/rep
  step versions; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
  for pol in "" "" PASSIVE; do
    step "the order tests, OMP_WAIT_POLICY='$pol' (empty: libgomp's default)"
    timeout 90 env OMP_WAIT_POLICY="$pol" python3 -m pytest -q -p no:cacheprovider \
      tests/execute/test_containment.py -k "slower or burners" 2>&1 | grep -E "passed|failed|assert|reported" | head -6
  done
  for pol in "" PASSIVE "" PASSIVE; do
    [ "$(left)" -lt 330 ] && break
    step "harness run rmsnorm.yaml --device cpu, OMP_WAIT_POLICY='$pol'"
    s=$(date +%s.%N); d="/tmp/rep/cpu$pol$(date +%s)"
    timeout 60 env OMP_WAIT_POLICY="$pol" python3 -m harness run rmsnorm.yaml --device cpu \
      --solution pytorch-fused --out "$d" --quiet > "$d.txt" 2>&1
    echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s"
    python3 -c "
import json, glob
r = json.load(open(glob.glob('$d/*.json')[0])); e = r['environment']
print('clock', e['run_clock_s'].get('rows_done'), 'threads', e['device'].get('torch_threads'), e['device'].get('omp_wait_policy'), 'resume', e['device'].get('resume_ms'))
for t in r['traces']:
    a, b = t.get('timing') or {}, t.get('reference_timing') or {}
    if a: print(' ', t['workload'], 'sol %.4f ms n %d iqr %.0f%% | ref %.4f ms n %d iqr %.0f%%' % (a['median_ms'], a['n'], 100 * a['iqr_ms'] / a['median_ms'], b['median_ms'], b['n'], 100 * b['iqr_ms'] / b['median_ms']), t.get('flags'), 'row %.1f s' % t['cost_s']['total'])
" 2>&1 | tail -6
  done
  step "CPU-side tests on this machine (timing, inputs, worker, containment)"
  [ "$(left)" -gt 250 ] && timeout 150 python3 -m pytest -q -p no:cacheprovider tests/measure/test_timing.py \
    tests/execute/test_inputs.py tests/execute/test_worker.py tests/measure/devices/test_cuda.py 2>&1 | tail -3
  rm -rf /var/tmp/opbench-cache; [ "$(left)" -gt 150 ] && bench_run cold . 110
  [ "$(left)" -gt 45 ] && bench_run warm . 40
  ;;
s48)  # carry .whl .w8: after s47 (CPU rows NOISY on this 16-core host with libgomp's default wait policy, not with
  # PASSIVE): the workers' setting as committed (PASSIVE, the resume), twice; the input test that failed here in s47,
  # in full; make bench (7 languages) cold and warm at the commit
  began=$(date +%s); left() { echo $(( ${S48_S:-300} - ($(date +%s) - began) )); }; mkdir -p /tmp/rep
  nproc; python3 -c "import torch; print(torch.__version__, torch.get_num_threads())"
  step "tests/execute/test_inputs.py -k chunked"
  timeout 60 python3 -m pytest -q -p no:cacheprovider tests/execute/test_inputs.py 2>&1 | grep -E "^E |^>|passed|failed" | head -24
  python3 -c "import torch; g = torch.Generator('cuda').manual_seed(42); u = torch.empty(393233, dtype=torch.bfloat16, device='cuda').normal_(1.0, 2.0, generator=g).float(); v = torch.empty(393233, device='cuda').normal_(1.0, 2.0, generator=g); print('cuda normal_(1, 2) bf16 mean %.4f std %.4f | f32 mean %.4f std %.4f' % (u.mean().item(), u.std().item(), v.mean().item(), v.std().item()))"
  for v in 1 2; do
    step "harness run rmsnorm.yaml --device cpu, as committed: $v"
    s=$(date +%s.%N); d="/tmp/rep/cpu-$v-$(date +%s)"
    timeout 40 python3 -m harness run rmsnorm.yaml --device cpu --solution pytorch-fused --out "$d" --quiet > "$d.txt" 2>&1
    echo "exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s"
    python3 -c "
import json, glob
r = json.load(open(glob.glob('$d/*.json')[0])); e = r['environment']
print('threads', e['device'].get('torch_threads'), e['device'].get('omp_wait_policy'), 'resume', e['device'].get('resume_ms'))
for t in r['traces']:
    a, b = t.get('timing') or {}, t.get('reference_timing') or {}
    if a: print(' ', t['workload'], 'sol %.4f ms n %d iqr %.0f%% | ref %.4f ms n %d iqr %.0f%%' % (a['median_ms'], a['n'], 100 * a['iqr_ms'] / a['median_ms'], b['median_ms'], b['n'], 100 * b['iqr_ms'] / b['median_ms']), t.get('flags'), 'row %.1f s' % t['cost_s']['total'])
" 2>&1 | tail -5
  done
  rm -rf /var/tmp/opbench-cache; [ "$(left)" -gt 120 ] && bench_run cold . 110
  [ "$(left)" -gt 30 ] && bench_run warm . 30
  ;;
*) echo "usage: $0 stash|census|small|langs|stage|t2|tl|ct|c1|c2|s18|s18b|s19|s20|s21|s22|s23|s24|s25|s26|s27|s28|s29|s30|s31|s32|s33|s34|s35|s36|s37|s38|acc|s39|s40|s41|s42|s43|s44|s45|s46|s47|s48|cost" >&2; exit 2 ;;
esac
