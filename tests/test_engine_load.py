"""The machine-load reading a report's environment carries (pagelab.engine._load.machine_load)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cpu_hogs import cpu_hogs
from pagelab.engine import _load
from pagelab.engine._load import cpu_share, machine_load


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


def test_machine_load_reads_the_cpu_share() -> None:
    share = machine_load().cpu_share
    assert share is not None
    assert 0 < share <= 1


def _best_share(probes: int) -> float:
    """The best of several probes: another task's burst does not fill them all."""
    return max(cpu_share() for _ in range(probes))


def test_a_busy_process_per_core_lowers_the_cpu_share() -> None:
    # The probe at work: the share a busy task gets falls once another process keeps every
    # core busy (the case the load per CPU and the pressure miss: docs/decisions.md).
    cores = os.cpu_count() or 1
    free = _best_share(5)
    with cpu_hogs(cores):
        time.sleep(0.5)  # the hogs' interpreters started and spinning
        shared = _best_share(5)
        with cpu_hogs(cores):
            time.sleep(0.5)
            crowded = _best_share(5)
    print(f"CPU share: {free} free, {shared} with 1 hog per core, {crowded} with 2")
    assert shared < free
    assert crowded < free


def test_the_probe_stops_at_a_window_that_had_a_core_to_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Its pauses cost 0.16 s of every run with the lock held; on a machine with a core free
    # the first window already says all there is to say.
    def windows(shares: list[float]) -> tuple[float, int]:
        read = iter(shares)
        calls: list[float] = []
        monkeypatch.setattr(_load, "_busy_share", lambda seconds: calls.append(seconds)
                            or next(read))
        monkeypatch.setattr(_load.time, "sleep", lambda seconds: None)
        return _load.cpu_share(), len(calls)

    assert windows([0.98, 0.2, 0.2]) == (0.98, 1)
    assert windows([0.5, 0.62, 0.55]) == (0.62, 3)
    assert windows([0.4, 0.97, 0.1]) == (0.97, 2)
