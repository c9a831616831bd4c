"""Huawei Ascend NPUs through torch_npu (`torch.npu` mirrors `torch.cuda`).

NOT RUN ON REAL HARDWARE: written against torch_npu's, npu-smi's and CANN's documented interfaces;
see docs/hardware.md. The text parsers below (npu-smi tables, CANN/driver version files) are pure
functions, unit-tested on the CPU with output in the documented formats.

torch_npu refuses to load beside a CUDA build of torch, and must be imported before user modules:
`setup()` imports it, and every worker calls `setup()` before it loads a solution.
"""
from __future__ import annotations

import contextlib
import glob
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

import torch

from harness.measure.devices.base import RELEASE_ABOVE, Device, Event, Peak

ASCEND_ROOT = Path("/usr/local/Ascend")
# Vendor ceilings matched on the chip name (e.g. "910B3"). Left empty on purpose: we found no
# datasheet figures for the 910B variants we could verify, and a wrong ceiling is worse than none
# (no speed-of-light column is shown when the peak is unknown). Add entries as Peak(bytes/s, {dtype: flop/s}).
PEAKS: dict[str, Peak] = {}


def _torch_npu() -> Any:
    """Import torch_npu (it registers `torch.npu`); None when not installed or not loadable."""
    try:
        return importlib.import_module("torch_npu")
    except Exception:
        return None


# -- pure parsers (tested on the CPU) -----------------------------------------------------------

_NUM = r"[-+]?\d+(?:\.\d+)?"


def _numbers(cell: str) -> list[float]:
    return [float(x) for x in re.findall(_NUM, cell)]


def parse_npu_smi_info(text: str) -> dict[str, Any]:
    """`npu-smi info`: the version and one entry per NPU chip.

    The table has two lines per chip: `| <npu> <name> | <health> | <power> <temp> <hugepages used>/<total> |`
    then `| <chip> | <bus id> | <aicore%> <memory used>/<total> <hbm used>/<total> |`. The process table
    that follows (`| NPU  Chip | Process id | ...`) is ignored.
    """
    out: dict[str, Any] = {"version": None, "devices": []}
    m = re.search(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)", text)
    if m:
        out["version"] = m.group(2)
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells and re.match(r"^NPU\s+Chip\b", cells[0]):
            break  # process table
        if len(cells) < 3 or cells[0].startswith(("NPU", "Chip")):
            continue
        first = cells[0].split()
        if len(first) >= 2 and first[0].isdigit():  # "<npu id> <chip name>"
            nums = _numbers(cells[2])
            current = {"npu": int(first[0]), "name": " ".join(first[1:]), "health": cells[1]}
            if len(nums) >= 2:
                current["power_w"], current["temperature_c"] = nums[0], nums[1]
        elif len(first) == 1 and first[0].isdigit() and current is not None:  # "<chip id>"
            nums = _numbers(cells[2])
            entry = {**current, "chip": int(first[0]), "bus_id": cells[1]}
            if len(nums) >= 5:
                entry["aicore_pct"] = nums[0]
                entry["memory_mb"] = [nums[1], nums[2]]
                entry["hbm_mb"] = [nums[3], nums[4]]
            out["devices"].append(entry)
    return out


def parse_colon_fields(text: str) -> dict[str, str]:
    """`npu-smi info -t <type> -i <id> [-c <chip>]` prints `Key : value` lines."""
    out = {}
    for line in text.splitlines():
        if ":" in line:
            key, _, value = line.partition(":")
            if key.strip():
                out[key.strip()] = value.strip()
    return out


def clocks_from_common(fields: dict[str, str]) -> dict[str, float]:
    """MHz and temperature from `npu-smi info -t common` fields (AI Core clock is the one that throttles)."""
    out: dict[str, float] = {}
    for key, value in fields.items():
        k = key.lower().replace(" ", "")
        nums = _numbers(value)
        if not nums:
            continue
        if k.startswith("aicorecurfreq"):
            out["sm_mhz"] = nums[0]  # named like CUDA's so the throttling check reads it unchanged
        elif k.startswith("aicorefreq"):
            out["sm_max_mhz"] = nums[0]
        elif k.startswith("temperature"):
            out["temperature_c"] = nums[0]
    return out


def parse_key_values(text: str) -> dict[str, str]:
    """CANN's `ascend_toolkit_install.info` and the driver's `version.info`: `key=value` lines."""
    out = {}
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def toolkit_info_files(homes: list[Path]) -> list[Path]:
    found = []
    for home in homes:
        found += [Path(p) for p in sorted(glob.glob(str(home / "*" / "ascend_toolkit_install.info")))]
        if (home / "ascend_toolkit_install.info").is_file():
            found.append(home / "ascend_toolkit_install.info")
    return found


def cann_version_from_files(homes: list[Path]) -> str | None:
    for f in toolkit_info_files(homes):
        with contextlib.suppress(OSError):
            version = parse_key_values(f.read_text()).get("version")
            if version:
                return version
    return None


def driver_version_from_file(path: Path) -> str | None:
    with contextlib.suppress(OSError):
        kv = parse_key_values(path.read_text())
        return kv.get("Version") or kv.get("version")
    return None


def toolkit_homes() -> list[Path]:
    """Where CANN may be: the set_env.sh variables first, then the default install paths."""
    homes = [Path(os.environ[v]) for v in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH") if os.environ.get(v)]
    return homes + [ASCEND_ROOT / "ascend-toolkit" / "latest", ASCEND_ROOT / "cann"]


def _run(argv: list[str], timeout: float = 10.0) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


# -- the device ---------------------------------------------------------------------------------

class NpuEvent(Event):
    def __init__(self) -> None:
        self.ev = torch.npu.Event(enable_timing=True)

    def record(self) -> None:
        self.ev.record()

    def elapsed_ms(self, end: Event) -> float:
        assert isinstance(end, NpuEvent)
        return self.ev.elapsed_time(end.ev)


class NpuDevice(Device):
    kind = "npu"

    def __init__(self, index: int = 0):
        super().__init__(index)
        self._stream: Any = None
        self._smi: dict[str, Any] | None = None

    @classmethod
    def available(cls) -> tuple[bool, str]:
        if _torch_npu() is None:
            why = "torch_npu is not installed" if importlib.util.find_spec("torch_npu") is None else \
                "torch_npu is installed but does not load (a CUDA build of torch beside it?)"
            return False, why
        if not torch.npu.is_available():
            return False, "no Ascend NPU is visible"
        return True, ""

    @property
    def torch_device(self) -> torch.device:
        return torch.device("npu", self.index)

    def setup(self) -> None:
        _torch_npu()
        torch.npu.set_device(self.index)
        self._stream = torch.npu.Stream(self.index)

    def synchronize(self) -> None:
        torch.npu.synchronize(self.index)

    @contextlib.contextmanager
    def stream(self) -> Iterator[None]:
        if self._stream is None:
            self.setup()
        with torch.npu.stream(self._stream):
            yield

    def event(self) -> Event:
        return NpuEvent()

    def l2_bytes(self) -> int:
        # triton-ascend's do_bench_npu flushes 192 MiB; the base class reads twice this.
        return 96 * 1024 ** 2

    def release_cached_memory(self) -> None:
        npu = torch.npu  # registered by torch_npu, which `available` imported
        if npu.memory_reserved(self.index) - npu.memory_allocated(self.index) > RELEASE_ABOVE:
            npu.empty_cache()

    def memory_error(self, exc: BaseException) -> bool:
        return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()

    # -- identity, limits, clocks ---------------------------------------------------------------
    def _npu_smi(self) -> dict[str, Any]:
        """The chip at this index in `npu-smi info` order (the order torch_npu enumerates visible chips)."""
        if self._smi is None:
            text = _run(["npu-smi", "info"])
            parsed = parse_npu_smi_info(text) if text else {"version": None, "devices": []}
            devices = parsed["devices"]
            visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
            if visible:
                keep = {int(x) for x in visible.split(",") if x.strip().isdigit()}
                devices = [d for d in devices if d["npu"] in keep] or devices
            chip = devices[self.index] if self.index < len(devices) else {}
            self._smi = {"version": parsed["version"], "chip": chip}
        return self._smi

    def chip_name(self) -> str | None:
        with contextlib.suppress(Exception):
            return str(torch.npu.get_device_name(self.index))
        return self._npu_smi()["chip"].get("name")

    def peak(self) -> Peak:
        name = self.chip_name() or ""
        for key, peak in PEAKS.items():
            if key in name:
                return peak
        return Peak()

    def clocks(self) -> dict[str, float]:
        chip = self._npu_smi()["chip"]
        if not chip:
            return {}
        text = _run(["npu-smi", "info", "-t", "common", "-i", str(chip["npu"]), "-c", str(chip["chip"])])
        return clocks_from_common(parse_colon_fields(text)) if text else {}

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "npu", "index": self.index, "name": self.chip_name() or "?"}
        mod = _torch_npu()
        with contextlib.suppress(Exception):
            out["soc_version"] = mod.npu.get_soc_version()
        with contextlib.suppress(Exception):
            out["torch_npu"] = mod.__version__
        cann = None
        with contextlib.suppress(Exception):
            cann = mod.npu.utils.get_cann_version(module="CANN")
        out["cann"] = cann or cann_version_from_files(toolkit_homes())
        out["driver"] = driver_version_from_file(ASCEND_ROOT / "driver" / "version.info")
        smi = self._npu_smi()
        out["npu_smi_version"] = smi["version"]
        out["npu_smi"] = smi["chip"]
        out["l2_flush_bytes"] = 2 * self.l2_bytes()
        return out
