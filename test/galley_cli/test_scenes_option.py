"""``galley eval --scenes`` and ``galley collect --scenes``: across kitchens, reported per scene.

Two generated kitchens, one given by name (generated into the scene cache on first use) and one by
file, and one-step episodes, so that the whole module takes about a minute.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def galley(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "galley_cli.main", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        cwd=REPO,
        env=os.environ | {"GALLEY_SCENE_CACHE": str(cache)},
    )


@pytest.fixture(scope="module")
def kitchens(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(the scene cache, a --scenes value): kitchen_5 by name, kitchen_6 as a file of one's own."""
    root = tmp_path_factory.mktemp("kitchens")
    own = root / "mine" / "kitchen_6.yaml"
    proc = galley("scene", "generate", "--seed", "6", "--out", str(own), cache=root / "cache")
    assert proc.returncode == 0, proc.stderr
    return root / "cache", f"kitchen_5,{own}"


def test_eval_scenes_reports_each_scene_and_overall(tmp_path: Path, kitchens: tuple[Path, str]) -> None:
    cache, scenes = kitchens
    out = tmp_path / "eval"
    proc = galley(
        "eval", "--mode", "policy", "--scenes", scenes, "--episodes", "1", "--steps", "1", "--out", str(out),
        cache=cache,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "generating kitchen 5 into" in proc.stdout  # on first use, into the cache
    assert (cache / "train" / "config" / "scenes" / "kitchen_5.yaml").is_file()  # seed 5: a training kitchen
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["episodes"] == 2
    assert list(metrics["scenes"]) == ["kitchen_5", "kitchen_6"]
    for block in metrics["scenes"].values():
        assert block["episodes"] == 1  # --episodes is per scene
        assert block["sr_episode"] in (0.0, 1.0)
        assert len(block["failed"]) == round(1 - block["sr_episode"])
    per_scene = [b["sr_episode"] for b in metrics["scenes"].values()]
    assert metrics["sr_episode"] == pytest.approx(sum(per_scene) / 2)
    table = proc.stdout[proc.stdout.index("\nscene ") + 1 :].splitlines()
    assert table[0].split()[:5] == ["scene", "episodes", "sr", "sr_episode", "failed"]
    assert [line.split()[0] for line in table[2:4]] == ["kitchen_5", "kitchen_6"]
    assert table[5].split()[:2] == ["overall", "2"]
    with (out / "episodes.csv").open() as f:
        assert [row["scene"] for row in csv.DictReader(f)] == ["kitchen_5", "kitchen_6"]
    assert (out / "scenes.png").stat().st_size > 10_000

    planner = galley(
        "eval", "--mode", "planner", "--scenes", scenes, "--episodes", "3", "--out", str(tmp_path / "p"),
        cache=cache,
    )  # fmt: skip
    assert planner.returncode == 0, planner.stderr
    figures = json.loads((tmp_path / "p" / "metrics.json").read_text())
    assert figures["episodes"] == 6 and figures["em"] == 1.0  # the gold planner, as a sanity check
    assert {n: b["em"] for n, b in figures["scenes"].items()} == {"kitchen_5": 1.0, "kitchen_6": 1.0}


def test_eval_scenes_mistakes_are_one_line(tmp_path: Path, kitchens: tuple[Path, str]) -> None:
    cache, scenes = kitchens
    both = galley("eval", "--mode", "policy", "--scenes", scenes, "--scene", "kitchen", cache=cache)
    assert both.returncode == 2
    assert "--scenes evaluates each scene on its own suite: leave out --scene and --suite" in both.stderr
    wrong = galley(
        "eval", "--mode", "planner", "--scene", "kitchen_5", "--suite", "config/suites/kitchen_v1.yaml",
        "--out", str(tmp_path / "w"), cache=cache,
    )  # fmt: skip
    assert wrong.returncode == 2
    assert "is scene 'kitchen''s, not 'kitchen_5''s" in wrong.stderr
    empty = galley("eval", "--mode", "planner", "--scenes", " , ", cache=cache)
    assert empty.returncode == 2 and "give a split (train, unseen)" in empty.stderr


def test_collect_scenes_draws_episodes_across_kitchens(tmp_path: Path, kitchens: tuple[Path, str]) -> None:
    from galley_learning.policy.dataset import build_dataset

    cache, scenes = kitchens
    out = tmp_path / "collection"
    proc = galley(
        "collect", "--scenes", scenes, "--episodes", "2", "--steps", "1", "--image-size", "32x24",
        "--out", str(out), cache=cache,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "collection.json").read_text())
    assert [r["scene"] for r in report["episodes"].values()] == [
        "kitchen_5",
        "kitchen_6",
    ]  # episode k: k mod 2
    assert report["settings"]["scenes"] == scenes
    assert sorted(p.name for p in (out / "scenes").iterdir()) == ["kitchen_5.yaml", "kitchen_6.yaml"]
    for name, record in report["episodes"].items():
        folder = out / ("episodes" if record["success"] else "failed") / name
        recorded = json.loads((folder / "bag" / "episode.json").read_text())
        assert recorded["scene"] == record["scene"]  # each bag names its kitchen
    if report["episodes_succeeded"] == 0:
        pytest.skip("no episode succeeded: nothing for the dataset reader")
    meta = build_dataset(out, tmp_path / "dataset")
    for episode in meta["episodes"]:
        assert episode["scene_file"] == str(out / "scenes" / f"{episode['scene']}.yaml")
