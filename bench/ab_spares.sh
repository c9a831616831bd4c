#!/usr/bin/env bash
# Prepared workers (harness/run/spares.py) A/B on one GPU machine, one call: `harness run rmsnorm.yaml` with a
# cold build cache first (warm-up), then spares off, on without the profiler start-up, on. Carry .whl and .w6
# (bench/h200_issues12_16.sh says how to make them); 2026-12-05 on an H100: 102.6, 78.0, 55.1, 46.0 s.
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site PATH="/tmp/site/nvidia/cu13/bin:$PATH"
ab() {  # $1 label, $2 batch, $3 profiler
  s=$(date +%s.%N)
  timeout 110 python3 -c "import sys, harness.run.spares as sp; sp.BATCH=$2; sp.PROFILER=$3; from harness.cli import main; sys.exit(main(sys.argv[1:]))" \
    run rmsnorm.yaml --device cuda --out /tmp/ab/$1 --quiet > /tmp/ab-$1.txt 2>&1
  echo "$1 (batch $2, profiler $3): exit $? wall $(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')") s; $(python3 -c "
import json, glob, collections
t = json.load(open(glob.glob('/tmp/ab/$1/*.json')[0]))['traces']
print(dict(collections.Counter(x['status'] for x in t)), 'rows', round(sum((x.get('cost_s') or {}).get('total', 0) for x in t), 1), 's; first-row build+timing-start', [round((x.get('cost_s') or {}).get('build', 0) + (x.get('cost_s') or {}).get('timing_start', 0), 1) for x in t if (x.get('cost_s') or {}).get('build')])" 2>&1 | tail -1)"
}
ab warmup 0 True; ab off 0 True; ab noprof 8 False; ab prof 8 True
