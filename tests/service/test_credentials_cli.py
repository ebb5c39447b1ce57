"""Database and broker passwords never on a command line, never echoed (issue 34, point 4).

Every local user, Chromium's sandbox user included, reads a process's arguments in
``/proc/PID/cmdline``. A URL with a password is refused there, with a message naming the
environment variable to use instead; given that way (or the password in libpq's
``$PGPASSWORD`` / ``~/.pgpass``), the server's command line holds no password. Real child
processes, a real PostgreSQL cluster."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import ServerProcess, create_key, run_cli

from pagelab._url_secrets import redact_url, url_has_password

PASSWORD = f"pw-{secrets.token_hex(8)}"
DATABASE = f"postgresql://pagelab:{PASSWORD}@127.0.0.1:9/pagelab"
BROKER = f"redis://:{PASSWORD}@127.0.0.1:9/0"


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


@pytest.mark.parametrize(("argv", "variable"), [
    (["serve", "--database", DATABASE], "PAGELAB_DATABASE_URL"),
    (["serve", "--broker", BROKER], "PAGELAB_BROKER_URL"),
    (["worker", "--broker", BROKER], "PAGELAB_BROKER_URL"),
    (["workers", "--broker", BROKER], "PAGELAB_BROKER_URL"),
    (["keys", "list", "--database", DATABASE], "PAGELAB_DATABASE_URL"),
    (["worker-key", "list", "--database", DATABASE], "PAGELAB_DATABASE_URL"),
    (["store", "migrate", "--from", "sqlite:///tmp/none", "--to", DATABASE],
     "PAGELAB_DATABASE_URL"),
    (["serve", "--database", "postgresql://pagelab@127.0.0.1:9/pagelab?password=" + PASSWORD],
     "PAGELAB_DATABASE_URL"),
], ids=["serve-database", "serve-broker", "worker", "workers", "keys", "worker-key",
        "store-migrate", "query-password"])
def test_a_password_on_the_command_line_is_refused_naming_the_variable(
    argv: list[str], variable: str
) -> None:
    done = run_cli(*argv)
    assert done.returncode == 2
    assert PASSWORD not in done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"pagelab: error: argument {argv[-2]}: a password on the command "
                           "line is visible to every local user")
    assert f"${variable}" in line


@pytest.mark.parametrize("argv", [
    ["serve", "--databse", DATABASE],  # a typo: argparse echoed every unknown word
    ["serve", f"--databse={DATABASE}"],
    ["serve", "--port", DATABASE],  # an invalid value: argparse quoted it
    ["worker", "--bogus", BROKER],
], ids=["unknown-flag", "unknown-flag-inline", "invalid-value", "worker-unknown-flag"])
def test_a_mistyped_option_does_not_echo_the_password(argv: list[str]) -> None:
    done = run_cli(*argv)
    assert done.returncode == 2
    assert PASSWORD not in done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("pagelab: error: ")
    assert argv[1].partition("=")[0] in line  # the option is still named


@pytest.mark.parametrize(("command", "variable", "value"), [
    (["serve", "--no-worker"], "PAGELAB_BROKER_URL", f"http://:{PASSWORD}@127.0.0.1:9/0"),
    (["keys", "list"], "PAGELAB_DATABASE_URL", f"mysql://pagelab:{PASSWORD}@127.0.0.1/x"),
    (["keys", "list"], "PAGELAB_DATABASE_URL", DATABASE),  # nobody listens: cannot connect
], ids=["bad-broker-scheme", "bad-database-scheme", "database-unreachable"])
def test_an_error_about_a_url_from_the_environment_hides_its_password(
    tmp_path: Path, command: list[str], variable: str, value: str
) -> None:
    done = run_cli(*command, "--data-dir", str(tmp_path / "data"), **{variable: value})
    assert done.returncode == 2
    assert PASSWORD not in done.stdout + done.stderr
    assert "***" in done.stderr


@pytest.mark.parametrize("way", ["url-in-environment", "password-in-PGPASSWORD"])
def test_a_team_store_server_keeps_its_password_off_its_command_line_and_log(
    tmp_path: Path, postgres: Any, way: str
) -> None:
    database = str(postgres.new_database())
    secret = postgres.password
    assert secret in database
    if way == "url-in-environment":
        server = ServerProcess(tmp_path / "data", tmp_path / "serve.log", "--no-worker",
                               database=database)
    else:  # libpq reads the password itself: the URL on the command line has none
        server = ServerProcess(tmp_path / "data", tmp_path / "serve.log", "--no-worker",
                               "--database", database.replace(f":{secret}@", "@"),
                               env={"PGPASSWORD": secret})
    server.start()
    try:
        assert server.process is not None
        cmdline = _cmdline(server.process.pid)
        key = create_key(tmp_path / "data", database=database)
        credits = httpx.get(f"{server.base_url}/v1/account/credits",
                            headers={"X-API-KEY": key}, timeout=30)
    finally:
        server.stop()
    assert "pagelab serve" in cmdline.replace("-m pagelab", "pagelab")
    assert secret not in cmdline
    assert credits.status_code == 200  # the server really is on that database
    assert secret not in (tmp_path / "serve.log").read_text()


@pytest.mark.parametrize(("url", "has_password", "redacted"), [
    ("postgresql://u:pw@h:5432/db", True, "postgresql://u:***@h:5432/db"),
    ("postgresql://u:p/w@h/db", True, "postgresql://u:***@h/db"),
    ("postgresql://u:p@ss@h/db", True, "postgresql://u:***@h/db"),
    ("redis://:pw@h:6379/0", True, "redis://:***@h:6379/0"),
    ("postgresql://u@h/db?sslmode=require&password=pw", True,
     "postgresql://u@h/db?sslmode=require&password=***"),
    ("postgresql://u@h/db", False, "postgresql://u@h/db"),
    ("postgresql://u:@h/db", False, "postgresql://u:@h/db"),
    ("redis://h:6379/0", False, "redis://h:6379/0"),
    ("sqlite:///var/lib/pagelab", False, "sqlite:///var/lib/pagelab"),
])
def test_the_password_of_a_url_is_found_and_hidden(
    url: str, has_password: bool, redacted: str
) -> None:
    assert url_has_password(url) is has_password
    assert redact_url(url) == redacted
    assert redact_url(f"unrecognized arguments: --x {url} y") == (
        f"unrecognized arguments: --x {redacted} y")
