"""Suites: several problems from one file, cut down per problem, with one bench override for all."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.spec.manifest import is_suite, load_suite
from harness.spec.schema import ManifestError

from opbench_data import load, write_suite

from factories import ROOT


def test_load_suite_with_filters_and_bench(tmp_path: Path) -> None:
    path = write_suite(tmp_path, sizes=(8, 16))
    path.write_text("problems:\n  - path: vadd.yaml\n    workloads: [n16]\n  - '*mul.yaml'\nbench: {max_time_s: 0.1}\n")
    assert is_suite(path) and not is_suite(tmp_path / "vadd.yaml")
    ms = load_suite(path)
    assert [(m.definition.name, [w.id for w in m.workloads]) for m in ms] == [("vadd", ["n16"]), ("vmul", ["n8", "n16"])]
    assert all(m.bench.max_time_s == 0.1 for m in ms)
    assert [m.definition.name for m in load_suite(tmp_path / "vadd.yaml")] == ["vadd"]  # a manifest is a suite of one


def test_suite_errors_are_all_reported(tmp_path: Path) -> None:
    path = write_suite(tmp_path)
    path.write_text("problems:\n  - path: vadd.yaml\n    workloads: [nope]\n  - vadd.yaml\n  - none-*.yaml\n")
    with pytest.raises(ManifestError) as exc:
        load_suite(path)
    text = str(exc.value)
    assert "no workloads ['nope']" in text and "already in the suite" in text and "matches no manifest" in text
    path.write_text("problems: []\n")
    with pytest.raises(ManifestError):
        load_suite(path)


def test_repository_suites_validate(capsys: pytest.CaptureFixture) -> None:
    suites = sorted(str(p) for p in (ROOT / "manifests").glob("suite-*.yaml"))
    assert suites and main(["validate", *suites]) == 0
    assert "suite of 2 problems" in capsys.readouterr().out


def test_a_broken_problem_does_not_stop_the_suite(tmp_path: Path) -> None:
    import subprocess
    import sys

    suite = write_suite(tmp_path / "suite", sizes=(64,))
    vadd = suite.parent / "vadd.yaml"
    vadd.write_text(vadd.read_text().replace('reference: "def run', 'reference: "raise RuntimeError(7)\\ndef run'))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "harness", "run", str(suite), "--device", "cpu", "--out", str(out),
                           "--quiet"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    # the broken reference is the manifest's fault: exit 2, after the rest of the suite ran
    assert proc.returncode == 2 and "FAILED local: reference of vadd" in proc.stderr, proc.stderr
    report = load(out / "suite-tiny-cpu.json")
    assert [(t["definition"], t["status"]) for t in report["traces"]] == [("vadd", "INVALID_REFERENCE"), ("vmul", "PASSED")]
    assert report["summary"]["failures"] == 1 and not report["summary"]["ok"]
