"""The worker protocol: the parent believes a reply only after `decode` checked it, and a worker that
forges a reply or stops halfway through one ends as a status, never a crash or a hang."""
from __future__ import annotations

import io
import math
import os
import pickle
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from harness.execute import protocol as p
from harness.execute.isolation import Worker, WorkerError
from harness.results.trace import Status
from harness.spec.manifest import load_manifest

from factories import axpy_document, solution
from harness.execute.handoff import DeviceOutput

HANDLE = bytes(range(64))

AFTER_BUILD = p.Expect(outputs=1)
TIMING = p.Expect(outputs=1, input_sets=2, calls_per_sample=frozenset({1, 20}))


def wire(data: Any) -> bytes:
    """Bytes as a (possibly forging) worker would send them."""
    buf = io.BytesIO()
    torch.save(data, buf)
    return buf.getvalue()


def chunk(**override: Any) -> dict[str, Any]:
    return {"kind": "Chunk", "samples": [0.5, 0.25, 1.0], "clocks": {}, **override}


def hidden() -> dict[str, Any]:
    return {"events_ms": 0.1, "wall_ms": 0.12, "baseline_ms": 0.01, "hidden_ms": 0.02,
            "escaped_ms": None, "escaped_kernels": None, "activity_check": None, "probed_calls": None}


GOOD = {
    "failure": (p.Failure(Status.COMPILE_ERROR, "SyntaxError: bad"), (p.Built,), p.Expect()),
    "built": (p.Built({"kind": "cpu", "cores": 2, "nested": {"a": [1, "b"]}}, {"torch": "2.13"},
                      p.Peak(1e11, {"float32": 1e12})), (p.Built,), p.Expect()),
    "built-unknown-peak": (p.Built({}, {}, p.Peak()), (p.Built,), p.Expect()),
    "prepared": (p.Prepared(2.4), (p.Prepared,), p.Expect()),
    "outputs": (p.Outputs([torch.arange(4.0)]), (p.Outputs, p.Rejected), AFTER_BUILD),
    "non-tensor-output": (p.Outputs(["<NoneType>"]), (p.Outputs, p.Rejected), AFTER_BUILD),
    "rejected": (p.Rejected(Status.INPUT_MUTATED, "solution modified input(s) x"), (p.Outputs, p.Rejected), AFTER_BUILD),
    "started": (p.TimingStarted("cuda-graph", 20, {"sm_mhz": 1980.0}), (p.TimingStarted,), TIMING),
    "chunk": (p.Chunk([0.5, 0.25, 1e-6], {}), (p.Chunk,), p.Expect(samples=3)),
    "ended": (p.TimingEnded(p.HiddenWork(0.1, 0.12, 0.01, 0.02, escaped_ms=0.0, escaped_kernels=["k"], probed_calls=11), None,
                            [p.TimedCheck(3, [torch.ones(3)]), p.TimedCheck(17, [torch.ones(3)])]), (p.TimingEnded,), TIMING),
    "ended-with-problem": (p.TimingEnded(p.HiddenWork(0.1, 0.12, 0.01, 0.02), p.Rejected(Status.TAMPERED, "threads"), []),
                           (p.TimingEnded,), TIMING),
    "ended-check-skipped": (p.TimingEnded(p.HiddenWork(activity_check="not needed: cpu calls queue no work"), None, []),
                            (p.TimingEnded,), TIMING),
}


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dataclass_fields__"):
        return type(a) is type(b) and all(same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    return a == b


@pytest.mark.parametrize("name", list(GOOD))
def test_good_reply_round_trips_to_the_same_typed_reply(name: str) -> None:
    reply, expected, expect = GOOD[name]
    decoded = p.decode(p.encode(reply), expected, expect)
    assert same(decoded, reply), decoded


def test_a_device_handle_decodes_to_where_the_worker_says_its_output_is() -> None:
    """The worker's `handoff.export` form; whether it lies inside the allocation is checked on open."""
    sent = p.Outputs([{"ipc": HANDLE, "offset": 512, "shape": [2, 3], "dtype": "bfloat16"}])
    got = p.decode(p.encode(sent), (p.Outputs,), AFTER_BUILD)
    assert got.outputs == [DeviceOutput(HANDLE, 512, (2, 3), torch.bfloat16)]
    assert got.outputs[0].nbytes == 12


def test_hidden_work_reads_as_before_without_fields_not_measured() -> None:
    h = p.decode(p.encode(GOOD["ended"][0]), (p.TimingEnded,), TIMING).hidden.to_dict()
    assert h == {"events_ms": 0.1, "wall_ms": 0.12, "baseline_ms": 0.01, "hidden_ms": 0.02,
                 "escaped_ms": 0.0, "escaped_kernels": ["k"], "probed_calls": 11}


def test_hidden_work_takes_what_the_cupti_sampler_reports() -> None:
    """Every key `Sampler.hidden_work_check` can return is a field (a mismatch failed every CUDA row)."""
    report = {**hidden(), "escaped_ms": 0.0, "escaped_kernels": [], "probed_calls": 11}
    del report["activity_check"]
    assert p.HiddenWork(**report).probed_calls == 11


def device_output(**override: Any) -> dict[str, Any]:
    return {"kind": "Outputs", "outputs": [{"ipc": HANDLE, "offset": 0, "shape": [4], "dtype": "float32", **override}],
            "updated": []}


BAD = {
    "short handle": (device_output(ipc=b"x" * 8), (p.Outputs,), AFTER_BUILD, "outputs[0].ipc: expected 64 bytes"),
    "handle as a string": (device_output(ipc="x" * 64), (p.Outputs,), AFTER_BUILD, "outputs[0].ipc: expected 64 bytes"),
    "negative offset": (device_output(offset=-8), (p.Outputs,), AFTER_BUILD, "outputs[0].offset: expected an integer >= 0"),
    "negative extent": (device_output(shape=[4, -1]), (p.Outputs,), AFTER_BUILD, "outputs[0].shape"),
    "unknown dtype": (device_output(dtype="complex256"), (p.Outputs,), AFTER_BUILD, "'complex256' is not a dtype"),
    "extra handle field": (device_output(ptr=1234), (p.Outputs,), AFTER_BUILD, "exactly ipc, offset, shape, dtype"),
    # name: (what the worker sends, replies expected, what the parent knows, words in the reason)
    "unknown status": ({"kind": "Failure", "status": "FINE", "message": ""}, (p.Chunk,), p.Expect(), "'FINE' is not a status"),
    "PASSED from a worker": ({"kind": "Failure", "status": "PASSED", "message": ""}, (p.Chunk,), p.Expect(),
                             "may not report PASSED"),
    "SKIPPED from a worker": ({"kind": "Rejected", "status": "SKIPPED", "message": ""}, (p.Outputs, p.Rejected),
                              AFTER_BUILD, "may not report SKIPPED"),
    "status of another type": ({"kind": "Failure", "status": 3, "message": ""}, (p.Chunk,), p.Expect(),
                                                  "is not a status"),
    "too few samples": (chunk(samples=[0.5, 0.5]), (p.Chunk,), p.Expect(samples=3), "2 item(s), expected 3"),
    "too many samples": (chunk(samples=[0.5] * 4), (p.Chunk,), p.Expect(samples=3), "4 item(s), expected 3"),
    "empty chunk": (chunk(samples=[]), (p.Chunk,), p.Expect(), "empty"),
    "negative sample": (chunk(samples=[0.5, -1.0, 0.5]), (p.Chunk,), p.Expect(samples=3), "samples[1]: -1.0 is negative"),
    "NaN sample": (chunk(samples=[0.5, math.nan, 0.5]), (p.Chunk,), p.Expect(samples=3), "nan is not finite"),
    "inf sample": (chunk(samples=[0.5, math.inf, 0.5]), (p.Chunk,), p.Expect(samples=3), "inf is not finite"),
    "bool sample": (chunk(samples=[0.5, True, 0.5]), (p.Chunk,), p.Expect(samples=3), "expected a number, got bool"),
    "samples as a tensor": (chunk(samples=torch.ones(3)), (p.Chunk,), p.Expect(samples=3), "expected a list, got Tensor"),
    "non-str message": ({"kind": "Failure", "status": "RUNTIME_ERROR", "message": 7}, (p.Chunk,), p.Expect(),
                        "message: expected a string, got int"),
    "missing field": ({"kind": "Chunk", "samples": [0.5, 0.5, 0.5]}, (p.Chunk,), p.Expect(samples=3),
                      "missing field(s) clocks"),
    "unknown field": (chunk(verdict="PASSED"), (p.Chunk,), p.Expect(samples=3), "unknown field(s) verdict"),
    "no kind": ({"samples": [0.5]}, (p.Chunk,), p.Expect(), "kind None, expected Chunk or Failure"),
    "reply to another command": ({"kind": "Outputs", "outputs": [], "updated": []}, (p.Chunk,), p.Expect(), "kind 'Outputs'"),
    "not a dict": ([1, 2], (p.Chunk,), p.Expect(), "expected a dict, got list"),
    "too few outputs": ({"kind": "Outputs", "outputs": [], "updated": []}, (p.Outputs, p.Rejected), AFTER_BUILD, "0 item(s), expected 1"),
    "output of another type": ({"kind": "Outputs", "outputs": [3.0], "updated": []}, (p.Outputs,), AFTER_BUILD,
                               "expected a CPU torch.Tensor, got float"),
    "rejection with a build status": ({"kind": "Rejected", "status": "COMPILE_ERROR", "message": ""},
                                      (p.Outputs, p.Rejected), AFTER_BUILD, "may not report COMPILE_ERROR"),
    "graph divisor nobody asked for": ({"kind": "TimingStarted", "mode": "events", "calls_per_sample": 1000, "clocks": {}},
                                       (p.TimingStarted,), TIMING, "calls_per_sample: 1000"),
    "more checks than kept": ({"kind": "TimingEnded", "hidden": hidden(), "problem": None,
                               "checks": [{"sample": 1, "outputs": [torch.ones(1)]}] * (p.MAX_KEPT + 1)},
                              (p.TimingEnded,), TIMING, f"{p.MAX_KEPT + 1} item(s), at most {p.MAX_KEPT}"),
    "check without a sample number": ({"kind": "TimingEnded", "hidden": hidden(), "problem": None,
                                       "checks": [{"sample": "3", "outputs": [torch.ones(1)]}]},
                                      (p.TimingEnded,), TIMING, "checks[0].sample"),
    "NaN in hidden work": ({"kind": "TimingEnded", "hidden": {**hidden(), "hidden_ms": math.nan}, "problem": None,
                            "checks": []}, (p.TimingEnded,), TIMING, "hidden.hidden_ms: nan is not finite"),
    "part of the hidden-work measurement": ({"kind": "TimingEnded", "problem": None, "checks": [],
                                             "hidden": {**hidden(), "events_ms": None, "wall_ms": None, "baseline_ms": None}},
                                            (p.TimingEnded,), TIMING, "all four or not at all"),
    "prepared time as a string": ({"kind": "Prepared", "seconds": "soon"}, (p.Prepared,), p.Expect(),
                                  "seconds: expected a number"),
    "peak as a string": ({"kind": "Built", "device": {}, "versions": {}, "probe": None,
                          "peak": {"bytes_per_s": "fast", "flops_per_s": {}}},
                         (p.Built,), p.Expect(), "bytes_per_s: expected a number"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_malformed_reply_is_refused_with_its_reason(name: str) -> None:
    data, expected, expect, words = BAD[name]
    with pytest.raises(p.Malformed, match="^worker sent a malformed ") as info:
        p.decode(wire(data), expected, expect)
    assert words in str(info.value)


def test_bytes_the_safe_loader_refuses_are_malformed() -> None:
    """A pickle that would run code on load (here harmlessly: `os.getcwd`) is never executed."""

    class Sneaky:
        def __reduce__(self) -> Any:
            return (os.getcwd, ())

    buf = io.BytesIO()
    torch.save({"kind": "Chunk", "samples": Sneaky(), "clocks": {}}, buf, pickle_module=pickle)
    with pytest.raises(p.Malformed, match="malformed Chunk reply: UnpicklingError"):
        p.decode(buf.getvalue(), (p.Chunk,), p.Expect(samples=1))


def test_huge_message_is_clipped_keeping_head_and_tail() -> None:
    message = "ValueError: first line\n" + "x" * 100_000 + "\nlast frame"
    reply = p.decode(wire({"kind": "Failure", "status": "RUNTIME_ERROR", "message": message}), (p.Chunk,))
    assert isinstance(reply, p.Failure) and len(reply.message) <= p.MAX_MESSAGE
    assert reply.message.startswith("ValueError: first line") and reply.message.endswith("last frame")
    assert "characters cut" in reply.message


def test_half_frame_ends_at_the_deadline_and_a_closed_pipe_is_eof() -> None:
    r, w = os.pipe()
    try:
        os.write(w, (1000).to_bytes(8, "big") + b"0123456789")
        with pytest.raises(TimeoutError, match="10 of 1000 bytes"):
            p.read_frame(r, time.monotonic() + 0.2)
        os.close(w)
        w = -1
        with pytest.raises(EOFError):
            p.read_frame(r, time.monotonic() + 60)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_a_frame_larger_than_asked_for_is_refused_unread() -> None:
    r, w = os.pipe()
    with os.fdopen(r, "rb", buffering=0), os.fdopen(w, "wb", buffering=0):
        os.write(w, (1 << 40).to_bytes(8, "big") + b"x" * 100)
        with pytest.raises(p.Malformed, match="at most 4096"):
            p.read_frame(r, time.monotonic() + 60, limit=4096)


def test_frame_limits_follow_the_declared_tensors(write_manifest) -> None:
    m = load_manifest(write_manifest(axpy_document([solution("sol", "good.py")])))
    e = p.Build(m.solutions[0], m.definition, "cpu", 0).expect(p.Expect())
    w = m.workloads[0]
    run = p.Run(w, 1).expect(e)
    assert run.data_bytes == 3 * 4096 * 4 and run.frame_bytes == p.SMALL_FRAME + 2 * run.data_bytes
    started = p.TimeStart(w, [1, 2, 3], m.bench).expect(run)
    assert p.TimeChunk(5).expect(started).frame_bytes == p.SMALL_FRAME
    assert p.TimeEnd().expect(started).frame_bytes == p.SMALL_FRAME + 2 * p.MAX_KEPT * run.data_bytes


def test_frame_round_trips() -> None:
    r, w = os.pipe()
    with os.fdopen(r, "rb", buffering=0), os.fdopen(w, "wb", buffering=0):
        p.write_frame(w, b"payload")
        assert p.read_frame(r, time.monotonic() + 60) == b"payload"


# -- real workers -------------------------------------------------------------------------------
@pytest.fixture
def axpy(write_manifest):
    def build(file: str, tmp: Path) -> tuple[Worker, Any]:
        m = load_manifest(write_manifest(axpy_document([solution("sol", file)])))
        worker = Worker("sol", tmp / "logs")
        worker.call(p.Build(m.solutions[0], m.definition, "cpu", 0), timeout=m.bench.compile_timeout_s)
        return worker, m
    return build


def test_forged_chunk_from_a_solution_is_tampered_and_the_worker_killed(axpy, tmp_path: Path) -> None:
    worker, m = axpy("forged_reply.py", tmp_path)
    try:
        w = m.workloads[0]
        worker.call(p.TimeStart(w, [1, 2], m.bench), timeout=120)
        with pytest.raises(WorkerError) as info:
            worker.call(p.TimeChunk(3), timeout=120)
        assert info.value.status == "TAMPERED"
        assert "malformed Chunk reply: Chunk.samples[0]: -1.0 is negative" in info.value.message
        assert not worker.alive
    finally:
        worker.close()


def test_half_written_reply_is_a_timeout_not_a_hang(axpy, tmp_path: Path) -> None:
    worker, m = axpy("half_frame.py", tmp_path)
    try:
        with pytest.raises(WorkerError) as info:
            worker.call(p.Run(m.workloads[0], 1), timeout=10)
        assert info.value.status == "TIMEOUT" and "'run' did not finish within 10 s" in info.value.message
        assert not worker.alive
    finally:
        worker.close()


def test_a_reply_larger_than_the_declared_outputs_is_tampered(axpy, tmp_path: Path) -> None:
    worker, m = axpy("huge_reply.py", tmp_path)
    try:
        with pytest.raises(WorkerError) as info:
            worker.call(p.Run(m.workloads[0], 1), timeout=60)
        assert info.value.status == "TAMPERED" and "1099511627776 bytes" in info.value.message
        assert not worker.alive
    finally:
        worker.close()


def test_an_output_viewing_a_large_buffer_is_sent_compactly(axpy, tmp_path: Path) -> None:
    worker, m = axpy("big_view.py", tmp_path)
    try:
        reply = worker.call(p.Run(m.workloads[0], 1), timeout=60)
        (out,) = reply.outputs
        assert out.untyped_storage().nbytes() == out.numel() * 4
    finally:
        worker.close()


def test_a_zero_sample_is_decoded_for_the_parent_to_judge() -> None:
    """0 ms: the call queued nothing between its markers (CUPTI); the runner makes that HIDDEN_WORK."""
    reply = p.decode(p.encode(p.Chunk([0.5, 0.0], {})), (p.Chunk,), p.Expect(samples=2))
    assert reply.samples == [0.5, 0.0]
