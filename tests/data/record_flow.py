"""Record the user flow run behind ``tests/test_flow_store.py``: ``flow-demo-cart.json``.

What it does: serves the bundled demo site on loopback and runs the add-to-cart flow of
``tests/test_flows_engine.py`` (navigate ``/shop?block=300`` as ``shop``, a timespan ``add``
clicking ``#add-slow`` until the cart counts 1, a snapshot ``cart``) once on the real engine
(``pagelab.LocalRunner`` on a temporary data dir, device ``mobile``, location ``us``). Its
Lighthouse FlowResult (the ``flow-json`` resource: the three steps' LHRs) is written with
the demo server's origin replaced by ``http://demo.test`` and the screenshots' base64 data
emptied (``final-screenshot``, ``screenshot-thumbnails``, ``full-page-screenshot``: most of
the file's size, read by no mapping test of flows).

Usage, from the repository root after ``pagelab setup`` (under a minute; the engine lock
serialises it with any other Lighthouse run on the machine)::

    .venv/bin/python tests/data/record_flow.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("flow-demo-cart.json")
ORIGIN = "http://demo.test"
_SCREENSHOTS = ("final-screenshot", "screenshot-thumbnails", "full-page-screenshot")


def slim(flow_result: dict[str, Any]) -> dict[str, Any]:
    """The FlowResult without its screenshots' image data."""
    for step in flow_result["steps"]:
        audits = step["lhr"].get("audits", {})
        for name in _SCREENSHOTS:
            if name in audits:
                audits[name]["details"] = None
        step["lhr"].pop("fullPageScreenshot", None)
    return flow_result


def main() -> None:
    from pagelab import Flow, LocalRunner
    from pagelab.demo import DemoServer

    with DemoServer() as site, tempfile.TemporaryDirectory() as data_dir, \
            LocalRunner(data_dir) as runner:
        flow = (Flow("add to cart")
                .navigate(site.page_url("shop?block=300"), name="shop")
                .start_timespan("add").click("#add-slow")
                .wait_for('#cart-count[data-count="1"]').end_timespan()
                .snapshot("cart"))
        report = runner.flow(flow, device="mobile", location="us")
        assert report.status.value == "success", report.error
        text = json.dumps(slim(json.loads(report.resources["flow-json"])))
        OUT.write_text(text.replace(site.url, ORIGIN), encoding="utf-8")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
