"""What made INP slow (issue 40, point 4), on the real engine: the demo shop's slow button
with a 300 ms and a 50 ms click handler, one flow run each.

The mapping itself is tested on recorded runs in ``tests/test_inp_attribution.py``.
"""

from __future__ import annotations

import pytest

import pagelab
from pagelab import Flow, LocalRunner
from pagelab.engine import Engine

pytestmark = pytest.mark.engine


def add_to_cart(demo_url: str, block_ms: int) -> Flow:
    return (Flow(f"{block_ms} ms")
            .navigate(f"{demo_url}/shop?block={block_ms}", name="shop")
            .start_timespan("add").click("#add-slow")
            .wait_for('#cart-count[data-count="1"]').end_timespan())


def test_the_slowest_interaction_names_the_button_and_its_processing_time(
    engine: Engine, demo_url: str
) -> None:
    flows = [add_to_cart(demo_url, 300), add_to_cart(demo_url, 50)]
    results = pagelab.measure(flows, runs=1, runner=LocalRunner(engine=engine),
                              progress=False)
    frame = results.frame
    assert (frame["status"] == "success").all(), frame["error_code"].dropna().tolist()
    add = frame[frame["step"] == "add"].set_index("flow")
    assert add["inp_target"].tolist() == ["body > main > p > button#add-slow"] * 2
    assert add["inp_event"].tolist() == ["click", "click"]
    assert add.at["300 ms", "inp_processing"] >= 250
    assert add.at["50 ms", "inp_processing"] < add.at["300 ms", "inp_processing"]
    for flow in ("300 ms", "50 ms"):
        assert add.at[flow, "inp_input_delay"] >= 0
        assert add.at[flow, "inp_presentation"] >= 0
    # The node label is the button's text, as Lighthouse's report shows it.
    (report,) = [r for r in results.flow_reports if r.flow == "300 ms"]
    interaction = report.step("add").interaction
    assert interaction is not None
    assert interaction.target_label == "Add to cart (slow)"
    # Navigation steps measure no interaction.
    assert frame.loc[frame["step"] == "shop", "inp_processing"].isna().all()
    print("inp_processing:", add["inp_processing"].to_dict())
