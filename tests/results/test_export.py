"""JUnit XML and CSV for other CI systems: a case per row, failures where a row missed its expected status."""
from __future__ import annotations

import csv
import io
from xml.etree import ElementTree as ET

from harness.results.export import CSV_COLUMNS, to_csv, to_junit
from harness.results.trace import Status
from opbench_data import report, samples, trace


def rows():
    return [trace("fast", sol_ms=samples(1.0), ref_ms=samples(2.0)),
            trace("wrong", status=Status.INCORRECT_NUMERICAL, message="y: 3 of 8 elements outside atol"),
            trace("hack", status=Status.TAMPERED, expected_status="TAMPERED", message="patched timer"),
            trace("gpu", status=Status.SKIPPED, message="targets cuda")]


def test_junit_has_a_case_per_row_and_fails_only_the_unexpected() -> None:
    root = ET.fromstring(to_junit(report(rows())))
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    failure = cases["wrong[w]"].find("failure")
    assert failure is not None and failure.get("message") == "INCORRECT_NUMERICAL (expected PASSED)"
    assert "3 of 8 elements" in (failure.text or "")
    assert cases["hack[w]"].find("failure") is None  # an expected failure passes
    assert cases["gpu[w]"].find("skipped") is not None


def test_csv_has_a_line_per_row() -> None:
    lines = list(csv.DictReader(io.StringIO(to_csv(report(rows())))))
    assert tuple(lines[0]) == CSV_COLUMNS and [l["solution"] for l in lines] == ["fast", "wrong", "hack", "gpu"]
    assert float(lines[0]["speedup"]) > 1.5 and lines[1]["as_expected"] == "False" and lines[2]["as_expected"] == "True"
