"""Every device kind present on this machine honours the Device interface (absent ones are skipped)."""
from __future__ import annotations

import pytest

from harness.measure.devices import KINDS, device_class, make_device

from device_contract import CHECKS


@pytest.fixture(scope="module", params=KINDS)
def device(request):
    ok, why = device_class(request.param).available()
    if not ok:
        pytest.skip(f"{request.param}: {why}")
    dev = make_device(request.param)
    dev.setup()
    return dev


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_contract(device, check) -> None:
    check(device)


@pytest.mark.parametrize("kind", KINDS)
def test_available_says_why_not(kind: str) -> None:
    ok, why = device_class(kind).available()
    assert isinstance(ok, bool) and isinstance(why, str)
    assert ok or why, f"{kind} is unavailable but gives no reason"
