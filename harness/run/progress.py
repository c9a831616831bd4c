"""Progress of a run: a rich bar on a terminal, timestamped lines in CI logs, nothing when quiet.

A run has "lanes" (one per device; a plain run has one) so a multi-device run shows what every
device is doing. The runner reports through a plain `Callable[[str], None]` with messages
"solution :: workload" (started) and "solution :: workload -> STATUS" (finished); `runner_callback`
turns those into `running`/`advance` calls, and `sync` corrects the count after each problem
(skipped solutions and failed builds produce traces without messages).
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Protocol, TextIO

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)


class RunProgress(Protocol):
    def start(self, total: int) -> None: ...
    def running(self, lane: str, label: str) -> None: ...
    def advance(self, lane: str, label: str, status: str) -> None: ...
    def sync(self, done: int) -> None: ...
    def log(self, message: str) -> None: ...
    def close(self) -> None: ...


class _Counts:
    """Shared bookkeeping: thread-safe, since a multi-device parent feeds it from reader threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total = 0
        self.done = 0
        self.lanes: dict[str, str] = {}
        self.began = time.monotonic()

    def current(self) -> str:
        return " | ".join(f"{lane}: {label}" if lane else label for lane, label in sorted(self.lanes.items()))


class NullProgress(_Counts):
    def start(self, total: int) -> None:
        self.total = total

    def running(self, lane: str, label: str) -> None:
        pass

    def advance(self, lane: str, label: str, status: str) -> None:
        pass

    def sync(self, done: int) -> None:
        pass

    def log(self, message: str) -> None:
        pass

    def close(self) -> None:
        pass


class LineProgress(_Counts):
    """One line per event with elapsed time and the count: readable in CI logs, no control codes."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream

    def _say(self, text: str) -> None:
        self.stream.write(f"[{time.monotonic() - self.began:7.1f}s] [{self.done}/{self.total}] {text}\n")
        self.stream.flush()

    def start(self, total: int) -> None:
        with self.lock:
            self.total = total

    def running(self, lane: str, label: str) -> None:
        with self.lock:
            self.lanes[lane] = label
            self._say(f"{lane + ' ' if lane else ''}{label}")

    def advance(self, lane: str, label: str, status: str) -> None:
        with self.lock:
            self.done += 1
            self.lanes.pop(lane, None)
            self._say(f"{lane + ' ' if lane else ''}{label} -> {status}")

    def sync(self, done: int) -> None:
        with self.lock:
            self.done = done

    def log(self, message: str) -> None:
        with self.lock:
            self._say(message)

    def close(self) -> None:
        pass


class RichProgress(_Counts):
    """A live bar: done/total, elapsed, remaining, and the solution each device is running."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.bar = Progress(TextColumn("[bold]opbench"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.description}"),
                            console=console, transient=False)
        self.task = self.bar.add_task("starting", total=None)
        self.bar.start()

    def _refresh(self) -> None:
        self.bar.update(self.task, total=self.total or None, completed=self.done, description=self.current())

    def start(self, total: int) -> None:
        with self.lock:
            self.total = total
            self._refresh()

    def running(self, lane: str, label: str) -> None:
        with self.lock:
            self.lanes[lane] = label
            self._refresh()

    def advance(self, lane: str, label: str, status: str) -> None:
        with self.lock:
            self.done += 1
            self.lanes.pop(lane, None)
            if status != "PASSED":
                self.bar.console.print(f"{lane + ' ' if lane else ''}{label} -> {status}")
            self._refresh()

    def sync(self, done: int) -> None:
        with self.lock:
            self.done = done
            self._refresh()

    def log(self, message: str) -> None:
        with self.lock:
            self.bar.console.print(message)

    def close(self) -> None:
        with self.lock:
            self.lanes.clear()
            self._refresh()
            self.bar.stop()


def make_progress(quiet: bool = False, stream: TextIO | None = None) -> RunProgress:
    """Rich on an interactive terminal, lines otherwise (CI logs, pipes), nothing when quiet."""
    stream = stream or sys.stderr
    if quiet:
        return NullProgress()
    if stream.isatty():
        return RichProgress(Console(file=stream))
    return LineProgress(stream)


def runner_callback(progress: RunProgress, lane: str = "", problem: str = "") -> Callable[[str], None]:
    """Adapt the runner's message callback ("sol :: wl" / "sol :: wl -> STATUS") to `progress`;
    `problem` prefixes the label in a suite, where solution names alone can be ambiguous."""

    def on_message(message: str) -> None:
        label, sep, status = message.partition(" -> ")
        label = f"{problem}/{label}" if problem else label
        if sep:
            progress.advance(lane, label, status.strip())
        else:
            progress.running(lane, label)
    return on_message
