"""Measuring a matrix of cells for a check, with one retry of an engine failure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._errors import EngineFailure

if TYPE_CHECKING:
    import pandas as pd

    from pagelab import Runner

__all__ = ["measure_cells"]


def _run_matrix(
    runner: Runner,
    urls: Sequence[str],
    devices: Sequence[str],
    locations: Sequence[str],
    config: Mapping[str, Any] | None,
    runs: int,
) -> pd.DataFrame:
    from pagelab import measure

    return measure(
        list(urls), devices=list(devices), locations=list(locations), runs=runs,
        config=dict(config) if config is not None else None, runner=runner, progress=False,
    ).frame


def measure_cells(
    runner: Runner,
    urls: Sequence[str],
    devices: Sequence[str],
    locations: Sequence[str],
    config: Mapping[str, Any] | None,
    runs: int,
) -> pd.DataFrame:
    """``runs`` runs of every URL x device x location; a run the engine failed (crash,
    timeout) is measured once more, and a second engine failure raises ``EngineFailure``."""
    import pandas as pd

    frame = _run_matrix(runner, urls, devices, locations, config, runs)
    failed = frame.index[frame["engine_failure"].fillna(False).astype(bool)]
    retried: list[pd.DataFrame] = []
    for label in failed:
        row = frame.loc[label]
        url, device, location = str(row["url"]), str(row["device"]), str(row["location"])
        again = _run_matrix(runner, [url], [device], [location], config, 1)
        if bool(again["engine_failure"].fillna(False).iloc[0]):
            raise EngineFailure(
                f"the engine failed twice on {device}/{location} {url}: "
                f"{again['error_code'].iloc[0]} (not a budget miss; the page was not measured)"
            )
        again["run"] = pd.array([row["run"]], dtype="Int64")
        retried.append(again)
    if retried:
        frame = pd.concat([frame.drop(index=failed), *retried], ignore_index=True)
    return frame.sort_values("run", kind="stable").reset_index(drop=True)
