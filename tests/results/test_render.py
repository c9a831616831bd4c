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


def test_a_solution_skipped_on_every_workload_is_said_once_under_its_problem() -> None:
    why = "cuda_cpp solution targets cuda; this run is on cpu"
    rows = [trace("fast", workload=w, sol_ms=samples(1.0), ref_ms=samples(2.0)) for w in ("w1", "w2")]
    rows += [trace("gpu-only", workload=w, status=Status.SKIPPED, message=why) for w in ("w1", "w2")]
    rows += [trace("sometimes", workload="w1", status=Status.SKIPPED, message="too large"),
             trace("sometimes", workload="w2", sol_ms=samples(1.0), ref_ms=samples(2.0))]
    text = render_table(rows)
    assert text.count("gpu-only") == 1 and f"  gpu-only: {why}" in text
    assert text.index("op / w2") < text.index("op: SKIPPED on every workload")  # after the problem's last table
    assert text.count("sometimes") == 2  # skipped on one workload only: still a row on each
    only = render_table([trace("gpu-only", status=Status.SKIPPED, message=why)])
    assert only.splitlines()[:2] == ["op: SKIPPED on every workload", f"  gpu-only: {why}"]
