"""galley_core must stay importable without ROS 2, simulators or torch."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "src" / "galley_core" / "galley_core"
FORBIDDEN = re.compile(
    r"^(rclpy|mujoco|torch|tf2_ros|tf2_py|rosbag2_py|rosidl_runtime_py|[A-Za-z0-9_]+_msgs)$"
)


def _is_dynamic_import(call: ast.Call) -> bool:
    name = getattr(call.func, "attr", getattr(call.func, "id", ""))
    return (
        name in ("import_module", "__import__")
        and bool(call.args)
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    )


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call) and _is_dynamic_import(node):
            found.append((node.lineno, node.args[0].value))
    return found


def test_no_forbidden_import_statements():
    files = sorted(CORE.rglob("*.py"))
    assert files, f"no sources found under {CORE}"
    offenders = [
        f"{path.relative_to(CORE.parent)}:{line}: {module}"
        for path in files
        for line, module in imported_modules(path)
        if FORBIDDEN.match(module.split(".")[0])
    ]
    assert not offenders, "galley_core imports forbidden modules:\n" + "\n".join(offenders)


def test_the_checker_catches_a_forbidden_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import numpy\nfrom geometry_msgs.msg import Twist\n"
        "import importlib\nimportlib.import_module('rclpy')\n"
    )
    modules = [m for _, m in imported_modules(bad) if FORBIDDEN.match(m.split(".")[0])]
    assert modules == ["geometry_msgs.msg", "rclpy"]


def test_importing_every_core_module_loads_none_of_them():
    modules = [
        "galley_core." + p.relative_to(CORE).with_suffix("").as_posix().replace("/", ".")
        for p in sorted(CORE.rglob("*.py"))
        if p.name != "__init__.py"
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = [m for m in out.split() if FORBIDDEN.match(m.split(".")[0])]
    assert not loaded, f"importing galley_core loaded {loaded}"
