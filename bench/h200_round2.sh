#!/usr/bin/env bash
# Second H200 call: cheats (side stream caught by activity attribution), the CUPTI timer on rmsnorm,
# the accuracy/stability/cost benchmark, and the issue-5 device/bench-module script. Writes under $OUT.
set -uo pipefail
OUT=${OUT:-out/h200}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site
export PYTHONUNBUFFERED=1
{ timeout 120 python3 -m harness run cheats.yaml --out "$OUT/cheats" --quiet
  timeout 90 python3 -m harness run rmsnorm.yaml --timer cupti --solution triton-row --solution pytorch-fused \
    --out "$OUT/cupti" --quiet; } 2>&1 | tee "$OUT/cheats.txt" | grep -v '^---' | cut -c1-200
timeout 540 python3 bench/timing_accuracy.py run --out "$OUT" 2>&1 | tee "$OUT/accuracy.txt" | grep -v '^\['
timeout 100 bash bench/h200_devices_benchmod.sh "$OUT/issue5" > "$OUT/issue5.txt" 2>&1; echo "issue5 script rc=$?"
tail -c 2500 "$OUT/issue5.txt"
