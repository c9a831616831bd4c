"""Report files: written atomically, parse, hold raw samples and environment, and match the table."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.results.render import fmt_time, render_table
from harness.results.report import Report, atomic_write

from factories import ROOT, axpy_document, solution


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    import yaml
    tmp = tmp_path_factory.mktemp("report")
    doc = axpy_document([solution("good", "good.py"), solution("wrong", "wrong.py", expected_status="INCORRECT_NUMERICAL"),
                         solution("gpu", "good.py", devices=["cuda"])])
    (tmp / "axpy.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp / "out"
    proc = subprocess.run([sys.executable, "-m", "harness", "run", str(tmp / "axpy.yaml"), "--device", "cpu",
                           "--out", str(out), "--seed", "99", "--quiet"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    return proc, out


def test_run_exit_code_and_files(cli_run) -> None:
    proc, out = cli_run
    assert proc.returncode == 0, proc.stderr  # every solution got its expected status
    assert (out / "axpy-cpu.json").is_file() and (out / "axpy-cpu.jsonl").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp files left behind


def test_json_report_content(cli_run) -> None:
    _, out = cli_run
    report = json.loads((out / "axpy-cpu.json").read_text())
    assert report["run_seed"] == 99 and report["device"] == "cpu"
    env = report["environment"]
    assert env["versions"]["torch"] and env["device"]["kind"] == "cpu" and env["host"]
    by_name = {t["solution"]: t for t in report["traces"]}
    good = by_name["good"]
    assert good["status"] == "PASSED" and len(good["timing"]["samples_ms"]) == good["timing"]["n"]
    assert good["reference_timing"]["samples_ms"]
    assert by_name["wrong"]["status"] == "INCORRECT_NUMERICAL" and by_name["gpu"]["status"] == "SKIPPED"
    assert report["summary"]["ok"] and report["summary"]["by_status"]["PASSED"] == 1


def test_jsonl_matches_json(cli_run) -> None:
    _, out = cli_run
    report = json.loads((out / "axpy-cpu.json").read_text())
    lines = [json.loads(l) for l in (out / "axpy-cpu.jsonl").read_text().splitlines()]
    assert lines == report["traces"]


def test_terminal_table_matches_report(cli_run) -> None:
    proc, out = cli_run
    traces = Report.load(out / "axpy-cpu.json").traces
    assert render_table(traces) in proc.stdout
    good = next(t for t in traces if t.solution == "good")
    row = next(l for l in proc.stdout.splitlines() if l.startswith("good "))
    assert "PASSED" in row and fmt_time(good.timing.median_ms) in row and f"{good.speedup:.2f}x" in row


def test_unexpected_status_exits_1(tmp_path: Path) -> None:
    import yaml
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(axpy_document([solution("wrong", "wrong.py")])))
    proc = subprocess.run([sys.executable, "-m", "harness", "run", str(tmp_path / "m.yaml"), "--device", "cpu",
                           "--out", str(tmp_path / "o"), "--quiet"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 1 and "UNEXPECTED wrong/n4096: INCORRECT_NUMERICAL" in proc.stderr


def test_atomic_write_leaves_old_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    atomic_write(target, "old")

    with pytest.raises(TypeError):
        atomic_write(target, None)  # type: ignore[arg-type]
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.json"]
