"""Outputs handed over in device memory: the parent reads only what the driver says a worker's
handle maps, copies it into memory of its own, and never takes one worker's memory as another's.
The CUDA tests use real IPC between two processes (skipped without a CUDA device)."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
import torch

from harness.execute import handoff
from harness.execute.handoff import DeviceOutput, HandoffError, Ledger
from harness.execute.isolation import Worker
from harness.paths import child_env

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")

EXPORTER = """
import json, sys, torch
from harness.execute.handoff import export
t = torch.arange(1 << 20, dtype=torch.float32, device="cuda").view(1024, 1024)[256:512]  # a view inside a segment
print(json.dumps({**export(t), "ipc": export(t)["ipc"].hex()}), flush=True)
sys.stdin.read()  # alive (and its memory with it) until the test is done
"""


@dataclass(frozen=True)
class Owner:
    label: str


def test_a_worker_cannot_pass_off_memory_the_parent_got_from_another() -> None:
    ledger, ref, sol = Ledger(), Owner("reference"), Owner("reference")  # the same label: identity decides
    ledger.claim(b"h" * 64, ref)
    ledger.claim(b"h" * 64, ref)  # the reference's own memory, again: fine
    with pytest.raises(HandoffError, match="received from the 'reference' worker"):
        ledger.claim(b"h" * 64, sol)
    ledger.forget(ref)  # the reference is gone: a new process may be handed the same handle bytes
    ledger.claim(b"h" * 64, sol)


def test_handles_the_parent_did_not_ask_for_are_a_forged_reply(tmp_path: Path) -> None:
    w = Worker("sol", tmp_path)  # never started: a reply naming device memory is refused before any open
    with pytest.raises(HandoffError, match="asked for outputs in the reply"):
        w._receive([DeviceOutput(b"h" * 64, 0, (4,), torch.float32)])


@pytest.fixture
def exported() -> Iterator[DeviceOutput]:
    child = subprocess.Popen([sys.executable, "-c", EXPORTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=child_env())
    try:
        wire = json.loads(child.stdout.readline())
        yield handoff.parse({**wire, "ipc": bytes.fromhex(wire["ipc"])}, "outputs[0]")
    finally:
        child.communicate("")


@cuda
def test_the_parent_copies_an_output_from_another_process(exported: DeviceOutput) -> None:
    (got,) = handoff.receive([exported], torch.device("cuda"), Ledger(), Owner("sol"))
    want = torch.arange(1 << 20, dtype=torch.float32, device="cuda").view(1024, 1024)[256:512]
    assert torch.equal(got, want)
    assert got.untyped_storage().nbytes() == got.numel() * 4  # the parent's own memory, not a view of the worker's


@cuda
def test_bytes_outside_the_allocation_are_refused(exported: DeviceOutput) -> None:
    dev = torch.device("cuda")
    for forged in (DeviceOutput(exported.handle, exported.offset + (1 << 40), exported.shape, exported.dtype),
                   DeviceOutput(exported.handle, exported.offset, (1 << 30,), exported.dtype)):
        with pytest.raises(HandoffError, match="lie outside the"):
            handoff.receive([forged], dev, Ledger(), Owner("sol"))
    with pytest.raises(HandoffError, match="output 0's handle: the driver says"):  # a forged handle, not a failed open
        handoff.receive([DeviceOutput(bytes(64), 0, (4,), torch.float32)], dev, Ledger(), Owner("sol"))
    (still,) = handoff.receive([exported], dev, Ledger(), Owner("sol"))  # the parent's context survived them
    assert float(still[0, 0]) == 256 * 1024


@cuda
def test_a_cuda_run_compares_outputs_the_parent_took_from_device_memory(tmp_path: Path) -> None:
    import yaml
    from factories import axpy_document, solution
    from harness.run.runner import Runner, RunOptions
    from harness.spec.manifest import load_manifest
    sols = [solution("good", "good.py"), solution("good-dps", "good_dps.py", destination_passing_style=True),
            solution("wrong", "wrong.py", expected_status="INCORRECT_NUMERICAL"),
            solution("forged-handle", "forged_handle.py", expected_status="TAMPERED")]
    path = tmp_path / "axpy.yaml"
    path.write_text(yaml.safe_dump(axpy_document(sols, {"max_time_s": 0.2}), sort_keys=False))
    report = Runner(load_manifest(path), RunOptions(device="cuda", run_seed=1, log_dir=tmp_path / "logs")).run()
    assert report.environment["output_handoff"] == "cuda-ipc"
    got = {t.solution: (t.status, t.message) for t in report.traces}
    assert {k: v[0] for k, v in got.items()} == {"good": "PASSED", "good-dps": "PASSED", "wrong": "INCORRECT_NUMERICAL",
                                                 "forged-handle": "TAMPERED"}, got
    assert "lie outside the" in got["forged-handle"][1]
