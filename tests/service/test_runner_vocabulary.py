"""Both runners speak one input vocabulary: same signatures, same readings, same errors."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from pathlib import Path

import pytest
from live_server import LiveServer, ServerProcess

import pagelab
from pagelab import ApiRunner, BadRequestError, InvalidInputError, LocalRunner, Runner
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


def test_a_bad_device_is_refused_in_the_same_words_on_every_face(tmp_path: Path) -> None:
    # Issue 33: a bad device got one message from the LocalRunner and another through the
    # ApiRunner, and "Desktop" no hint of "desktop". A real `pagelab serve` on loopback.
    serve = ServerProcess(tmp_path / "api", tmp_path / "serve.log").start()
    try:
        with LocalRunner(tmp_path / "local") as local, \
                ApiRunner(serve.base_url, serve.key()) as api:
            for device in ("Desktop", "deskop"):
                words = (f"unknown {device!r}: did you mean 'desktop'? "
                         f"(valid: {', '.join(Device)})")
                for runner in (local, api):
                    with pytest.raises(InvalidInputError) as info:
                        runner.lighthouse("https://a.test/", device=device)
                    assert str(info.value) == f"device: {words}"
                    with pytest.raises(InvalidInputError) as info:
                        pagelab.measure("https://a.test/", devices=[device], runner=runner,
                                        progress=False)
                    assert str(info.value) == f"devices[0]: {words}"
                    with pytest.raises(InvalidInputError) as info:
                        runner.batch(["https://a.test/"], [device], ["us"])
                    assert str(info.value) == (
                        f"devices: no valid device id in the list (devices[0]: {words})")
                # The server's own check (past the ApiRunner's): its error body.
                with pytest.raises(BadRequestError) as refused:
                    api.client.create_test("https://a.test/", device, "us", None)
                assert (refused.value.code, refused.value.message) == (
                    "invalid_request", f"device: {words}")
                with pytest.raises(BadRequestError) as refused:
                    api.client.create_batch(["https://a.test/"], [device], ["us"],
                                            "multiple-devices", None)
                assert refused.value.message == (
                    f"devices: no valid device id in the list (devices[0]: {words})")
    finally:
        serve.stop()
