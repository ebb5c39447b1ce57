"""Record ``tests/data/lhr-all-fast-mobile.json`` and ``lhr-all-heavy-desktop.json``: real
LHRs with every category (performance, accessibility, best practices, SEO) for the Lighthouse
CI parity tests (``tests/test_lhci_parity.py``).

Serves the demo site on loopback and runs the real engine once on ``/fast`` (mobile) and
once on ``/heavy`` (desktop) with ``config={"categories": [...]}``; the LHRs are written as
the engine stored them, less the full-page screenshot.

Usage, from the repository root after ``pagelab setup``::

    .venv/bin/python tests/data/record_lhrs_all_categories.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pagelab
from pagelab.demo import serve

DATA = Path(__file__).resolve().parent
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]


def main() -> None:
    with serve() as url, pagelab.connect() as runner:
        for page, device in (("fast", "mobile"), ("heavy", "desktop")):
            report = runner.lighthouse(f"{url}/{page}", device=device,
                                       config={"categories": CATEGORIES})
            lhr = runner.lhr(report)
            lhr.pop("fullPageScreenshot", None)
            (DATA / f"lhr-all-{page}-{device}.json").write_text(json.dumps(lhr))
            print(page, device, {k: v.get("score") for k, v in lhr["categories"].items()})


if __name__ == "__main__":
    main()
