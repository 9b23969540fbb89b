"""Occupancy maps of a scene, rasterised from the simulator's static geometry at base height.

``galley map --scene kitchen --out maps/`` writes ``kitchen.yaml`` and ``kitchen.pgm`` in the nav2
map_server format. A cell is occupied when a static geom (wall, furniture, background object)
that reaches into the base's height band overlaps it; everything inside the scene bounds is known.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from galley_core.geometry import Pose2D
from galley_core.navigation.grid import OccupancyGrid, save_map_yaml
from galley_core.scene import Scene
from galley_sim.mjcf import STATIC_GROUP, scene_xml

__all__ = ["export_map", "rasterize_scene"]

#: Heights the base occupies (metres): obstacles outside this band do not block it.
BASE_BAND_M = (0.02, 0.40)


def rasterize_scene(scene: Scene, resolution_m: float = 0.05) -> OccupancyGrid:
    """The occupancy grid of ``scene``'s static geometry in the base's height band."""
    model = mujoco.MjModel.from_xml_string(scene_xml(scene))
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    x0, y0, x1, y1 = scene.bounds
    width = round((x1 - x0) / resolution_m)
    height = round((y1 - y0) / resolution_m)
    cols, rows = np.meshgrid(np.arange(width), np.arange(height))
    centres = np.stack([x0 + (cols + 0.5) * resolution_m, y0 + (rows + 0.5) * resolution_m], axis=-1)
    occupied = np.zeros((height, width), dtype=bool)
    half_cell = resolution_m / 2.0
    for g in range(model.ngeom):
        body = model.geom_bodyid[g]
        static = body == 0 or model.body(body).name.startswith("background/")
        kind = model.geom_type[g]
        if not static or model.geom_group[g] != STATIC_GROUP or kind == mujoco.mjtGeom.mjGEOM_PLANE:
            continue
        if not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        pos, rot, size = data.geom_xpos[g], data.geom_xmat[g].reshape(3, 3), model.geom_size[g]
        half_z = size[2] if kind == mujoco.mjtGeom.mjGEOM_BOX else size[1]
        if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
            half_z = size[0]
        if pos[2] + half_z < BASE_BAND_M[0] or pos[2] - half_z > BASE_BAND_M[1]:
            continue
        local = (centres - pos[:2]) @ rot[:2, :2]  # cell centres in the geom's (upright) frame
        if kind == mujoco.mjtGeom.mjGEOM_BOX:
            # Occupied when the cell overlaps the footprint by more than a shared boundary.
            reach = size[:2] + half_cell - 1e-9
            inside = (np.abs(local[..., 0]) < reach[0]) & (np.abs(local[..., 1]) < reach[1])
        else:  # cylinders and spheres: a disc
            inside = np.hypot(local[..., 0], local[..., 1]) < size[0] + half_cell - 1e-9
        occupied |= inside
    grid = np.where(occupied, 100, 0).astype(np.int8)
    return OccupancyGrid(grid, resolution_m, Pose2D(x0, y0, 0.0))


def export_map(scene: Scene, out_dir: Path, resolution_m: float = 0.05) -> tuple[Path, Path]:
    """Write ``<scene>.yaml`` and ``<scene>.pgm`` into ``out_dir``; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    yaml_path = out_dir / f"{scene.name}.yaml"
    image_path = save_map_yaml(rasterize_scene(scene, resolution_m), yaml_path)
    return yaml_path, image_path
