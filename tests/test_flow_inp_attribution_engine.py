"""What made INP slow (issue 40, point 4), on the real engine: the demo shop's slow button
with a 300 ms and a 50 ms click handler, read from the session's 20 + 20 interleaved flow runs
(``shop_carts``, tests/conftest.py).

The mapping itself is tested on recorded runs in ``tests/test_inp_attribution.py``.
"""

from __future__ import annotations

import pytest

import pagelab

pytestmark = pytest.mark.engine


def test_the_slowest_interaction_names_the_button_and_its_processing_time(
    shop_carts: pagelab.Results
) -> None:
    frame = shop_carts.frame
    assert (frame["status"] == "success").all(), frame["error_code"].dropna().tolist()
    add = frame[frame["step"] == "add"]
    assert add["inp_target"].unique().tolist() == ["body > main > p > button#add-slow"]
    assert add["inp_event"].unique().tolist() == ["click"]
    # Run by run (the two flows' runs alternate), the 300 ms handler's processing is its
    # busy time and more than the 50 ms one's.
    slow = add[add["flow"] == "300 ms"].set_index("run")
    quick = add[add["flow"] == "50 ms"].set_index("run")
    assert len(slow) == len(quick) == 20
    assert (slow["inp_processing"] >= 250).all()
    assert (quick["inp_processing"] < slow["inp_processing"]).all()
    assert (add["inp_input_delay"] >= 0).all()
    assert (add["inp_presentation"] >= 0).all()
    # The node label is the button's text, as Lighthouse's report shows it.
    for report in shop_carts.flow_reports:
        interaction = report.step("add").interaction
        assert interaction is not None
        assert interaction.target_label == "Add to cart (slow)"
    # Navigation steps measure no interaction.
    assert frame.loc[frame["step"] == "shop", "inp_processing"].isna().all()
