"""The Python API (`import opbench`): `run` from a script with no `__main__` guard (workers must not
re-run the script), and `bench` timing a callable beside its reference."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from factories import axpy_document, solution
from harness.paths import child_env

SCRIPT = """
import opbench
print("script body ran", flush=True)
report = opbench.run({manifest!r}, device="cpu", max_time_s=0.2, out={out!r})
print(sorted((t.solution, str(t.status)) for t in report.traces))
"""


def test_run_from_a_script_without_a_main_guard(tmp_path: Path) -> None:
    manifest = tmp_path / "axpy.yaml"
    manifest.write_text(yaml.safe_dump(axpy_document([solution("good", "good.py"),
                                                      solution("wrong", "wrong.py", expected_status="INCORRECT_NUMERICAL")])))
    script = tmp_path / "script.py"
    script.write_text(SCRIPT.format(manifest=str(manifest), out=str(tmp_path / "out")))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=child_env(), timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("script body ran") == 1  # the workers did not run it again
    assert "[('good', 'PASSED'), ('wrong', 'INCORRECT_NUMERICAL')]" in proc.stdout
    assert list((tmp_path / "out").glob("*.json"))


def test_bench_times_a_callable_beside_its_reference() -> None:
    import torch
    import opbench
    x, y = torch.randn(4096), torch.randn(4096)
    r = opbench.bench(torch.add, x, y, reference=lambda a, b: a + b, max_time_s=0.2)
    assert r.timing.n > 0 and r.reference_timing.n > 0 and r.max_abs_err == 0.0 and r.speedup > 0
