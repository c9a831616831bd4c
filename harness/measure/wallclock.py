"""The parent's own clock against the samples a worker reports.

A worker's samples come from code inside the solution's process, which the solution can patch (the
tamper guard watches a list; in-process, anything is reachable). The parent cannot see inside that
process, but it times every chunk itself, from sending the command to reading the reply, while the
other worker is frozen. Two checks follow:

- No chunk may claim more time than the parent saw pass (every device).
- On the CPU a sample is the host time of the call itself, so the rest of a chunk's wall time (flush,
  input refresh, the sampling loop, the pipe) is the same harness code for the solution and the
  reference. When the solution's remainder per chunk exceeds the reference's by more than half the
  time its samples report for a chunk (and a floor for the per-chunk costs: the pipe, freezing the
  other worker), its calls took longer than it reported. Each side's cleanest chunk (least
  remainder) is compared: other load on the machine only ever adds remainder, to either side at
  random, while a forger's remainder is there in every chunk. Both sides run chunks of the same size.

On an accelerator a host-bound solution legitimately spends host time the device never sees, so only
the first check applies there; a solution that rewrites its own device timestamps to smaller values
is the residual risk the README states.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

SLACK = 1.02              # clocks of two processes: a claim may exceed the parent's wall by 2%...
SLACK_MS = 0.05           # ... plus 50 us
FORGED_FRACTION = 0.5     # CPU: remainder beyond the reference's, as a fraction of the reported time
FLOOR_MS = 2.0            # CPU: and at least this per chunk, so the noise of per-chunk costs is not a verdict


@dataclass(frozen=True)
class ChunkWall:
    """One chunk as the parent saw it."""

    wall_ms: float        # send to reply, on the parent's clock
    claimed_ms: float     # what the worker's samples add up to (per-call samples x calls per sample)
    calls: int            # calls in the chunk

    @property
    def remainder_ms(self) -> float:
        """Wall time of the chunk that its samples do not account for."""
        return self.wall_ms - self.claimed_ms


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


def undercounted(sol: Sequence[ChunkWall], ref: Sequence[ChunkWall], sol_median_ms: float) -> str | None:
    """CPU: the solution's calls took longer than its samples say (see the module docstring)."""
    if not sol or not ref:
        return None
    excess = min(c.remainder_ms for c in sol) - min(c.remainder_ms for c in ref)
    claimed = statistics.median(c.claimed_ms for c in sol)
    if excess > max(FORGED_FRACTION * claimed, FLOOR_MS):
        calls = statistics.median(c.calls for c in sol)
        return (f"the parent's clock saw {excess / calls:.4g} ms per call more than the samples account for "
                f"(reported median {sol_median_ms:.4g} ms; the reference's samples account for its time)")
    return None
