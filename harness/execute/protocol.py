"""Every command and reply that crosses the parent <-> worker process boundary, and the one place
where a reply becomes a typed object.

Trust model:
- Commands go parent -> worker as plain pickles (`send_command`). The parent is trusted, so the
  worker may unpickle what it is sent. Not `Connection.send`: its pickler moves tensors into shared
  memory, which would hand a worker a writable view of the parent's tensors (and the sharing socket
  is unreachable from a worker with its own uid).
- Replies go worker -> parent as one length-prefixed frame (`write_frame` / `read_frame`) holding
  `torch.save` bytes of plain data only: dicts, lists, tensors, str, float, int, bool, None, with a
  `kind` tag naming the reply class (`encode`). The worker runs solution code, so everything it
  sends may be forged: the parent loads a frame with `weights_only=True` (loading cannot run code)
  and `decode` turns it into a typed reply, checking every field against what the parent knows
  itself (`Expect`: the sample count it asked for, the output count the definition declares...).
  A worker may report only the failure statuses in `WORKER_STATUSES`, never PASSED or SKIPPED.
  A reply that fails a check raises `Malformed`; the parent kills the worker and records TAMPERED.

Command -> the replies it may get (any command may also get `Failure`; `Exit` gets none):
  Prepare -> Prepared   Build -> Built        Run -> Outputs | Rejected
Outputs (of Run, and of TimeEnd's kept samples) come as CPU tensors in the frame, or, once the
parent has read the worker's build-time probe through CUDA IPC, as handles to the worker's device
memory that the parent copies from itself (`handoff`: nothing large crosses the pipe).
  TimeStart -> TimingStarted    TimeChunk -> Chunk   TimeEnd -> TimingEnded
  BenchLoad -> BenchLoaded      BenchTime -> BenchTimed   (bench modules: harness/benchmod/run.py)
"""
from __future__ import annotations

import io
import math
import os
import pickle
import select
import struct
import time
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Union

import torch

from harness.execute import handoff
from harness.execute.handoff import DeviceOutput
from harness.measure.devices.base import Peak
from harness.results.trace import Status
from harness.spec.model import BenchConfig, Definition, Reference, Solution, Workload

MAX_MESSAGE = 4000   # characters of a worker's message the parent keeps (head and tail)
MAX_NAME = 200       # a short string: a mode, a clock name, a placeholder for a non-tensor output
MAX_ITEMS = 64       # entries in a descriptive mapping (device info, versions, clocks)
MAX_KEPT = 4          # timed samples whose outputs the parent re-checks (TimeChunk.keep)
SMALL_FRAME = 4 << 20  # bytes of a reply that carries no tensors; one that does may add twice their declared size

# What a worker may say went wrong: errors of the code it ran, and what its own checks saw.
FAILURE_STATUSES = frozenset({Status.COMPILE_ERROR, Status.RUNTIME_ERROR, Status.OUT_OF_MEMORY, Status.TAMPERED,
                              Status.UNSUPPORTED})
REJECTION_STATUSES = frozenset({Status.TAMPERED, Status.INPUT_MUTATED, Status.INVALID_OUTPUT})
WORKER_STATUSES = FAILURE_STATUSES | REJECTION_STATUSES


# -- replies (worker -> parent) -------------------------------------------------------------------
@dataclass(frozen=True)
class Failure:
    """The command raised in the worker (build error, exception, out of memory) or the build found
    harness functions patched on import; `status` is one of FAILURE_STATUSES."""

    status: Status
    message: str


@dataclass(frozen=True)
class Rejected:
    """The worker's own checks, which must run next to the solution, caught it (patched timers,
    stray threads, written inputs, outputs that are not fresh tensors); one of REJECTION_STATUSES."""

    status: Status
    message: str


@dataclass(frozen=True)
class Prepared:
    """The worker imported torch, opened the device and started its profiler, before any solution
    code: descriptive only (how long it took)."""

    seconds: float


@dataclass(frozen=True)
class Built:
    """The solution or reference is loaded; what the worker sees of the device, for the report
    (descriptive only: nothing is decided on it but the speed-of-light fraction)."""

    device: dict[str, Any]
    versions: dict[str, Any]
    peak: Peak
    probe: Any = None  # the build-time value the parent reads back through CUDA IPC (`handoff.export` form)


@dataclass(frozen=True)
class Outputs:
    """What the call returned, in declaration order: CPU tensors, or device handles (the worker's
    `handoff.export` dicts; `DeviceOutput` once decoded, the parent's own device tensors once
    received); a non-tensor output comes as a placeholder string so the parent's comparison names it."""

    outputs: list[Any]
    updated: list[str] = field(default_factory=list)  # inputs the reference updated in place (an in-place op)


@dataclass(frozen=True)
class TimingStarted:
    """Inputs are made and warmup is done; `calls_per_sample` is > 1 when a sample replays a graph."""

    mode: str
    calls_per_sample: int
    clocks: dict[str, float]


@dataclass(frozen=True)
class Chunk:
    """Exactly the samples asked for, in ms per call, each finite and >= 0 (0: the call queued no
    device work between its markers, which the parent turns into HIDDEN_WORK), and the clocks after."""

    samples: list[float]
    clocks: dict[str, float]


@dataclass(frozen=True)
class HiddenWork:
    """Device events against the host clock over one call (see `Sampler.hidden_work_check`)."""

    events_ms: float | None = None  # None: not measured (a device whose calls queue no work)
    wall_ms: float | None = None
    baseline_ms: float | None = None
    hidden_ms: float | None = None
    escaped_ms: float | None = None
    escaped_kernels: list[str] | None = None
    activity_check: str | None = None
    probed_calls: int | None = None  # calls whose every device activity the profiler accounted for

    def to_dict(self) -> dict[str, Any]:
        """The form `hidden_work_suspected` and the trace read: fields the worker did not measure left out."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class TimedCheck:
    """What timed sample number `sample` returned (a sample the parent chose at random and asked to
    keep): the parent has the reference redraw that sample's inputs itself and recompute it, so a
    solution cannot be right only when checked, nor send inputs of its own choosing."""

    sample: int
    outputs: list[Any]  # as in Outputs


@dataclass(frozen=True)
class TimingEnded:
    """After timing: the hidden-work measurement, a check that failed (if one did) and the kept
    samples the parent must recompute."""

    hidden: HiddenWork
    problem: Rejected | None
    checks: list[TimedCheck] = field(default_factory=list)


@dataclass(frozen=True)
class BenchCaseInfo:
    """One case of a bench module, as its hooks declared it."""

    id: str
    axes: dict[str, int]


@dataclass(frozen=True)
class BenchLoaded:
    """The bench module and its operator loaded in the worker; its header and cases."""

    api_name: str
    api_kind: str
    kernels: list[str]
    cases: list[BenchCaseInfo]
    device: dict[str, Any]


@dataclass(frozen=True)
class BenchTimed:
    """One case timed in a bench mode: the raw samples (the parent summarizes them itself)."""

    mode: str
    samples: list[float]
    rule_met: bool
    stop_reason: str
    wall_s: float
    attributed: str
    details: dict[str, Any]


Reply = Union[Failure, Rejected, Prepared, Built, Outputs, TimingStarted, Chunk, TimingEnded, BenchLoaded, BenchTimed]


# -- what the parent knows a reply must hold ------------------------------------------------------
@dataclass(frozen=True)
class Expect:
    """Facts about the next reply that come from the commands the parent sent, never from the worker."""

    outputs: int | None = None         # outputs the definition declares (after Build)
    input_sets: int | None = None      # input sets being timed (after TimeStart)
    calls_per_sample: frozenset[int] = frozenset({1})
    samples: int | None = None         # samples the pending TimeChunk asked for
    definition: Definition | None = None
    data_bytes: int = 0                # declared inputs + outputs of the workload in play (Run, TimeStart)
    frame_bytes: int = SMALL_FRAME     # the largest reply frame the parent reads (a bigger one is TAMPERED)


# -- commands (parent -> worker) ------------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    name: ClassVar[str]                        # how timeouts and errors name the command
    replies: ClassVar[tuple[type, ...]] = ()   # what it may get back besides Failure

    def expect(self, before: Expect) -> Expect:
        """What this command's reply must hold, given what earlier commands established."""
        return replace(before, samples=None, frame_bytes=SMALL_FRAME)


@dataclass(frozen=True)
class Prepare(Command):
    """The harness's own start-up, ahead of the solution's turn (run/spares): import torch, open the
    device, start the profiler the cupti timer uses (about a second, once per process), import the
    language's runtime package (`solutions.runtime_module`). No solution code is loaded, so a prepared
    worker can wait while another solution is timed."""

    name: ClassVar[str] = "prepare"
    replies: ClassVar[tuple[type, ...]] = (Prepared,)
    device_kind: str
    device_index: int
    start_profiler: bool = True
    language: str = ""


@dataclass(frozen=True)
class Build(Command):
    """Load the solution (or the reference) on the device."""

    name: ClassVar[str] = "build"
    replies: ClassVar[tuple[type, ...]] = (Built,)
    target: Solution | Reference
    definition: Definition
    device_kind: str
    device_index: int
    handoff_nonce: int | None = None  # set by the parent where it can read device memory: export it as the probe

    def expect(self, before: Expect) -> Expect:
        return Expect(outputs=len(self.definition.outputs),
                      definition=self.definition)


@dataclass(frozen=True)
class Run(Command):
    """One correctness round on fresh inputs made in the worker from `seed`; with `draw` (key, sample),
    the random inputs redrawn as timed sample `sample` of the session with that key had them
    (`inputs.Redraw`: the reference re-checking a kept sample of a solution's timing)."""

    name: ClassVar[str] = "run"
    replies: ClassVar[tuple[type, ...]] = (Outputs, Rejected)
    workload: Workload
    seed: int
    draw: tuple[int, int] | None = None
    on_device: bool = False  # outputs as device handles (set by the parent's Worker after a good probe)
    updates: tuple[str, ...] = ()  # inputs the reference updates in place: a solution may too, and return them

    def expect(self, before: Expect) -> Expect:
        data = _data_bytes(before, self.workload)
        return replace(before, samples=None, data_bytes=data, frame_bytes=SMALL_FRAME + 2 * data)


@dataclass(frozen=True)
class TimeStart(Command):
    """Make one input set per seed, set up the sampler and warm up. Before timed sample k its random
    inputs are redrawn as `inputs.Redraw(workload, key)` draws sample k (when the config asks for
    fresh inputs); `key` is the parent's secret, so the parent can have any sample redrawn."""

    name: ClassVar[str] = "time_start"
    replies: ClassVar[tuple[type, ...]] = (TimingStarted,)
    workload: Workload
    seeds: list[int]
    cfg: BenchConfig
    key: int = 0
    updates: tuple[str, ...] = ()  # inputs updated in place: restored before every call, as upstream clones them

    def expect(self, before: Expect) -> Expect:
        return replace(before, samples=None, input_sets=len(self.seeds), frame_bytes=SMALL_FRAME,
                       calls_per_sample=frozenset({1, self.cfg.graph_batch}),
                       data_bytes=_data_bytes(before, self.workload))


@dataclass(frozen=True)
class TimeChunk(Command):
    """Take `n` more samples; the parent interleaves solution and reference chunks. The outputs of
    the samples at positions `keep` are kept for TimeEnd (at most MAX_KEPT in all)."""

    name: ClassVar[str] = "time_chunk"
    replies: ClassVar[tuple[type, ...]] = (Chunk,)
    n: int
    keep: tuple[int, ...] = ()

    def expect(self, before: Expect) -> Expect:
        return replace(before, samples=self.n, frame_bytes=SMALL_FRAME)


@dataclass(frozen=True)
class TimeEnd(Command):
    """Stop timing: hidden-work and tamper checks, and what each input set last produced."""

    name: ClassVar[str] = "time_end"
    replies: ClassVar[tuple[type, ...]] = (TimingEnded,)
    on_device: bool = False  # kept samples' outputs as device handles (as Run.on_device)

    def expect(self, before: Expect) -> Expect:  # the outputs of every kept sample
        return replace(before, samples=None, frame_bytes=SMALL_FRAME + 2 * before.data_bytes * MAX_KEPT)


def _data_bytes(before: Expect, workload: Workload) -> int:
    from harness.execute.inputs import workload_bytes
    return workload_bytes(before.definition, workload) if before.definition is not None else 0


@dataclass(frozen=True)
class BenchLoad(Command):
    """Set up the device, import the operator and its bench module (both staged), list the cases."""

    name: ClassVar[str] = "bench_load"
    replies: ClassVar[tuple[type, ...]] = (BenchLoaded,)
    operator: Path
    bench: Path | None
    device_kind: str
    device_index: int


@dataclass(frozen=True)
class BenchTime(Command):
    """Time one case of the loaded bench module in `mode`; profiler output goes under `workdir`."""

    name: ClassVar[str] = "bench_time"
    replies: ClassVar[tuple[type, ...]] = (BenchTimed,)
    case: str
    mode: str
    cfg: BenchConfig
    workdir: Path
    kernels: tuple[str, ...] = ()   # what to count, decided by the parent (header + operator file); () = header's
    required: tuple[str, ...] = ()  # of those, what must run (the header's)
    total_op: bool = False          # all device work of a call, names not needed (profiler modes)


@dataclass(frozen=True)
class Exit(Command):
    """Leave the command loop; no reply."""

    name: ClassVar[str] = "exit"


# -- wire format ----------------------------------------------------------------------------------
_HEADER = struct.Struct("!Q")


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text` cut to `limit` characters, keeping its head (the error) and tail (the innermost frames)."""
    if len(text) <= limit:
        return text
    mark = f"\n[... {len(text) - limit} characters cut ...]\n"
    head = (limit - len(mark)) // 2
    return text[:head] + mark + text[len(text) - (limit - len(mark) - head):]


def _plain(value: Any) -> Any:
    if isinstance(value, Status):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def send_command(conn: Any, command: Command) -> None:
    """Parent side: a copy of `command` (tensors as bytes), never shared memory."""
    conn.send_bytes(pickle.dumps(command, protocol=pickle.HIGHEST_PROTOCOL))


def read_command(conn: Any) -> Command:
    """Worker side: the next command from the trusted parent."""
    return pickle.loads(conn.recv_bytes())


def encode(reply: Reply) -> bytes:
    """Worker side: the reply as `torch.save` bytes of plain data with its `kind`."""
    buf = io.BytesIO()
    torch.save({"kind": type(reply).__name__, **_plain(reply)}, buf)
    return buf.getvalue()


def write_frame(fd: int, payload: bytes) -> None:
    """Worker side: one frame, an 8-byte length then the payload."""
    view = memoryview(_HEADER.pack(len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def read_frame(fd: int, deadline: float, limit: int | None = None) -> bytes:
    """Parent side: one whole frame, or TimeoutError at `deadline` (monotonic), also when the worker
    stops halfway through a frame; EOFError when the worker closed its end; Malformed when the frame
    announces more than `limit` bytes (nothing of it is read)."""
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if limit is not None and size > limit:
        raise Malformed(f"reply of {size} bytes; at most {limit} expected for what was asked")
    return _read_exact(fd, size, deadline)


def _read_exact(fd: int, n: int, deadline: float) -> bytes:
    buf = bytearray()  # grown as data comes, so a forged length cannot make the parent allocate it
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{len(buf)} of {n} bytes arrived")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        data = os.read(fd, min(n - len(buf), 1 << 20))
        if not data:
            raise EOFError("the worker closed its end of the pipe")
        buf += data
    return bytes(buf)


# -- decoding: the one place wire data becomes a typed reply --------------------------------------
class Malformed(Exception):
    """A reply the parent cannot believe: the worker is killed and the result is TAMPERED."""


class _Bad(Exception):
    """Why a value is wrong, with where it is (`Chunk.samples[3]`)."""


def decode(raw: bytes, expected: tuple[type, ...], expect: Expect = Expect()) -> Reply:
    """The typed reply in `raw` if it is one of `expected` (or a `Failure`) and holds every invariant
    the parent can check; else `Malformed`."""
    allowed = {cls.__name__: cls for cls in (*expected, Failure)}
    name = expected[0].__name__ if expected else "Failure"
    try:
        data = torch.load(io.BytesIO(raw), weights_only=True)
        if type(data) is not dict:
            raise _Bad(f"expected a dict, got {type(data).__name__}")
        kind = data.get("kind")
        if kind not in allowed:
            want = " or ".join(allowed)
            raise _Bad(f"kind {clip(repr(kind), MAX_NAME)}, expected {want}")
        name = kind
        cls = allowed[kind]
        body = _fields(data, cls, name, ignore=frozenset({"kind"}))
        return _DECODERS[cls](body, expect, name)
    except _Bad as exc:
        raise Malformed(f"worker sent a malformed {name} reply: {exc}") from None
    except Exception as exc:  # torch.load refusing the bytes, or anything the checks did not foresee
        why = clip(f"{type(exc).__name__}: {exc}", MAX_NAME)
        raise Malformed(f"worker sent a malformed {name} reply: {why}") from None


def _fields(data: Any, cls: type, where: str, ignore: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`data` as a dict with exactly `cls`'s fields: an unknown or missing key is a violation."""
    if type(data) is not dict:
        raise _Bad(f"{where}: expected a dict, got {type(data).__name__}")
    names = {f.name for f in fields(cls)}
    keys = set(data) - set(ignore)
    if keys - names:
        raise _Bad(f"{where}: unknown field(s) {', '.join(sorted(map(str, keys - names)))}"[:MAX_NAME])
    if names - keys:
        raise _Bad(f"{where}: missing field(s) {', '.join(sorted(names - keys))}")
    return {k: data[k] for k in names}


def _str(value: Any, where: str, limit: int = MAX_MESSAGE) -> str:
    if type(value) is not str:
        raise _Bad(f"{where}: expected a string, got {type(value).__name__}")
    return clip(value, limit)


def _status(value: Any, allowed: frozenset[Status], where: str) -> Status:
    if type(value) is not str or value not in Status._value2member_map_:
        raise _Bad(f"{where}: {clip(repr(value), MAX_NAME)} is not a status")
    status = Status(value)
    if status not in allowed:
        raise _Bad(f"{where}: a worker may not report {status}")
    return status


def _int(value: Any, where: str) -> int:
    if type(value) is not int:
        raise _Bad(f"{where}: expected an int, got {type(value).__name__}")
    return value


def _float(value: Any, where: str, positive: bool = False) -> float:
    if type(value) not in (float, int):  # not bool
        raise _Bad(f"{where}: expected a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise _Bad(f"{where}: {value} is not finite")
    if positive and not value > 0:
        raise _Bad(f"{where}: {value} is not > 0")
    return float(value)


def _list(value: Any, where: str, count: int | None = None, most: int | None = None) -> list[Any]:
    if type(value) is not list:
        raise _Bad(f"{where}: expected a list, got {type(value).__name__}")
    if count is not None and len(value) != count:
        raise _Bad(f"{where}: {len(value)} item(s), expected {count}")
    if most is not None and len(value) > most:
        raise _Bad(f"{where}: {len(value)} item(s), at most {most} allowed")
    return value


def _tensor(value: Any, where: str) -> torch.Tensor:
    if type(value) is not torch.Tensor or value.device.type != "cpu":
        raise _Bad(f"{where}: expected a CPU torch.Tensor, got {type(value).__name__}")
    return value


def _output(value: Any, where: str) -> torch.Tensor | str | DeviceOutput:
    if type(value) is dict:
        try:
            return handoff.parse(value, where)
        except ValueError as exc:
            raise _Bad(str(exc))
    return _str(value, where, MAX_NAME) if type(value) is str else _tensor(value, where)


def _outputs(value: Any, where: str, expect: Expect) -> list[torch.Tensor | str]:
    return [_output(v, f"{where}[{i}]") for i, v in enumerate(_list(value, where, expect.outputs))]


def _clocks(value: Any, where: str) -> dict[str, float]:
    if type(value) is not dict or len(value) > MAX_ITEMS:
        raise _Bad(f"{where}: expected a mapping of at most {MAX_ITEMS} clocks")
    return {_str(k, f"{where} key", MAX_NAME): _float(v, f"{where}[{k!r}]") for k, v in value.items()}


def _info(value: Any, where: str, depth: int = 3) -> Any:
    """Descriptive plain data (device info, versions): bounded size, strings clipped."""
    if value is None or type(value) in (bool, int):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is str:
        return clip(value, MAX_NAME)
    if depth > 0 and type(value) is list and len(value) <= MAX_ITEMS:
        return [_info(v, f"{where}[{i}]", depth - 1) for i, v in enumerate(value)]
    if depth > 0 and type(value) is dict and len(value) <= MAX_ITEMS:
        return {_str(k, f"{where} key", MAX_NAME): _info(v, f"{where}[{k!r}]", depth - 1) for k, v in value.items()}
    raise _Bad(f"{where}: not plain descriptive data ({type(value).__name__})")


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _Bad(f"{where}: expected a dict, got {type(value).__name__}")
    return _info(value, where)


def _failure(d: dict[str, Any], expect: Expect, w: str) -> Failure:
    return Failure(_status(d["status"], FAILURE_STATUSES, f"{w}.status"), _str(d["message"], f"{w}.message"))


def _rejected(d: dict[str, Any], expect: Expect, w: str) -> Rejected:
    return Rejected(_status(d["status"], REJECTION_STATUSES, f"{w}.status"), _str(d["message"], f"{w}.message"))


def _prepared(d: dict[str, Any], expect: Expect, w: str) -> Prepared:
    return Prepared(_float(d["seconds"], f"{w}.seconds"))


def _built(d: dict[str, Any], expect: Expect, w: str) -> Built:
    p = _fields(d["peak"], Peak, f"{w}.peak")
    flops = p["flops_per_s"]
    if type(flops) is not dict or len(flops) > MAX_ITEMS:
        raise _Bad(f"{w}.peak.flops_per_s: expected a mapping of dtype to FLOP/s")
    bps = p["bytes_per_s"]
    peak = Peak(bytes_per_s=None if bps is None else _float(bps, f"{w}.peak.bytes_per_s", positive=True),
                flops_per_s={_str(k, f"{w}.peak.flops_per_s key", MAX_NAME):
                             _float(v, f"{w}.peak.flops_per_s[{k!r}]", positive=True) for k, v in flops.items()})
    probe = d["probe"]
    if probe is not None and type(probe) is not dict:
        raise _Bad(f"{w}.probe: expected a device handle or None")
    return Built(_mapping(d["device"], f"{w}.device"), _mapping(d["versions"], f"{w}.versions"), peak,
                 None if probe is None else _output(probe, f"{w}.probe"))


def _outputs_reply(d: dict[str, Any], expect: Expect, w: str) -> Outputs:
    updated = [_str(n, f"{w}.updated[{i}]", MAX_NAME) for i, n in enumerate(_list(d["updated"], f"{w}.updated", most=MAX_ITEMS))]
    return Outputs(_outputs(d["outputs"], f"{w}.outputs", expect), updated)


def _timing_started(d: dict[str, Any], expect: Expect, w: str) -> TimingStarted:
    calls = _int(d["calls_per_sample"], f"{w}.calls_per_sample")
    if calls not in expect.calls_per_sample:
        raise _Bad(f"{w}.calls_per_sample: {calls}, expected one of {sorted(expect.calls_per_sample)}")
    return TimingStarted(_str(d["mode"], f"{w}.mode", MAX_NAME), calls, _clocks(d["clocks"], f"{w}.clocks"))


def _chunk(d: dict[str, Any], expect: Expect, w: str) -> Chunk:
    samples = _list(d["samples"], f"{w}.samples", expect.samples)
    if not samples:
        raise _Bad(f"{w}.samples: empty")
    values = [_float(s, f"{w}.samples[{i}]") for i, s in enumerate(samples)]
    for i, v in enumerate(values):
        if v < 0:
            raise _Bad(f"{w}.samples[{i}]: {v} is negative")
    return Chunk(values, _clocks(d["clocks"], f"{w}.clocks"))


def _hidden(value: Any, w: str) -> HiddenWork:
    d = _fields(value, HiddenWork, w)
    measured = [d[k] is not None for k in ("events_ms", "wall_ms", "baseline_ms", "hidden_ms")]
    if any(measured) and not all(measured):  # the parent's rule reads all four, or knows the check was skipped
        raise _Bad(f"{w}: events_ms, wall_ms, baseline_ms and hidden_ms come all four or not at all")
    kernels = d["escaped_kernels"]
    return HiddenWork(
        **{k: None if d[k] is None else _float(d[k], f"{w}.{k}") for k in ("events_ms", "wall_ms", "baseline_ms", "hidden_ms")},
        escaped_ms=None if d["escaped_ms"] is None else _float(d["escaped_ms"], f"{w}.escaped_ms"),
        escaped_kernels=None if kernels is None else
        [_str(k, f"{w}.escaped_kernels[{i}]", MAX_NAME) for i, k in enumerate(_list(kernels, f"{w}.escaped_kernels", most=16))],
        activity_check=None if d["activity_check"] is None else _str(d["activity_check"], f"{w}.activity_check", MAX_NAME),
        probed_calls=None if d["probed_calls"] is None else _int(d["probed_calls"], f"{w}.probed_calls"))


def _check(value: Any, expect: Expect, w: str) -> TimedCheck:
    d = _fields(value, TimedCheck, w)
    return TimedCheck(_int(d["sample"], f"{w}.sample"), _outputs(d["outputs"], f"{w}.outputs", expect))


def _timing_ended(d: dict[str, Any], expect: Expect, w: str) -> TimingEnded:
    problem = d["problem"]
    checks = _list(d["checks"], f"{w}.checks", most=MAX_KEPT)
    return TimingEnded(_hidden(d["hidden"], f"{w}.hidden"),
                       None if problem is None else _rejected(_fields(problem, Rejected, f"{w}.problem"), expect, f"{w}.problem"),
                       [_check(c, expect, f"{w}.checks[{i}]") for i, c in enumerate(checks)])


MAX_SAMPLES = 1_000_000


def _bench_loaded(d: dict[str, Any], expect: Expect, w: str) -> BenchLoaded:
    cases = []
    from harness.execute.benchmodule import MAX_CASES  # the contract's limit
    for i, c in enumerate(_list(d["cases"], f"{w}.cases", most=MAX_CASES)):
        c = _fields(c, BenchCaseInfo, f"{w}.cases[{i}]")
        axes = c["axes"]
        if type(axes) is not dict or len(axes) > MAX_ITEMS:
            raise _Bad(f"{w}.cases[{i}].axes: expected a mapping of at most {MAX_ITEMS} integers")
        cases.append(BenchCaseInfo(_str(c["id"], f"{w}.cases[{i}].id", MAX_NAME),
                                   {_str(k, f"{w}.cases[{i}].axes key", MAX_NAME): _int(v, f"{w}.cases[{i}].axes[{k!r}]")
                                    for k, v in axes.items()}))
    kernels = _list(d["kernels"], f"{w}.kernels", most=MAX_ITEMS)
    return BenchLoaded(_str(d["api_name"], f"{w}.api_name", MAX_NAME), _str(d["api_kind"], f"{w}.api_kind", MAX_NAME),
                       [_str(k, f"{w}.kernels[{i}]", MAX_NAME) for i, k in enumerate(kernels)], cases,
                       _mapping(d["device"], f"{w}.device"))


def _bench_timed(d: dict[str, Any], expect: Expect, w: str) -> BenchTimed:
    samples = _list(d["samples"], f"{w}.samples", most=MAX_SAMPLES)
    if not samples:
        raise _Bad(f"{w}.samples: empty")
    if type(d["rule_met"]) is not bool:
        raise _Bad(f"{w}.rule_met: expected a bool")
    return BenchTimed(_str(d["mode"], f"{w}.mode", MAX_NAME),
                      [_float(s, f"{w}.samples[{i}]", positive=True) for i, s in enumerate(samples)], d["rule_met"],
                      _str(d["stop_reason"], f"{w}.stop_reason", MAX_NAME), _float(d["wall_s"], f"{w}.wall_s"),
                      _str(d["attributed"], f"{w}.attributed", MAX_NAME), _mapping(d["details"], f"{w}.details"))


_DECODERS: dict[type, Any] = {Failure: _failure, Rejected: _rejected, Prepared: _prepared, Built: _built,
                              Outputs: _outputs_reply, TimingStarted: _timing_started, Chunk: _chunk,
                              TimingEnded: _timing_ended, BenchLoaded: _bench_loaded, BenchTimed: _bench_timed}
