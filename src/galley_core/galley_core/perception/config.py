"""Parameters of galley's classical object perception (:mod:`galley_core.perception`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from galley_core.config import Config, param

__all__ = ["PerceptionConfig"]


@dataclass(frozen=True)
class PerceptionConfig(Config):
    # -- points --------------------------------------------------------------------------------
    max_range_m: float = param(3.0, "depth returns farther than this are left out", unit="m", gt=0.0)
    pixel_stride: int = param(1, "use every n-th row and column of the depth image", ge=1, le=8)
    voxel_m: float = param(0.004, "foreground points are averaged per cube of this side", unit="m", gt=0.0)
    height_threshold_m: float = param(
        0.004, "a point must stand this far above the surface or floor under it", unit="m", ge=0.0
    )
    depth_noise_m: float = param(
        0.0, "the depth sensor's noise (std) at zero range; 0: exact", unit="m", ge=0.0
    )
    depth_noise_per_m2: float = param(
        0.0, "growth of the depth noise (std) with the squared range; 0: exact", unit="1/m", ge=0.0
    )
    noise_sigmas: float = param(
        4.0, "a point must stand this many depth-noise std above the surface (noise blobs stay below)", gt=0.0
    )
    depth_median_px: int = param(
        1, "median filter over this many pixels square before anything else (odd; 1: none)", ge=1, le=7
    )
    static_margin_m: float = param(
        0.015, "walls, furniture and background objects widened by", unit="m", ge=0.0
    )
    robot_margin_m: float = param(0.015, "the robot's boxes and capsules widened by", unit="m", ge=0.0)
    # -- clusters and fits ---------------------------------------------------------------------
    cluster_link_m: float = param(0.012, "points closer than this belong to one cluster", unit="m", gt=0.0)
    min_points: int = param(12, "clusters of fewer pixels are ignored", ge=1)
    max_clusters: int = param(12, "the largest clusters of a frame that are fitted", ge=1)
    size_tolerance_m: float = param(
        0.03, "a cluster may exceed an object's extent and height by this much", unit="m", ge=0.0
    )
    rest_tolerance_m: float = param(
        0.03, "a cluster whose lowest point is this close to a surface rests on it", unit="m", ge=0.0
    )
    max_fit_points: int = param(100, "a cluster's points are thinned to about this many for the fit", ge=10)
    huber_m: float = param(0.004, "fit residuals beyond this count linearly", unit="m", gt=0.0)
    max_rms_m: float = param(0.008, "fits with a larger residual are rejected", unit="m", gt=0.0)
    surface_spacing_m: float = param(
        0.01, "spacing of the model points of the free-space check", unit="m", gt=0.0
    )
    free_space_tolerance_m: float = param(
        0.01, "a model point this far in front of the depth image violates free space", unit="m", gt=0.0
    )
    max_free_space_violation: float = param(
        0.25, "fits with more of the model in seen free space are rejected", gt=0.0, le=1.0
    )
    colour_weight: float = param(
        1.0, "weight of the chromaticity difference to the scene's object colour; 0: shape only", ge=0.0
    )
    max_chromaticity_difference: float = param(
        0.3, "clusters further from an object's chromaticity (L1) are not that object", gt=0.0
    )
    confident_points: float = param(30.0, "points at which a detection is 63 % confident", gt=0.0)
    fit_model: bool = param(True, "fit the shape (false: the cluster's centroid, the baseline)")
    # -- tracking ------------------------------------------------------------------------------
    out_of_view_half_life_s: float = param(
        30.0, "confidence halves this often while an object is out of view or hidden", unit="s", gt=0.0
    )
    missed_in_view_decay: float = param(
        0.5, "confidence factor per frame that sees the object's place but not the object", gt=0.0, le=1.0
    )
    occlusion_margin_m: float = param(
        0.05, "something this much nearer than an object's estimate hides it", unit="m", gt=0.0
    )
    min_confidence: float = param(0.05, "estimates below this confidence are dropped", ge=0.0, lt=1.0)

    def depth_noise(self, range_m: NDArray[np.floating] | float) -> NDArray[np.floating]:
        """The depth noise (std, m) at ``range_m`` (m), after the median filter (``depth_median_px``).

        Before it: ``depth_noise_m + depth_noise_per_m2 * range^2``.
        """
        r = np.asarray(range_m)
        # a median over n pixels leaves sqrt(pi / 2 / n) of Gaussian noise
        left = math.sqrt(math.pi / 2.0) / self.depth_median_px if self.depth_median_px > 1 else 1.0
        noise: NDArray[np.floating] = left * (self.depth_noise_m + self.depth_noise_per_m2 * r * r)
        return noise
