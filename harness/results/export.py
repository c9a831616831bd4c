"""A report for other CI systems: JUnit XML (one test case per solution and workload) and CSV.

JUnit: a `testsuite` per problem, a `testcase` per row named `solution[workload]`, its time the row's
wall clock; a row that did not get its expected status is a `failure` (with the status and message),
a row not run here (SKIPPED, UNSUPPORTED) is `skipped`, and an expected failure passes (its
status is in `system-out`). CSV: one line per row with the columns a spreadsheet needs.
"""
from __future__ import annotations

import csv
import io
from xml.etree import ElementTree as ET

from harness.results.report import Report
from harness.results.trace import NOT_RUN, Trace

CSV_COLUMNS = ("definition", "workload", "solution", "language", "device", "status", "expected_status", "as_expected",
               "median_ms", "iqr_ms", "reference_median_ms", "speedup", "timer", "samples", "flags", "message")


def _name(t: Trace) -> str:
    return f"{t.solution}[{t.workload}]"


def to_junit(report: Report) -> str:
    root = ET.Element("testsuites", name="opbench")
    suites: dict[str, ET.Element] = {}
    for t in report.traces:
        suite = suites.get(t.definition)
        if suite is None:
            suite = suites[t.definition] = ET.SubElement(root, "testsuite", name=t.definition)
        case = ET.SubElement(suite, "testcase", classname=t.definition, name=_name(t),
                             time=f"{(t.cost_s or {}).get('total', 0.0):.3f}")
        if t.status in NOT_RUN:
            ET.SubElement(case, "skipped", message=f"{t.status}: {t.message}"[:2000])
        elif not t.as_expected:
            failure = ET.SubElement(case, "failure", type=str(t.status),
                                    message=f"{t.status} (expected {t.expected_status})")
            failure.text = t.message
        out = [f"status: {t.status}"] + ([f"median: {t.timing.median_ms:.6g} ms ({t.timing.mode})"] if t.timing else [])
        ET.SubElement(case, "system-out").text = "\n".join(out)
    for suite in suites.values():
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def to_csv(report: Report) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    for t in report.traces:
        tm, ref = t.timing, t.reference_timing
        w.writerow([t.definition, t.workload, t.solution, t.language, t.device, str(t.status), t.expected_status,
                    t.as_expected, tm.median_ms if tm else "", tm.iqr_ms if tm else "", ref.median_ms if ref else "",
                    t.speedup if t.speedup is not None else "", tm.mode if tm else "", tm.n if tm else "",
                    ";".join(t.flags), t.message.splitlines()[0] if t.message else ""])
    return buf.getvalue()
