#!/usr/bin/env bash
# Makes the ignored "carry folders" that bench/h200_issues12_16.sh consumes on the device machine (no internet,
# Python 3.12, torch 2.11+cu130 with numpy; each call carries at most 64 MiB of ignored folders):
#   .whl/  small wheels for CPython 3.12 manylinux x86_64 (pip-installed there with --target /tmp/site)
#   .w8/   cudnnfe.tar.xz: nvidia-cudnn-frontend 1.32.0's include/ as cudnnfe/include/... (tar xJf -C /tmp)
#   .w3/ .w4/ .w5/ (...)  big.part0 (+ big.count), big.part1, big.part2: `tar cf - site cudnnfe | xz -6 -T2`, split
#          in parts under 62 MiB; there `cat /tmp/stash/big.part* | xz -d | tar x -C /tmp` gives /tmp/site, /tmp/cudnnfe
#   .w9/   nvidia_cutlass_dsl and nvidia_cutlass_dsl_libs_base 4.8.1 wheels, unzipped over /tmp/site there
# site/ is ONE `pip install --target` (a second one skips top-level folders already there) of the .whl list, the
# CuTe DSL's cu13 libraries, tileiras/nvcc/nvvm 13.4.92 (pruned to tileiras, ptxas, libnvvm.so.4 and libdevice, with
# their dist-info: cuda.tile runs the wheel's tileiras only when all three are installed at one version) and
# tilelang 0.1.15 with its dependencies; site/bin (console scripts) removed.
# Left out on purpose: flashinfer-python (flashinfer-bench's dependency; bench/timing_accuracy.py loads
# flashinfer_bench/bench/timing.py alone), cuda-python (a meta package: the device has cuda-bindings), numpy, torch
# and the CUDA runtime libraries torch brings; attrs, protobuf, cuda-bindings, networkx, scipy are in the device's image.
# Usage: [FORCE=1] [SANITY=0] [SCRATCH=/tmp/opbench_carry_pack] bash bench/carry_pack.sh
#   Idempotent: each folder is made only when missing (FORCE=1 remakes all, downloads too).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
FORCE=${FORCE:-0}
SANITY=${SANITY:-1}
SCRATCH=${SCRATCH:-/tmp/opbench_carry_pack}
PY=${PYTHON:-python3}
MIB=1048576
PART_MAX=$((60 * MIB))   # each part folder stays under 62 MiB
WHL_MAX=$((60 * MIB))

PLAT=(--platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_24_x86_64
      --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64)
TGT=(--no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${PLAT[@]}")

# The harness's requirements (but numpy) and the toolchains' Python parts; the versions pip picked on 2026-12-07.
WHL_PKGS=(
  jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1
  pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0
  flashinfer-bench==0.1.2 cuda-bench==0.3.0 nvidia-cutlass==4.2.0.0 cuda-tile==1.7.0 apache-tvm-ffi==0.1.12
  nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1 nvidia-cutlass-dsl-libs-core==4.8.1
  docstring-parser==0.18.0 pyyaml==6.0.3 tabulate==0.10.0 rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2
  pygments==2.21.0 safetensors==0.8.0 cuda-pathfinder==1.9.1
  pydot==4.0.1 treelib==1.8.0   # nvidia-cutlass's Python interface (pyparsing, six: in the device's image)
)
# Only in the big archive (too large for .whl, or tilelang's).
BIG_PKGS=(
  nvidia-cutlass-dsl-libs-cu13==4.8.1 nvidia-cuda-tileiras==13.4.92 nvidia-cuda-nvcc==13.4.92 nvidia-nvvm==13.4.92
  tilelang==0.1.15 z3-solver==4.15.4.0 torch-c-dlpack-ext==0.1.5 cloudpickle==3.1.3 ml-dtypes==0.7.0
  psutil==7.2.2 tqdm==4.70.1
)
CUDNNFE_PKG=nvidia-cudnn-frontend==1.32.0
W9_PKGS=(nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1)

DL=$SCRATCH/dl
log() { printf '[carry_pack] %s\n' "$*" >&2; }
need() { [ "$FORCE" = 1 ] || [ ! -e "$1" ]; }  # make $1?
size() { stat -c %s "$1"; }
quiet_pip() { "$PY" -m pip "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

# the one wheel file of NAME==VERSION in $DL
wheel_of() {
  local name=${1%%==*} ver=${1#*==} n found
  n=$(printf '%s' "$name" | tr '.-' '__')
  found=$(find "$DL" -maxdepth 1 -iname "${n}-${ver}-*.whl")
  [ "$(printf '%s\n' "$found" | grep -c .)" = 1 ] || { log "no single wheel for $1 in $DL: '$found'"; return 1; }
  printf '%s\n' "$found"
}

if [ "$FORCE" = 1 ]; then
  log "FORCE=1: remaking everything"
  rm -rf "$SCRATCH" .whl .w8 .w9
  rm -f .w[3-7]/big.part* .w[3-7]/big.count
fi
mkdir -p "$DL"

# -- 0. every wheel, downloaded once (pip reuses files already in $DL) -----------------------------------------
ALL=("${WHL_PKGS[@]}" "${BIG_PKGS[@]}" "$CUDNNFE_PKG")
missing=0
for p in "${ALL[@]}"; do wheel_of "$p" > /dev/null 2>&1 || missing=1; done
if [ "$missing" = 1 ]; then
  log "downloading ${#ALL[@]} wheels to $DL"
  quiet_pip download -q "${TGT[@]}" -d "$DL" "${ALL[@]}"
fi
for p in "${ALL[@]}"; do wheel_of "$p" > /dev/null; done

# -- 1. .whl ----------------------------------------------------------------------------------------------------
if need .whl; then
  log ".whl: ${#WHL_PKGS[@]} wheels"
  rm -rf .whl.tmp && mkdir .whl.tmp
  for p in "${WHL_PKGS[@]}"; do cp "$(wheel_of "$p")" .whl.tmp/; done
  rm -rf .whl && mv .whl.tmp .whl
fi
w=$(du -sb .whl | cut -f1)
[ "$w" -lt "$WHL_MAX" ] || { log ".whl is $w bytes, over $WHL_MAX"; exit 1; }

# -- 2. the cudnn frontend's headers: $SCRATCH/cudnnfe/include and .w8/cudnnfe.tar.xz ---------------------------
if need "$SCRATCH/cudnnfe/include/cudnn_frontend.h"; then
  rm -rf "$SCRATCH/cudnnfe" && mkdir -p "$SCRATCH/cudnnfe"
  "$PY" - "$(wheel_of "$CUDNNFE_PKG")" "$SCRATCH/cudnnfe" <<'EOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = [n for n in z.namelist() if n.startswith("include/") and not n.endswith("/")]
z.extractall(sys.argv[2], names)
print(f"cudnn frontend: {len(names)} headers", file=sys.stderr)
EOF
  chmod -R a+rX "$SCRATCH/cudnnfe"
fi
if need .w8/cudnnfe.tar.xz; then
  mkdir -p .w8
  tar -C "$SCRATCH" --owner=0 --group=0 --numeric-owner --sort=name -cf - cudnnfe | xz -9 > .w8/cudnnfe.tar.xz.tmp
  mv .w8/cudnnfe.tar.xz.tmp .w8/cudnnfe.tar.xz
fi

# -- 3. the big archive: site/ + cudnnfe/, xz, in parts over .w3, .w4, .w5, ... ----------------------------------
BIG=$SCRATCH/big
if need "$BIG/.done"; then
  rm -rf "$BIG" && mkdir -p "$BIG"
  files=()
  for p in "${WHL_PKGS[@]}" "${BIG_PKGS[@]}"; do files+=("$(wheel_of "$p")"); done
  log "site: one pip install --target of ${#files[@]} wheels"
  quiet_pip install -q "${TGT[@]}" --no-index --no-compile --no-warn-script-location --target "$BIG/site" "${files[@]}"
  # prune the CUDA 13.4 wheels to what tileiras runs: tileiras, ptxas, libnvvm.so.4 (+ libdevice), their dist-info
  cu=$BIG/site/nvidia/cu13
  keep="bin/tileiras bin/ptxas lib/libnvvm.so.4 nvvm/libdevice/libdevice.10.bc"
  for k in $keep; do [ -f "$cu/$k" ] || { log "missing $cu/$k"; exit 1; }; done
  (cd "$cu" && find . -type f | sed 's|^\./||' | while read -r f; do
     case " $keep " in *" $f "*) ;; *) rm -f "$f" ;; esac; done && find . -depth -type d -empty -delete)
  rm -rf "$BIG/site/bin"
  find "$BIG/site" -name __pycache__ -type d -prune -exec rm -rf {} +
  [ -d "$BIG/site/nvidia_cutlass_dsl/dsl_packages/cutlass/cute" ] \
    || log "note: site lacks nvidia_cutlass_dsl/dsl_packages/cutlass/cute (the .w9 wheels restore it on the device)"
  cp -a "$SCRATCH/cudnnfe" "$BIG/cudnnfe"
  chmod -R a+rX "$BIG/site" "$BIG/cudnnfe"
  log "big.tar.xz from $(du -sh "$BIG" | cut -f1) (xz -6 -T2, takes a few minutes)"
  tar -C "$BIG" --owner=0 --group=0 --numeric-owner --sort=name -cf - site cudnnfe | xz -6 -T2 > "$BIG/big.tar.xz"
  touch "$BIG/.done"
fi
if [ "$FORCE" = 1 ] || [ ! -f .w3/big.count ] || [ "$BIG/big.tar.xz" -nt .w3/big.count ]; then
  s=$(size "$BIG/big.tar.xz")
  n=$(( (s + PART_MAX - 1) / PART_MAX )); [ "$n" -ge 3 ] || n=3
  [ "$n" -le 5 ] || { log "big.tar.xz is $s bytes: $n parts would reach .w8"; exit 1; }
  log "big.tar.xz: $s bytes in $n parts"
  rm -f "$BIG"/big.part* .w[3-7]/big.part* .w[3-7]/big.count
  (cd "$BIG" && split -n "$n" -d -a 1 big.tar.xz big.part)
  for ((i = 0; i < n; i++)); do
    d=.w$((3 + i)); mkdir -p "$d"; mv "$BIG/big.part$i" "$d/"
    [ "$(size "$d/big.part$i")" -lt $((62 * MIB)) ] || { log "$d/big.part$i is over 62 MiB"; exit 1; }
  done
  echo "$n" > .w3/big.count
fi
NPARTS=$(cat .w3/big.count)

# -- 4. .w9 ------------------------------------------------------------------------------------------------------
if need .w9; then
  rm -rf .w9 && mkdir .w9
  for p in "${W9_PKGS[@]}"; do cp "$(wheel_of "$p")" .w9/; done
fi

# -- 5. git ignores them -----------------------------------------------------------------------------------------
EXCL=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCL")" && touch "$EXCL"
dirs=(.whl .w8 .w9); for ((i = 0; i < NPARTS; i++)); do dirs+=(".w$((3 + i))"); done
for d in "${dirs[@]}"; do grep -qxF "/$d/" "$EXCL" || echo "/$d/" >> "$EXCL"; done

# -- 6. sanity: unpack as the device does ------------------------------------------------------------------------
if [ "$SANITY" = 1 ]; then
  T=$(mktemp -d /tmp/carry_check.XXXXXX)
  # shellcheck disable=SC2046
  cat $(for f in .w*/big.part*; do printf '%s %s\n' "$(basename "$f")" "$f"; done | sort | cut -d' ' -f2) \
    | xz -d | tar x -C "$T"
  for w in .w9/*.whl; do "$PY" -m zipfile -e "$w" "$T/site"; done
  mkdir -p "$T/w8" && tar xJf .w8/cudnnfe.tar.xz -C "$T/w8"
  ok=1
  for p in site/cuda/tile site/nvidia_cutlass_dsl/dsl_packages/cutlass/cute site/cutlass_library/source/include \
           site/tilelang site/tvm_ffi site/flashinfer_bench site/z3 site/nvidia/cu13/bin/tileiras \
           site/nvidia/cu13/bin/ptxas site/nvidia/cu13/lib/libnvvm.so.4 cudnnfe/include/cudnn_frontend.h \
           w8/cudnnfe/include/cudnn_frontend.h; do
    if [ -e "$T/$p" ]; then echo "ok      $p"; else echo "MISSING $p"; ok=0; fi
  done
  for d in nvidia_cuda_tileiras-13.4.92 nvidia_cuda_nvcc-13.4.92 nvidia_nvvm-13.4.92; do
    if [ -d "$T/site/$d.dist-info" ]; then echo "ok      site/$d.dist-info"; else echo "MISSING site/$d.dist-info"; ok=0; fi
  done
  "$T/site/nvidia/cu13/bin/tileiras" --version 2>&1 | tail -1 || true
  "$T/site/nvidia/cu13/bin/ptxas" --version 2>&1 | tail -1 || true
  rm -rf "$T"
  [ "$ok" = 1 ] || { log "sanity check FAILED"; exit 1; }
fi

# -- summary -----------------------------------------------------------------------------------------------------
echo "carry folders (bytes, MiB):"
for d in "${dirs[@]}"; do
  b=$(du -sb "$d" | cut -f1); printf '  %-5s %10d  %6.1f MiB  (%s)\n' "$d" "$b" "$(awk -v b="$b" -v m="$MIB" 'BEGIN { print b / m }')" "$(ls "$d" | wc -l) files"
done
echo "  big.tar.xz: $(size "$BIG/big.tar.xz") bytes in $NPARTS parts; site+cudnnfe unpacked: $(du -sh "$BIG/site" "$BIG/cudnnfe" | cut -f1 | paste -sd' ')"
