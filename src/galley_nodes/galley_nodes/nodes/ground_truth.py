"""Ground truth from TF for the nodes that judge or disturb an episode (task_executor, failure_injector).

:class:`TfGroundTruth` is :mod:`galley_core.tasks.judging`'s ``GroundTruth`` over a node's TF
look-ups (``map -> base_link``, ``map -> object/<name>``, the gripper's tool centre point), and
says where each object is for a replan (:func:`galley_core.tasks.replanning.locate_objects`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from galley_core.geometry import Pose2D, Transform
from galley_core.scene import Scene
from galley_core.tasks.judging import held
from galley_core.tasks.replanning import locate_objects
from galley_core.tf_tree import TransformError

__all__ = ["TfGroundTruth"]


class TfGroundTruth:
    """TF, looked up when asked, in the node's ``map_frame``.

    The node's config gives ``map_frame``, ``base_frame``, ``gripper_frame`` and ``tcp_offset_m``
    (metres along the gripper frame's x).
    """

    def __init__(self, node: Any, scene: Scene) -> None:
        self.node = node
        self.scene = scene

    def _lookup(self, frame: str) -> Transform:
        return self.node.lookup(self.node.config.map_frame, frame)

    def base_pose(self) -> Pose2D:
        return self._lookup(self.node.config.base_frame).to_pose2d()

    def object_pose(self, name: str) -> Transform:
        try:
            return self._lookup(f"object/{name}")
        except TransformError:
            raise KeyError(name) from None  # reads as the object's name, as a missing pose always has

    def object_poses(self) -> dict[str, Transform]:
        """Every object's pose that TF knows."""
        poses = {}
        for name in self.scene.object_names:
            try:
                poses[name] = self._lookup(f"object/{name}")
            except TransformError:
                continue
        return poses

    def tcp(self) -> np.ndarray[Any, Any]:
        gripper = self._lookup(self.node.config.gripper_frame)
        return gripper.apply(np.array([self.node.config.tcp_offset_m, 0.0, 0.0]))

    def holding(self, hold_distance_m: float) -> str:
        """The object whose grasp point is within ``hold_distance_m`` of the tool centre point, or ""."""
        try:
            tcp = self.tcp()
        except TransformError:
            return ""  # no gripper frame: nothing reads as held
        for name, pose in self.object_poses().items():
            if held(self.scene, name, pose, tcp, hold_distance_m)[0]:
                return name
        return ""

    def locate(self, hold_distance_m: float) -> tuple[tuple[str, str], ...]:
        """(object, zone / ``held`` / ``none``) for every object of the scene."""
        poses = {n: t.translation for n, t in self.object_poses().items()}
        return locate_objects(self.scene, poses, self.holding(hold_distance_m))
