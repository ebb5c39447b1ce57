"""The machine-load reading a report's environment carries (pagelab.engine._load.machine_load)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pagelab.engine import _load
from pagelab.engine._load import machine_load


def test_machine_load_reads_the_kernel_figures() -> None:
    load = machine_load()
    assert load.cpu_count == os.cpu_count()
    assert load.load_average is not None
    assert load.load_average == pytest.approx(os.getloadavg()[0], abs=1.0)
    if Path("/proc/pressure/cpu").exists():
        assert load.cpu_pressure is not None
        assert 0 <= load.cpu_pressure <= 100


def test_cpu_pressure_is_psi_some_avg10(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pressure = tmp_path / "cpu"
    pressure.write_text(
        "some avg10=12.34 avg60=5.00 avg300=1.00 total=123456\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    )
    monkeypatch.setattr(_load, "_PRESSURE", pressure)
    assert machine_load().cpu_pressure == 12.34


@pytest.mark.parametrize("text", ["", "some total=1\n", "some avg10=x\n"])
def test_cpu_pressure_is_none_when_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    pressure = tmp_path / "cpu"
    pressure.write_text(text)
    monkeypatch.setattr(_load, "_PRESSURE", pressure)
    assert machine_load().cpu_pressure is None
    monkeypatch.setattr(_load, "_PRESSURE", tmp_path / "missing")
    assert machine_load().cpu_pressure is None
