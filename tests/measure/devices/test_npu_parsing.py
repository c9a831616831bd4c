"""The NPU module's pure logic on output in the documented formats (no NPU needed)."""
from __future__ import annotations

from pathlib import Path

from harness.measure.devices.npu import (NpuDevice, cann_version_from_files, clocks_from_common, driver_version_from_file,
                                 parse_colon_fields, parse_key_values, parse_npu_smi_info)
from harness.measure.timing import throttled

from factories import FIXTURES

FIX = FIXTURES / "npu"


def test_npu_smi_info_table() -> None:
    parsed = parse_npu_smi_info((FIX / "npu_smi_info.txt").read_text())
    assert parsed["version"] == "24.1.rc2"
    assert [(d["npu"], d["chip"], d["name"]) for d in parsed["devices"]] == [(0, 0, "910B3"), (1, 0, "910B3")]
    second = parsed["devices"][1]
    assert second["health"] == "OK" and second["bus_id"] == "0000:C2:00.0"
    assert second["power_w"] == 92.3 and second["temperature_c"] == 36
    assert second["aicore_pct"] == 12 and second["hbm_mb"] == [59351, 65536]  # "59351/ 65536": no space


def test_process_table_is_not_read_as_devices() -> None:
    text = (FIX / "npu_smi_info.txt").read_text()
    assert len(parse_npu_smi_info(text)["devices"]) == 2


def test_npu_smi_info_of_nothing() -> None:
    assert parse_npu_smi_info("") == {"version": None, "devices": []}
    assert parse_npu_smi_info("dcmi module initialize failed. ret is -8005") == {"version": None, "devices": []}


def test_common_fields_give_clocks_the_throttle_check_reads() -> None:
    fields = parse_colon_fields((FIX / "npu_smi_common.txt").read_text())
    assert fields["Aicore Count"] == "20"
    clocks = clocks_from_common(fields)
    assert clocks == {"sm_max_mhz": 1800.0, "sm_mhz": 1650.0, "temperature_c": 36.0}
    assert throttled([clocks, {**clocks, "sm_mhz": 1000.0}])  # 1000 < 0.75 * 1650


def test_cann_version_from_toolkit_info(tmp_path: Path) -> None:
    assert cann_version_from_files([tmp_path / "missing", FIX / "toolkit"]) == "8.0.RC3"
    flat = tmp_path / "latest"
    flat.mkdir()
    (flat / "ascend_toolkit_install.info").write_text("package_name=Ascend-cann-toolkit\nversion=8.1.RC1\n")
    assert cann_version_from_files([flat]) == "8.1.RC1"
    assert cann_version_from_files([tmp_path / "missing"]) is None


def test_driver_version_file(tmp_path: Path) -> None:
    assert driver_version_from_file(FIX / "driver" / "version.info") == "24.1.rc2"
    assert driver_version_from_file(tmp_path / "nope.info") is None
    assert parse_key_values("# comment\na = 1\nb=x=y\n") == {"a": "1", "b": "x=y"}


def test_unavailable_without_torch_npu_says_why() -> None:
    ok, why = NpuDevice.available()
    if not ok:
        assert "torch_npu" in why or "NPU" in why
