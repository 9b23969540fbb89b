"""The simulated LiDAR and cameras of galley's mobile manipulator, read from MuJoCo's model and data.

:class:`Lidar` casts its beams with one ``mj_multiRay`` call; :class:`Cameras` draws images with
``mujoco.Renderer`` (the top-down view, depth) and :class:`galley_sim.rendering.SideBySideRenderer`
(the robot cameras' RGB images). :class:`galley_sim.simulator.KitchenSim` owns one of each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from galley_core.geometry import Transform
from galley_sim.mjcf import OBJECT_GROUP, STATIC_GROUP, ZONE_GROUP
from galley_sim.rendering import SideBySideRenderer, context_settings
from galley_sim.scene_model import SimOptions, mujoco_transform

__all__ = ["Cameras", "Lidar"]


class Lidar:
    """A planar LiDAR at the ``laser`` site: rays over 360 degrees that see static geometry and objects."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, options: SimOptions) -> None:
        self.model, self.data = model, data
        self.range_m = options.lidar_range_m
        self._site = model.site("laser").id
        beams = options.lidar_beams
        #: Beam angles (rad) in the laser frame, from -pi.
        self.angles = -math.pi + 2.0 * math.pi * np.arange(beams) / beams
        self._dirs_local = np.stack([np.cos(self.angles), np.sin(self.angles), np.zeros(beams)], 1)
        self._geomid = np.zeros(beams, dtype=np.int32)
        self._dist = np.zeros(beams, dtype=np.float64)
        self._groups = np.zeros(6, dtype=np.uint8)
        self._groups[[STATIC_GROUP, OBJECT_GROUP]] = 1

    def scan(self) -> NDArray[np.float32]:
        """Ranges (m) at :attr:`angles`; inf where nothing is hit, nan nearer than the minimum range."""
        m, d = self.model, self.data
        site = d.site(self._site)
        rot = site.xmat.reshape(3, 3)
        dirs = (self._dirs_local @ rot.T).ravel()
        lo, hi = self.range_m
        mujoco.mj_multiRay(
            m,
            d,
            site.xpos.copy(),
            dirs,
            self._groups,
            1,
            -1,
            self._geomid,
            self._dist,
            None,
            len(self.angles),
            hi,
        )
        ranges = self._dist.astype(np.float32)
        ranges[(self._geomid < 0) | (ranges > hi)] = np.inf
        ranges[ranges < lo] = np.nan
        return ranges


class Cameras:
    """The model's cameras: images, intrinsics and poses; the renderers are made on first use."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, options: SimOptions) -> None:
        self.model, self.data, self.options = model, data, options
        self._renderers: dict[tuple[int, int], Any] = {}
        self._side_by_side: dict[tuple[int, int, int], SideBySideRenderer] = {}

    def _renderer(self, width: int, height: int) -> Any:
        key = (width, height)
        if key not in self._renderers:
            # Each renderer's offscreen buffer only as large as its images: the model's is sized
            # for the largest (the top-down view), and clearing and resolving a 640x480 4x-MSAA
            # buffer for a 320x240 image cost software GL about 15 % of each render. The pixels
            # are the same. The renderer keeps this model, so episode colours still apply.
            # Small images get the robot cameras' coarser round geoms (rendering.py), so that a
            # depth image's edges fall where its RGB image's do.
            with context_settings(self.model, (width, height), height):
                self._renderers[key] = mujoco.Renderer(self.model, height, width)
        return self._renderers[key]

    def render(
        self, camera: str, *, depth: bool = False, width: int | None = None, height: int | None = None
    ) -> NDArray[Any]:
        """An RGB image (H, W, 3) uint8, or with ``depth`` a depth image (H, W) float32 in metres.

        Drawn by ``mujoco.Renderer`` with the model's multisampling: the top-down view and the
        depth image; the robot cameras' RGB images come from :meth:`render_cameras`. Robot cameras
        do not see the zones when ``hide_zones_from_robot_cameras`` is set; the top-down camera
        always does.
        """
        o = self.options
        renderer = self._renderer(width or o.image_width, height or o.image_height)
        option = mujoco.MjvOption()  # draws groups 0-2 (static, robot, objects) by default
        option.geomgroup[ZONE_GROUP] = int(camera == "top_down" or not o.hide_zones_from_robot_cameras)
        if depth:
            renderer.enable_depth_rendering()
        else:
            renderer.disable_depth_rendering()
        renderer.update_scene(self.data, camera=camera, scene_option=option)
        return np.asarray(renderer.render())

    def render_cameras(self, cameras: Sequence[str]) -> list[NDArray[np.uint8]]:
        """RGB images (H, W, 3) uint8 of the robot cameras, drawn together and supersampled.

        What the ``sim`` node publishes (:class:`galley_sim.rendering.SideBySideRenderer`): cheaper
        with software OpenGL than one :meth:`render` per camera, and as accurate. Each
        image is the same whichever cameras it is drawn with.
        """
        o = self.options
        key = (o.image_width, o.image_height, len(cameras))
        renderer = self._side_by_side.get(key)
        if renderer is None:
            renderer = self._side_by_side[key] = SideBySideRenderer(self.model, *key)
        option = mujoco.MjvOption()
        option.geomgroup[ZONE_GROUP] = int(not o.hide_zones_from_robot_cameras)
        return renderer.render(self.data, cameras, option)

    def intrinsics(self, camera: str, width: int, height: int) -> tuple[float, float, float, float]:
        """(fx, fy, cx, cy) in pixels of a perspective camera (square pixels, principal point centred)."""
        fovy = math.radians(float(self.model.cam(camera).fovy[0]))
        f = 0.5 * height / math.tan(fovy / 2.0)
        return f, f, (width - 1) / 2.0, (height - 1) / 2.0

    def transform(self, camera: str) -> Transform:
        """``T_map_camera`` of a camera in MuJoCo's convention (x right, y up, looking along -z)."""
        c = self.data.cam(camera)
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, c.xmat)
        return mujoco_transform(c.xpos, quat)

    def close(self) -> None:
        """Free the renderers' GL contexts; later renders make new ones."""
        for renderer in [*self._renderers.values(), *self._side_by_side.values()]:
            renderer.close()
        self._renderers.clear()
        self._side_by_side.clear()
