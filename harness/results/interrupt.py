"""Ctrl-C or SIGTERM stops a run but keeps what finished.

The first signal becomes a `KeyboardInterrupt` wherever the run is. Each layer that holds finished
results (a problem's runner, the suite loop, the device parent, the bench-module loop) turns it into
`Interrupted` carrying its reports, and the one run path writes them as a report that says it was
interrupted. Later signals are ignored until then: a second Ctrl-C must not cut the report in half
(it is written atomically, but the workers' cleanup comes first).
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator, Sequence

from harness.results.report import Report

EXIT_CODE = 128 + signal.SIGINT  # what a shell reports for a process stopped by Ctrl-C


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal, with the reports of what finished before it.

    A KeyboardInterrupt, so no `except Exception` on the way up swallows it, and a layer catching
    KeyboardInterrupt gets an inner layer's results too (see `stopped`)."""

    def __init__(self, reports: Sequence[Report] = (), why: str = "interrupted") -> None:
        super().__init__(why)
        self.reports = list(reports)
        self.why = why

    def adding(self, earlier: Sequence[Report]) -> "Interrupted":
        """The same interruption, with the reports an outer layer had already finished in front."""
        return Interrupted([*earlier, *self.reports], self.why)


def stopped(exc: BaseException, reports: Sequence[Report] = ()) -> Interrupted:
    """`Interrupted` for a KeyboardInterrupt (or an inner Interrupted) caught with `reports` finished."""
    if isinstance(exc, Interrupted):
        return exc.adding(reports)
    return Interrupted(reports, f"interrupted by {exc.args[0] if exc.args else 'SIGINT'}")


@contextlib.contextmanager
def signals_stop_the_run() -> Iterator[None]:
    """SIGINT and SIGTERM (what `docker stop` sends) raise KeyboardInterrupt once; later ones are
    ignored while the run writes what it has. Outside the main thread (the Python API run from a
    thread) signals cannot be handled there, and this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if seen:
            return
        seen.append(signum)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
