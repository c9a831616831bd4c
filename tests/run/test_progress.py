"""Progress: the runner's messages become counted, timestamped lines (CI) naming what is running."""
from __future__ import annotations

import io

from harness.run.progress import LineProgress, NullProgress, make_progress, runner_callback


def test_runner_messages_drive_line_progress() -> None:
    stream = io.StringIO()
    progress = LineProgress(stream)
    progress.start(2)
    say = runner_callback(progress, lane="cuda:1")
    say("fused :: small")
    say("fused :: small -> PASSED")
    progress.sync(2)
    say("fused :: big")
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("[0/2] cuda:1 fused :: small") and lines[0].startswith("[")
    assert lines[1].endswith("[1/2] cuda:1 fused :: small -> PASSED")
    assert lines[2].endswith("[2/2] cuda:1 fused :: big")


def test_quiet_and_non_terminal_choices() -> None:
    assert isinstance(make_progress(quiet=True), NullProgress)
    assert isinstance(make_progress(stream=io.StringIO()), LineProgress)  # a pipe or CI log: lines, no bar
