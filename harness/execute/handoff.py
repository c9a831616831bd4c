"""Outputs handed from a worker to the parent in device memory (CUDA IPC), not through the pipe.

A 1 GiB output copied to the host, pickled through a pipe and compared on the CPU costs seconds per
round; handed over on the device it costs a device-to-device copy. The trust model is unchanged:

- The worker exports the allocation holding an output (`export`: a CUDA IPC handle, the output's
  offset in it, shape and dtype) and keeps the tensor alive until its next command.
- The parent opens the handle while the worker and everything it started are stopped
  (`Worker.frozen`), checks with the driver that the bytes it is told to read lie inside the
  allocation the handle maps, copies them into memory of its own, and closes the handle
  (`receive`). What the parent compares is its own copy: nothing the worker does afterwards
  reaches it, and the parent never hands the worker any of its memory.
- A handle that does not open, or an offset or size outside its allocation, is a forged reply
  (`HandoffError` -> TAMPERED). A handle the parent already received from another worker (the
  reference's outputs, sent back as the solution's) is refused the same way (`Ledger`).
- Whether the pair of processes can use IPC at all (driver, uids, containers) is probed once per
  worker at build time with a value the parent chose (`probe`); where it cannot, outputs come
  through the pipe as before and the report's device info says which way they came.

Not run on an NPU (torch_npu has no documented IPC export): NPU outputs always come through the pipe.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import torch

from harness.execute.dtypes import name_of, to_torch

HANDLE_BYTES = 64  # sizeof(CUipcMemHandle)
MAX_DIMS = 16
_LAZY_PEER_ACCESS = 1  # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS


class HandoffError(Exception):
    """A forged handle: one the driver calls invalid, or bytes outside the allocation it maps."""


class HandoffUnavailable(Exception):
    """A handle the driver could not open for a reason of its own (memory, mappings): not the worker's
    fault, so the row is a RUNTIME_ERROR, never TAMPERED."""


FORGED_CODES = {1: "invalid value", 400: "invalid handle"}  # CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_HANDLE


@dataclass(frozen=True)
class DeviceOutput:
    """An output left in the worker's device memory: where it is, as the worker says (checked on open)."""

    handle: bytes
    offset: int
    shape: tuple[int, ...]
    dtype: torch.dtype

    @property
    def nbytes(self) -> int:
        n = self.dtype.itemsize
        for s in self.shape:
            n *= s
        return n


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * HANDLE_BYTES)]


def _driver() -> Any:
    """libcuda with the signatures of the calls used here (a CUipcMemHandle goes by value)."""
    lib = ctypes.CDLL("libcuda.so.1")
    u64, p64 = ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)
    for name, args in (("cuMemGetAddressRange_v2", [p64, ctypes.POINTER(ctypes.c_size_t), u64]),
                       ("cuIpcGetMemHandle", [ctypes.POINTER(_Handle), u64]),
                       ("cuIpcOpenMemHandle_v2", [p64, _Handle, ctypes.c_uint]),
                       ("cuIpcCloseMemHandle", [u64])):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    return lib


def _check(code: int, what: str) -> None:
    if code != 0:
        raise HandoffError(f"{what} failed with CUDA driver error {code}")


def _address_range(lib: Any, ptr: int) -> tuple[int, int]:
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(ptr)),
           "cuMemGetAddressRange")
    return base.value, size.value


def _ready(device: torch.device) -> None:
    """The device's primary context current on this thread, as the driver calls need it (`cuda` with
    no index is the current device: torch.cuda.set_device refuses it)."""
    torch.cuda.set_device(device if device.index is not None else torch.cuda.current_device())
    torch.empty(1, device=device)


# -- worker side -----------------------------------------------------------------------------------
def export(t: torch.Tensor) -> dict[str, Any] | None:
    """The wire form of a contiguous CUDA tensor (the caller keeps `t` alive until the parent has
    copied it), or None where its memory cannot be exported or described (then it goes through the
    pipe, and the parent's comparison says what is wrong with it)."""
    if t.device.type != "cuda" or not t.is_contiguous() or t.dim() > MAX_DIMS:
        return None
    try:
        to_torch(name_of(t.dtype))
    except ValueError:
        return None
    try:
        lib = _driver()
        _ready(t.device)
        torch.cuda.synchronize(t.device)  # the bytes (a contiguous() copy included) are written before they are handed
        ptr = t.data_ptr()
        base, _ = _address_range(lib, ptr)
        handle = _Handle()
        _check(lib.cuIpcGetMemHandle(ctypes.byref(handle), ctypes.c_uint64(base)), "cuIpcGetMemHandle")
    except (OSError, HandoffError, RuntimeError):
        return None
    return {"ipc": bytes(handle), "offset": ptr - base, "shape": list(t.shape), "dtype": name_of(t.dtype)}


# -- parent side -----------------------------------------------------------------------------------
class _Bytes:
    """`nbytes` of device memory at `ptr` as a uint8 array torch can wrap (bfloat16 has no typestr)."""

    def __init__(self, ptr: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 2, "strides": None}


class Ledger:
    """The handles the parent has received, by worker: one worker's memory is never accepted as
    another's (a solution cannot pass the reference's outputs off as its own)."""

    def __init__(self) -> None:
        self.owner: dict[bytes, tuple[int, str]] = {}

    def forget(self, worker: Any) -> None:
        """A worker that is gone: its handles may be reused by a new process, and must not be held against it."""
        self.owner = {h: o for h, o in self.owner.items() if o[0] != id(worker)}

    def claim(self, handle: bytes, worker: Any) -> None:
        """`worker` (the parent's `Worker` object: identity, not its label, which a solution names)."""
        seen = self.owner.setdefault(handle, (id(worker), worker.label))
        if seen[0] != id(worker):
            raise HandoffError(f"the worker sent a handle to memory the parent received from the {seen[1]!r} worker")


def receive(outputs: list[Any], device: torch.device, ledger: Ledger, worker: Any) -> list[Any]:
    """`outputs` with every `DeviceOutput` replaced by the parent's own copy on `device` (call while
    the worker is stopped); other entries (CPU tensors, placeholders) unchanged."""
    if not any(isinstance(o, DeviceOutput) for o in outputs):
        return outputs
    lib = _driver()
    _ready(device)
    opened: dict[bytes, tuple[int, int, int]] = {}  # handle -> (pointer the open returned, its range's base, size)
    try:
        result = []
        for i, o in enumerate(outputs):
            if not isinstance(o, DeviceOutput):
                result.append(o)
                continue
            if o.nbytes == 0:
                result.append(torch.empty(o.shape, dtype=o.dtype, device=device))
                continue
            if o.handle not in opened:
                ledger.claim(o.handle, worker)
                ptr = ctypes.c_uint64()
                code = lib.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), _Handle.from_buffer_copy(o.handle),
                                                 ctypes.c_uint(_LAZY_PEER_ACCESS))
                if code in FORGED_CODES:
                    raise HandoffError(f"output {i}'s handle: the driver says {FORGED_CODES[code]} (error {code})")
                if code != 0:
                    raise HandoffUnavailable(f"opening output {i}'s handle failed with CUDA driver error {code}")
                opened[o.handle] = (ptr.value, ptr.value, 0)  # closed in `finally` even if the range query fails
                opened[o.handle] = (ptr.value, *_address_range(lib, ptr.value))
            ptr_v, base, size = opened[o.handle]
            start = ptr_v - base + o.offset
            if o.offset < 0 or start + o.nbytes > size:
                raise HandoffError(f"output {i}: {o.nbytes} bytes at offset {o.offset} lie outside the "
                                   f"{size}-byte allocation its handle maps")
            src = torch.as_tensor(_Bytes(ptr_v + o.offset, o.nbytes), device=device)
            result.append(src.clone().view(o.dtype).view(o.shape))
        return result
    finally:
        if opened:  # every copy from the mappings is done before they go, whatever happened above
            try:
                torch.cuda.synchronize(device)
            finally:
                for ptr_v, _, _ in opened.values():
                    lib.cuIpcCloseMemHandle(ctypes.c_uint64(ptr_v))


PROBE_AT = 512  # the probe lies inside a larger allocation, at an offset, as real outputs do


def probe_value(nonce: int) -> torch.Tensor:
    """What the worker exports at build time for the parent to read back: 64 values from the nonce."""
    return torch.arange(64, dtype=torch.int64) + (nonce & ((1 << 61) - 1))


def probe_tensor(nonce: int, device: torch.device) -> torch.Tensor:
    """`probe_value` on `device`, a view at element PROBE_AT of a 1 MiB buffer (which it keeps alive)."""
    buf = torch.zeros(1 << 17, dtype=torch.int64, device=device)
    buf[PROBE_AT:PROBE_AT + 64] = probe_value(nonce).to(device)
    return buf[PROBE_AT:PROBE_AT + 64]


def parse(value: Any, where: str) -> DeviceOutput:
    """The one place a wire handle becomes a `DeviceOutput` (protocol.decode calls it); ValueError
    says what is wrong. Bounds against the allocation are checked only on open (`receive`)."""
    if set(value) != {"ipc", "offset", "shape", "dtype"}:
        raise ValueError(f"{where}: a device output has exactly ipc, offset, shape, dtype")
    handle, offset, shape, dtype = value["ipc"], value["offset"], value["shape"], value["dtype"]
    if type(handle) is not bytes or len(handle) != HANDLE_BYTES:
        raise ValueError(f"{where}.ipc: expected {HANDLE_BYTES} bytes")
    if type(offset) is not int or offset < 0:
        raise ValueError(f"{where}.offset: expected an integer >= 0")
    if type(shape) is not list or len(shape) > MAX_DIMS or any(type(s) is not int or s < 0 for s in shape):
        raise ValueError(f"{where}.shape: expected at most {MAX_DIMS} integers >= 0")
    try:
        torch_dtype = to_torch(dtype) if type(dtype) is str else None
    except (KeyError, ValueError):
        torch_dtype = None
    if torch_dtype is None:
        raise ValueError(f"{where}.dtype: {str(dtype)[:40]!r} is not a dtype the harness knows")
    return DeviceOutput(handle, offset, tuple(shape), torch_dtype)
