"""Log tails are read by seeking: a huge log costs what its tail costs."""
from __future__ import annotations

from pathlib import Path

from harness.logs import tail_of


def test_tail_reads_the_end_of_a_large_log(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    log.write_text("é" * 1_000_000 + "the end", encoding="utf-8")
    tail = tail_of(log, limit=100)
    assert len(tail) == 100 and tail.endswith("é" * 93 + "the end")
    assert tail_of(tmp_path / "missing.log") == ""
