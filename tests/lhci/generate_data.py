"""Regenerate ``src/pagelab/budgets/lhci_data.json`` (run after changing a pin).

    python tests/lhci/generate_data.py

Lighthouse CI's presets come from the pinned ``@lhci/utils`` (tests/lhci/package-lock.json);
which audits each category holds comes from the engine's pinned Lighthouse default config.
``tests/test_lhci_parity.py`` checks the shipped file equals what this writes (keys in
Lighthouse CI's order: a preset's order is the order of its results).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lhci_parity import lhci_verdicts
from pagelab.engine._install import install_engine, pinned_lighthouse_version

TARGET = Path(__file__).resolve().parents[2] / "src" / "pagelab" / "budgets" / "lhci_data.json"
_CATEGORIES_JS = """
const {default: config} = await import(process.argv[1]);
const out = {};
for (const [id, category] of Object.entries(config.categories)) {
  out[id] = category.auditRefs.map((ref) => ref.id);
}
process.stdout.write(JSON.stringify(out));
"""


def generated() -> dict[str, Any]:
    """What the shipped data file must hold."""
    presets = lhci_verdicts({}, [])["presets"]
    engine = install_engine(log=False)
    config = engine.root / "node_modules" / "lighthouse" / "core" / "config" / "default-config.js"
    done = subprocess.run([str(engine.node), "--input-type=module", "-e", _CATEGORIES_JS,
                           str(config)], capture_output=True, text=True, check=True)
    lock = json.loads((Path(__file__).resolve().parent / "package-lock.json").read_text())
    return {
        "lhci_utils_version": lock["packages"]["node_modules/@lhci/utils"]["version"],
        "presets": presets,
        "lighthouse_version": pinned_lighthouse_version(),
        "categories": json.loads(done.stdout),
    }


if __name__ == "__main__":
    TARGET.write_text(json.dumps(generated(), indent=1) + "\n")
    print(f"wrote {TARGET}")
