"""The wheel a pip user installs holds what they need: both packages, their data files, the
example notebooks, the entry points and the extras; and the quickstarts run word for word in
a fresh virtualenv made from it.

The wheel is built from this checkout by hatchling (the build backend, in the ``dev`` extra)
without build isolation, so that needs no network; the quickstarts' ``pip install`` lines
fetch the dependencies as a reader's would (pip's configured indexes and cache).
"""

from __future__ import annotations

import configparser
import doctest
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from packaging.requirements import Requirement

from doc_pages import (
    API_ADDRESS,
    DEMO_ADDRESS,
    QUICKSTARTS,
    Block,
    console_session,
    fenced_blocks,
)
from jupyter_browser import free_port

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
        "pagelab/demo/static/shift.html", "pagelab/demo/static/_base.html",
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


# -- the quickstarts, word for word ---------------------------------------------------------

#: A Markdown link's target: ``[text](target)``.
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", QUICKSTARTS)
def test_the_quickstarts_link_files_of_the_repository(page: str) -> None:
    # Readers follow a quickstart on the repository's page too, where only committed files
    # open: the generated references (docs/reference/) exist in the built site only.
    text = (ROOT / page).read_text(encoding="utf-8")
    targets = [t for t in LINK.findall(text) if "://" not in t and not t.startswith("#")]
    assert targets
    missing = [t for t in targets if not ((ROOT / page).parent / t.split("#")[0]).exists()]
    assert missing == []


#: The page's languages a reader runs: shell lines, Python, and ``$`` lines of a console.
RUN_LANGUAGES = {"sh", "python", "console"}
#: The quickstart's own virtualenv (docs/quickstart.md creates it; the others assume one).
VENV = "pagelab-env"
#: What the script runs before the page: curl fails on an HTTP error (the pages use
#: ``curl -s``, which would not), and a wait for a server the page started with ``&``, as a
#: reader waits before the next command.
PREAMBLE = """\
set -euo pipefail
curl() { command curl --fail-with-body "$@"; }
wait_tries=1200   # of 0.1 s
wait_for_port() {
  for _ in $(seq "$wait_tries"); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing listens on 127.0.0.1:$1" >&2
  return 1
}
"""
#: After the page: every server it started in the background still runs; then stop them.
EPILOGUE = """\
echo "=== the page's background jobs"
jobs -l
if [ "$(jobs -rp | wc -l)" -ne "$(jobs -p | wc -l)" ]; then
  echo "a server the page started in the background has stopped" >&2
  exit 1
fi
kill $(jobs -p) 2>/dev/null || true
"""


class Servers:
    """Where this test runs the documented servers: a free port for each."""

    def __init__(self) -> None:
        self.ports = {urlsplit(address).port: free_port()
                      for address in (DEMO_ADDRESS, API_ADDRESS)}
        #: JupyterLab's (the page gives none: its config file here does).
        self.jupyter = free_port()

    def localize(self, source: str) -> str:
        """The documented ports (``127.0.0.1:8080``, ``--port 8080``) replaced by ours."""
        for documented, ours in self.ports.items():
            source = (source.replace(f"127.0.0.1:{documented}", f"127.0.0.1:{ours}")
                      .replace(f"--port {documented}", f"--port {ours}"))
        return source

    def documented(self, output: str) -> str:
        for documented, ours in self.ports.items():
            output = output.replace(f"127.0.0.1:{ours}", f"127.0.0.1:{documented}")
        return output


#: A command the page leaves running in the background on a port: ``... --port N ... &``.
BACKGROUND_SERVER = re.compile(r"--port (\d+)[^#\n]*&[ \t]*(?:#.*)?$", re.MULTILINE)
#: ``jupyter lab ... &``: JupyterLab left running, on the port its config names.
BACKGROUND_JUPYTER = re.compile(r"^jupyter lab\b[^#\n]*&[ \t]*(?:#.*)?$", re.MULTILINE)


def quickstart_script(blocks: list[Block], page: str, servers: Servers,
                      outputs: Path) -> tuple[str, list[tuple[str, str, Path]]]:
    """One bash script running the page's blocks in order, as a reader types them into one
    shell, and the console commands whose output the page shows (command, what the page
    shows, the file the script writes the output to)."""
    lines = [PREAMBLE]
    shown: list[tuple[str, str, Path]] = []
    for block in blocks:
        if block.language not in RUN_LANGUAGES:
            continue
        source = servers.localize(block.source)
        lines.append(f"echo {shlex.quote(f'=== {page}:{block.line} ({block.language})')}")
        if block.language == "sh":
            lines.append(source)
        elif block.language == "python":
            lines += ["python - <<'PAGELAB_QUICKSTART_PYTHON'", source.rstrip("\n"),
                      "PAGELAB_QUICKSTART_PYTHON"]
        else:
            for command, expected in console_session(block.source):
                output = outputs / f"{len(shown)}.txt"
                lines += [f"{{ {servers.localize(command)}\n}} > {shlex.quote(str(output))}",
                          f"cat {shlex.quote(str(output))}"]
                shown.append((command, expected, output))
        lines += [f"wait_for_port {port}" for port in BACKGROUND_SERVER.findall(source)]
        if BACKGROUND_JUPYTER.search(source):
            lines.append(f"wait_for_port {servers.jupyter}")
    lines.append(EPILOGUE)
    return "\n".join(lines) + "\n", shown


def test_a_quickstart_becomes_one_script(tmp_path: Path) -> None:
    servers = Servers()
    demo = servers.ports[8080]
    page = ("Start it:\n\n```sh\npagelab demo serve --port 8080 &    # until stopped\n```\n\n"
            "```python\nprint('http://127.0.0.1:8080/fast')\n```\n\n```yaml\nx: 1\n```\n\n"
            "```console\n$ echo 127.0.0.1:8080\n127.0.0.1:8080\n```\n\n"
            "```sh\njupyter lab here &\n```\n")
    script, shown = quickstart_script(fenced_blocks(page), "p.md", servers, tmp_path)
    assert f"pagelab demo serve --port {demo} &" in script
    assert script.index(f"wait_for_port {demo}") > script.index("demo serve")
    assert script.index(f"wait_for_port {servers.jupyter}") > script.index("jupyter lab")
    assert f"print('http://127.0.0.1:{demo}/fast')" in script
    assert "x: 1" not in script
    # The command runs on our port; the page's output stays as the page shows it.
    assert f"echo 127.0.0.1:{demo}" in script
    assert shown == [("echo 127.0.0.1:8080", "127.0.0.1:8080\n", tmp_path / "0.txt")]
    unserved = (script.replace(f"pagelab demo serve --port {demo} &", "true")
                .replace("wait_tries=1200", "wait_tries=3"))
    completed = subprocess.run(["bash", "-c", unserved], capture_output=True, text=True,
                               timeout=60, check=False)
    assert completed.returncode == 1  # nothing listens: the wait says so
    assert f"nothing listens on 127.0.0.1:{demo}" in completed.stderr


def _page_environment(tmp_path: Path, venv: Path, servers: Servers) -> dict[str, str]:
    """A reader's shell: no checkout on sys.path, no other virtualenv on PATH (the CI and
    server quickstarts run in the quickstart's one, activated), the machine's engine
    install; a store of its own, and JupyterLab allowed to run as root (this machine's user)
    without a browser, on our port."""
    jupyter = tmp_path / "jupyter-config"
    jupyter.mkdir()
    (jupyter / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"allow_root": True, "open_browser": False, "ip": "127.0.0.1",
                       "port": servers.jupyter, "port_retries": 0}}))
    env = {name: value for name, value in os.environ.items()
           if name not in ("PYTHONPATH", "VIRTUAL_ENV", "PAGELAB_API_URL", "PAGELAB_API_KEY",
                           "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
           and not name.startswith(("GITHUB_", "PYTEST_XDIST", "COV_"))}
    outer = {Path(sys.prefix) / "bin", Path(sys.executable).parent}
    path = [entry for entry in env.get("PATH", "").split(os.pathsep)
            if entry and Path(entry) not in outer and not (Path(entry) / "activate").is_file()]
    env.update({
        "PATH": os.pathsep.join([str(venv / "bin"), *path]),
        "VIRTUAL_ENV": str(venv),
        "PAGELAB_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_CONFIG_DIR": str(jupyter),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),  # not the user's
        # pip installs without compiling every module it unpacks (a third of a fresh
        # install's time; a module is compiled when first imported). PIP_COMPILE, not
        # PIP_NO_COMPILE: pip sets `compile` to PIP_NO_COMPILE's value, so 1 compiles.
        "PIP_COMPILE": "0",
    })
    return env


def _stop(process: subprocess.Popen[bytes]) -> None:
    # The script and every server it left: its own process group, started here.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            continue


@pytest.mark.engine
@pytest.mark.timeout(2400)
# The page's commands, not Lighthouse's measurements, are under test: its engine runs (the
# page's processes inherit the variable) take the short quiet window (conftest.py).
@pytest.mark.usefixtures("quick_navigation")
@pytest.mark.parametrize("page", QUICKSTARTS)
def test_the_quickstart_runs_word_for_word(wheel: Path, tmp_path: Path, page: str) -> None:
    work = tmp_path / "work"
    outputs = tmp_path / "outputs"
    work.mkdir()
    outputs.mkdir()
    venv = work / VENV
    servers = Servers()
    env = _page_environment(tmp_path, venv, servers)
    # The reader's `pip install "pagelab[...]"` finds pagelab installed, from this wheel, and
    # brings its dependencies; `python3 -m venv pagelab-env` (docs/quickstart.md) keeps it.
    for command in (["python3", "-m", "venv", str(venv)],
                    [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                     "--no-deps", str(wheel)]):
        made = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert made.returncode == 0, made.stdout + made.stderr

    blocks = fenced_blocks((ROOT / page).read_text(encoding="utf-8"))
    script, shown = quickstart_script(blocks, page, servers, outputs)
    log = tmp_path / "log.txt"
    with log.open("wb") as stream:
        process = subprocess.Popen(["bash", "-c", script], cwd=work, env=env,
                                   stdin=subprocess.DEVNULL, stdout=stream,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = process.wait(timeout=2300)
        finally:
            _stop(process)
    printed = log.read_text(encoding="utf-8", errors="replace")
    assert status == 0, printed[-6000:]

    checker = doctest.OutputChecker()
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    for command, expected, output in shown:
        got = servers.documented(output.read_text(encoding="utf-8"))
        assert checker.check_output(expected, got, flags), (
            f"$ {command}\n--- the page shows\n{expected}--- printed\n{got}")

    # What ran was the wheel's pagelab, in the page's virtualenv.
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import pagelab; print(pagelab.__file__)"],
        env=env, cwd=work, capture_output=True, text=True, timeout=120, check=True)
    assert installed.stdout.startswith(str(venv)), installed.stdout
