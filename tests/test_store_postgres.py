"""The team store on a real PostgreSQL: the test cluster, the dialect layer, migrations."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from pagelab.store import find_postgres_bin, install_postgresql


def test_an_installed_postgresql_is_found_without_apt() -> None:
    # `make test` ran `pagelab setup --database`, so Debian's postgresql is installed here.
    found = find_postgres_bin()
    assert found is not None, "run `pagelab setup --database` first"
    assert install_postgresql(log=False) == found
    assert (found / "initdb").exists()


def test_the_test_cluster_listens_on_loopback_only_and_needs_its_password(postgres: Any) -> None:
    url = postgres.new_database()
    with psycopg.connect(url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("127.0.0.1",)
        assert conn.execute("SHOW unix_socket_directories").fetchone() == ("",)
    wrong = url.replace(postgres.password, "not-the-password")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong).close()
