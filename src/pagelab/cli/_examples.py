"""``pagelab examples DIR``: copy the example notebooks to a folder of the user's."""

from __future__ import annotations

import argparse
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from ._main import CommandError

__all__ = ["example_notebooks", "register"]


def register(subparsers: Any) -> None:
    examples = subparsers.add_parser(
        "examples", help="copy the example notebooks to a folder (created if missing)"
    )
    examples.add_argument("dir", metavar="DIR", type=Path, help="the folder to copy them to")
    examples.add_argument("--force", action="store_true",
                          help="overwrite notebooks of the same name already in DIR")
    examples.set_defaults(handler=_examples)


def example_notebooks() -> list[Path]:
    """The example notebooks, sorted by name.

    The wheel ships them as ``pagelab/examples/``; a source checkout (or an editable install)
    has them in the repository's ``notebooks/``, where the test suite runs them, so each
    notebook exists once.
    """
    package = Path(str(resources.files("pagelab")))
    shipped = package / "examples"
    folder = shipped if shipped.is_dir() else package.parents[1] / "notebooks"
    notebooks = sorted(folder.glob("*.ipynb"))
    if not notebooks:
        raise CommandError(f"no example notebooks in {shipped}: reinstall pagelab "
                           "(pip install --force-reinstall pagelab)")
    return notebooks


def _examples(args: argparse.Namespace) -> int:
    target: Path = args.dir
    notebooks = example_notebooks()
    if target.exists() and not target.is_dir():
        raise CommandError(f"{target} exists and is not a folder")
    # Refuse before copying anything: a half-copied set would be worse than none.
    existing = [target / notebook.name for notebook in notebooks
                if (target / notebook.name).exists()]
    if existing and not args.force:
        more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
        raise CommandError(f"{existing[0]} already exists{more}: pass --force to overwrite")
    try:
        target.mkdir(parents=True, exist_ok=True)
        for notebook in notebooks:
            # copyfile, not copy2: the copies are the user's, writable whatever the mode of
            # the installed files.
            shutil.copyfile(notebook, target / notebook.name)
    except OSError as exc:
        raise CommandError(f"cannot copy to {target}: {exc.strerror or exc}") from exc
    print(f"copied {len(notebooks)} notebooks to {target}:")
    for notebook in notebooks:
        print(f"  {notebook.name}")
    print(f"open them in Jupyter, e.g. jupyter lab {target}")
    return 0
