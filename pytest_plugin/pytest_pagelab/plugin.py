"""The pytest11 entry point ``pagelab``.

A placeholder until the budgets issue lands: it only declares the ``pagelab`` marker, so a
suite that already uses it runs clean.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "pagelab(budget): a performance budget checked by pytest-pagelab"
    )
