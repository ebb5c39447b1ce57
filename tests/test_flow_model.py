"""The user-flow model: building, loading YAML / JSON, and refusing flows that cannot run."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import pagelab
from pagelab import Flow, InvalidFlowError

SHOP = "http://127.0.0.1:8080/shop"

YAML = f"""
name: add to cart
steps:
  - navigate: {SHOP}
  - timespan: add
    actions: [{{click: "#add"}}, {{wait_for: "#cart-count"}}]
  - snapshot: cart open
"""


def built() -> Flow:
    return (Flow("add to cart")
            .navigate(SHOP)
            .start_timespan("add").click("#add").wait_for("#cart-count").end_timespan()
            .snapshot("cart open"))


def test_the_builder_and_the_yaml_give_the_same_flow(tmp_path: Path) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(YAML)
    assert Flow.from_file(path) == built()
    assert pagelab.Flow is Flow
    assert built().step_names == [SHOP, "add", "cart open"]


def test_json_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(built().to_data()))
    assert Flow.from_file(path) == built()
    assert built().to_data()["steps"][1] == {
        "timespan": "add", "actions": [{"click": "#add"}, {"wait_for": "#cart-count"}]}


def test_builder_methods_return_new_flows() -> None:
    first = Flow("f").navigate(SHOP)
    second = first.click("#add")
    assert len(first.steps) == 1
    assert len(second.steps) == 2
    with pytest.raises(ValidationError, match="frozen"):
        first.name = "g"  # type: ignore[misc]


def test_every_action_in_yaml_form() -> None:
    flow = Flow.from_data({"name": "all", "steps": [
        {"navigate": SHOP, "name": "shop"},
        {"click": "#a"},
        {"type": {"selector": "#user", "text": "ann"}},
        {"type": {"selector": "#pass", "text": "hunter2", "secret": True}},
        {"press": "Enter"},
        {"select": {"selector": "#size", "value": "m"}},
        {"scroll": 400},
        {"scroll": "#footer"},
        {"wait_for": {"selector": "#done", "timeout_ms": 2000}},
        {"wait": 50},
    ]})
    assert flow.step_names == ["shop"]
    assert [a.keyword for a in flow.actions()] == [
        "click", "type", "type", "press", "select", "scroll", "scroll", "wait_for", "wait"]
    assert flow.secrets == ["hunter2"]
    stored = json.dumps(flow.to_data())
    assert "hunter2" not in stored
    assert "ann" in stored
    assert Flow.from_data(flow.to_data()).steps[3].to_data() == {
        "type": {"selector": "#pass", "text": "***", "secret": True}}


def test_secret_text_shows_in_no_printed_form(caplog: pytest.LogCaptureFixture) -> None:
    # Issue 33, point 6 and issue 34, point 2: repr and to_data masked it, print(flow),
    # f-strings and logging (str) showed it.
    flow = (Flow("sign in").navigate(SHOP).type("#pass", "hunter2", secret=True)
            .start_timespan("t").type("#pin", "s3cr3t-pin", secret=True).type("#user", "ann")
            .end_timespan())
    typed = flow.steps[1]
    with caplog.at_level(logging.INFO):
        logging.getLogger("test").info("running %s (%r)", flow, typed)
    shown = [str(flow), f"{flow}", repr(flow), str(typed), f"{typed}", repr(typed),
             repr(flow.steps), str(flow.steps[2]), caplog.text]
    for text in shown:
        assert "hunter2" not in text, text
        assert "s3cr3t-pin" not in text, text
    assert "text='***'" in str(typed)
    assert "text='ann'" in str(flow)  # only secret text is hidden
    assert flow.secrets == ["hunter2", "s3cr3t-pin"]  # the engine still types and scrubs it


@pytest.mark.parametrize(("steps", "expected"), [
    ([{"click": "#add"}], "flow 'bad', step 1 (click '#add'): an action outside a page"),
    ([{"snapshot": "s"}], "step 1 (snapshot 's'): a snapshot step needs a page"),
    ([{"navigate": SHOP}, {"timespan": "add", "action": []}],
     "step 2 (timespan): unknown key 'action' (a timespan step takes actions)"),
    ([{"navigate": SHOP}, {"clik": "#a"}], "step 2: expected one of navigate"),
    ([{"navigate": SHOP}, {"timespan": "add", "actions": [{"click": 5}]}],
     "step 2 (timespan 'add'), action 1 (click): selector: Input should be a valid string"),
    ([{"navigate": SHOP}, {"click": ["#a"]}], "step 2 (click): selector"),
    ([{"navigate": SHOP}, {"type": {"selector": "#a", "txt": "x"}}],
     "step 2 (type): unknown key 'txt' (takes selector, text, secret)"),
    ([{"navigate": SHOP}, {"type": "#a"}], "step 2 (type): takes a mapping of selector, text"),
    ([{"navigate": "ftp://x"}], "step 1 (navigate 'ftp://x'): url:"),
    ([{"navigate": SHOP}, {"wait": -1}], "step 2 (wait): ms:"),
    ([{"navigate": SHOP}, {"wait_for": {"selector": "#a", "timeout_ms": 0}}],
     "step 2 (wait_for): timeout_ms:"),
    ([{"navigate": SHOP}, "click"], "step 2: a step is a mapping"),
    ([{"navigate": SHOP}, {"timespan": "t", "actions": [{"navigate": SHOP}]}],
     "action 1: expected one of click"),
])
def test_bad_flows_are_refused_naming_the_step(steps: list[Any], expected: str) -> None:
    with pytest.raises(InvalidFlowError) as info:
        Flow.from_data({"name": "bad", "steps": steps})
    assert expected in str(info.value)
    assert isinstance(info.value, pagelab.InvalidInputError)


def test_builder_refusals() -> None:
    with pytest.raises(InvalidFlowError, match=r"step 1 \(click '#a'\): an action outside a page"):
        Flow("f").click("#a")
    with pytest.raises(InvalidFlowError, match=r"action 1 \(click\): selector"):
        Flow("f").navigate(SHOP).start_timespan("t").click(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidFlowError, match=r"timespan 't'.*not closed before snapshot"):
        Flow("f").navigate(SHOP).start_timespan("t").snapshot("s")
    with pytest.raises(InvalidFlowError, match=r"end_timespan\(\) without start_timespan"):
        Flow("f").navigate(SHOP).end_timespan()
    with pytest.raises(InvalidFlowError, match="a flow needs a name"):
        Flow("")


def test_an_unclosed_timespan_is_refused_before_running() -> None:
    flow = Flow("f").navigate(SHOP).start_timespan("add").click("#add")
    unclosed = r"step 2 \(timespan 'add'\): the timespan is not closed"
    with pytest.raises(InvalidFlowError, match=unclosed):
        flow.check()
    assert flow.end_timespan().check().steps[1].actions[0].selector == "#add"  # type: ignore[union-attr]
    with pytest.raises(InvalidFlowError, match="no steps"):
        Flow("empty").check()


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("f.yaml", "name: x\nsteps: [\n", "not valid YAML"),
    ("f.json", "{", "not valid JSON"),
    ("f.txt", "", "ends in .yaml, .yml or .json"),
    ("f.yaml", "- navigate: x", "a flow is a mapping"),
    ("f.yaml", "name: x\nstep: []", "unknown key 'step'"),
    ("f.yaml", "steps: []", "has no name"),
])
def test_bad_files(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InvalidFlowError, match=expected):
        Flow.from_file(path)
    with pytest.raises(InvalidFlowError, match="cannot read"):
        Flow.from_file(tmp_path / "missing.yaml")
