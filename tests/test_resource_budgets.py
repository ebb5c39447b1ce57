"""Resource budgets on recorded real LHRs (tests/data): values from resource-summary, the
largest requests from network-requests, aggregation over runs, refusals named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pagelab import InvalidInputError
from pagelab.budgets import format_value
from pagelab.budgets._resources import evaluate_resources, largest_requests, resource_limits

DATA = Path(__file__).parent / "data"
HEAVY = json.loads((DATA / "lhr-all-heavy-desktop.json").read_text())
FAST = json.loads((DATA / "lhr-all-fast-mobile.json").read_text())
LHRS = {"heavy-1": HEAVY, "heavy-2": HEAVY, "fast-1": FAST}


def _frame() -> pd.DataFrame:
    rows: list[dict[str, Any]] = [
        {"id": test_id, "url": lhr["finalUrl"], "device": "desktop" if "heavy" in test_id
         else "mobile", "location": "us", "connection": None, "status": "success", "run": n}
        for n, (test_id, lhr) in enumerate(LHRS.items())]
    return pd.DataFrame(rows)


def test_limits_from_keywords() -> None:
    rest, limits = resource_limits({"largest_contentful_paint": 2500,
                                    "resource_size": {"image": 300_000, "script": {
                                        "limit": 50_000, "level": "warn"}},
                                    "third_party_count": 0})
    assert rest == {"largest_contentful_paint": 2500}
    assert [(x.metric, x.limit, x.level) for x in limits] == [
        ("resource_size:image", 300_000, None), ("resource_size:script", 50_000, "warn"),
        ("resource_count:third-party", 0, None)]
    for bad, named in (({"resource_size": {"scripts": 1}}, "unknown resource type 'scripts'"),
                       ({"resource_size": 5}, "takes a mapping of resource type"),
                       ({"resource_count": {"total": -1}}, "greater than or equal to 0")):
        with pytest.raises(InvalidInputError, match=named):
            resource_limits(bad)


def test_sizes_fail_naming_the_type_bytes_and_largest_requests() -> None:
    _, limits = resource_limits({"resource_size": {"image": 300_000, "total": 2_000_000},
                                 "resource_count": {"total": 3}})
    results = evaluate_resources(limits, _frame(), LHRS.__getitem__)
    by = {(r.url.rsplit("/", 1)[-1], r.metric): r for r in results}
    image = by["heavy", "resource_size:image"]
    assert not image.passed
    assert image.values == (1345417.0, 1345417.0)
    assert image.message.startswith("resource_size:image 1,345.4 KB > 300.0 KB (median of 2")
    assert "largest image: http://127.0.0.1:45421/static/hero.jpg (1,345.4 KB)" in image.message
    assert by["heavy", "resource_size:total"].passed
    assert not by["heavy", "resource_count:total"].passed  # 4 requests
    assert by["fast", "resource_size:image"].actual == 0
    assert format_value("resource_count:total", 4) == "4 requests"


def test_third_party_requests_are_those_outside_first_party_entities() -> None:
    assert largest_requests(HEAVY, "third-party") == []
    assert [url.rsplit("/", 1)[-1] for url, _ in largest_requests(HEAVY, "total", 2)] == [
        "hero.jpg", "heavy"]
