"""`opbench bench-gen OPERATOR.py [--manifest M] [--out bench_<op>.py]`: write a bench module (spec/benchgen.py)."""
from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import InputError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("operator", type=Path, help="the operator file")
    p.add_argument("--manifest", type=Path, help="a manifest whose workloads become the cases")
    p.add_argument("--out", type=Path, help="where to write it (default: bench_<op>.py beside the operator)")


def cmd_bench_gen(args: argparse.Namespace) -> int:
    from harness.cli.runbench import check_contract
    from harness.results.report import atomic_write
    from harness.spec.benchgen import generate
    from harness.spec.manifest import load_manifest
    if not args.operator.is_file():
        raise InputError(f"no such file: {args.operator}")
    manifest = load_manifest(args.manifest) if args.manifest is not None else None
    out = args.out or args.operator.with_name(f"bench_{args.operator.name}")
    text = generate(args.operator, manifest)
    atomic_write(out, text)
    check_contract(out, args.operator)  # what it wrote keeps the contract (else exit 2, with the findings)
    print(f"wrote {out}")
    return 0
