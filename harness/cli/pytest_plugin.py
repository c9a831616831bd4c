"""pytest plugin: a manifest's rows as test items, correctness as pass/fail.

    pytest --opbench manifests/rmsnorm.yaml [--opbench-device cpu] [--opbench-max-time-s 1]

(installed, the plugin loads itself through the `pytest11` entry point; from a checkout add
`-p harness.cli.pytest_plugin`). Each solution x workload of the manifest (or suite) is one item,
`definition::solution[workload]`. The first item of a file runs the whole file through the one run
path (isolated workers, as `opbench run`), the others read the same report. An item passes when its
row got its expected status, is skipped when the row was not run here (SKIPPED, UNSUPPORTED), and
fails with the row's status and message otherwise. Timing numbers are in the report, not in the verdict.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("opbench")
    group.addoption("--opbench", action="store_true", help="collect the YAML manifests given as test items")
    group.addoption("--opbench-device", default="auto", help="device for opbench manifests (auto, cpu, cuda, npu)")
    group.addoption("--opbench-max-time-s", type=float, default=None, help="timing budget per row")


def pytest_collect_file(file_path: Path, parent: Any) -> Any:
    if parent.config.getoption("opbench") and file_path.suffix in (".yaml", ".yml"):
        from harness.spec.manifest import has_top_level_key, is_suite
        if has_top_level_key(file_path, "definition") or is_suite(file_path):
            return ManifestFile.from_parent(parent, path=file_path)
    return None


class RowFailed(Exception):
    """The row did not get its expected status."""


class ManifestFile(pytest.File):
    report: Any = None

    def collect(self) -> Iterator[Any]:
        from harness.spec.manifest import load_suite
        for m in load_suite(self.path):
            for s in m.solutions:
                for w in m.workloads:
                    yield RowItem.from_parent(self, name=f"{m.definition.name}::{s.name}[{w.id}]",
                                              key=(m.definition.name, s.name, w.id))

    def run_once(self) -> Any:
        if self.report is None:
            from harness.run.orchestrate import RunRequest, run
            from harness.run.progress import make_progress
            cfg = self.config
            knobs = {"max_time_s": cfg.getoption("opbench_max_time_s")}
            request = RunRequest(target=self.path, out=Path(tempfile.mkdtemp(prefix="opbench-pytest-")),
                                 device=cfg.getoption("opbench_device"),
                                 overrides={k: v for k, v in knobs.items() if v is not None})
            self.report = run(request, make_progress(True)).report
        return self.report


class RowItem(pytest.Item):
    def __init__(self, *, key: tuple[str, str, str], **kw: Any) -> None:
        super().__init__(**kw)
        self.key = key

    def runtest(self) -> None:
        from harness.results.trace import NOT_RUN
        report = self.parent.run_once()
        row = next((t for t in report.traces if (t.definition, t.solution, t.workload) == self.key), None)
        if row is None:
            raise RowFailed("the run produced no result for this row")
        if row.status in NOT_RUN:
            pytest.skip(f"{row.status}: {row.message}")
        if not row.as_expected:
            raise RowFailed(f"{row.status} (expected {row.expected_status}): {row.message}")

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, RowFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, self.name
