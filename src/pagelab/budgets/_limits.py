"""Regression limits: how far a metric may move from its baseline before the gate looks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pagelab._exceptions import InvalidInputError
from pagelab.models import METRICS

from ._models import budget_metric

__all__ = ["RegressionLimit", "parse_regression_limits"]


@dataclass(frozen=True, slots=True)
class RegressionLimit:
    """How far a metric may regress: ``amount`` percent of the baseline when ``relative``,
    else ``amount`` in the metric's unit."""

    metric: str
    amount: float
    relative: bool

    def allowed(self, base: float) -> float:
        """The worst value that still passes, given the baseline value ``base``."""
        delta = abs(base) * self.amount / 100 if self.relative else self.amount
        return base + delta if METRICS[self.metric].lower_is_better else base - delta

    def __str__(self) -> str:
        amount = f"{self.amount:g}"
        return f"{self.metric}:{amount}%" if self.relative else f"{self.metric}:{amount}"


_LIMIT = re.compile(r"^\s*([A-Za-z_]+)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*(%?)\s*$")


def parse_regression_limits(text: str | Sequence[str]) -> dict[str, RegressionLimit]:
    """``largest_contentful_paint:10%,performance_score:5`` -> limits by metric."""
    parts = [p for chunk in ([text] if isinstance(text, str) else text)
             for p in chunk.split(",") if p.strip()]
    limits: dict[str, RegressionLimit] = {}
    for part in parts:
        match = _LIMIT.match(part)
        if match is None:
            raise InvalidInputError(
                f"regression limit {part.strip()!r}: expected METRIC:N% or METRIC:N, "
                "e.g. largest_contentful_paint:10%"
            )
        name = budget_metric(match.group(1), "regression limit").name
        limits[name] = RegressionLimit(name, float(match.group(2)), bool(match.group(3)))
    return limits
