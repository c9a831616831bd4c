"""The terminal table: fits 120 columns with notes wrapped at words (every column with --wide), rates
in the unit that fits, and expected failures said to be expected."""
from __future__ import annotations

from harness.results.render import render_table, si
from harness.results.trace import Status
from opbench_data import samples, trace

LONG = ("round 1: y: 6686 of 8192 elements outside atol=0.02 rtol=0.02 (max abs err 2.06, allowed mismatch 0); "
        "the reference was computed in float32 and the solution accumulated in bfloat16")


def test_the_table_fits_120_columns_and_wraps_notes_at_words() -> None:
    rows = [trace("a-solution-with-a-long-name", status=Status.INCORRECT_NUMERICAL, message=LONG),
            trace("fast", sol_ms=samples(1.0), ref_ms=samples(2.0))]
    narrow = render_table(rows)
    assert max(len(line) for line in narrow.splitlines()) <= 120
    assert "bfloat16" in narrow and "accumulated" in narrow  # nothing cut: wrapped
    assert "language" not in narrow and "iqr" not in narrow
    wide = render_table(rows, width=None)
    assert "language" in wide and max(len(line) for line in wide.splitlines()) > 120


def test_rates_take_the_prefix_that_fits_them() -> None:
    assert (si(3.52e10), si(1.2e15), si(850e6), si(None)) == ("35.2G", "1.2P", "850M", "-")


def test_an_expected_failure_says_so() -> None:
    t = trace("hack", status=Status.TAMPERED, expected_status="TAMPERED", message="patched timer")
    assert "as expected; patched timer" in render_table([t])
