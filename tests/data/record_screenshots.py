"""Record the screenshots behind ``tests/test_visual.py``'s visual-progress maths.

What it does: serves the bundled demo site on loopback, runs Lighthouse once on ``/fast``
and once on ``/heavy`` on the real engine (``pagelab.LocalRunner`` on a temporary data dir,
device ``mobile``, default config, ``video`` on so the videos' tests have them too) and
writes ``tests/data/screenshots-demo-mobile.json``: per page, the run's ``screenshots``
resource (every screenshot of the trace, ``[{timing, data}]``), the ``metrics`` audit's
observed values (``observedSpeedIndex`` ...; its ``...Ts`` timestamps left out) and the
page-load video as a data URI.

Usage, from the repository root after ``pagelab setup`` (under a minute; the engine lock
serialises it with any other Lighthouse run on the machine)::

    .venv/bin/python tests/data/record_screenshots.py
"""

from __future__ import annotations

import base64
import json
import sys
import tempfile
from pathlib import Path

PAGES = ("fast", "heavy")


def main() -> None:
    import pagelab
    from pagelab.demo import serve

    out = Path(__file__).resolve().parent / "screenshots-demo-mobile.json"
    recorded = {}
    with tempfile.TemporaryDirectory() as tmp, serve() as base, pagelab.LocalRunner(tmp) as runner:
        for page in PAGES:
            report = runner.lighthouse(f"{base}/{page}", "mobile", config={"video": True})
            observed = runner.lhr(report)["audits"]["metrics"]["details"]["items"][0]
            video = runner.video(report) or b""
            recorded[page] = {
                "observed": {k: v for k, v in observed.items()
                             if k.startswith("observed") and not k.endswith("Ts")},
                "screenshots": json.loads(runner.resource(report, "screenshots")),
                "video": "data:video/webm;base64," + base64.b64encode(video).decode(),
            }
            print(f"{page}: {len(recorded[page]['screenshots'])} screenshots, observed SI "
                  f"{observed['observedSpeedIndex']} ms", file=sys.stderr)
    out.write_text(json.dumps(recorded, indent=1) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
