"""``pagelab examples DIR``: the example notebooks copied to a folder, never over the user's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pagelab.cli._examples import example_notebooks

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _examples(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pagelab", "examples", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pagelab: error: ")
    return lines[0]


def test_a_checkout_uses_the_repository_notebooks() -> None:
    # One copy of each notebook: the suite's, in notebooks/ (the wheel maps it to
    # pagelab/examples/, tests/test_wheel.py).
    assert [path.name for path in example_notebooks()] == sorted(
        path.name for path in NOTEBOOKS.glob("*.ipynb"))
    assert "quickstart.ipynb" in {path.name for path in example_notebooks()}


def test_copies_every_notebook_into_a_new_folder(tmp_path: Path) -> None:
    target = tmp_path / "new" / "folder"
    result = _examples(str(target))
    assert result.returncode == 0, result.stderr
    copied = sorted(target.iterdir())
    assert [path.name for path in copied] == [path.name for path in example_notebooks()]
    for path in copied:
        assert path.read_bytes() == (NOTEBOOKS / path.name).read_bytes()
    assert f"copied {len(copied)} notebooks to {target}" in result.stdout
    assert "quickstart.ipynb" in result.stdout


def test_refuses_to_overwrite_and_copies_nothing(tmp_path: Path) -> None:
    mine = tmp_path / "quickstart.ipynb"
    mine.write_text("my own work")
    message = _one_error_line(_examples(str(tmp_path)))
    assert f"{mine} already exists" in message
    assert "--force" in message
    assert mine.read_text() == "my own work"
    assert sorted(tmp_path.iterdir()) == [mine]  # nothing half-copied


def test_force_overwrites(tmp_path: Path) -> None:
    mine = tmp_path / "quickstart.ipynb"
    mine.write_text("my own work")
    other = tmp_path / "notes.txt"
    other.write_text("kept")
    result = _examples(str(tmp_path), "--force")
    assert result.returncode == 0, result.stderr
    assert mine.read_bytes() == (NOTEBOOKS / "quickstart.ipynb").read_bytes()
    assert other.read_text() == "kept"


def test_a_file_in_place_of_the_folder_is_one_line(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    assert "is not a folder" in _one_error_line(_examples(str(file)))
    assert "required: DIR" in _one_error_line(_examples())


def test_an_unwritable_folder_is_one_line(tmp_path: Path) -> None:
    # A folder below a file cannot be created (works as root too, unlike chmod).
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    assert "cannot copy to" in _one_error_line(_examples(str(blocker / "sub")))
