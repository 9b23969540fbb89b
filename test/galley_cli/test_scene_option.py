"""Every command's ``--scene`` takes a scene file or a name: map and suite are made, a broken scene refused.

Run as a user runs them: the ``galley`` command in a subprocess, from the repository root, with the
scene cache (generated kitchens, checked scenes' marks) in a temporary folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from galley_core.navigation.grid import load_map_yaml
from galley_core.tasks.suite import load_suite

REPO = Path(__file__).resolve().parents[2]


def galley(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "galley_cli.main", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO,
        env=os.environ | {"GALLEY_SCENE_CACHE": str(cache)},
    )


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scene cache for the module: the shipped kitchen is checked once."""
    return tmp_path_factory.mktemp("scene_cache")


def _move_table(doc: dict, dx: float) -> None:
    """Move the table, its zones (and their approach poses) and the tray on it by ``dx`` metres."""
    doc["furniture"]["table"]["center"][0] += dx
    for zone in doc["zones"].values():
        if zone["surface"] == "table":
            zone["center"][0] += dx
            zone["approach"][0] += dx
    for thing in doc.get("background", {}).values():
        if thing.get("surface") == "table":
            thing["place"][0] += dx


def _moved_kitchen(folder: Path) -> Path:
    """The shipped kitchen with its table 0.3 m to the left, as a user's own file (no map, no suite)."""
    doc = yaml.safe_load((REPO / "config" / "scenes" / "kitchen.yaml").read_text())
    _move_table(doc, -0.3)
    path = folder / "my_kitchen.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_map_and_suite_of_a_scene_file_are_made_beside_it(tmp_path: Path, cache: Path) -> None:
    scene = _moved_kitchen(tmp_path / "mine")
    proc = galley("map", "--scene", str(scene), cache=cache)
    assert proc.returncode == 0, proc.stderr
    map_yaml, suite = (
        tmp_path / "mine" / "maps" / "kitchen.yaml",
        tmp_path / "mine" / "suites" / "kitchen_v1.yaml",
    )
    assert f"wrote {map_yaml}" in proc.stdout
    assert "checking scene kitchen" in proc.stderr  # checked before anything is written
    shipped = load_map_yaml(REPO / "maps" / "kitchen.yaml")
    assert (load_map_yaml(map_yaml).data != shipped.data).any()  # the moved table is in the map
    assert load_suite(suite)[0] == "kitchen"
    again = galley("suite", "--scene", str(scene), cache=cache)
    assert again.returncode == 0, again.stderr
    assert f"to {suite}" in again.stdout
    assert "checking scene" not in again.stderr  # the pass is remembered by the file's contents


def test_an_edited_scene_file_gets_a_new_map(tmp_path: Path, cache: Path) -> None:
    scene = _moved_kitchen(tmp_path / "mine")
    assert galley("map", "--scene", str(scene), cache=cache).returncode == 0
    map_yaml = tmp_path / "mine" / "maps" / "kitchen.yaml"
    before = load_map_yaml(map_yaml).data.copy()
    doc = yaml.safe_load(scene.read_text())
    _move_table(doc, 0.2)
    scene.write_text(yaml.safe_dump(doc, sort_keys=False))
    os.utime(map_yaml, ns=(0, 0))  # older than the edit, whatever the file system's clock resolution
    proc = galley("suite", "--scene", str(scene), cache=cache)
    assert proc.returncode == 0, proc.stderr
    assert "checking scene kitchen" in proc.stderr and "writing the map and suite" in proc.stderr
    assert (load_map_yaml(map_yaml).data != before).any()


def test_run_and_plan_in_a_scene_file(tmp_path: Path, cache: Path) -> None:
    scene = _moved_kitchen(tmp_path / "mine")
    out = tmp_path / "run"
    proc = galley(
        "run", "Go to the green zone", "--scene", str(scene), "--plan", "move to the green zone",
        "--out", str(out), cache=cache,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    episode = json.loads((out / "episode.json").read_text())
    assert episode["success"] and episode["scene"] == "kitchen"
    assert episode["scene_file"] == str(scene.resolve())
    assert str(tmp_path / "mine" / "maps" / "kitchen.yaml") in proc.stdout  # the map_server's map
    plan = galley(
        "plan", "Move the bowl to the green zone", "--scene", str(scene), "--seed", "0", "--json", cache=cache
    )
    assert plan.returncode == 0, plan.stderr
    steps = json.loads(plan.stdout)["plan"]
    assert steps[-2:] == ["move to the green zone", "place the bowl"]


def _broken(folder: Path) -> Path:
    """The shipped kitchen with a plate as big as a tray and a cabinet pushed into the counter."""
    doc = yaml.safe_load((REPO / "config" / "scenes" / "kitchen.yaml").read_text())
    doc["objects"]["plate"]["size"] = [0.2, 0.02, 0.006]
    doc["furniture"]["cabinet"] = {"center": [1.0, 2.7, 0.45], "size": [1.2, 0.6, 0.9], "surface": False}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "broken.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["run", "Move the bowl to the green zone", "--plan", "move to the green zone"],
        ["eval", "--mode", "policy", "--episodes", "1"],
        ["collect", "--episodes", "1"],
        ["map"],
        ["plan", "Move the bowl to the green zone"],
    ],
    ids=lambda c: c[0],
)
def test_a_broken_scene_is_refused_before_anything_runs(
    tmp_path: Path, cache: Path, command: list[str]
) -> None:
    broken = _broken(tmp_path / "scenes_of_mine")
    out = tmp_path / "out"
    extra = ["--out", str(out)] if command[0] != "plan" else []
    proc = galley(*command, "--scene", str(broken), *extra, cache=cache)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    problems = [
        line for line in proc.stderr.splitlines() if line.startswith(f"galley {command[0]}: {broken}: ")
    ]
    assert len(problems) == 3, proc.stderr  # two problems and the count
    assert "furniture 'counter' and furniture 'cabinet' overlap" in problems[0] + problems[1]
    assert "object 'plate' (radius 0.20 m) is too big" in problems[0] + problems[1]
    assert problems[2].endswith(f"2 problem(s); nothing ran (galley scene check {broken})")
    assert not out.exists()  # nothing recorded, no report
    assert not (broken.parent / "maps").exists()  # nor a map made for it


def test_unknown_scene_and_missing_file_are_one_line(tmp_path: Path, cache: Path) -> None:
    unknown = galley("map", "--scene", "no_such_kitchen", "--out", str(tmp_path), cache=cache)
    assert unknown.returncode == 2
    assert "scene 'no_such_kitchen' not found" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    missing = galley("suite", "--scene", str(tmp_path / "nowhere.yaml"), cache=cache)
    assert missing.returncode == 2
    assert f"scene file {tmp_path / 'nowhere.yaml'} does not exist" in missing.stderr
