#!/usr/bin/env bash
# Issue 5 on a real GPU: the device-interface contract checks on every device present, then the Triton
# bench module (manifests/bench_rmsnorm.yaml) timed in the `events` and `torch-profiler` modes, with
# the kernels each mode attributed the time to. Needs torch with CUDA, triton, pyyaml, jsonschema,
# tabulate; no pytest, no network. Usage: bash bench/h200_devices_benchmod.sh [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-${OUT:-out/h200}}"
mkdir -p "$OUT"
if [ -d .whl ]; then  # wheels carried to the machine (pytest etc.), as bench/h200_selfcheck.sh does
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
export PYTHONUNBUFFERED=1
status=0
step() { printf '\n===== %s\n' "$*"; }

step "versions"
python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "| torch", torch.__version__,
"| cuda", torch.version.cuda, "| triton", triton.__version__, "|", torch.cuda.get_device_name(0))' || status=1

step "1. device interface contract (tests/measure/devices/device_contract.py) on cpu, cuda, npu"
python3 tests/measure/devices/device_contract.py cpu cuda npu || status=1

for mode in events torch-profiler; do
  step "2. bench module bench_rmsnorm.yaml (Triton rmsnorm_kernel) on cuda, mode $mode"
  python3 -m harness run bench_rmsnorm.yaml --device cuda --mode "$mode" --out "$OUT" --table-format github || status=1
done

step "3. a module whose '# kernels:' names no CUDA kernel must fail attribution, not report a time"
python3 -m harness run bench_rmsnorm_torch.yaml --device cuda --mode torch-profiler --out "$OUT/expect-fail" \
  --table-format github --quiet
rc=$?
if [ "$rc" -eq 1 ]; then echo "OK: exit 1 with RUNTIME_ERROR rows, as expected"; else echo "UNEXPECTED exit $rc"; status=1; fi

step "4. events vs torch-profiler per case, and what each mode attributed the time to"
python3 - "$OUT" <<'PY' || status=1
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
reports = {m: json.loads((out / f"rmsnorm-cuda-{m}.json").read_text()) for m in ("events", "torch-profiler")}
dev = reports["events"]["environment"]["device"]
print(f"device: {dev.get('name')} | driver {dev.get('driver')} | cuda {dev.get('cuda_runtime')} | L2 {dev.get('l2_bytes')}")
ev = {t["workload"]: t for t in reports["events"]["traces"]}
print(f"{'case':18} {'events median':>14} {'profiler median':>16} {'ratio':>6}  attributed (torch-profiler)")
for t in reports["torch-profiler"]["traces"]:
    e = ev[t["workload"]]
    if t["timing"] is None or e["timing"] is None:
        print(f"{t['workload']:18} {t['status']}: {t['message'][:120]}")
        continue
    a, b = e["timing"]["median_ms"] * 1e3, t["timing"]["median_ms"] * 1e3
    att = t["correctness"]["attribution"]
    print(f"{t['workload']:18} {a:11.2f} us {b:13.2f} us {a / b:6.2f}  {att['kernels']} ({att['per_call']}/call); "
          f"not counted: {sorted(att['not_counted'])[:3]}")
PY

step "5. unit tests for this issue (only if pytest is installed)"
if python3 -c 'import pytest' 2>/dev/null; then
  python3 -m pytest -q -p no:cacheprovider tests/measure tests/benchmod tests/test_workflows.py || status=1
else
  echo "pytest not installed: skipped"
fi

step "done: exit $status (reports in $OUT)"
exit "$status"
