#!/usr/bin/env bash
# Everything the CUDA claims rest on, in one device-machine call: the rmsnorm bench (pytorch, triton,
# cuda_cpp), the cheats manifest, CUDA-graph mode, and the GPU-side test suite. Writes under $OUT.
set -uo pipefail
OUT=${OUT:-out/h200}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, 'cuda', torch.version.cuda)"
echo "== make bench MANIFEST=rmsnorm.yaml"
make bench MANIFEST=rmsnorm.yaml OUT="$OUT/rmsnorm" ARGS="--quiet" 2>&1 | tee "$OUT/rmsnorm.txt"
echo "== cheats"
python3 -m harness run cheats.yaml --out "$OUT/cheats" --quiet 2>&1 | tee "$OUT/cheats.txt"
echo "== cuda-graph mode, warm cache"
python3 -m harness run rmsnorm.yaml --cuda-graph --warm-cache --solution triton-row --solution cuda-warp-reduce \
  --out "$OUT/graph" --quiet 2>&1 | tee "$OUT/graph.txt"
