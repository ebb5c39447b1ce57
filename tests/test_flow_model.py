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
#: How messages place an action between the first and the second step.
AFTER = f"after step 1 (navigate {SHOP!r})"

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
    ([{"click": "#add"}],
     "flow 'bad', before step 1, action 1 (click '#add'): an action outside a page"),
    ([{"snapshot": "s"}], "step 1 (snapshot 's'): a snapshot step needs a page"),
    ([{"navigate": SHOP}, {"timespan": "add", "action": []}],
     "step 2 (timespan): unknown key 'action' (a timespan step takes actions)"),
    ([{"navigate": SHOP}, {"clik": "#a"}], f"{AFTER}, entry 1: expected one of navigate"),
    ([{"navigate": SHOP}, {"timespan": "add", "actions": [{"click": 5}]}],
     "step 2 (timespan 'add'), action 1 (click): selector: Input should be a valid string"),
    ([{"navigate": SHOP}, {"click": ["#a"]}], f"{AFTER}, action 1 (click): selector"),
    ([{"navigate": SHOP}, {"type": {"selector": "#a", "txt": "x"}}],
     "action 1 (type): unknown key 'txt' (takes selector, text, secret)"),
    ([{"navigate": SHOP}, {"type": "#a"}], "action 1 (type): takes a mapping of selector, text"),
    ([{"navigate": "ftp://x"}], "step 1 (navigate 'ftp://x'): url:"),
    ([{"navigate": SHOP}, {"click": "#a"}, {"wait": -1}], f"{AFTER}, action 2 (wait): ms:"),
    ([{"navigate": SHOP}, {"wait_for": {"selector": "#a", "timeout_ms": 0}}],
     "action 1 (wait_for): timeout_ms:"),
    ([{"navigate": SHOP}, "click"], f"{AFTER}, entry 1: a step is a mapping"),
    ([{"navigate": SHOP}, {"timespan": "t", "actions": [{"navigate": SHOP}]}],
     "action 1: expected one of click"),
])
def test_bad_flows_are_refused_naming_the_step(steps: list[Any], expected: str) -> None:
    with pytest.raises(InvalidFlowError) as info:
        Flow.from_data({"name": "bad", "steps": steps})
    assert expected in str(info.value)
    assert isinstance(info.value, pagelab.InvalidInputError)


def test_builder_refusals() -> None:
    with pytest.raises(InvalidFlowError,
                       match=r"before step 1, action 1 \(click '#a'\): an action outside a page"):
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


def sign_in() -> Flow:
    """Actions between steps: the sign-in timespan is the second measured step, and the
    fourth entry of ``steps``."""
    return (Flow("sign in")
            .navigate(SHOP, name="login")
            .type("#user", "ada").type("#password", "pw", secret=True)
            .start_timespan("sign in").click("#sign-in").wait_for("#members").end_timespan()
            .wait_for("#visits")
            .snapshot("members"))


def test_messages_number_the_measured_steps_as_the_tables_do() -> None:
    flow = sign_in()
    assert flow.step_names == ["login", "sign in", "members"]  # steps 1, 2, 3
    assert flow.where(4, 1) == "flow 'sign in', step 2 (timespan 'sign in'), action 1 " \
        "(click '#sign-in')"
    assert flow.where(6) == "flow 'sign in', step 3 (snapshot 'members')"
    assert flow.where(3) == f"flow 'sign in', after step 1 (navigate {SHOP!r}), action 2 " \
        "(type into '#password')"
    assert flow.where(5) == "flow 'sign in', after step 2 (timespan 'sign in'), action 1 " \
        "(wait_for '#visits')"
    with pytest.raises(InvalidFlowError,
                       match=r"^flow 'sign in', step 4 \(timespan 'more'\): the timespan"):
        flow.start_timespan("more").click("#x").check()


def test_the_engine_names_a_failed_action_by_the_same_numbering() -> None:
    from pagelab.engine._flows import failure_message
    from pagelab.engine._scrub import SecretScrubber

    flow = sign_in()
    secrets = SecretScrubber.of(["pw"])
    # The driver's record counts entries of flow.steps (item 4: the timespan).
    message, failed = failure_message({"item_index": 4, "action_index": 1,
                                       "message": "No element found"}, flow, secrets)
    assert message == "flow 'sign in', step 2 (timespan 'sign in'), action 1 " \
        "(click '#sign-in'): No element found"
    assert failed == "sign in"
    message, failed = failure_message({"item_index": 3, "action_index": None,
                                       "message": "No element found"}, flow, secrets)
    assert message.startswith("flow 'sign in', after step 1 (navigate")
    assert "action 2 (type into '#password'): No element found" in message
    assert failed == "type"


def test_every_step_has_a_metrics_object() -> None:
    from pagelab.engine._flows import flow_steps
    from pagelab.models import FlowStep, Metrics

    snapshot = {"lhr": {"gatherMode": "snapshot", "lighthouseVersion": "13.5.0",
                        "audits": {}, "categories": {}}, "name": "members"}
    steps = flow_steps({"steps": [snapshot]})
    assert steps[0].mode == "snapshot"
    assert steps[0].metrics == Metrics()
    # A loop over steps reads a metric of each; what the mode does not measure is None.
    assert [s.metrics.largest_contentful_paint for s in steps] == [None]
    # Reports written with null metrics read back with a Metrics object.
    old = FlowStep.model_validate({"index": 3, "name": "members", "mode": "snapshot",
                                   "metrics": None})
    assert old.metrics == Metrics()
