"""The generated reference pages agree with the code: every ``PAGELAB_*`` variable the code
reads is in the configuration table, every error-code constant is on the error-code page with
the right ``engine_failure``, every CLI option is in the CLI reference."""

from __future__ import annotations

import argparse
import re

import pytest

from docs_reference import REPO, load
from pagelab._settings_env import ENVIRONMENT
from pagelab.cli._main import build_parser
from pagelab.models import ENGINE_FAILURE_CODES, LighthouseError

reference = load()

#: Where the code reads its variables: the packages and the Node driver they start.
CODE_FILES = sorted(
    path
    for root in (REPO / "src", REPO / "pytest_plugin")
    for path in root.rglob("*")
    if path.suffix in {".py", ".mjs", ".js"} and path.name != "_settings_env.py"
    and "node_modules" not in path.parts
)


def variables_in_code() -> set[str]:
    found: set[str] = set()
    for path in CODE_FILES:
        found |= set(re.findall(r"PAGELAB_[A-Z][A-Z0-9_]*", path.read_text(encoding="utf-8")))
    return found


def test_the_table_lists_every_variable_the_code_reads() -> None:
    table = {v.name for v in ENVIRONMENT}
    in_code = variables_in_code()
    assert in_code - table == set(), "add these to pagelab._settings_env.ENVIRONMENT"
    assert table - in_code == set(), "the code no longer reads these: remove them"


def test_the_table_is_sorted_and_complete() -> None:
    names = [v.name for v in ENVIRONMENT]
    assert names == sorted(names)
    assert all(v.default and v.meaning and v.used_by for v in ENVIRONMENT)


def test_the_configuration_page_has_every_variable() -> None:
    page = reference.configuration_page()
    for variable in ENVIRONMENT:
        assert f"| `{variable.name}` |" in page


def _rows(page: str, section: str) -> dict[str, list[str]]:
    """The table rows of one section of a generated page, by first cell."""
    part = page.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in part.splitlines():
        if line.startswith("| `") or re.match(r"\| \d{3} \|", line):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells
    return rows


def test_the_error_code_page_has_every_engine_failure_code_marked() -> None:
    rows = _rows(reference.error_codes_page(), "pagelab's codes")
    assert set(ENGINE_FAILURE_CODES) <= set(rows)
    for code, cells in rows.items():
        expected = LighthouseError(code=code, message="").is_engine_failure
        assert cells[2] == ("`true`" if expected else "`false`"), code
        refunded = cells[3]
        if expected:
            assert refunded == "yes", code


def test_the_error_code_page_has_every_constant() -> None:
    from pagelab.engine._mapping import NETWORK_ERRORS
    from pagelab.engine._ttfb import TTFB_ERROR_CODES
    from pagelab.fleet._dispatcher import NO_WORKER
    from pagelab.models._flow_reports import FLOW_ACTION_FAILED
    from pagelab.runners._local import INTERRUPTED
    from pagelab.service._errors import ERROR_CODES
    from pagelab.store._accounts import ACCOUNT_REVOKED

    page = reference.error_codes_page()
    run_rows = _rows(page, "pagelab's codes")
    for code in (FLOW_ACTION_FAILED, INTERRUPTED, ACCOUNT_REVOKED, NO_WORKER,
                 "URL_PATTERNS_TOO_SLOW"):
        assert code in run_rows
    assert set(NETWORK_ERRORS) <= set(_rows(page, "Lighthouse's codes"))
    assert {*TTFB_ERROR_CODES, NO_WORKER} <= set(_rows(page, "TTFB codes"))
    http = _rows(page, "HTTP API error codes")
    assert {str(status) for status in ERROR_CODES} == set(http)
    for status, (code, _description) in ERROR_CODES.items():
        assert http[str(status)][1] == f"`{code}`"


def test_a_code_without_a_note_fails_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "run_codes", lambda: ["ENGINE_CRASHED", "BRAND_NEW"])
    with pytest.raises(LookupError, match="BRAND_NEW"):
        reference.error_codes_page()


def test_the_cli_page_has_every_command_and_option() -> None:
    page = reference.cli_page()
    for prog, parser, _summary in reference._commands(build_parser(), "pagelab"):
        section = page.split(f"## `{prog}`\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            for flag in action.option_strings or [action.dest]:
                assert f"`{flag}`" in section, (prog, flag)


def test_cli_defaults_are_shown() -> None:
    serve = reference.cli_page().split("## `pagelab serve`\n", 1)[1].split("\n## ", 1)[0]
    assert "| `--port` | `8000` | port (default 8000) |" in serve
    assert "| `--no-worker` | off |" in serve


def test_the_http_page_has_every_operation_of_the_openapi_document() -> None:
    spec = reference.openapi_document()
    page = reference.http_page()
    assert f"API version `{spec['info']['version']}`" in page
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            section = page.split(f"## `{method.upper()} {path}`\n", 1)[1].split("\n## ", 1)[0]
            for status in operation["responses"]:
                assert f"| {status} |" in section, (method, path, status)
            for parameter in operation.get("parameters", []):
                assert f"| `{parameter['name']}` |" in section, (method, path, parameter)
