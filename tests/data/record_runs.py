"""Record the real runs behind ``tests/test_stats.py`` and ``docs/analysis.md``.

What it does: serves the bundled demo site on loopback, then runs Lighthouse on the real
engine (``pagelab.LocalRunner`` on a temporary data dir, device ``mobile``, location ``us``,
default config) 10 times on ``/fast`` and 5 times on ``/heavy``, interleaved (fast, heavy,
fast, heavy, ... then the remaining fast runs) so drift over time never favours one page.
The wide frame of the 15 reports (``pagelab.frames.to_frame``, with ``run`` the repetition
index per page, 0-based) is written to ``tests/data/runs-demo.csv``; the tests read it back
with the wide frame's dtypes (``load_runs`` in ``tests/test_stats.py``).

The demo site's port changes each time, so the host part of ``url`` is replaced by
``http://demo.test`` to keep the file stable; ``report_url`` points into the (deleted)
temporary data dir and only stands for "a report exists".

``record_runs.py desktop`` records the desktop side of the 2-URL x 2-device matrix the
comparison tests use: 5 runs of each page on device ``desktop`` (location ``us``),
interleaved the same way, written to ``tests/data/runs-demo-desktop.csv``.

Usage, from the repository root after ``pagelab setup`` (about 2-4 minutes; the engine lock
serialises it with any other Lighthouse run on the machine)::

    .venv/bin/python tests/data/record_runs.py [desktop]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

#: Device -> (output file, page -> number of runs).
RECORDINGS = {
    "mobile": ("runs-demo.csv", {"fast": 10, "heavy": 5}),
    "desktop": ("runs-demo-desktop.csv", {"fast": 5, "heavy": 5}),
}
#: Stable stand-in for the demo server's ephemeral origin.
ORIGIN = "http://demo.test"


def main(device: str = "mobile") -> None:
    import pandas as pd

    import pagelab
    from pagelab.demo import serve
    from pagelab.frames import to_frame

    name, pages = RECORDINGS[device]
    out = Path(__file__).resolve().parent / name
    rows = []
    with tempfile.TemporaryDirectory() as tmp, serve() as base, pagelab.LocalRunner(tmp) as runner:
        for run in range(max(pages.values())):
            for page, count in pages.items():
                if run >= count:
                    continue
                report = runner.lighthouse(f"{base}/{page}", device)
                frame = to_frame(report)
                frame["run"] = pd.array([run], dtype="Int64")
                frame["url"] = frame["url"].str.replace(base, ORIGIN, regex=False)
                rows.append(frame)
                lcp = frame.loc[0, "largest_contentful_paint"]
                print(f"{page:<6} run {run}: {report.status.value} LCP {lcp:,.0f} ms",
                      file=sys.stderr, flush=True)
    wide = pd.concat(rows, ignore_index=True)
    wide.to_csv(out, index=False, date_format="%Y-%m-%dT%H:%M:%S.%fZ")
    print(f"wrote {len(wide)} runs to {out}", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:2])
