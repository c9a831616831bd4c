"""Where the CPU went in a py-spy recording, per process: the frames most often on the stack, and the
leaves (the frame that was running).

    py-spy record --subprocesses --format raw -o spy.txt -- python -m harness run ...
    python bench/spy_top.py spy.txt [--top N] [--processes N]

py-spy's raw format is one record per distinct stack, `frame;frame;...;frame COUNT`; with
`--subprocesses` it opens with `process PID:"command"` frames, a child's nested under its parent's (and a
command may hold newlines). Each sample is counted for the innermost process. A frame counted as on the stack once per
sample however often it recurs, so a row's inclusive share reads as the share of the process's samples.
"""
from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Sequence


def parse(text: str) -> dict[str, tuple[int, Counter[str], Counter[str]]]:
    """process -> (samples, inclusive frame counts, leaf frame counts)."""
    out: dict[str, list] = defaultdict(lambda: [0, Counter(), Counter()])
    for stack, count in re.findall(r"(.+?) (\d+)$", text, re.S | re.M):
        frames = stack.strip().split(";")
        procs = [i for i, f in enumerate(frames) if f.startswith("process ")]
        proc = " ".join(frames[procs[-1]].split()) if procs else "process ?"
        frames = [f for f in frames[procs[-1] + 1 if procs else 0:] if not f.startswith("thread ")]
        n = int(count)
        entry = out[proc]
        entry[0] += n
        for f in set(frames):
            entry[1][f] += n
        if frames:
            entry[2][frames[-1]] += n
    return {p: (e[0], e[1], e[2]) for p, e in out.items()}


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("raw", type=Path)
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--processes", type=int, default=6)
    p.add_argument("--rate", type=float, default=100.0, help="py-spy's -r: samples a second")
    args = p.parse_args(argv)
    procs = sorted(parse(args.raw.read_text()).items(), key=lambda kv: -kv[1][0])
    print(f"{len(procs)} processes, {sum(v[0] for _, v in procs) / args.rate:.1f} CPU s in all")
    for proc, (n, inclusive, leaves) in procs[:args.processes]:
        print(f"\n## {proc[:150]}: {n / args.rate:.2f} CPU s")
        for label, counter in (("on the stack", inclusive), ("running", leaves)):
            print(f"  {label}:")
            for frame, c in counter.most_common(args.top):
                print(f"    {c / args.rate:6.2f} s {100 * c / n:5.1f}%  {frame[:150]}")


if __name__ == "__main__":
    main()
