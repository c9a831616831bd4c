"""SOL-ExecBench's published problem set through opbench, unmodified: how many problems validate as
`hpc-bench` reads them, and how many run to PASSED with their own reference as the solution (what
upstream's `scripts/run_dataset.py` checks), per category (L1, L2, Quant, FlashInfer-Bench).

    python bench/sol_census.py validate ROOT                       # no GPU needed
    python bench/sol_census.py run ROOT --jobs 6 --workloads 1 --deadline-s 480   # on the GPU

ROOT holds one folder per category, one folder per problem (definition.json, workload.jsonl), as
upstream's `scripts/download_solexecbench.py` writes them. `run` gives each problem that validated a
pytorch solution whose source is the definition's `reference` (entry `run`, not destination passing)
and runs `hpc-bench --definition D --workload W --solution S` on its first `--workloads` lines, several
problems at once (`--jobs`: the statuses are the point; the latencies of a shared GPU are not reported).
Each problem's result prints as it finishes, so a run cut by its deadline still says what it got.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CATEGORIES = ("L1", "L2", "Quant", "FlashInfer-Bench")


def problems(root: Path) -> list[Path]:
    return [p for c in CATEGORIES for p in sorted((root / c).glob("*")) if (p / "definition.json").is_file()]


def reason(message: str) -> str:
    """One error message with its specifics (numbers, quoted names) folded, so that like counts with like."""
    message = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)
    return re.sub(r"\d+", "N", message)[:160]


def validate(folder: Path) -> list[str]:
    """What `hpc-bench FOLDER` would refuse: every error the loader finds, as its messages."""
    from harness.spec.flashinfer import Problem
    from harness.spec.manifest import load_manifest
    from harness.spec.schema import ManifestError
    try:
        load_manifest(folder, Problem(folder=folder))
    except ManifestError as exc:
        return [e.message for e in exc.errors]
    return []


def reference_solution(definition: dict[str, Any]) -> dict[str, Any]:
    return {"name": f"reference_{definition['name']}", "definition": definition["name"], "author": "sol_census",
            "spec": {"languages": ["pytorch"], "target_hardware": ["LOCAL"], "entry_point": "reference.py::run",
                     "destination_passing_style": False},
            "sources": [{"path": "reference.py", "content": definition["reference"]}]}


def run_one(folder: Path, scratch: Path, workloads: int, max_time_s: float, timeout_s: float, device: str) -> dict[str, Any]:
    """One problem's reference as its solution, on its first `workloads` workload lines."""
    definition = json.loads((folder / "definition.json").read_text())
    work = scratch / folder.parent.name / folder.name
    work.mkdir(parents=True, exist_ok=True)
    (work / "solution.json").write_text(json.dumps(reference_solution(definition)))
    lines = [ln for ln in (folder / "workload.jsonl").read_text().splitlines() if ln.strip()][:workloads]
    (work / "workload.jsonl").write_text("\n".join(lines) + "\n")  # the lines themselves unchanged
    began = time.monotonic()
    cmd = [sys.executable, "-c", "import sys; from harness.cli.hpcbench import main; sys.exit(main())",
           "--definition", str(folder / "definition.json"), "--workload", str(work / "workload.jsonl"),
           "--solution", str(work / "solution.json"), "-o", str(work / "trace.jsonl"), "--out", str(work / "report"),
           "--max-time-s", str(max_time_s), "--compile-timeout", "120", "--timeout", "120", "--device", device]
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
        rc, tail = proc.returncode, (proc.stderr or proc.stdout)[-300:]
    except subprocess.TimeoutExpired:
        rc, tail = -1, f"no answer in {timeout_s:.0f} s"
    statuses, messages = [], []
    trace_file = work / "trace.jsonl"
    for line in trace_file.read_text().splitlines() if trace_file.is_file() else []:
        ev = json.loads(line).get("evaluation") or {}
        statuses.append(str(ev.get("status")))
        if ev.get("status") != "PASSED":
            messages.append(str(ev.get("log") or "")[:200])
    return {"category": folder.parent.name, "problem": folder.name, "rc": rc, "statuses": statuses,
            "message": messages[0] if messages else ("" if statuses else tail.strip()), "s": time.monotonic() - began}


def cmd_validate(root: Path) -> None:
    per: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
    reasons: dict[str, Counter[str]] = {c: Counter() for c in CATEGORIES}
    for folder in problems(root):
        errors = validate(folder)
        per[folder.parent.name]["total"] += 1
        per[folder.parent.name]["valid" if not errors else "invalid"] += 1
        for r in {reason(e) for e in errors}:
            reasons[folder.parent.name][r] += 1
        if errors:
            print(f"INVALID {folder.parent.name}/{folder.name}: {errors[0][:200]}", flush=True)
    print("\n| category | problems | validate | refused |\n|---|---|---|---|")
    for c in CATEGORIES:
        print(f"| {c} | {per[c]['total']} | {per[c]['valid']} | {per[c]['invalid']} |")
    print(f"| all | {sum(p['total'] for p in per.values())} | {sum(p['valid'] for p in per.values())} | "
          f"{sum(p['invalid'] for p in per.values())} |")
    for c in CATEGORIES:
        for r, n in reasons[c].most_common():
            print(f"  {c}: {n} x {r}")


def cmd_run(root: Path, jobs: int, workloads: int, max_time_s: float, deadline_s: float, only: list[str], device: str,
            again_alone: bool) -> None:
    began = time.monotonic()
    todo = [f for f in problems(root) if (not only or any(o in str(f) for o in only)) and not validate(f)]
    print(f"{len(todo)} problems validate; running their references, {jobs} at once, "
          f"first {workloads} workload(s) each", flush=True)
    first = began + deadline_s * (0.75 if again_alone else 1.0)  # a quarter kept for the second pass
    results, skipped = run_all(todo, Path(tempfile.mkdtemp(prefix="sol-census-")), jobs, workloads, max_time_s, first, device)
    print(f"\nnot started before the deadline: {skipped}\n")
    table(todo, results)
    failed = [r for r in results if not (r["statuses"] and all(s == "PASSED" for s in r["statuses"]))]
    if again_alone and failed:  # one at a time: what a shared GPU and host did to the parallel pass shows
        print(f"\nagain, one at a time: the {len(failed)} that did not pass", flush=True)
        again, skipped = run_all([root / r["category"] / r["problem"] for r in failed], Path(tempfile.mkdtemp(prefix="sol-alone-")),
                                 1, workloads, max_time_s, began + deadline_s, device)
        print(f"\nnot started again before the deadline: {skipped}\n")
        kept = {(r["category"], r["problem"]): r for r in results}
        kept.update({(r["category"], r["problem"]): r for r in again})
        print("after the second pass (one at a time):")
        table(todo, list(kept.values()))


def run_all(todo: list[Path], scratch: Path, jobs: int, workloads: int, max_time_s: float, deadline: float,
            device: str) -> tuple[list[dict[str, Any]], int]:
    """Each problem of `todo`, `jobs` at once, until the monotonic `deadline`: the results, and how
    many were not started."""
    scratch.chmod(0o755)
    results: list[dict[str, Any]] = []
    with ThreadPoolExecutor(jobs) as pool:
        running: set[Future[dict[str, Any]]] = set()
        queue = list(todo)
        while queue or running:
            left = deadline - time.monotonic()
            while queue and len(running) < jobs and left > 30:
                running.add(pool.submit(run_one, queue.pop(0), scratch, workloads, max_time_s, max(left - 5, 10), device))
            if not running:
                break
            done, running = wait(running, timeout=max(left, 1), return_when=FIRST_COMPLETED)
            for fut in done:
                r = fut.result()
                results.append(r)
                print(f"{r['category']}/{r['problem']}: {','.join(r['statuses']) or 'NO TRACE'} "
                      f"({r['s']:.0f} s) {r['message'][:160]}", flush=True)
            if not done and left <= 1:
                break
        return results, len(queue)


def table(todo: list[Path], results: list[dict[str, Any]]) -> None:
    print("| category | validated | run | PASSED (every workload run) | other |\n|---|---|---|---|---|")
    for c in CATEGORIES:
        mine = [r for r in results if r["category"] == c]
        ok = [r for r in mine if r["statuses"] and all(s == "PASSED" for s in r["statuses"])]
        other = Counter(s for r in mine if r not in ok for s in (r["statuses"] or ["NO TRACE"]) if s != "PASSED")
        print(f"| {c} | {sum(1 for f in todo if f.parent.name == c)} | {len(mine)} | {len(ok)} | "
              f"{', '.join(f'{s} {n}' for s, n in other.most_common())} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=["validate", "run"])
    p.add_argument("root", type=Path)
    p.add_argument("--jobs", type=int, default=6)
    p.add_argument("--workloads", type=int, default=1, help="workload lines per problem (from the top)")
    p.add_argument("--max-time-s", type=float, default=0.1)
    p.add_argument("--deadline-s", type=float, default=480)
    p.add_argument("--device", default="cuda")
    p.add_argument("--only", nargs="*", default=[], help="run the problems whose path has one of these")
    p.add_argument("--again-alone", action="store_true", help="then run each problem that did not pass again, alone")
    args = p.parse_args()
    if args.what == "validate":
        cmd_validate(args.root)
    else:
        cmd_run(args.root, args.jobs, args.workloads, args.max_time_s, args.deadline_s, args.only, args.device,
                args.again_alone)


if __name__ == "__main__":
    main()
