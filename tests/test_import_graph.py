"""The imports of pagelab and pytest_pagelab flow one way (docs/architecture.md).

Read from the source (AST), so every import counts: at module level, inside functions and
under ``TYPE_CHECKING``. An import inside a function still ties the two modules together;
hiding one there only hides a circle from Python, not from the reader.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path

import pytest

ROOTS = (
    Path(__file__).parents[1] / "src" / "pagelab",
    Path(__file__).parents[1] / "pytest_plugin" / "pytest_pagelab",
)

#: Each room's floor: a room imports only from rooms on lower floors. A room is a package
#: (``pagelab.engine``), a top-level module (``pagelab.stats``) or the root ``pagelab``
#: itself (its ``__init__``). A new room fails the test until it is placed here and in
#: docs/architecture.md.
FLOORS: dict[str, int] = {
    "pagelab._exceptions": 0,
    "pagelab._paths": 0,
    "pagelab._settings_env": 0,
    "pagelab._bootstrap": 0,
    "pagelab._public": 0,
    "pagelab._url_secrets": 0,
    "pagelab._served": 0,
    "pagelab._closing": 0,
    "pagelab._extras": 1,
    "pagelab._apt": 1,
    "pagelab._cells": 1,
    "pagelab._html": 1,
    "pagelab.models": 2,
    "pagelab.catalog": 3,
    "pagelab.demo": 3,
    # Reading a runner's history needs only its `list`: below the runners and the stats.
    "pagelab._history": 3,
    # Which build a run measures (build=, PAGELAB_*, CI variables, git): the one rule.
    "pagelab._build": 3,
    "pagelab.frames": 4,
    "pagelab.store": 4,
    "pagelab.engine": 4,
    "pagelab.client": 4,
    "pagelab.fleet": 5,
    "pagelab.runners": 5,
    # Discovery of a site's pages, templates and sampling: the service discovers under its
    # own egress rules (POST /v1/discoveries), so it sits below the service.
    "pagelab._discovery": 5,
    "pagelab._progress": 5,
    "pagelab._explain": 5,
    "pagelab._change_points": 5,
    "pagelab.service": 6,
    "pagelab.stats": 6,
    "pagelab.plots": 7,
    "pagelab.budgets": 7,
    "pagelab._readable": 7,
    "pagelab.field": 8,
    "pagelab._report": 9,
    "pagelab.export": 10,
    "pagelab._measure": 11,
    # Whole-site scans measure through `measure` (and discover through `_discovery`).
    "pagelab._scan": 12,
    # The stored runs as Results in build order: reads through the runners, wraps Results.
    "pagelab._build_history": 12,
    "pagelab": 13,
    # The faces: nothing imports them.
    "pagelab.widgets": 14,
    "pagelab.cli": 14,
    "pytest_pagelab": 14,
    "pagelab.__main__": 15,
}
FACES = frozenset({"pagelab.widgets", "pagelab.cli", "pytest_pagelab"})
#: The rooms a request passes through before any frame exists: they never load pandas,
#: so ``import pagelab``, ``pagelab serve`` and a fleet worker stay light.
WITHOUT_PANDAS = frozenset({
    "pagelab", "pagelab._exceptions", "pagelab._paths", "pagelab._public", "pagelab._served",
    "pagelab._html", "pagelab._url_secrets",
    "pagelab._extras", "pagelab._apt", "pagelab.models", "pagelab.catalog", "pagelab.demo",
    "pagelab._history", "pagelab._closing", "pagelab._build",
    "pagelab.store", "pagelab.engine", "pagelab.client", "pagelab.fleet", "pagelab.runners",
    "pagelab._discovery", "pagelab.service",
})
#: Discovery needs the engine's target policy and the models only: the service imports it,
#: so it never reaches the store, the runners, the clients or the measuring above it.
NOT_FROM_DISCOVERY = frozenset({
    "pagelab.store", "pagelab.runners", "pagelab.client", "pagelab.fleet", "pagelab.service",
    "pagelab._measure", "pagelab._scan",
})
#: The analysis rooms and the rooms they must never reach, even through another room: the
#: statistics, budgets and plots work on frames and reports, so they load without the
#: engine, the store or the HTTP client (issue 36).
ANALYSIS_ROOMS = ("pagelab.stats", "pagelab.budgets", "pagelab.plots")
NOT_FROM_ANALYSIS = frozenset({
    "pagelab.runners", "pagelab.engine", "pagelab.store", "pagelab.client",
})
#: What the models (the ground floor) may import of ours: the exceptions, and the helper
#: that names their public home.
MODELS_MAY_IMPORT = frozenset({"pagelab._exceptions", "pagelab._public", "pagelab._html"})


@cache
def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for root in ROOTS:
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def room(module: str) -> str:
    """The room a module belongs to: ``pagelab.engine._ttfb`` -> ``pagelab.engine``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "pagelab" else parts[0]


def _owner(name: str) -> str | None:
    """The module of ours ``name`` is, or lives in (``pagelab.models.Device`` -> models)."""
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imported_names(module: str) -> Iterator[tuple[str, int]]:
    """Every dotted name ``module`` imports, with its line (relative imports resolved)."""
    path = modules()[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    return names_in(path.read_text(encoding="utf-8"), package)


def names_in(source: str, package: list[str]) -> Iterator[tuple[str, int]]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _from_module(node, package)
            for alias in node.names:
                yield f"{target}.{alias.name}", node.lineno


def _from_module(node: ast.ImportFrom, package: list[str]) -> str:
    """The module a ``from ... import`` reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


@cache
def edges() -> dict[str, dict[str, int]]:
    """module -> {module of ours it imports: line}. ``from pkg import submodule`` is an
    edge to the submodule; ``from pkg import name`` an edge to ``pkg``'s ``__init__``."""
    graph: dict[str, dict[str, int]] = {}
    for module in modules():
        targets: dict[str, int] = {}
        for name, line in imported_names(module):
            target = _owner(name)
            if target is not None and target != module:
                targets.setdefault(target, line)
        graph[module] = targets
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return sorted(found)


def _describe(component: list[str]) -> str:
    graph = edges()
    arrows = [
        f"{a} -> {b} (line {graph[a][b]})"
        for a in component for b in component if b in graph[a]
    ]
    return " <-> ".join(component) + ": " + "; ".join(arrows)


def test_the_walk_sees_every_kind_of_import() -> None:
    # The graph must include imports inside functions and under TYPE_CHECKING, or it
    # would miss exactly the imports that hide a circle.
    source = (
        "from typing import TYPE_CHECKING\n"
        "import pagelab.store\n"
        "from ..models import Device\n"
        "from . import _twin\n"
        "if TYPE_CHECKING:\n"
        "    from pagelab.frames import to_frame\n"
        "def later():\n"
        "    from pagelab import plots\n"
    )
    names = {name for name, _ in names_in(source, ["pagelab", "engine"])}
    assert names >= {
        "pagelab.store", "pagelab.models.Device", "pagelab.engine._twin",
        "pagelab.frames.to_frame", "pagelab.plots",
    }
    # ... and resolves each to the module it names or lives in.
    assert _owner("pagelab.models.Device") == "pagelab.models"
    assert _owner("pagelab.plots") == "pagelab.plots"
    assert "pagelab.budgets" in edges()["pagelab"]  # the root's TYPE_CHECKING import


def test_the_cycle_finder_names_each_circle() -> None:
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["f"], "f": ["e"]}
    assert cycles(graph) == [["a", "b", "c"], ["e", "f"]]
    assert cycles({"a": ["b"], "b": []}) == []


def test_no_import_cycles() -> None:
    found = cycles(edges())
    assert not found, "import cycles:\n" + "\n".join(_describe(c) for c in found)


def test_every_room_has_a_floor() -> None:
    rooms = {room(module) for module in modules()}
    assert rooms <= set(FLOORS), f"place these rooms in FLOORS: {sorted(rooms - set(FLOORS))}"


def test_imports_only_go_down() -> None:
    upward = [
        f"{module} -> {target} (line {line})"
        for module, targets in edges().items()
        for target, line in targets.items()
        if room(target) != room(module)
        and FLOORS.get(room(target), 99) >= FLOORS.get(room(module), -1)
    ]
    assert not upward, "imports that do not go down a floor:\n" + "\n".join(upward)


def test_no_module_imports_a_face() -> None:
    into_faces = [
        f"{module} -> {target}"
        for module, targets in edges().items()
        for target in targets
        if room(target) in FACES and room(module) != room(target)
        and module != "pagelab.__main__"  # `python -m pagelab` is the CLI
    ]
    assert not into_faces, into_faces


def reach(start: str) -> dict[str, list[str]]:
    """Every module the modules of room ``start`` import, directly or through others: each
    with one chain of imports that leads to it from the room."""
    graph = edges()
    chains = {module: [module] for module in modules() if room(module) == start}
    todo = list(chains)
    while todo:
        module = todo.pop()
        for target in graph[module]:
            if target not in chains:
                chains[target] = [*chains[module], target]
                todo.append(target)
    return chains


def test_reach_follows_imports_through_other_rooms() -> None:
    chains = reach("pagelab.__main__")
    assert chains["pagelab.cli"][:2] == ["pagelab.__main__", "pagelab.cli"]
    # The CLI reaches the store only through other modules: a chain of several imports.
    assert chains["pagelab.store"][0] == "pagelab.__main__"
    assert len(chains["pagelab.store"]) > 2


@pytest.mark.parametrize("analysis", ANALYSIS_ROOMS)
def test_the_analysis_rooms_never_reach_the_machinery(analysis: str) -> None:
    reached = [
        " -> ".join(chain) for target, chain in reach(analysis).items()
        if room(target) in NOT_FROM_ANALYSIS
    ]
    assert not reached, f"{analysis} reaches:\n" + "\n".join(sorted(reached))


def test_discovery_reaches_only_what_the_service_may_hold() -> None:
    reached = [
        " -> ".join(chain) for target, chain in reach("pagelab._discovery").items()
        if room(target) in NOT_FROM_DISCOVERY
    ]
    assert not reached, "pagelab._discovery reaches:\n" + "\n".join(sorted(reached))
    # ... and the service does discover through it (the point of its floor).
    assert any(room(target) == "pagelab._discovery"
               for module, targets in edges().items() if room(module) == "pagelab.service"
               for target in targets)


def test_the_models_import_nothing_of_ours_but_the_exceptions() -> None:
    outside = {
        target for module, targets in edges().items() if room(module) == "pagelab.models"
        for target in targets if room(target) != "pagelab.models"
    }
    assert outside <= MODELS_MAY_IMPORT, sorted(outside - MODELS_MAY_IMPORT)


@pytest.mark.parametrize("heavy", ["pandas", "numpy", "matplotlib", "ipywidgets"])
def test_no_room_before_the_frames_loads_the_analysis_stack(heavy: str) -> None:
    offenders = [
        f"{module} imports {name} (line {line})"
        for module in modules() if room(module) in WITHOUT_PANDAS
        for name, line in imported_names(module)
        if name.split(".")[0] == heavy
    ] + [
        f"{module} -> {target} (line {line})"
        for module, targets in edges().items() if room(module) in WITHOUT_PANDAS
        for target, line in targets.items()
        if room(target) not in WITHOUT_PANDAS and room(module) != "pagelab"
    ]
    assert not offenders, offenders


def test_the_root_reaches_the_analysis_rooms_only_lazily() -> None:
    # The root names frames, stats, plots, export, budgets and measure for the type
    # checker only; at run time they load on first attribute access (PEP 562).
    root = ast.parse(modules()["pagelab"].read_text(encoding="utf-8"))
    eager = {
        alias.name if node.level == 1 and not node.module else (node.module or "")
        for node in root.body if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert not {"budgets", "export", "frames", "plots", "stats", "_measure"} & {
        name.lstrip(".").split(".")[0] for name in eager
    }


def test_no_module_imports_another_rooms_private_module() -> None:
    # ``pagelab.x._y`` is private to ``pagelab.x``: other rooms import what ``pagelab.x``
    # exports. (The root's own private modules, ``pagelab._exceptions`` and the like,
    # belong to the whole package.)
    private = [
        f"{module} imports {target} (line {line})"
        for module, targets in edges().items()
        for target, line in targets.items()
        if room(target) != room(module)
        and any(part.startswith("_") for part in target.split(".")[2:])
    ]
    assert not private, private


def test_the_architecture_page_names_what_exists() -> None:
    # docs/architecture.md is kept true: every module and file it names exists, and every
    # room (and its floor) is on it.
    page = (ROOTS[0].parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    repo = ROOTS[0].parents[1]
    named = set(re.findall(r"`((?:pagelab|pytest_pagelab)(?:\.\w+)*)", page))
    missing = []
    for name in named:
        owner = _owner(name)
        if owner is None:
            missing.append(name)
            continue
        rest = name[len(owner):].lstrip(".")
        if rest and not hasattr(importlib.import_module(owner), rest.split(".")[0]):
            missing.append(name)
    missing += [
        path for path in re.findall(r"`((?:src|tests|pytest_plugin|docs)/[\w/.]+)`", page)
        if not (repo / path).exists()
    ]
    assert not missing, missing
    placed = {
        room.strip(" `"): int(floor)
        for floor, rooms in re.findall(r"^\| (\d+) \| ([^|]+) \|", page, re.MULTILINE)
        for room in rooms.split(",")
    }
    assert placed == FLOORS



def _handed_on(module: str) -> list[tuple[str, int]]:
    """The names a package room's ``__init__`` hands to the other rooms: its
    ``from ._x import name as name`` lines (not public API, not in ``__all__``)."""
    tree = ast.parse(modules()[module].read_text(encoding="utf-8"))
    return [(alias.name, node.lineno) for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.level == 1
            for alias in node.names if alias.asname == alias.name]


def _uses(source: str, package: list[str]) -> set[str]:
    """The dotted names of ours a source uses: what it imports (:func:`names_in`) and
    what it reads off a module it imported (``budgets.check_frame`` after ``from pagelab
    import budgets``: ``pagelab.budgets.check_frame``)."""
    used = {name for name, _ in names_in(source, package)}
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # a local name -> the module of ours it is
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                full = f"{_from_module(node, package)}.{alias.name}"
                if full in modules():  # a module imported by name: from pagelab import budgets
                    bound[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain: list[str] = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                used.add(".".join([bound[value.id], *chain]))
    return used


def test_what_a_room_hands_to_the_others_is_used_by_one() -> None:
    # A room's internal surface, the names its __init__ passes on to the other rooms, is
    # kept to what they use: each is imported or read (``budgets.check_frame``) outside the
    # room, by another room, the plugin, the tests or the benchmarks. A name nobody reads
    # is a way in that nothing checks.
    repo = ROOTS[0].parents[1]
    used: dict[str, set[str]] = {}  # room -> what the sources outside it use
    sources = [(module, path, module.split(".") if path.name == "__init__.py"
                else module.split(".")[:-1]) for module, path in modules().items()]
    sources += [("", path, []) for folder in ("tests", "benchmarks")
                for path in (repo / folder).rglob("*.py")]
    names = {module: _handed_on(module) for module in modules()
             if modules()[module].name == "__init__.py" and room(module) == module}
    for module, path, package in sources:
        found = _uses(path.read_text(encoding="utf-8"), package)
        for owner in names:
            if room(module) != owner:
                used.setdefault(owner, set()).update(found)
    unused = [f"{owner}.{name} (line {line})" for owner, handed in names.items()
              for name, line in handed if f"{owner}.{name}" not in used.get(owner, set())]
    assert not unused, unused
