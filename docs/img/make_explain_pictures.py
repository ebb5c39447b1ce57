"""Draw the pictures of docs/analysis.md's "Why is it slower" from the recorded runs of the
demo twins (tests/data/lhr-lean-desktop.json and lhr-bloated-desktop.json: one real desktop
run of /lean and of /bloated each, recorded on the local engine).

Usage, from the repository root::

    .venv/bin/python docs/img/make_explain_pictures.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
OUT = ROOT / "docs" / "img"


class RecordedTwins:
    """The two recorded runs as Results holds them (a wide frame and ``lhr``)."""

    def __init__(self) -> None:
        import pandas as pd

        self.lhrs = {f"lt_{page}": json.loads((DATA / f"lhr-{page}-desktop.json").read_text())
                     for page in ("lean", "bloated")}
        self.frame = pd.DataFrame({
            "id": list(self.lhrs), "run": [0, 0],
            "url": ["http://127.0.0.1/lean", "http://127.0.0.1/bloated"],
            "device": ["desktop"] * 2, "location": ["us"] * 2, "connection": [None] * 2,
            "status": ["success"] * 2,
        })

    def lhr(self, test_id: str) -> dict[str, Any]:
        return self.lhrs[test_id]


def main() -> None:
    import matplotlib.pyplot as plt

    from pagelab import plots, stats

    twins = RecordedTwins()
    lean, bloated = twins.lhr("lt_lean"), twins.lhr("lt_bloated")
    explanation = stats.explain(twins, "url", "http://127.0.0.1/lean",
                                "http://127.0.0.1/bloated")
    print(explanation.summary)
    top, _ = plots.compare_waterfalls(lean, bloated, labels=("lean (a)", "bloated (b)"))
    top.figure.savefig(OUT / "explain-waterfalls.png", dpi=110, bbox_inches="tight")
    strips = plots.filmstrip_compare(twins, "url", "http://127.0.0.1/lean",
                                     "http://127.0.0.1/bloated", interval_ms=50)
    strips.savefig(OUT / "explain-filmstrips.png", dpi=80, bbox_inches="tight")
    ax = plots.contributions(explanation)
    ax.figure.savefig(OUT / "explain-contributions.png", dpi=110, bbox_inches="tight")
    plt.close("all")


if __name__ == "__main__":
    main()
