"""The parent's own clock against the samples a worker reports.

A worker's samples come from code inside the solution's process, which the solution can patch (the
tamper guard watches a list; in-process, anything is reachable). The parent cannot see inside that
process, but it times every chunk itself, from sending the command to reading the reply, while the
other worker is frozen: no chunk may claim more time than the parent saw pass, and the report keeps
the parent's wall time per call beside the samples (`TimingStats.wall_per_call_ms`).

The other direction, a solution reporting less than its calls took, is beyond this clock: measured
on a 2-core machine, the rest of a chunk's wall time (cache flush, input refresh, the pipe) moved by
10-40 ms per 10-sample chunk between honest chunks, and by 20-500 ms under load, more than a forger
who reports a third of a 1 ms call gains. On an accelerator a host-bound solution also spends host
time the device never sees. That residual risk is stated in the README.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

SLACK = 1.02              # clocks of two processes: a claim may exceed the parent's wall by 2%...
SLACK_MS = 0.05           # ... plus 50 us


@dataclass(frozen=True)
class ChunkWall:
    """One chunk as the parent saw it."""

    wall_ms: float        # send to reply, on the parent's clock
    claimed_ms: float     # what the worker's samples add up to (per-call samples x calls per sample)
    calls: int            # calls in the chunk


def wall_per_call_ms(chunks: Sequence[ChunkWall]) -> float:
    """The parent's wall time per call, median over chunks: an upper bound on the call's time."""
    return statistics.median(c.wall_ms / c.calls for c in chunks) if chunks else 0.0


def impossible(chunks: Sequence[ChunkWall]) -> str | None:
    """A chunk whose samples claim more time than passed."""
    for i, c in enumerate(chunks):
        if c.claimed_ms > c.wall_ms * SLACK + SLACK_MS:
            return (f"chunk {i} reported {c.claimed_ms:.4g} ms of calls, but the parent saw only "
                    f"{c.wall_ms:.4g} ms pass")
    return None
