"""The process msprof profiles: re-create one bench-module case and call it warmup + repeats times.

`python -m harness.benchmod.child --operator O [--bench B] --case ID --device npu [--cache cold]`, started by
the worker on the files staged in its scratch folder (it never reads the manifest tree); prints
nothing and checks nothing, so the profile holds the case's kernels, the cache flushes and little else.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="harness.benchmod.child")
    p.add_argument("--operator", type=Path, required=True)
    p.add_argument("--bench", type=Path)
    p.add_argument("--case", required=True)
    p.add_argument("--device", default="npu")
    p.add_argument("--device-index", type=int, default=0)
    p.add_argument("--cache", default="cold", choices=["cold", "warm"])
    args = p.parse_args(argv)

    from harness.execute.benchmodule import load_bench
    from harness.measure.devices import make_device

    device = make_device(args.device, args.device_index)
    device.setup()  # imports torch_npu before the operator module
    loaded = load_bench(args.operator, args.bench, device)
    case = next((c for c in loaded.cases() if c.id == args.case), None)
    if case is None:
        p.error(f"no case {args.case!r} in {args.bench or args.operator}")
    fn = loaded.case_fn(case)
    with device.stream():
        for _ in range(case.warmup + case.repeats):
            if args.cache == "cold":
                device.flush_cache()
            fn()
        device.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
