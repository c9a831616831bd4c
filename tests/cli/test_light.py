"""The commands that read reports need no torch (a light install), the CLI starts without it, and
running without torch says what to install."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.paths import child_env
from harness.results.report import Report
from opbench_data import report, samples, trace

NO_TORCH = "import sys; sys.modules['torch'] = None  # as if it were not installed\nfrom harness.cli import main\n"


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", NO_TORCH + code], cwd=cwd, capture_output=True, text=True,
                          env=child_env(), timeout=300)


def test_report_merge_compare_and_validate_need_no_torch(tmp_path: Path) -> None:
    rep: Report = report([trace("a", sol_ms=samples(1.0)), trace("b", status=__import__("harness.results.trace",
                          fromlist=["Status"]).Status.INCORRECT_NUMERICAL, expected_status="INCORRECT_NUMERICAL")])
    rep.write(tmp_path, "r")
    code = ("codes = [main(['validate', 'rmsnorm.yaml']), main(['report', 'r.json', '--junit', 'j.xml']),\n"
            "         main(['compare', 'r.json', 'r.json']), main(['merge', 'r.json', '--out', 'm.json'])]\n"
            "print('CODES', codes, 'torch' in sys.modules and sys.modules['torch'] is not None)\n")
    proc = _run(code, tmp_path)
    assert "CODES [0, 0, 0, 0] False" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_running_without_torch_says_what_to_install(tmp_path: Path) -> None:
    proc = _run("sys.exit(main(['run', 'rmsnorm.yaml', '--device', 'cpu']))", tmp_path)
    assert proc.returncode == 3 and "pip install 'opbench[torch]'" in proc.stderr
