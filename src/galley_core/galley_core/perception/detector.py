"""One depth frame's detections: cluster the foreground points, fit each object's shape, match.

:func:`cluster` groups foreground points by their pixels' neighbourhood in the image and their
distance in space (connected components). :func:`detect` fits every object's shape
(:class:`~galley_core.perception.shapes.ShapeModel`) to every cluster the object could be (its
size allows it), and scores each fit by

* its residual (how far the points lie from the fitted surface),
* free space: the fraction of the fitted model's surface that would stand in front of what the
  camera saw (a model too large for its points, or in the wrong place, would have hidden
  something the camera did see),
* colour, where the scene gives the object one: the chromaticity of the cluster against the
  object's (brightness, which lighting and shading change, does not count),

and assigns clusters to objects one to one at least total cost (the Hungarian method).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from galley_core.geometry import Transform
from galley_core.perception.config import PerceptionConfig
from galley_core.perception.pointcloud import Intrinsics, StaticScene
from galley_core.perception.shapes import ShapeModel, fit_pose, initial_xy

__all__ = ["DepthView", "Detection", "cluster", "detect", "voxel_downsample"]

F64 = NDArray[np.float64]
_REJECTED = 1e6


@dataclass(frozen=True)
class DepthView:
    """The depth image a frame's points came from, for the free-space check."""

    depth: NDArray[np.floating]  # (H, W) metres along the optical axis
    intrinsics: Intrinsics
    camera_from_map: Transform  # T_optical_map

    def free_space_violation(self, points_map: F64, tolerance_m: float) -> float:
        """Fraction of ``points_map`` in view that stand more than ``tolerance_m`` in front of the depth."""
        u, v, z = self.intrinsics.project(self.camera_from_map.apply(points_map))
        h, w = self.depth.shape
        inside = np.isfinite(u) & (u >= 0) & (u <= w - 1) & (v >= 0) & (v <= h - 1)
        if not inside.any():
            return 0.0
        seen = self.depth[np.rint(v[inside]).astype(int), np.rint(u[inside]).astype(int)]
        seen = np.where(np.isfinite(seen) & (seen > 0), seen, np.inf)
        return float(np.mean(z[inside] < seen - tolerance_m))


@dataclass(frozen=True)
class Detection:
    """An object found in one frame.

    Attributes:
        name: the scene object.
        position: (3,) its frame's origin (bottom centre) in the map, metres.
        yaw: radians (0 for shapes of revolution).
        confidence: 0..1, from the points, the fit residual and the free-space check.
        rms_m: fit residual, metres.
        points: points in its cluster (after down-sampling).
        centroid: (3,) the plain centroid of its points, z on the support (the baseline), metres.
    """

    name: str
    position: F64
    yaw: float
    confidence: float
    rms_m: float
    points: int
    centroid: F64


def voxel_downsample(points: F64, colours: F64 | None, voxel_m: float) -> tuple[F64, F64 | None]:
    """One point per ``voxel_m`` cube (the mean of those in it), and the mean colour with it."""
    keys = np.floor(points / voxel_m).astype(np.int64)
    _, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    out = np.zeros((len(counts), 3))
    np.add.at(out, inverse, points)
    out /= counts[:, None]
    if colours is None:
        return out, None
    col = np.zeros((len(counts), colours.shape[1]))
    np.add.at(col, inverse, colours)
    return out, col / counts[:, None]


#: Pixel offsets to the neighbours a pixel links to (one half-plane, so each pair once): up to two
#: pixels away, so that a one-pixel gap (an edge pixel under the height threshold) does not split an object.
_NEIGHBOURS = ((0, 1), (0, 2), (1, -2), (1, -1), (1, 0), (1, 1), (1, 2), (2, -1), (2, 0), (2, 1))


def cluster(
    points: NDArray[np.floating],
    pixels: NDArray[np.intp],
    ranges: NDArray[np.floating],
    shape: tuple[int, int],
    *,
    link_m: float,
    focal_px: float,
) -> list[NDArray[np.intp]]:
    """Groups of foreground points, as indices into ``points``, largest first.

    Two points link when their pixels are at most two apart in the image and the points are
    closer in space than ``link_m`` plus 2.5 pixel footprints at their range (so that a far
    object's sparse points still hold together, while objects at different depths split).
    Clustering in the image rather than in space keeps this independent of the range.

    Args:
        points: (N, 3) map points, metres.
        pixels: (N,) their flat pixel indices (row * width + column).
        ranges: (N,) their depths, metres.
        shape: the image's (height, width), pixels.
        link_m: the link distance at zero range, metres.
        focal_px: the camera's focal length, pixels (a pixel's footprint is range / focal).
    """
    n = len(points)
    if n == 0:
        return []
    height, width = shape
    index = np.full(width * height, -1, dtype=np.intp)
    index[pixels] = np.arange(n)
    rows, cols = np.divmod(pixels, width)
    heads, tails = [], []
    for dr, dc in _NEIGHBOURS:
        r, c = rows + dr, cols + dc
        inside = (r < height) & (c >= 0) & (c < width)
        j = np.full(n, -1, dtype=np.intp)
        j[inside] = index[r[inside] * width + c[inside]]
        i = np.flatnonzero(j >= 0)
        j = j[i]
        gap = np.linalg.norm(points[i] - points[j], axis=1)
        reach = link_m + 2.5 * math.hypot(dr, dc) * ranges[i] / focal_px
        ok = gap < reach
        heads.append(i[ok])
        tails.append(j[ok])
    head, tail = np.concatenate(heads), np.concatenate(tails)
    graph = coo_matrix((np.ones(len(head)), (head, tail)), shape=(n, n))
    count, labels = connected_components(graph, directed=False)
    order = np.argsort(labels, kind="stable")
    groups = np.split(order, np.cumsum(np.bincount(labels, minlength=count))[:-1])
    return sorted(groups, key=len, reverse=True)


@functools.lru_cache(maxsize=64)
def _surface(model: ShapeModel, spacing_m: float) -> F64:
    return model.surface(spacing_m)


def _chromaticity(rgb: F64) -> F64:
    return rgb / max(float(np.sum(rgb)), 1e-6)


@dataclass
class _Candidate:
    cost: float
    detection: Detection
    model: ShapeModel
    points: F64


def _rotation(yaw: float) -> F64:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _fit_candidate(  # noqa: PLR0912 - the gates read best in the order they apply
    model: ShapeModel,
    pts: F64,
    *,
    colour: F64 | None,
    support: float,
    camera: F64,
    view: DepthView,
    c: PerceptionConfig,
) -> _Candidate | None:
    """The fit of ``model`` to one cluster, scored; None where the object cannot be this cluster."""
    spec = model.spec
    chroma = 0.0
    if colour is not None and c.colour_weight > 0:
        chroma = float(np.abs(_chromaticity(colour) - _chromaticity(np.asarray(spec.rgba[:3]))).sum())
        if chroma > c.max_chromaticity_difference:
            return None
    bottom, top = float(pts[:, 2].min()), float(pts[:, 2].max())
    centred = pts[:, :2] - pts[:, :2].mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    along, across = centred @ axes[0], centred @ axes[-1]
    if float(np.ptp(along)) > model.extent_m + c.size_tolerance_m:
        return None
    # Resting on the surface below (its bottom may be hidden), or held / on something unknown.
    hypotheses = []
    if (
        bottom - support < spec.height + c.rest_tolerance_m
        and top - support < spec.height + c.size_tolerance_m
    ):
        hypotheses.append(True)
    if bottom - support > c.rest_tolerance_m and top - bottom < spec.height + c.size_tolerance_m:
        hypotheses.append(False)
    if not hypotheses:
        return None
    centroid = pts.mean(axis=0)
    xy = initial_xy(model, pts, camera[:2])
    yaws = [0.0]
    if model.fits_yaw:
        axis_yaw = math.atan2(axes[0][1], axes[0][0])
        # an asymmetric head (the fork's) lies at the wider end of the major axis
        wider_ahead = (
            np.mean(np.abs(across[along > 0])) >= np.mean(np.abs(across[along <= 0]))
            if len(pts) > 3
            else True
        )
        yaws = [axis_yaw, axis_yaw + math.pi] if wider_ahead else [axis_yaw + math.pi, axis_yaw]
    # the sensor's depth noise at the cluster's range widens what a good fit may leave
    noise = float(c.depth_noise(float(np.linalg.norm(pts.mean(axis=0) - camera))))
    huber, max_rms = max(c.huber_m, noise), c.max_rms_m + noise
    # at most max_fit_points, spread over the cluster: the fit's cost grows with them, its accuracy hardly
    sample = pts[:: max(1, len(pts) // c.max_fit_points)]
    best = None
    for resting in hypotheses:
        z = support if resting else bottom - 0.005
        for yaw in yaws:
            fit = fit_pose(model, sample, (xy[0], xy[1], z, yaw), fit_z=not resting, huber_m=huber)
            if best is None or fit.rms_m < best.rms_m - 1e-4:
                best, best_resting = fit, resting
    assert best is not None
    if best.rms_m > max_rms:
        return None
    surface = _surface(model, c.surface_spacing_m)
    violation = view.free_space_violation(
        surface @ _rotation(best.yaw).T + best.position, c.free_space_tolerance_m
    )
    if violation > c.max_free_space_violation:
        return None
    cost = best.rms_m / max_rms + violation / c.max_free_space_violation + c.colour_weight * chroma / 0.3
    confidence = (
        (1.0 - math.exp(-len(pts) / c.confident_points))
        * math.exp(-((best.rms_m / max_rms) ** 2))
        * (1.0 - violation / c.max_free_space_violation)
        * math.exp(-c.colour_weight * chroma / 0.3)
    )
    if confidence < c.min_confidence:
        return None
    baseline = np.array([centroid[0], centroid[1], support if best_resting else bottom])
    yaw = best.yaw if model.fits_yaw else 0.0
    detection = Detection(spec.name, best.position, yaw, confidence, best.rms_m, len(pts), baseline)
    return _Candidate(cost, detection, model, pts)


def _explained(candidate: _Candidate, accepted: list[_Candidate], tolerance_m: float) -> bool:
    """Whether most of ``candidate``'s points lie on an accepted object's fitted surface (a fragment)."""
    for other in accepted:
        d = other.detection
        local = (candidate.points - d.position) @ _rotation(d.yaw)
        if np.median(np.abs(other.model.sdf(local))) < tolerance_m:
            return True
    return False


def detect(
    clusters: Sequence[tuple[F64, F64 | None]],
    view: DepthView,
    static: StaticScene,
    models: Sequence[ShapeModel],
    config: PerceptionConfig,
) -> list[Detection]:
    """The objects among one frame's clusters of foreground points.

    Args:
        clusters: (points (N, 3) in the map, metres; their RGB (N, 3) in 0..1 or None) per cluster.
        view: the frame's depth image and camera, for the free-space check.
        static: the scene's static geometry (for the support under each cluster).
        models: the objects to look for.
        config: thresholds and weights.
    """
    if not clusters or not models:
        return []
    camera = view.camera_from_map.inverse().translation
    cost = np.full((len(clusters), len(models)), _REJECTED)
    found: dict[tuple[int, int], _Candidate] = {}
    for i, (pts, colours) in enumerate(clusters):
        colour = None if colours is None else colours.mean(axis=0)
        support = float(static.support_height(pts[:, :2].mean(axis=0, keepdims=True))[0])
        for j, model in enumerate(models):
            candidate = _fit_candidate(
                model, pts, colour=colour, support=support, camera=camera, view=view, c=config
            )
            if candidate is not None:
                cost[i, j] = candidate.cost
                found[i, j] = candidate
    rows, cols = linear_sum_assignment(cost)
    chosen = sorted(
        (found[i, j] for i, j in zip(rows, cols, strict=True) if cost[i, j] < _REJECTED), key=lambda k: k.cost
    )
    accepted: list[_Candidate] = []
    for candidate in chosen:  # the best first; a fragment of one accepted is no object of its own
        if not _explained(candidate, accepted, 2.0 * config.huber_m):
            accepted.append(candidate)
    return [k.detection for k in accepted]
