"""No default is written twice: a command-line option that sets a Config field takes it from the field.

A setting is a field of a galley_core.config.Config, declared once with ``param(default, doc, unit=,
bounds or choices)``; commands and benchmarks build their options from the fields
(``add_arguments``), so that the default, the choices and the bounds shown and checked are the
field's. This test reads the command-line modules (src/galley_cli/**) and the benchmarks (bench/)
with the ast module and fails, listing ``file:line``, where an ``add_argument(...)`` call for an
option that sets a field of a Config the file uses still writes the field's default again
(``default=`` the same value), its choices (``choices=``) or its default in the help text.

An option sets a field when the file passes the parsed value to that field (``TrainConfig(lr=args.lr)``
or ``{"lr": args.lr}``), or when the option is named after the field (``--lr``; ``--move-done`` for
``move_done_m``: the name less its unit suffix). A default of the command's own, different from the
field's (a benchmark's smaller network, say), is not a second copy and passes.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Container, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from galley_core.config import Config

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("galley_core", "galley_runtime", "galley_sim", "galley_learning", "galley_nodes", "galley_cli")
FILES = sorted([*(REPO / "src" / "galley_cli").rglob("*.py"), *(REPO / "bench").glob("*.py")])

#: Unit suffixes of field names (REP-103 units in names): ``--move-done`` sets ``move_done_m``.
UNIT_SUFFIX = re.compile(r"_(m|mm|rad|deg|s|ms|hz|mps|radps|px|n|nm|kg|pct)$")


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


@cache
def configs() -> dict[str, list[type[Config]]]:
    """Every Config subclass of galley's packages, by class name (all their modules imported)."""
    for package in PACKAGES:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, f"{package}."):
            importlib.import_module(info.name)
    found: dict[str, list[type[Config]]] = {}
    for cls in _subclasses(Config):
        if cls.__module__.split(".")[0] in PACKAGES:
            found.setdefault(cls.__name__, []).append(cls)
    return found


def _fields(classes: list[type[Config]]) -> dict[str, dataclasses.Field[Any]]:
    return {f.name: f for cls in classes for f in dataclasses.fields(cls)}


def _option_dest(call: ast.Call) -> str | None:
    for kw in call.keywords:
        if kw.arg == "dest" and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("--"):
            return arg.value[2:].replace("-", "_")
    return None


def _attributes(node: ast.AST) -> set[str]:
    """The attribute names read in ``node`` (``args.lr`` -> ``lr``)."""
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _text(node: ast.AST | None) -> str:
    """The literal parts of a help text (a string, an f-string, or a concatenation of them)."""
    if node is None:
        return ""
    return "".join(
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def _shown(value: Any) -> set[str]:
    """How a default is written in a help text."""
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, (int, float)):
        return {str(value), f"{value:g}"}
    if isinstance(value, tuple):
        return {"x".join(map(str, value)), ",".join(map(str, value)), " ".join(map(str, value))}
    return {str(value)} if str(value) else set()


def _feeds(tree: ast.AST, fields: Container[str]) -> dict[str, set[str]]:
    """Option dest -> the fields its parsed value is passed to (``X(lr=args.lr)``, ``{"lr": args.lr}``)."""
    feeds: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        pairs: list[tuple[str, ast.AST]] = []
        if isinstance(node, ast.Call):
            pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
        elif isinstance(node, ast.Dict):
            pairs = [
                (k.value, v)
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
        for field, value in pairs:
            if field in fields:
                for dest in _attributes(value):
                    feeds.setdefault(dest, set()).add(field)
    return feeds


def _problems(keywords: dict[str | None, ast.expr], default: Any) -> list[str]:
    """What an add_argument call's keywords write again of a field whose default is ``default``."""
    problems = ["choices="] if "choices" in keywords else []
    if "default" in keywords:
        try:
            given = ast.literal_eval(keywords["default"])
        except ValueError:
            given = None  # an expression (a reference to the field's default, say): one source
        if given is not None and given == default:
            problems.append(f"default={given!r}")
    help_text = _text(keywords.get("help"))
    if "default" in help_text and any(s in help_text for s in _shown(default)):
        problems.append("its help restates the default")
    return problems


def repeated_defaults(path: Path, root: Path = REPO) -> Iterator[str]:
    """``file:line: what`` (``file`` relative to ``root``) for each option of ``path`` that writes a
    Config field's default again."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    fields = _fields([cls for name in names & configs().keys() for cls in configs()[name]])
    feeds = _feeds(tree, fields)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        dest = _option_dest(node)
        if dest is None:
            continue
        targets = feeds.get(dest, set()) | {f for f in fields if dest in (f, UNIT_SUFFIX.sub("", f))}
        keywords = {kw.arg: kw.value for kw in node.keywords}
        for name in sorted(targets):
            problems = _problems(keywords, fields[name].default)
            if problems:
                option = "--" + dest.replace("_", "-")
                yield f"{path.relative_to(root)}:{node.lineno}: {option} sets {name}: {', '.join(problems)}"


def test_the_settings_classes_are_found() -> None:
    """The scan sees the Configs it is meant to guard (a package that failed to import would hide them)."""
    assert {"TrainConfig", "DatasetConfig", "PolicyConfig", "PlannerTrainConfig"} <= configs().keys()


def test_no_option_writes_a_config_default_again() -> None:
    found = [line for path in FILES for line in repeated_defaults(path)]
    assert not found, "options that write a Config field's default again (use add_arguments):\n" + "\n".join(
        found
    )


def test_the_scan_finds_a_default_written_twice(tmp_path: Path) -> None:
    """The scan is not vacuous: the old `galley train` option for --move-done is caught."""
    sample = tmp_path / "bench" / "sample.py"
    sample.parent.mkdir()
    sample.write_text(
        "from galley_learning.policy.config import DatasetConfig, TrainConfig\n"
        "def parse(parser):\n"
        "    parser.add_argument('--move-done', type=float, default=0.10)\n"
        "    parser.add_argument('--lr', type=float, default=2e-4, help='own default (default: 2e-4)')\n"
        "    parser.add_argument('--rate', type=float, default=10.0)\n"
        "    parser.add_argument('--schedule', choices=('constant', 'cosine'))\n"
        "def run(args):\n"
        "    return TrainConfig(lr_schedule=args.schedule), DatasetConfig(rate_hz=args.rate)\n"
    )
    assert list(repeated_defaults(sample, tmp_path)) == [
        "bench/sample.py:3: --move-done sets move_done_m: default=0.1",
        "bench/sample.py:3: --move-done sets move_done_rad: default=0.1",  # the heading's is 0.1 too
        "bench/sample.py:5: --rate sets rate_hz: default=10.0",
        "bench/sample.py:6: --schedule sets lr_schedule: choices=",
    ]
