"""Every module under src/ and bench/ stays at or under 450 lines: the project's own rule.

The house rules (and issue 31) set 450 lines as the most a module may hold, so that each one is
about one thing and can be read in a sitting; a module that grows past it is split where its
responsibilities part (as pick_place.py gave its reach geometry to reach.py, and task_executor.py
its goal sending to step_goals.py), not cut at line 450. Tests are not held to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 450


def oversized(paths: Iterable[Path], root: Path = ROOT, limit: int = MAX_LINES) -> list[str]:
    """``path: N lines`` for each of ``paths`` longer than ``limit`` lines, longest first."""
    sizes = [(len(path.read_text().splitlines()), path) for path in paths]
    return [f"{path.relative_to(root)}: {n} lines" for n, path in sorted(sizes, reverse=True) if n > limit]


def modules(root: Path = ROOT) -> list[Path]:
    """The Python modules of the packages under src/ and of the benches under bench/."""
    found = (p for top in ("src", "bench") for p in (root / top).rglob("*.py"))
    return sorted(p for p in found if "build" not in p.relative_to(root).parts)  # setup.py's copies


def test_no_module_is_over_450_lines():
    found = modules()
    assert len(found) > 100, f"only {len(found)} modules found under {ROOT}/src and bench"
    over = oversized(found)
    assert not over, f"modules over {MAX_LINES} lines; split them by responsibility:\n" + "\n".join(over)


def test_the_check_counts_lines_and_names_the_module(tmp_path: Path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "short.py").write_text("x = 1\n" * 450)
    (tmp_path / "src" / "long.py").write_text("x = 1\n" * 451)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "longer.py").write_text("x = 1\n" * 460)
    assert oversized(modules(tmp_path), tmp_path) == ["bench/longer.py: 460 lines", "src/long.py: 451 lines"]
