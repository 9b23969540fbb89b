"""The committed maps are what `galley map` exports from the scenes now."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from galley_core.navigation.grid import load_map_yaml
from galley_core.scene import load_scene
from galley_sim.map_export import rasterize_scene


def test_committed_kitchen_map_matches_a_fresh_export(repo, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "galley_cli.main", "map", "--scene", "kitchen", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=repo,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("kitchen.yaml", "kitchen.pgm"):
        fresh, committed = (tmp_path / name).read_bytes(), (repo / "maps" / name).read_bytes()
        assert fresh == committed, f"maps/{name} is stale: run `galley map --scene kitchen --out maps/`"


def test_the_map_marks_furniture_at_base_height_and_leaves_the_floor_free(repo):
    scene = load_scene(repo / "config" / "scenes" / "kitchen.yaml")
    grid = rasterize_scene(scene)
    loaded = load_map_yaml(repo / "maps" / "kitchen.yaml")
    np.testing.assert_array_equal(loaded.data, grid.data)

    def cell(x: float, y: float) -> int:
        row, col = grid.world_to_cell(x, y)
        return int(grid.data[row, col])

    assert cell(0.0, -0.8) == 100  # table
    assert cell(-1.6, 2.7) == 100  # counter
    assert cell(-3.9, 0.0) == 100  # west wall
    for zone in scene.zones:
        assert cell(*zone.approach[:2]) == 0, zone.name  # the base can stand at every approach pose
    assert cell(0.0, 0.8) == 0 and cell(2.0, -2.2) == 0
