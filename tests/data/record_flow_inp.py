"""Record the timespan LHRs behind ``tests/test_inp_attribution.py``'s INP mapping tests.

What it does: serves the bundled demo site on loopback and runs, on the real engine
(``pagelab.LocalRunner`` on a temporary data dir, device ``mobile``, default config), one
user flow per handler of the demo shop's slow button (``/shop?block=300`` and
``?block=50``): navigate, then a timespan around a click on ``#add-slow`` that waits for the
cart count. It writes ``tests/data/flow-inp-demo-mobile.json``: per handler, the timespan
step's LHR (its screenshot and treemap audits left out, for size) and the driver's record
of the step's slowest interaction (``{event, selector, node_label}``, as the driver sends it).

Usage, from the repository root after ``pagelab setup`` (under a minute; the engine lock
serialises it with any other Lighthouse run on the machine)::

    .venv/bin/python tests/data/record_flow_inp.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HANDLERS_MS = (300, 50)
#: Large audits the mapping does not read.
LEFT_OUT = ("screenshot-thumbnails", "final-screenshot", "script-treemap-data")


def main() -> None:
    import pagelab
    from pagelab.demo import serve

    out = Path(__file__).resolve().parent / "flow-inp-demo-mobile.json"
    recorded = {}
    with tempfile.TemporaryDirectory() as tmp, serve() as base, pagelab.LocalRunner(tmp) as runner:
        for block in HANDLERS_MS:
            flow = (pagelab.Flow(f"{block} ms handler")
                    .navigate(f"{base}/shop?block={block}", name="shop")
                    .start_timespan("add").click("#add-slow")
                    .wait_for('#cart-count[data-count="1"]').end_timespan())
            report = runner.flow(flow, device="mobile")
            step = report.step("add")
            lhr = json.loads(report.resources["flow-json"])["steps"][step.index - 1]["lhr"]
            for audit in LEFT_OUT:
                lhr["audits"].pop(audit, None)
            found = step.interaction
            recorded[str(block)] = {
                "interaction": found and {"event": found.event, "selector": found.target,
                                          "node_label": found.target_label},
                "lhr": lhr,
            }
            print(f"{block} ms: INP {step.metrics.interaction_to_next_paint} ms, {found}",
                  file=sys.stderr)
    out.write_text(json.dumps(recorded, indent=1) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
