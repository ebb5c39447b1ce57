"""The wheel a pip user installs holds what they need: both packages, their data files, the
example notebooks, the entry points and the extras.

The wheel is built from this checkout by hatchling (the build backend, in the ``dev`` extra)
without build isolation, so the test needs no network.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"pagelab": ROOT / "src" / "pagelab",
            "pytest_pagelab": ROOT / "pytest_plugin" / "pytest_pagelab"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "--wheel-dir", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = out.glob("pagelab-*.whl")
    return built


@pytest.fixture(scope="module")
def names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def _dist_info(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (path,) = [n for n in archive.namelist() if n.endswith(f".dist-info/{name}")]
        return archive.read(path).decode()


@pytest.fixture(scope="module")
def metadata(wheel: Path) -> Message:
    return Parser().parsestr(_dist_info(wheel, "METADATA"))


def _source_files(package: str) -> set[str]:
    folder = PACKAGES[package]
    return {f"{package}/{path.relative_to(folder).as_posix()}" for path in folder.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_file_of_both_packages_is_inside(names: set[str], package: str) -> None:
    # Code, py.typed and data files alike: a file left out works in a checkout and breaks
    # for a pip user only.
    assert _source_files(package) - names == set()


def test_what_a_pip_user_needs_is_inside(names: set[str]) -> None:
    needed = {
        "pagelab/__init__.py", "pagelab/py.typed", "pytest_pagelab/plugin.py",
        "pytest_pagelab/py.typed",
        # The engine's pinned install (`pagelab setup` runs `npm ci` on these) and its driver.
        "pagelab/engine/node/package.json", "pagelab/engine/node/package-lock.json",
        "pagelab/engine/node/driver.mjs",
        "pagelab/demo/static/fast.html", "pagelab/demo/static/heavy.html",
        "pagelab/demo/static/shift.html",
    }
    assert needed - names == set()
    # Nothing of the checkout's but the packages and the notebooks.
    top = {name.split("/")[0] for name in names if ".dist-info/" not in name}
    assert top == {"pagelab", "pytest_pagelab"}


def test_the_example_notebooks_are_inside_once(names: set[str]) -> None:
    notebooks = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    shipped = sorted(name.removeprefix("pagelab/examples/") for name in names
                     if name.startswith("pagelab/examples/"))
    assert shipped == notebooks  # no checkpoints, no other copies
    assert not [name for name in names if name.endswith(".ipynb")
                and not name.startswith("pagelab/examples/")]


def test_entry_points(wheel: Path) -> None:
    entry_points = configparser.ConfigParser()
    entry_points.read_string(_dist_info(wheel, "entry_points.txt"))
    assert dict(entry_points["console_scripts"]) == {"pagelab": "pagelab.cli:main"}
    assert dict(entry_points["pytest11"]) == {"pagelab": "pytest_pagelab.plugin"}


def _extra_requirements(metadata: Message, extra: str) -> set[str]:
    names = set()
    for line in metadata.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        if requirement.marker is not None and requirement.marker.evaluate({"extra": extra}):
            names.add(requirement.name.lower())
    return names


def test_the_extras(metadata: Message) -> None:
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert {"notebook", "pytest", "server", "fleet"} <= extras
    assert {"pytest", "pytest-xdist"} <= _extra_requirements(metadata, "pytest")
    assert {"matplotlib", "ipywidgets"} <= _extra_requirements(metadata, "notebook")
    assert {"fastapi", "uvicorn"} <= _extra_requirements(metadata, "server")
    assert {"celery", "redis"} <= _extra_requirements(metadata, "fleet")
    # The base install stays lean: no test runner, no notebook stack, no server.
    base = {Requirement(line).name.lower() for line in metadata.get_all("Requires-Dist") or []
            if Requirement(line).marker is None}
    assert base.isdisjoint({"pytest", "matplotlib", "ipywidgets", "fastapi", "celery"})
    # The README, which starts with the pip install, is the project page.
    assert metadata.get_payload().lstrip().startswith("# pagelab")  # type: ignore[union-attr]


def test_the_installed_wheel_copies_its_notebooks(wheel: Path, tmp_path: Path) -> None:
    # The wheel's files on sys.path ahead of the checkout, as after `pip install`: the
    # notebooks come from pagelab/examples/, not from the repository.
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = ("import sys, pagelab\n"
            "print(pagelab.__file__)\n"
            "from pagelab.cli import main\n"
            f"sys.exit(main(['examples', {str(tmp_path / 'mine')!r}]))\n")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(str(site / "pagelab"))
    copied = sorted(path.name for path in (tmp_path / "mine").iterdir())
    assert copied == sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
