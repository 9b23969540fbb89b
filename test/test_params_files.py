"""The shipped params files hold only what differs from the nodes' code defaults, each with its reason.

A value equal to its field's default would be a second copy of that default, free to drift from it;
a value without a comment (on its line or the comment line right above it) departs from the code
without saying why. Both fail here, naming the file, the line and the fix.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from galley_core.config import config_from_values
from galley_nodes.registry import load_node_class
from galley_runtime.params_file import load_params_files, unset_lists_as_empty

REPO = Path(__file__).resolve().parents[1]
FILES = [REPO / "config" / name for name in ("galley.yaml", "demo.yaml", "policy_eval.yaml")]
_KEY = re.compile(r"^(\s+)([A-Za-z_][\w.]*):\s*(\S.*)?$")


def _commented_lines(path: Path) -> dict[tuple[str, str], bool]:
    """(node, parameter) -> whether its line carries a comment or the line above is one."""
    out: dict[tuple[str, str], bool] = {}
    node, previous = "", ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if line and not line[0].isspace() and not stripped.startswith("#"):
            node = line.split(":", 1)[0].strip("/")
        match = _KEY.match(line)
        if match and match.group(2) != "ros__parameters":
            out[node, match.group(2)] = "#" in (match.group(3) or "") or previous.startswith("#")
        previous = stripped
    return out


def _non_default(path: Path) -> list[str]:
    """Each (node, parameter) of ``path`` whose value is its field's default, as a message."""
    wrong = []
    for entry in load_params_files([path]):
        node = entry.pattern.strip("/")
        assert not entry.wildcard, f"{path.name}: {entry.pattern} names no node; name each node"
        config_cls = load_node_class(node).Config
        config = config_from_values(config_cls, unset_lists_as_empty(config_cls, entry.parameters))
        default = config_cls()
        for name in entry.parameters:
            if getattr(config, name) == getattr(default, name):
                wrong.append(f"{node}.{name} = {getattr(config, name)!r} is the code default: drop it")
    return wrong


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_params_file_holds_only_values_that_differ_from_the_defaults(path):
    assert _non_default(path) == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_value_of_a_params_file_says_why(path):
    commented = _commented_lines(path)
    values = {(e.pattern.strip("/"), name) for e in load_params_files([path]) for name in e.parameters}
    assert values == set(commented), "every value on a line of its own, as `name: value  # why`"
    silent = sorted(f"{node}.{name}" for (node, name), ok in commented.items() if not ok)
    assert silent == [], f"{path.name}: say why on the line or the comment line above"


def test_the_checks_catch_a_default_and_a_silent_value(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("square_driver:\n  ros__parameters:\n    side_m: 1.0   # the default\n    laps: 3\n")
    assert _non_default(path) == ["square_driver.side_m = 1.0 is the code default: drop it"]
    assert _commented_lines(path) == {("square_driver", "side_m"): True, ("square_driver", "laps"): False}
