"""Every real interaction in a timespan has its INP (issue 35, point 1), on the real engine.

Chromium writes an interaction's INP trace events only once the paint that follows it has been
presented; a step that ended as soon as its `wait_for` was true stopped the trace before that
and its INP went missing (NaN in 3 of 10 steps on a loaded machine). The driver now settles a
timespan with an interaction on the Event Timing entries of its interactions
(docs/flows.md, "How it runs").

Lighthouse runs: 3 flows of two clicks on a slow paint; the 20 + 20 flows of the demo shop's
two handlers, interleaved, are the session's ``shop_carts`` (tests/conftest.py), which other
tests read too. Those 40 runs, quiet and with a busy loop on every core, are
``benchmarks/flow_inp.py`` (a benchmark: no test is timed or loads the machine).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import pagelab
from demo_shop import handler_ms
from fixtures_site import RecordingSite, page
from pagelab import Flow, LocalRunner
from pagelab.engine import Engine

# INP is measured in the timespan steps, which the quiet window does not touch: the short
# window for the navigation steps (conftest.py).
pytestmark = [pytest.mark.engine, pytest.mark.usefixtures("quick_navigation")]

INP = "interaction_to_next_paint"

#: As the demo shop: the click handler keeps the main thread busy ``?block=`` ms, then shows
#: the cart count (the element `wait_for` waits for appears in the handler itself).
SHOP_SCRIPT = """
<script>
document.getElementById("add").addEventListener("click", () => {
  const blockMs = Number(new URLSearchParams(location.search).get("block") || 0);
  const end = performance.now() + blockMs;
  while (performance.now() < end) { /* busy, as a heavy handler */ }
  const cart = document.getElementById("cart");
  cart.classList.toggle("full");
  const count = document.createElement("output");
  count.id = "cart-count";
  count.textContent = "1";
  cart.append(count);
});
</script>
"""

#: A shop with a cart that is slow to paint: a large blurred, shadowed gradient that
#: the click recolours, so the frame after the click takes long to raster and present.
SLOW_PAINT_STYLE = """<style>
#cart { width: 2000px; height: 3000px; border-radius: 90px;
  filter: blur(6px) drop-shadow(0 0 40px red);
  box-shadow: 0 0 200px 100px blue, inset 0 0 300px 80px green;
  background: radial-gradient(circle, #fa0, #08f); }
#cart.full { background: radial-gradient(circle, #0af, #f80); }
</style>"""

SLOW_PAINT_SHOP = page('<button id="add" type="button">Add to cart</button>'
                       '<div id="cart">Cart: </div>' + SHOP_SCRIPT, head=SLOW_PAINT_STYLE,
                       beacon=False)


@pytest.fixture(scope="module")
def shop() -> Iterator[RecordingSite]:
    with RecordingSite() as site:
        site.add("/slow-paint-shop", SLOW_PAINT_SHOP)
        yield site


def add_to_cart(site: RecordingSite, name: str, path: str, block_ms: int) -> Flow:
    return (Flow(name)
            .navigate(site.url(f"{path}?block={block_ms}"), name="shop")
            .start_timespan("add").click("#add").wait_for("#cart-count").end_timespan())


def test_inp_is_present_in_all_40_interleaved_runs_of_two_handlers(
    shop_carts: pagelab.Results
) -> None:
    frame = shop_carts.frame
    assert (frame["status"] == "success").all(), frame["error_code"].dropna().tolist()
    add = frame[frame["step"] == "add"]
    assert len(add) == 40
    # The handler ran in every step (TBT saw it); its INP is there too.
    assert (add["total_blocking_time"].notna()).all()
    missing = add[add[INP].isna()][["flow", "run"]].values.tolist()
    assert missing == []
    # And it is the click's (at least its handler's busy time), not the pointerdown's that
    # a frame of its own reports first.
    busy = add["flow"].astype(str).map(handler_ms)
    short = add[add[INP] < busy][["flow", "run", INP]].values.tolist()
    assert short == []
    compared = shop_carts.compare("flow", "50 ms", "300 ms", INP).frame
    (verdict,) = compared.loc[compared["step"] == "add", "verdict"]
    assert verdict == "b is slower"


def test_inp_waits_for_a_paint_that_is_slow_to_present(
    engine: Engine, shop: RecordingSite
) -> None:
    # Before the fix: INP missing in 5 of 6 such steps (the trace ended before the paint).
    # Two timespans on one page: the second waits for its own click, not the first's.
    flow = (add_to_cart(shop, "slow paint", "/slow-paint-shop", 50)
            .start_timespan("add again").click("#add").wait_for("#cart-count")
            .end_timespan())
    results = pagelab.measure(flow, runs=3, runner=LocalRunner(engine=engine), progress=False)
    frame = results.frame
    assert (frame["status"] == "success").all(), frame["error_code"].dropna().tolist()
    for step in ("add", "add again"):
        inp = frame.loc[frame["step"] == step, INP]
        assert len(inp) == 3
        assert inp.notna().all(), (step, inp.tolist())
        assert (inp >= 50).all()  # at least the handler's busy time
