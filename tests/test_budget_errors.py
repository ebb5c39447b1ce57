"""Budget-file errors in pagelab's words (issue 33, point 8): a limit with a unit names the
number to write, an unknown key or metric names the closest valid one, a device in the
wrong case is suggested in the right one; every face (the exception, ``pagelab check``'s
one line) says the same. The API and the ApiRunner: tests/service/test_runner_vocabulary.py;
the pytest plugin: tests/test_plugin.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pagelab import InvalidInputError, budgets
from pagelab.cli import main
from pagelab.models import Device

PAGE_KEYS = "preset, budgets, devices, locations, connections, config, runs, level, url"
METRIC_SPELLINGS = (
    "cumulative_layout_shift (cls), first_contentful_paint (fcp), time_to_interactive (tti), "
    "largest_contentful_paint (lcp), server_response_time (ttfb), speed_index (si), "
    "total_blocking_time (tbt), performance_score (score), interaction_to_next_paint (inp), "
    "user_timing:<mark or measure>"
)
DEVICES = ", ".join(Device)


def _refusal(data: Any) -> str:
    with pytest.raises(InvalidInputError) as info:
        budgets.parse_budgets(data)
    return str(info.value)


def test_a_limit_with_a_unit_and_a_misspelt_key_are_named_in_plain_words() -> None:
    # The file: before, four pydantic lines (one per member of the limit's union,
    # then "Extra inputs are not permitted").
    message = _refusal({"pages": [{"url": "/", "device": "desktop",
                                   "budgets": {"largest_contentful_paint": "2.5s"}}]})
    assert message == (
        "budget file: pages[0].budgets.largest_contentful_paint: write milliseconds as a "
        "number (2500); pages[0]: unknown key 'device': did you mean 'devices'? "
        f"(valid: {PAGE_KEYS})"
    )


@pytest.mark.parametrize(
    ("limit", "where", "number"),
    [
        ("2500ms", "", "2500"),
        ("2.5 s", "", "2500"),
        ("0.8S", "", "800"),
        ({"limit": "1.2s", "level": "warn"}, ".limit", "1200"),
    ],
)
def test_units_are_refused_naming_the_milliseconds(limit: object, where: str,
                                                   number: str) -> None:
    message = _refusal({"budgets": {"lcp": limit}})
    assert message == f"budget file: budgets.lcp{where}: write milliseconds as a number ({number})"


def test_a_number_in_a_string_is_still_a_number() -> None:
    [check] = budgets.parse_budgets({"budgets": {"lcp": "2500"}, "pages": [{"url": "/"}]}).checks()
    assert check.limit == 2500


def test_a_limit_of_neither_shape_is_one_error_not_one_per_shape() -> None:
    message = _refusal({"budgets": {"cumulative_layout_shift": [0.1]}})
    assert message == ("budget file: budgets.cumulative_layout_shift: write a number, or a "
                       "mapping with limit (and level, aggregation)")
    message = _refusal({"budgets": {"lcp": {"limit": 2500, "levle": "warn"}}})
    assert message == ("budget file: budgets.lcp: unknown key 'levle': did you mean 'level'? "
                       "(valid: limit, level, aggregation)")


def test_an_unknown_metric_is_named_once_with_every_spelling() -> None:
    assert _refusal({"budgets": {"lcpp": 2500}}) == (
        f"budget file: budgets: unknown metric 'lcpp': did you mean 'lcp'? "
        f"(valid: {METRIC_SPELLINGS})"
    )
    message = _refusal({"pages": [{"url": "/", "budgets": {"scroe": 90}}]})
    assert message.startswith(
        "budget file: pages[0].budgets: unknown metric 'scroe': did you mean 'score'?")
    # The unmeasured metric keeps its own reason, said once.
    assert _refusal({"budgets": {"first_meaningful_paint": 2000}}) == (
        "budget file: budgets: first_meaningful_paint: Lighthouse removed First Meaningful "
        "Paint in 12.1 and the engine does not measure it; budget largest_contentful_paint "
        "instead"
    )
    # Limits given in Python (the pytest marker's) use the same words.
    with pytest.raises(InvalidInputError) as info:
        budgets.checks_from_mapping({"lcp_ms": 2500}, where="@budget")
    assert str(info.value) == (f"@budget: unknown metric 'lcp_ms': did you mean 'lcp'? "
                               f"(valid: {METRIC_SPELLINGS})")


def test_a_device_in_the_wrong_case_is_suggested_in_the_right_one() -> None:
    assert _refusal({"devices": ["Desktop"]}) == (
        f"budget file: devices[0]: unknown 'Desktop': did you mean 'desktop'? (valid: {DEVICES})"
    )
    assert _refusal({"pages": [{"url": "/", "devices": ["mobile", "iphone-11"]}]}) == (
        f"budget file: pages[0].devices[1]: unknown 'iphone-11': did you mean 'phone11'? "
        f"(valid: {DEVICES})"
    )
    assert _refusal({"pages": [], "budgts": {}}).startswith(
        "budget file: unknown key 'budgts': did you mean 'budgets'? (valid: preset, budgets,")


def test_lighthouse_ci_form_factor_is_suggested_too() -> None:
    with pytest.raises(InvalidInputError) as info:
        budgets.parse_budgets({"ci": {"collect": {"settings": {"formFactor": "Desktop"}},
                                      "assert": {"assertions": {}}}})
    assert str(info.value).endswith(
        "ci.collect.settings.formFactor: unknown 'Desktop': did you mean 'desktop'? "
        "(valid: mobile, desktop)")


def test_the_cli_says_it_in_one_line_as_the_exception(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "budgets.yaml"
    file.write_text("pages:\n  - url: /fast\n    device: desktop\n"
                    "    budgets: {largest_contentful_paint: 2.5s}\n")
    with pytest.raises(InvalidInputError) as info:
        budgets.load_budgets(file)
    assert str(info.value).startswith(
        f"{file}: pages[0].budgets.largest_contentful_paint: write milliseconds as a number "
        "(2500); pages[0]: unknown key 'device': did you mean 'devices'?")
    assert main(["check", str(file), "--replay", str(tmp_path / "none.csv")]) == 2
    assert capsys.readouterr().err == f"pagelab: error: {info.value}\n"


def test_limits_given_in_python_use_the_same_words() -> None:
    # The pytest marker's limits (checks_from_mapping), as a budget file's.
    for limit, words in (("2.5s", "write milliseconds as a number (2500)"),
                         ([2500], "write a number, or a mapping with limit (and level, "
                                  "aggregation)")):
        with pytest.raises(InvalidInputError) as info:
            budgets.checks_from_mapping({"lcp": limit}, where="@budget")
        assert str(info.value) == f"@budget: largest_contentful_paint: {words}"
