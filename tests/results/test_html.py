"""The HTML results page: self-contained, one row per result and one chart per workload, and it
renders in a real browser (headless Chromium; skipped with a reason where it is not installed)."""
from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.cli import main
from harness.results.html import render_html
from harness.results.report import Report
from harness.results.trace import Status

from opbench_data import report, samples, trace

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Census(HTMLParser):
    """Counts result rows, charts and anything that would be fetched from elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str]] = []
        self.charts = 0
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and "data-solution" in a:
            self.rows.append((str(a.get("data-workload")), str(a["data-solution"])))
        if tag == "svg":
            self.charts += 1
        for key in ("src", "href"):
            if a.get(key):
                self.external.append(str(a[key]))
        if tag == "script":
            self.external.append("script")


@pytest.fixture
def sample_report() -> Report:
    traces = [trace("fast<&>", "w1", sol_ms=samples(1.0), ref_ms=samples(2.0)),
              trace("slow", "w1", sol_ms=samples(3.0, seed=1), ref_ms=samples(2.0, seed=2)),
              trace("wrong", "w1", status=Status.INCORRECT_NUMERICAL, message="round 1: y off",
                    expected_status="INCORRECT_NUMERICAL"),
              trace("gpu-only", "w2", status=Status.SKIPPED, message="targets cuda"),
              trace("fast<&>", "w2", sol_ms=samples(0.5), ref_ms=samples(1.0))]
    return report(traces)


def test_page_has_every_row_and_a_chart_per_workload(sample_report: Report) -> None:
    page = render_html(sample_report)
    census = Census()
    census.feed(page)
    assert census.rows == [("w1", "fast<&>"), ("w1", "slow"), ("w1", "wrong"), ("w2", "gpu-only"), ("w2", "fast<&>")]
    assert census.charts == 4 and census.external == []  # a linear and a log chart per workload; nothing fetched
    assert "fast&lt;&amp;&gt;" in page and "2.00x" in page and "INCORRECT_NUMERICAL" in page


def test_cli_writes_page_and_markdown(sample_report: Report, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path, _ = sample_report.write(tmp_path, "r")
    html, md = tmp_path / "page.html", tmp_path / "r.md"
    assert main(["report", str(path), "--html", str(html), "--markdown", str(md)]) == 0
    assert html.read_text().startswith("<!DOCTYPE html>") and "| solution" in md.read_text()
    assert "slow" in capsys.readouterr().out
    assert main(["report", str(tmp_path / "absent.json")]) == 2


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (apt-get install -y chromium; CI does)")
def test_page_renders_in_headless_chromium(sample_report: Report, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(render_html(sample_report))
    base = [str(CHROMIUM), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    census = Census()
    census.feed(dom.stdout)  # the DOM as Chromium built it, not our text
    assert len(census.rows) == 5 and census.charts == 4
    assert len(re.findall(r'<g class="bar"', dom.stdout)) == 10  # (2 references + 3 timed solutions) x 2 scales
    shot = tmp_path / "page.png"
    run = subprocess.run([*base, f"--screenshot={shot}", "--window-size=1200,900", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.is_file() and shot.stat().st_size > 10_000, run.stderr[-2000:]


def test_the_caption_has_its_own_line_and_a_wide_spread_opens_on_the_log_scale() -> None:
    near = report([trace("a", "w", sol_ms=samples(1.0), ref_ms=samples(1.5))])
    far = report([trace("a", "w", sol_ms=samples(0.01), ref_ms=samples(5.0))])
    page = render_html(near)
    axis = [float(y) for y in re.findall(r'<text class="axis" x="[^"]+" y="([0-9.]+)"', page)]
    caption = [float(y) for y in re.findall(r'<text class="caption" x="[^"]+" y="([0-9.]+)"', page)]
    assert axis and caption and min(caption) >= max(axis) + 14  # a line apart: no overlap
    assert 'id="log">' in page and 'id="log" checked>' in render_html(far)



@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (apt-get install -y chromium; CI does)")
def test_the_log_scale_box_switches_the_charts_in_chromium(tmp_path: Path) -> None:
    page = render_html(report([trace("a", "w", sol_ms=samples(0.01), ref_ms=samples(5.0))]))
    shots = []
    for name, text in (("log", page), ("linear", page.replace('id="log" checked>', 'id="log">'))):
        (tmp_path / f"{name}.html").write_text(text)
        shot = tmp_path / f"{name}.png"
        run = subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={tmp_path / name}", f"--screenshot={shot}",
                              "--window-size=900,400", (tmp_path / f"{name}.html").as_uri()],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
        shots.append(shot.read_bytes())
    assert shots[0] != shots[1]  # the box shows one chart or the other, as rendered


def test_an_expected_failure_is_not_styled_as_an_error() -> None:
    page = render_html(report([trace("hack", "w", status=Status.TAMPERED, expected_status="TAMPERED"),
                               trace("bug", "w", status=Status.INCORRECT_NUMERICAL)]))
    assert '<tr class="expected" data-solution="hack"' in page and '<tr class="fail" data-solution="bug"' in page
