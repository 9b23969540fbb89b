"""galley's packages stand on floors: each imports only packages below it, and no module circle.

The floors (README, "Layout"): galley_core and galley_description (data) -> galley_runtime ->
galley_sim -> galley_learning -> galley_nodes and galley_isaac -> galley_episodes -> galley_cli.
Imports are read with the ast module, including those inside functions and
``importlib.import_module("...")`` calls, so that a loop cannot hide in a function body. An
import inside a function is allowed only for an optional or slow dependency, and says which
(``# noqa: PLC0415 (optional: torch)``); ruff's PLC0415 finds the others.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Container, Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
BENCH = SRC.parent / "bench"

#: Package -> floor. A package may import packages on lower floors only (not its floor-mates).
FLOORS = {
    "galley_core": 0,
    "galley_description": 0,
    "galley_runtime": 1,
    "galley_sim": 2,
    "galley_learning": 3,
    "galley_nodes": 4,
    "galley_isaac": 4,
    "galley_episodes": 5,
    "galley_cli": 6,
}


def _is_import_call(call: ast.Call) -> bool:
    name = getattr(call.func, "attr", getattr(call.func, "id", ""))
    first = call.args[0] if call.args else None
    return (
        name in ("import_module", "__import__")
        and isinstance(first, ast.Constant)
        and isinstance(first.value, str)
    )


def imports_of(path: Path, *, modules: Container[str] = ()) -> Iterator[tuple[int, str]]:
    """(line, module) of every import in ``path``: top level, in functions, and import_module calls.

    ``from pkg import name`` gives ``pkg.name`` where that is one of ``modules``, else ``pkg``.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                yield node.lineno, submodule if submodule in modules else node.module
        elif isinstance(node, ast.Call) and _is_import_call(node):
            yield node.lineno, node.args[0].value  # type: ignore[attr-defined]


def sources(root: Path = SRC) -> Iterator[tuple[str, str, Path]]:
    """(package, module name, path) of every module of the floored packages under ``root``."""
    for package in FLOORS:
        base = root / package / package
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base.parent).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield package, name, path


def upward_imports(root: Path = SRC) -> list[str]:
    found = []
    for package, _, path in sources(root):
        for line, module in imports_of(path):
            target = module.split(".")[0]
            if target in FLOORS and target != package and FLOORS[target] >= FLOORS[package]:
                found.append(f"{path.relative_to(root)}:{line}: {package} imports {module}")
    return sorted(set(found))


def module_cycles(root: Path = SRC) -> list[list[str]]:
    """Import circles between modules of one package (Tarjan's strongly connected components)."""
    modules = {name: path for _, name, path in sources(root)}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name.split(".")[0]
        graph[name] = {
            module
            for _, module in imports_of(path, modules=modules)
            if module in modules and module != name and module.split(".")[0] == package
        }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


#: galley_core's own floors: its top-level modules (config, geometry, scene, ...) and its
#: sub-packages. A sub-package imports only lower floors of galley_core, so they form no circle.
#: Language reads an instruction into a plan of tasks' grammar, so it stands above tasks; the
#: monitor judges the steps of a plan; tasks judge a pick with manipulation's grasp point.
CORE_FLOORS = {
    "galley_core": 0,
    "galley_core.manipulation": 1,
    "galley_core.navigation": 1,
    "galley_core.tasks": 2,
    "galley_core.perception": 2,
    "galley_core.scenes": 2,
    "galley_core.language": 3,
    "galley_core.monitoring": 3,
}


def core_imports_against_floors(root: Path = SRC) -> list[str]:
    """Imports between galley_core's sub-packages that run sideways or up :data:`CORE_FLOORS`."""
    base = root / "galley_core" / "galley_core"
    subpackages = {f"galley_core.{p.parent.name}" for p in base.glob("*/__init__.py")}
    found = [
        f"{name}: a sub-package without a floor; add it to CORE_FLOORS in test/test_floors.py"
        for name in sorted(subpackages - CORE_FLOORS.keys())
    ]
    modules = {name: path for package, name, path in sources(root) if package == "galley_core"}

    def area(module: str) -> str:
        sub = ".".join(module.split(".")[:2])
        return sub if sub in subpackages else "galley_core"

    for name, path in modules.items():
        here = area(name)
        for line, module in imports_of(path, modules=modules):
            there = area(module)
            if module.split(".")[0] != "galley_core" or there == here:
                continue
            if CORE_FLOORS.get(there, 0) >= CORE_FLOORS.get(here, 0):
                found.append(f"{path.relative_to(root)}:{line}: {here} imports {module}")
    return sorted(set(found))


def test_no_package_imports_one_on_its_floor_or_above():
    offenders = upward_imports()
    assert not offenders, "imports against the floor plan (README, Layout):\n" + "\n".join(offenders)


def test_no_import_circle_inside_a_package():
    cycles = module_cycles()
    assert not cycles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_galley_core_sub_packages_import_only_lower_ones():
    offenders = core_imports_against_floors()
    assert not offenders, "imports against galley_core's floors (CORE_FLOORS):\n" + "\n".join(offenders)


def test_every_deferred_import_names_its_dependency():
    pattern = re.compile(r"noqa:[^#\n]*PLC0415")
    reason = re.compile(r"PLC0415\s*\((optional|deferred): [^)]+\)")
    unexplained = [
        f"{path.relative_to(SRC.parent)}:{number}"
        for path in [*SRC.rglob("*.py"), *BENCH.glob("*.py")]
        for number, text in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(text) and not reason.search(text)
    ]
    assert not unexplained, "say which dependency is deferred, '# noqa: PLC0415 (optional: torch)':\n" + (
        "\n".join(unexplained)
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for package in FLOORS:
        (tmp_path / package / package).mkdir(parents=True)
        (tmp_path / package / package / "__init__.py").write_text("")
    return tmp_path


def test_the_checks_catch_an_import_inside_a_function_and_a_circle(tree: Path):
    (tree / "galley_runtime" / "galley_runtime" / "host.py").write_text(
        "def f():\n    from galley_cli.main import main\n"
        "import importlib\nimportlib.import_module('galley_nodes.stack')\n"
    )
    (tree / "galley_sim" / "galley_sim" / "a.py").write_text("from galley_sim import b\n")
    (tree / "galley_sim" / "galley_sim" / "b.py").write_text("def g():\n    import galley_sim.a\n")
    (tree / "galley_nodes" / "galley_nodes" / "n.py").write_text("from galley_isaac import config\n")
    assert upward_imports(tree) == [
        "galley_nodes/galley_nodes/n.py:1: galley_nodes imports galley_isaac",
        "galley_runtime/galley_runtime/host.py:2: galley_runtime imports galley_cli.main",
        "galley_runtime/galley_runtime/host.py:4: galley_runtime imports galley_nodes.stack",
    ]
    assert module_cycles(tree) == [["galley_sim.a", "galley_sim.b"]]


def test_the_core_check_catches_sideways_and_upward_imports_and_an_unplaced_sub_package(tree: Path):
    core = tree / "galley_core" / "galley_core"
    for sub in ("tasks", "language", "navigation", "vision"):
        (core / sub).mkdir()
        (core / sub / "__init__.py").write_text("")
    (core / "language" / "reading.py").write_text("from galley_core.tasks import grammar\n")
    (core / "tasks" / "grammar.py").write_text("from galley_core.scene import Scene\n")
    (core / "tasks" / "planning.py").write_text("def f():\n    from galley_core.language import reading\n")
    (core / "navigation" / "grid.py").write_text("import galley_core.tasks\n")
    (core / "scene.py").write_text("from galley_core import navigation\n")
    assert core_imports_against_floors(tree) == [
        "galley_core.vision: a sub-package without a floor; add it to CORE_FLOORS in test/test_floors.py",
        "galley_core/galley_core/navigation/grid.py:1: galley_core.navigation imports galley_core.tasks",
        "galley_core/galley_core/scene.py:1: galley_core imports galley_core.navigation",
        "galley_core/galley_core/tasks/planning.py:2: galley_core.tasks imports galley_core.language.reading",
    ]
