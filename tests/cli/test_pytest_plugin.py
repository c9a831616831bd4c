"""`pytest --opbench MANIFEST`: a manifest's rows as pytest items (a real pytest in a subprocess)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from factories import axpy_document, solution
from harness.paths import child_env


def test_rows_are_items_that_pass_skip_and_fail_as_their_status_says(tmp_path: Path) -> None:
    doc = axpy_document([solution("good", "good.py"), solution("wrong", "wrong.py"),
                         solution("expected-wrong", "wrong.py", expected_status="INCORRECT_NUMERICAL"),
                         {**solution("gpu-only", "good.py"), "devices": ["cuda"]}], {"max_time_s": 0.2})
    (tmp_path / "axpy.yaml").write_text(yaml.safe_dump(doc))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "harness.cli.pytest_plugin", "-p", "no:cacheprovider",
                           "--opbench", "--opbench-device", "cpu", "-rA", "axpy.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, env=child_env(), timeout=600)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    assert "PASSED axpy.yaml::axpy::good[n4096]" in out and "PASSED axpy.yaml::axpy::expected-wrong[n4096]" in out
    assert "SKIPPED" in out and "FAILED axpy.yaml::axpy::wrong[n4096]" in out
    assert "INCORRECT_NUMERICAL (expected PASSED)" in out
    assert "2 passed, 1 skipped, 1 failed" in out or "1 failed, 2 passed, 1 skipped" in out
