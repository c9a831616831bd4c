"""compare: verdicts from two synthetic sample sets with known differences, the gate and the outputs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.results import threshold_arg
from harness.results.compare import (Interval, Settings, Verdict, bootstrap_ratio, compare_traces, decide,
                                     render_markdown)
from harness.results.trace import Status

from opbench_data import report, samples, trace


def verdict(base_ms: list[float], new_ms: list[float], **settings: float) -> Verdict:
    return compare_traces([trace(sol_ms=base_ms)], [trace(sol_ms=new_ms)], Settings(**settings))[0].verdict


@pytest.mark.parametrize("shift, expected", [(1.00, Verdict.SAME), (1.01, Verdict.SAME), (0.99, Verdict.SAME),
                                             (1.20, Verdict.SLOWER), (1.10, Verdict.SLOWER),
                                             (0.80, Verdict.FASTER), (1 / 1.1, Verdict.FASTER)])
def test_known_shifts_with_little_noise(shift: float, expected: Verdict) -> None:
    assert verdict(samples(1.0, seed=1), samples(shift, seed=2)) == expected


def test_noise_is_uncertain_not_a_verdict() -> None:
    # 8% apart but 30% noise and 12 samples: the data cannot tell
    assert verdict(samples(1.0, n=12, spread=0.3, seed=3), samples(1.08, n=12, spread=0.3, seed=4)) == Verdict.UNCERTAIN
    # the same 8% with plenty of quiet samples is a regression
    assert verdict(samples(1.0, seed=3), samples(1.08, seed=4)) == Verdict.SLOWER


def test_threshold_decides_what_counts() -> None:
    base, new = samples(1.0, n=400, spread=0.01, seed=5), samples(1.08, n=400, spread=0.01, seed=6)
    assert verdict(base, new, threshold=0.05) == Verdict.SLOWER
    assert verdict(base, new, threshold=0.15) == Verdict.SAME
    assert threshold_arg("5%") == pytest.approx(0.05) and threshold_arg("0.1") == pytest.approx(0.1)


def test_decide_rule() -> None:
    assert decide(Interval(1.10, 1.06, 1.14), 0.05) == Verdict.SLOWER
    assert decide(Interval(1.06, 1.01, 1.11), 0.05) == Verdict.SLOWER       # significant, and beyond the threshold
    assert decide(Interval(1.03, 1.01, 1.05), 0.05) == Verdict.SAME         # real but small
    assert decide(Interval(1.04, 0.99, 1.09), 0.05) == Verdict.UNCERTAIN    # could be either
    assert decide(Interval(0.90, 0.87, 0.93), 0.05) == Verdict.FASTER


def test_bootstrap_is_seeded_and_brackets_the_ratio() -> None:
    base, new = samples(2.0, seed=7), samples(2.5, seed=8)
    a, b = bootstrap_ratio(base, new), bootstrap_ratio(base, new)
    assert a == b
    assert a.lo < a.ratio < a.hi and a.ratio == pytest.approx(1.25, rel=0.02)


def test_normalize_cancels_a_slower_machine() -> None:
    # new machine is 30% slower for both the solution and the reference
    base = trace(sol_ms=samples(1.0, seed=1), ref_ms=samples(3.0, seed=2))
    new = trace(sol_ms=samples(1.3, seed=3), ref_ms=samples(3.9, seed=4))
    assert compare_traces([base], [new])[0].verdict == Verdict.SLOWER
    assert compare_traces([base], [new], Settings(normalize=True))[0].verdict == Verdict.SAME


def test_outcomes_without_two_timings() -> None:
    ok = samples(1.0)
    base = [trace("a", sol_ms=ok), trace("b", status=Status.INCORRECT_NUMERICAL), trace("c", sol_ms=ok),
            trace("d", status=Status.SKIPPED), trace("e", status=Status.RUNTIME_ERROR), trace("gone", sol_ms=ok)]
    new = [trace("a", status=Status.INCORRECT_NUMERICAL, message="round 1: wrong"), trace("b", sol_ms=ok),
           trace("c", sol_ms=[1.0]), trace("d", status=Status.SKIPPED), trace("e", status=Status.TIMEOUT),
           trace("fresh", sol_ms=ok)]
    got = {r.solution: r.verdict for r in compare_traces(base, new)}
    assert got == {"a": Verdict.BROKEN, "b": Verdict.FIXED, "c": Verdict.UNCERTAIN, "e": Verdict.UNTIMED,
                   "fresh": Verdict.NEW, "gone": Verdict.MISSING}  # skipped in both: no row


def test_markdown_lists_regressions_first() -> None:
    rows = compare_traces([trace("same", sol_ms=samples(1.0, seed=1)), trace("slow", sol_ms=samples(1.0, seed=2))],
                          [trace("same", sol_ms=samples(1.0, seed=3)), trace("slow", sol_ms=samples(1.5, seed=4))])
    md = render_markdown(rows, Settings(), "base.json", "new.json")
    lines = [line for line in md.splitlines() if line.startswith("| op")]
    assert "SLOWER" in lines[0] and "SAME" in lines[1]
    assert "**1 slower**" in md and "|---" in md.replace("-|-", "|-")


@pytest.fixture
def report_files(tmp_path: Path) -> tuple[Path, Path]:
    base = report([trace("fast", sol_ms=samples(1.0, seed=1)), trace("steady", sol_ms=samples(2.0, seed=2))])
    new = report([trace("fast", sol_ms=samples(1.3, seed=3)), trace("steady", sol_ms=samples(2.0, seed=4))])
    paths = tmp_path / "base.json", tmp_path / "new.json"
    for path, data in zip(paths, (base, new)):
        data.write(path.parent, path.stem)
    return paths


def test_cli_gate_and_outputs(report_files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base, new = map(str, report_files)
    assert main(["compare", base, new]) == 0  # without the gate a regression is only reported
    out = capsys.readouterr().out
    assert "SLOWER" in out and "SAME" in out
    md, js = tmp_path / "cmp.md", tmp_path / "cmp.json"
    assert main(["compare", base, new, "--fail-on-regression", "--markdown", str(md), "--json", str(js)]) == 1
    assert "🔴 SLOWER" in md.read_text()
    assert json.loads(js.read_text())["counts"] == {"SLOWER": 1, "SAME": 1}
    assert main(["compare", base, new, "--fail-on-regression", "--threshold", "50%"]) == 0
    assert main(["compare", base, base, "--strict"]) == 0
    assert main(["compare", base, str(tmp_path / "absent.json")]) == 2


def test_a_noisy_or_thin_side_is_uncertain_unless_strict() -> None:
    base = trace(sol_ms=samples(1.0, seed=1))
    noisy = trace(sol_ms=samples(1.3, seed=2), flags=["NOISY(max_time_s (3) reached)"])
    thin = trace(sol_ms=samples(1.3, n=6, seed=3))
    for new in (noisy, thin):
        row = compare_traces([base], [new], Settings())[0]
        assert row.verdict == Verdict.UNCERTAIN and "(SLOWER by the samples; --strict calls it)" in row.note
        assert compare_traces([base], [new], Settings(strict=True))[0].verdict == Verdict.SLOWER


def test_compare_warns_when_the_runs_differ_in_settings() -> None:
    from harness.results.compare import settings_differ
    from dataclasses import replace
    a, b = report([trace(sol_ms=samples(1.0))]), report([trace(definition="other", sol_ms=samples(1.0))])
    b = replace(b, parts=(replace(b.parts[0], bench={"cache": "warm", "timer": "events"}),))
    said = settings_differ(a, b)
    assert "cache: None vs warm" in said and "timer: None vs events" in said and "problems: op vs other" in said


def test_a_row_the_new_run_did_not_get_to_is_missing_not_broken() -> None:
    ok = samples(1.0)
    base = [trace("cut", sol_ms=ok), trace("tool", sol_ms=ok), trace("back", status=Status.INTERRUPTED)]
    new = [trace("cut", status=Status.INTERRUPTED), trace("tool", status=Status.UNSUPPORTED, message="no nvcc"),
           trace("back", sol_ms=ok)]
    rows = {r.solution: r for r in compare_traces(base, new)}
    assert {n: r.verdict for n, r in rows.items()} == {"cut": Verdict.MISSING, "tool": Verdict.MISSING, "back": Verdict.NEW}
    assert rows["cut"].note == "now INTERRUPTED" and rows["back"].note == "was INTERRUPTED"
