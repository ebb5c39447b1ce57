"""Both runners speak one input vocabulary: same signatures, same readings, same errors."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime

import pytest
from live_server import LiveServer

import pagelab
from pagelab import ApiRunner, InvalidInputError, LocalRunner, Runner
from pagelab.models import Device, LighthouseConfig, Location, epoch_ms_or_none
from pagelab.store import Store, create_test, find_account_by_key, transaction

_METHODS = [
    name
    for name, member in inspect.getmembers(Runner)
    if (callable(member) and not name.startswith("_")) or name in ("__enter__", "__exit__")
]


def _parameters(function: object) -> list[tuple[str, object, object]]:
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


@pytest.mark.parametrize("method", _METHODS)
def test_runners_share_the_protocols_signatures(method: str) -> None:
    expected = _parameters(getattr(Runner, method))
    for implementation in (LocalRunner, ApiRunner):
        assert _parameters(getattr(implementation, method)) == expected, (
            f"{implementation.__name__}.{method}"
        )


def test_the_protocol_covers_closing() -> None:
    assert {"close", "__enter__", "__exit__", "lighthouse", "batch", "list"} <= set(_METHODS)


def test_epoch_numbers_are_read_by_magnitude() -> None:
    november_2023 = 1_700_000_000_000
    assert epoch_ms_or_none(1_700_000_000, "t") == november_2023  # seconds
    assert epoch_ms_or_none(1_700_000_000_000, "t") == november_2023  # milliseconds
    assert epoch_ms_or_none(1_700_000_000.5, "t") == november_2023 + 500
    assert epoch_ms_or_none(datetime(2023, 11, 14, 22, 13, 20), "t") == november_2023


def _seed(store: Store, account_id: str, times_ms: list[int]) -> None:
    with store.connection() as conn, transaction(conn):
        for created in times_ms:
            create_test(
                conn, url="https://a.test/", device=Device.MOBILE, location=Location.US,
                config=LighthouseConfig(), retention=store.retention,
                account_id=account_id, created_at=created,
            )


def test_list_reads_epoch_seconds_alike_on_both_runners(
    server: LiveServer, tmp_path: object
) -> None:
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    times = [now_ms - 3_600_000, now_ms - 60_000]  # an hour ago, a minute ago
    cutoff_seconds = (now_ms - 600_000) / 1000  # ten minutes ago, in seconds

    key = server.key()
    server_store = server.store
    with server_store.connection() as conn:
        account = find_account_by_key(conn, key)
    assert account is not None
    _seed(server_store, account.id, times)

    with LocalRunner(tmp_path / "local") as local:  # type: ignore[operator]
        _seed(local.store, "local", times)
        local_hits = local.list(created_at_gt=cutoff_seconds)
    with ApiRunner(server.base_url, key) as api:
        api_hits = api.list(created_at_gt=cutoff_seconds)
    assert len(local_hits) == len(api_hits) == 1


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda r: r.list(page=0), "page"),
        (lambda r: r.list(per_page=101), "per_page"),
        (lambda r: r.list(created_at_gt="yesterday"), "created_at_gt"),
        (lambda r: r.lighthouse("https://a.test/", config={"connection": "9g"}),
         "config.connection"),
        (lambda r: r.batch(["https://a.test/"], ["mobile"], ["us"], config={"video": "maybe"}),
         "config.video"),
    ],
)
def test_bad_input_is_the_same_error_on_both_runners(
    call: object, match: str, tmp_path: object
) -> None:
    # The ApiRunner points at a closed port: the error must come before any request.
    runners: list[Runner] = [
        LocalRunner(tmp_path / "local"),  # type: ignore[operator]
        ApiRunner("http://127.0.0.1:9", "key"),
    ]
    for runner in runners:
        with runner, pytest.raises(InvalidInputError, match=match):
            call(runner)  # type: ignore[operator]


def test_connect_returns_a_closable_runner() -> None:
    with pagelab.connect() as runner:
        assert isinstance(runner, Runner)
