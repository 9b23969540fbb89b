"""``galley scene generate`` and ``galley scene check``, run as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from galley_core.navigation.grid import load_map_yaml
from galley_core.scene import load_scene
from galley_core.tasks.grammar import parse_plan, validate_plan
from galley_core.tasks.suite import load_suite

REPO = Path(__file__).resolve().parents[2]


def galley(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "galley_cli.main", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO,
    )


def test_generate_writes_scene_map_and_suite_where_galley_finds_them_and_check_passes(tmp_path: Path) -> None:
    scene_file = tmp_path / "config" / "scenes" / "kitchen_5.yaml"
    proc = galley("scene", "generate", "--seed", "5", "--out", str(scene_file))
    assert proc.returncode == 0, proc.stderr
    assert "kitchen_5:" in proc.stdout
    scene = load_scene(scene_file)
    assert scene.name == "kitchen_5"
    grid = load_map_yaml(tmp_path / "maps" / "kitchen_5.yaml")
    x0, y0, x1, y1 = scene.bounds
    assert (grid.width, grid.height) == (round((x1 - x0) / 0.05), round((y1 - y0) / 0.05))
    suite_scene, entries = load_suite(tmp_path / "config" / "suites" / "kitchen_5_v1.yaml")
    assert suite_scene == "kitchen_5"
    assert len(entries) == 580
    for entry in entries[::50]:
        validate_plan(parse_plan(entry.plan), scene)
    # The same seed writes the same kitchen.
    again = tmp_path / "again.yaml"
    assert galley("scene", "generate", "--seed", "5", "--out", str(again)).returncode == 0
    assert yaml.safe_load(again.read_text()) == yaml.safe_load(scene_file.read_text())

    check = galley("scene", "check", str(scene_file))
    assert check.returncode == 0, check.stderr
    assert f"{scene_file} is fine: {len(scene.zones)} zones reachable by the base and the arm" in check.stdout


def test_check_passes_the_shipped_kitchen_by_name() -> None:
    proc = galley("scene", "check", "kitchen")
    assert proc.returncode == 0, proc.stderr
    assert "is fine: 5 zones reachable by the base and the arm, 5 objects fit every zone" in proc.stdout


def _broken_kitchen(path: Path) -> Path:
    """The shipped kitchen with three mistakes a person might make."""
    doc = yaml.safe_load((REPO / "config" / "scenes" / "kitchen.yaml").read_text())
    # 1. Screens fence the side counter's corner off: the purple zone's approach pose is free but
    #    cut off from the rest of the room.
    doc["furniture"]["screen_a"] = {"center": [2.2, -1.5, 0.5], "size": [0.1, 3.0, 1.0], "surface": False}
    doc["furniture"]["screen_b"] = {"center": [3.125, 0.05, 0.5], "size": [1.75, 0.1, 1.0], "surface": False}
    doc["robot_start"]["segments"][1] = [[-2.4, -2.2], [1.5, -2.2]]
    # 2. A cabinet pushed 10 cm into the counter.
    doc["furniture"]["cabinet"] = {"center": [1.0, 2.7, 0.45], "size": [1.2, 0.6, 0.9], "surface": False}
    # 3. A plate as big as a tray.
    doc["objects"]["plate"]["size"] = [0.2, 0.02, 0.006]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_check_prints_one_line_per_problem_and_exits_2(tmp_path: Path) -> None:
    broken = _broken_kitchen(tmp_path / "broken.yaml")
    proc = galley("scene", "check", str(broken))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr
    assert len(lines) == 4, lines  # three problems and the count
    assert all(line.startswith(f"galley scene check: {broken}: ") for line in lines)
    text = "\n".join(lines)
    assert "furniture 'counter' and furniture 'cabinet' overlap by 100 mm; move one of them" in text
    assert "object 'plate' (radius 0.20 m) is too big for zones red, green, blue, yellow, purple" in text
    assert "zone 'purple': the base cannot reach its approach pose (2.83, -1.00) from the start" in text
    assert lines[-1].endswith("3 problem(s)")


def test_bad_arguments_end_with_one_line() -> None:
    both = galley("scene", "generate", "--seed", "1", "--split", "unseen")
    assert both.returncode == 2
    assert "give one of --seed S (one kitchen) or --split train|unseen" in both.stderr
    split = galley("scene", "generate", "--split", "test")
    assert split.returncode == 2
    assert "invalid choice: 'test'" in split.stderr
    missing = galley("scene", "check", "no_such_kitchen")
    assert missing.returncode == 2
    assert "scene 'no_such_kitchen' not found" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("out", ["a_folder"])
def test_generate_refuses_a_scene_file_without_yaml_suffix(tmp_path: Path, out: str) -> None:
    proc = galley("scene", "generate", "--seed", "2", "--out", str(tmp_path / out))
    assert proc.returncode == 2
    assert "a scene file ends in .yaml" in proc.stderr
