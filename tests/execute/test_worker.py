"""The worker's own bookkeeping between commands (the protocol's tests drive whole workers)."""
from __future__ import annotations

from harness.execute.worker import WorkerState


class CountingDevice:
    """Counts what the worker asks of its device between commands."""

    def __init__(self) -> None:
        self.released = 0

    def release_cached_memory(self) -> None:
        self.released += 1


def test_cached_memory_goes_back_between_commands_but_never_between_timed_chunks() -> None:
    state = WorkerState()
    state.release_memory()  # no device opened yet: nothing to do
    state.device = CountingDevice()
    state.release_memory()
    assert state.device.released == 1
    state.sampler = object()  # a timing session is open: a re-allocation would be timed
    state.release_memory()
    assert state.device.released == 1


def test_a_timing_session_the_parent_abandoned_does_not_keep_memory_forever() -> None:
    """The parent sends no TimeEnd when the reference fails mid-timing; the next command closes it."""
    state = WorkerState()
    state.device = CountingDevice()
    state.sampler, state.pool = object(), [{"inputs": ["a large input set"]}]
    state.end_timing()
    assert state.sampler is None and state.pool == []
    state.release_memory()
    assert state.device.released == 1
