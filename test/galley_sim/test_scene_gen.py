"""Generated kitchens on the simulator: every draw kept passes the checks and runs in MuJoCo."""

from __future__ import annotations

from pathlib import Path

import mujoco
import pytest

from galley_core.episode import sample_episode
from galley_core.scene import load_scene
from galley_core.tasks.suite import load_suite
from galley_sim.map_export import rasterize_scene
from galley_sim.scene_gen import check, companion_paths, generate, write_kitchen
from galley_sim.scene_model import SceneModel, SimOptions

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("seed", [0, 42, 1000, 1019])
def test_generated_kitchens_pass_every_check_and_hold_episodes_in_mujoco(seed: int) -> None:
    generated = generate(seed)
    assert generated.document == generate(seed).document  # deterministic per seed
    scene = generated.scene
    assert check(scene) == []
    model = SceneModel(scene, SimOptions())
    for episode_seed in range(5):
        model.place(sample_episode(scene, episode_seed))
        mujoco.mj_forward(model.model, model.data)
        model.preflight()
    # Every zone's approach pose is a free cell of the map the planner will read.
    grid = rasterize_scene(scene)
    for zone in scene.zones:
        row, col = grid.world_to_cell(*zone.approach[:2])
        assert grid.data[row, col] == 0, zone.name


def test_the_shipped_kitchen_passes_the_checks() -> None:
    assert check(load_scene(REPO / "config" / "scenes" / "kitchen.yaml")) == []


def test_a_written_kitchen_reloads_as_the_scene_checked(tmp_path: Path) -> None:
    generated = generate(7)
    scene_file = tmp_path / "config" / "scenes" / "kitchen_7.yaml"
    written = write_kitchen(generated, scene_file)
    map_yaml, suite = companion_paths(scene_file, "kitchen_7")
    assert map_yaml == tmp_path / "maps" / "kitchen_7.yaml"
    assert suite == tmp_path / "config" / "suites" / "kitchen_7_v1.yaml"
    assert set(written) == {scene_file, map_yaml, map_yaml.with_suffix(".pgm"), suite}
    reloaded = load_scene(scene_file)
    assert reloaded.zones == generated.scene.zones  # approach poses derived again, the same
    assert reloaded.objects == generated.scene.objects
    assert load_suite(suite)[0] == "kitchen_7"
    # Outside a configuration folder the map and suite go beside the scene file.
    assert companion_paths(tmp_path / "mine.yaml", "mine") == (
        tmp_path / "maps" / "mine.yaml",
        tmp_path / "suites" / "mine_v1.yaml",
    )
