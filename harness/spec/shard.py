"""Deterministic splitting of a suite into shards (machines in a CI matrix) or device shares.

The unit of work is one workload of one problem: every solution of that problem runs on it in the
same process, so solution and reference are timed side by side on one device as in a plain run.
Units are cut into contiguous runs in suite order, so shards differ by at most one unit, a problem's
workloads stay together, and the split depends only on the suite, never on the machine that computes it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence, TypeVar

from harness.errors import InputError
from harness.spec.model import Manifest

T = TypeVar("T")
SPLIT = "contiguous"  # how `split` cuts, recorded in a shard's report: reports cut otherwise do not merge
LEGACY_SPLIT = "round-robin"  # what a report without the record was cut by (opbench before 2026-12-07)
SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count`, 1-based as in `--shard 1/3` (Jest, Playwright and pytest-split alike)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise InputError(f"shard {self.index}/{self.count}: need 1 <= i <= n")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def slug(self) -> str:
        return f"shard-{self.index}-of-{self.count}"

    @classmethod
    def parse(cls, text: str) -> "Shard":
        match = SHARD_RE.match(text)
        if not match:
            raise InputError(f"bad shard {text!r}: expected i/n, e.g. 2/4")
        return cls(int(match.group(1)), int(match.group(2)))


@dataclass(frozen=True, order=True)
class Unit:
    """One workload of one problem (problem = position of the manifest in the suite)."""

    problem: int
    workload: str


def units_of(manifests: Sequence[Manifest]) -> list[Unit]:
    """Every unit of the suite, in suite order (problem, then workload as the manifest lists them)."""
    return [Unit(i, w.id) for i, m in enumerate(manifests) for w in m.workloads]


def split(units: Sequence[T], count: int) -> list[list[T]]:
    """Cut `units` into `count` contiguous runs, in order, the first `len % count` one longer; every unit
    lands in exactly one. A problem's workloads stay together, so its fixed costs (the CLI's and the
    reference's start, each solution's build and first row) are paid on as few shards as can be: at most
    ceil(W / share) + 1 for a problem of W workloads. Dealt round-robin, it landed on min(W, n) shards,
    each paying them again: SOL-ExecBench's 200 problems x 5 workloads on 8 shards would pay every
    problem's fixed costs five times over."""
    size, extra = divmod(len(units), count)
    out, start = [], 0
    for k in range(count):
        end = start + size + (k < extra)
        out.append(list(units[start:end]))
        start = end
    return out


def foreign_split(cut: str) -> str | None:
    """Why a share cut by `cut` is not a share of this opbench's `split`, or None when it is."""
    if cut == SPLIT:
        return None
    return f"cut {cut} (an older opbench); this one cuts {SPLIT} runs, so the shares differ: run it again"


def select(units: Sequence[Unit], shard: Shard) -> list[Unit]:
    return split(units, shard.count)[shard.index - 1]


def restrict(manifests: Sequence[Manifest], units: Sequence[Unit]) -> list[tuple[int, Manifest]]:
    """(problem index, manifest cut down to the given units), skipping problems with no unit left."""
    wanted: dict[int, set[str]] = {}
    for u in units:
        wanted.setdefault(u.problem, set()).add(u.workload)
    out = []
    for i, m in enumerate(manifests):
        if i in wanted:
            out.append((i, replace(m, workloads=tuple(w for w in m.workloads if w.id in wanted[i]))))
    return out
