"""One RGB-D frame in, the scene's object estimates out: the steps of :mod:`galley_core.perception`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray
from scipy.ndimage import median_filter

from galley_core.geometry import Transform
from galley_core.perception.config import PerceptionConfig
from galley_core.perception.detector import DepthView, Detection, cluster, detect, voxel_downsample
from galley_core.perception.pointcloud import Intrinsics, RobotMask, StaticScene, back_project
from galley_core.perception.shapes import ShapeModel, fit_pose
from galley_core.perception.tracker import ObjectEstimate, ObjectTracker
from galley_core.scene import Scene

__all__ = ["FrameResult", "ObjectPerception"]


@dataclass(frozen=True)
class FrameResult:
    """One frame's outcome: its detections, the estimates after it, and its foreground points."""

    detections: list[Detection]
    estimates: list[ObjectEstimate]
    foreground_points: int


class ObjectPerception:
    """Estimates the poses of ``scene``'s objects from depth (and colour) frames.

    Args:
        scene: the scene: its static geometry and its objects' shapes and colours.
        config: thresholds, weights and decay rates.
        robot: which points are the robot's own (default: galley_mm's body and links).
    """

    def __init__(self, scene: Scene, config: PerceptionConfig, robot: RobotMask | None = None) -> None:
        self.scene = scene
        self.config = config
        self.static = StaticScene(
            scene, height_threshold_m=config.height_threshold_m, margin_m=config.static_margin_m
        )
        self.robot = robot or RobotMask(margin_m=config.robot_margin_m)
        self.models = [ShapeModel(o) for o in scene.objects]
        if self.models:  # numba compiles (or loads) the shape kernels now, not in the first frame
            model = self.models[0]
            fit_pose(model, model.surface(0.02), (0.0, 0.0, 0.0, 0.0), fit_z=True, iterations=1)
        self.tracker = ObjectTracker(config, {o.name: o.height for o in scene.objects})

    def frame(  # noqa: PLR0917 - one frame's inputs, in the order a camera callback has them
        self,
        depth: NDArray[np.floating],
        rgb: NDArray[np.uint8] | None,
        intrinsics: Intrinsics,
        map_from_camera: Transform,
        map_from_links: Mapping[str, Transform],
        stamp_s: float,
    ) -> FrameResult:
        """Process one frame.

        Args:
            depth: (H, W) metres along the optical axis.
            rgb: (H, W, 3) the colour image of the same instant and camera, or None.
            intrinsics: the camera's.
            map_from_camera: ``T_map_optical`` at the frame's stamp.
            map_from_links: ``T_map_<link>`` of ``base_link`` and :attr:`RobotMask.frames` at the
                stamp (those missing are not masked).
            stamp_s: the frame's time, seconds.
        """
        c = self.config
        if c.depth_median_px > 1:  # a noisy sensor's depth: edges kept, noise reduced
            depth = median_filter(np.nan_to_num(depth, nan=0.0), size=c.depth_median_px)
        points, pixels = back_project(
            depth, intrinsics, map_from_camera, max_range_m=c.max_range_m, stride=c.pixel_stride
        )
        flat = np.asarray(depth, dtype=np.float32).reshape(-1)
        keep = self.static.foreground(points, c.noise_sigmas * c.depth_noise(flat[pixels]))
        points, pixels = points[keep], pixels[keep]
        keep = self.robot.keep(points, map_from_links)
        points, pixels = points[keep], pixels[keep]
        colours = None
        if rgb is not None:
            colours = rgb.reshape(-1, 3)[pixels].astype(np.float64) / 255.0
        view = DepthView(depth, intrinsics, map_from_camera.inverse())
        ranges = flat[pixels]
        groups = cluster(points, pixels, ranges, depth.shape, link_m=c.cluster_link_m, focal_px=intrinsics.fx)
        clusters = []
        for group in groups[: c.max_clusters]:
            if len(group) < c.min_points:
                break
            clusters.append(
                voxel_downsample(
                    points[group].astype(np.float64), None if colours is None else colours[group], c.voxel_m
                )
            )
        detections = detect(clusters, view, self.static, self.models, c)
        if not c.fit_model:
            detections = [replace(d, position=d.centroid, yaw=0.0) for d in detections]
        estimates = self.tracker.update(stamp_s, detections, view)
        return FrameResult(detections, estimates, len(points))

    def reset(self) -> None:
        """Forget the estimates (a new episode)."""
        self.tracker.reset()
