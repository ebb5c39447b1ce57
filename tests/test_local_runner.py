"""LocalRunner input handling and history reads (no engine run needed)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pagelab import InvalidInputError, LocalRunner, NotFoundError
from pagelab.models import Device, LighthouseConfig, Location
from pagelab.store import create_test, transaction


@pytest.fixture
def runner() -> LocalRunner:
    return LocalRunner()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"url": "not a url"}, "url"),
        ({"url": "https://a.test/", "device": "nokia"}, "device"),
        ({"url": "https://a.test/", "location": "mars"}, "location"),
        ({"url": "https://a.test/", "config": {"blacklist": ["*x*"] * 11}}, "config.blacklist"),
        ({"url": "https://a.test/", "config": {"http_version": "3"}}, "config.http_version"),
    ],
)
def test_bad_input_names_the_field(runner: LocalRunner, kwargs: dict[str, object],
                                   field: str) -> None:
    with pytest.raises(InvalidInputError, match=f"^{field}: "):
        runner.lighthouse(**kwargs)  # type: ignore[arg-type]
    assert runner.list() == []  # nothing was stored


def test_bad_batch_is_refused_before_anything_is_stored(runner: LocalRunner) -> None:
    with pytest.raises(InvalidInputError, match=r"^urls: "):
        runner.batch(["nope"], ["mobile"], ["us"], "multiple-urls")
    assert runner.list() == []


def test_unknown_ids_raise_not_found(runner: LocalRunner) -> None:
    for bad in ("lt_unknown", "lbt_unknown", "x" * 6000):
        with pytest.raises(NotFoundError):
            runner.get(bad)


def test_list_accepts_datetimes_and_epoch_ms(runner: LocalRunner) -> None:
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    with runner.store.connection() as conn, transaction(conn):
        for offset in (3000, 2000, 1000):
            create_test(conn, url="https://a.test/", device=Device.MOBILE, location=Location.US,
                        config=LighthouseConfig(), retention=runner.store.retention,
                        created_at=now_ms - offset)
    assert len(runner.list()) == 3
    assert len(runner.list(created_at_gt=now_ms - 2000)) == 1
    cutoff = datetime.fromtimestamp((now_ms - 2000) / 1000, tz=UTC)
    assert len(runner.list(created_at_gte=cutoff)) == 2
    assert len(runner.list(created_at_lt=cutoff)) == 1
    assert [r.created_at for r in runner.list()] == sorted(
        (r.created_at for r in runner.list()), reverse=True
    )
    with pytest.raises(InvalidInputError, match="per_page"):
        runner.list(per_page=101)
    with pytest.raises(InvalidInputError, match="created_at_gt"):
        runner.list(created_at_gt="yesterday")  # type: ignore[arg-type]
