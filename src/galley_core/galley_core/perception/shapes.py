"""The scene's object shapes as signed distance functions and surface samples, and the pose fit.

Each :class:`ShapeModel` is built from an :class:`galley_core.scene.ObjectSpec` exactly as the
simulator builds the object (galley_sim.mjcf): a sphere, a box, a cylinder, a bowl or plate (a
base disc and a rim ring), a fork (handle and head). Its frame is the object frame (origin at the
bottom centre, z up), the one ``object/<name>`` and ``perceived/<name>`` give.

:func:`fit_pose` finds the pose (x, y, z, yaw; objects stand upright) that puts the observed
points on the model's surface: Gauss-Newton on the signed distances, with Huber weights against
stray points. Seen from one side, a centroid lies on the visible half of an object (a sphere's
centroid sits about r/2 towards the camera); the fit corrects that, since only the model's
surface explains the points. ``surface`` samples let a caller check a fitted model against the
depth image (no model point may stand in front of what the camera saw).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from galley_core.perception._shape_kernels import SHAPE_CODES, huber_cost, posed_distances
from galley_core.scene import ObjectSpec

__all__ = ["FitResult", "ShapeModel", "fit_pose", "initial_xy"]

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class ShapeModel:
    """An object's shape: signed distance (m, negative inside) and points on its surface."""

    spec: ObjectSpec

    @property
    def fits_yaw(self) -> bool:
        """Whether the yaw is observable (not a shape of revolution)."""
        return not self.spec.symmetric_about_z

    @property
    def extent_m(self) -> float:
        """Largest horizontal extent (diameter or length), metres."""
        return 2.0 * self.spec.footprint_radius

    def sdf(self, p: F64) -> F64:
        """Signed distances (m) of (N, 3) points given in the object frame."""
        distances: F64 = self.sdf_at(p, np.zeros((1, 4)))[0]
        return distances

    def sdf_at(self, points: F64, poses: F64) -> F64:
        """Signed distances (K, N) of (N, 3) map points to the shape at each of ``poses`` (K, 4).

        A pose is x, y, z (m) and yaw (rad) of the object frame in the map.
        """
        points = np.ascontiguousarray(points, dtype=np.float64)
        poses = np.ascontiguousarray(poses, dtype=np.float64).reshape(-1, 4)
        out = np.empty((len(poses), len(points)))
        posed_distances(SHAPE_CODES[self.spec.shape], self._size, points, poses, out)
        return out

    @cached_property
    def _size(self) -> F64:
        size = np.zeros(3)  # a sphere has one number, a cylinder two
        size[: len(self.spec.size)] = self.spec.size
        return size

    def surface(self, spacing_m: float = 0.01) -> F64:
        """Points (N, 3) on the surface, about ``spacing_m`` apart: the model's visible skin."""
        s, shape = self.spec.size, self.spec.shape
        if shape == "sphere":
            n = max(16, int(4 * math.pi * s[0] ** 2 / spacing_m**2))
            i = np.arange(n) + 0.5
            polar, azimuth = np.arccos(1 - 2 * i / n), math.pi * (1 + 5**0.5) * i
            unit = np.stack(
                [np.sin(polar) * np.cos(azimuth), np.sin(polar) * np.sin(azimuth), np.cos(polar)], 1
            )
            result: F64 = unit * s[0] + np.array([0.0, 0.0, s[0]])
            return result
        # Everything else: a grid over the bounding box, kept where the surface is.
        r = self.spec.footprint_radius if shape != "box" else max(s[0], s[1]) / 2
        h = self.spec.height
        xs = np.arange(-r, r + 1e-9, spacing_m / 2)
        zs = np.arange(0.0, h + 1e-9, min(spacing_m / 2, h / 3))
        grid = np.stack(np.meshgrid(xs, xs, zs, indexing="ij"), -1).reshape(-1, 3)
        d = self.sdf(grid)
        return grid[np.abs(d) <= spacing_m / 3]


def initial_xy(model: ShapeModel, points: F64, camera_xy: F64) -> F64:
    """A start (x, y) for :func:`fit_pose` from an object's visible points, metres.

    Thin walls (a bowl's or a plate's rim) have the surface on both sides of the wall: started a
    wall's thickness off, a fit settles with the outside of the near rim on the inside of the model.
    So round shapes start from their top, which a camera above them sees whole: a cylinder's top
    disc (its centroid), the rim of a bowl or plate (a circle of the rim's radius through it). A
    sphere starts half a radius behind the centroid, seen from the camera; anything else at the centroid.
    """
    s, shape = model.spec.size, model.spec.shape
    centroid: F64 = points[:, :2].mean(axis=0)
    top = points[:, 2] >= points[:, 2].max() - 0.004
    if shape == "cylinder":
        disc: F64 = points[top, :2].mean(axis=0)
        return disc
    if shape == "sphere":
        away = centroid - camera_xy
        behind: F64 = centroid + 0.5 * s[0] * away / max(float(np.linalg.norm(away)), 1e-9)
        return behind
    if shape not in ("bowl", "plate"):
        # elongated (a fork) or a box: the middle of the points' extent along their major axis,
        # which the ends bound (a thin bar's sides do not), and the centroid across it
        centred = points[:, :2] - centroid
        axis = np.linalg.svd(centred, full_matrices=False)[2][0]
        along = centred @ axis
        middle: F64 = centroid + axis * (along.max() + along.min()) / 2.0
        return middle
    ring, radius = points[top, :2], s[0] - s[2] / 2.0
    centre = ring.mean(axis=0)
    for _ in range(10):  # Gauss-Newton on |p - c| - radius
        d = ring - centre
        dist = np.maximum(np.linalg.norm(d, axis=1), 1e-9)
        jac = -d / dist[:, None]
        step, *_ = np.linalg.lstsq(jac, -(dist - radius), rcond=None)
        centre = centre + np.clip(step, -0.02, 0.02)
        if np.max(np.abs(step)) < 1e-5:
            break
    result: F64 = centre
    return result


@dataclass(frozen=True)
class FitResult:
    """A fitted pose: position of the object frame (m, map), yaw (rad), residual RMS (m), points used."""

    position: F64
    yaw: float
    rms_m: float
    points: int


def fit_pose(
    model: ShapeModel,
    points: F64,
    initial: tuple[float, float, float, float],
    *,
    fit_z: bool,
    huber_m: float = 0.004,
    iterations: int = 12,
    slide: bool = True,
) -> FitResult:
    """Fit ``model``'s pose (x, y, z, yaw) to map points on its visible surface.

    Args:
        model: the shape.
        points: (N, 3) map points of one object, metres.
        initial: starting (x, y, z, yaw); z stays there when ``fit_z`` is false (an object
            resting on a known surface), yaw stays when the shape is one of revolution.
        fit_z: fit the height too (an object held or on an unknown support).
        huber_m: residuals beyond this count linearly (stray points), metres.
        iterations: Gauss-Newton steps at most.
        slide: for shapes with a yaw, scan 2 cm either way along the fitted axis and refit from the best.
    """
    points = np.ascontiguousarray(points, dtype=np.float64)
    params = np.array(initial, dtype=float)
    free = [0, 1] + ([2] if fit_z else []) + ([3] if model.fits_yaw else [])
    eps = np.array([1e-4, 1e-4, 1e-4, 1e-3])
    r = model.sdf_at(points, params)[0]
    for _ in range(iterations):
        weights = np.sqrt(np.minimum(1.0, huber_m / np.maximum(np.abs(r), 1e-12)))
        steps = np.repeat(params[None], len(free), axis=0)
        steps[np.arange(len(free)), free] += eps[free]
        jac = ((model.sdf_at(points, steps) - r) / eps[free][:, None]).T
        jw, rw = jac * weights[:, None], r * weights
        delta, *_ = np.linalg.lstsq(jw.T @ jw + 1e-9 * np.eye(len(free)), -jw.T @ rw, rcond=None)
        delta = np.clip(delta, -0.02, 0.02)  # no step beyond 2 cm (or 0.02 rad) at once
        # The distances are not smooth where two parts of a shape meet: halve a step that does not help.
        current = huber_cost(r, huber_m)
        for _ in range(5):
            trial = params.copy()
            trial[free] += delta
            r_trial = model.sdf_at(points, trial)[0]
            if huber_cost(r_trial, huber_m) <= current:
                break
            delta = delta / 2.0
        else:
            break
        params, r = trial, r_trial
        if np.max(np.abs(delta)) < 1e-5:
            break
    if model.fits_yaw and slide:
        # Along a bar only its ends pull, and the parts' union leaves shallow steps where a
        # Gauss-Newton step stalls: scan the axis, then refine from the best place.
        axis = np.array([math.cos(params[3]), math.sin(params[3]), 0.0, 0.0])
        shifts = np.arange(-0.02, 0.0201, 0.001)
        residuals = model.sdf_at(points, params + shifts[:, None] * axis)
        costs = [huber_cost(row, huber_m) for row in residuals]
        best = int(np.argmin(costs))
        if costs[best] < huber_cost(r, huber_m) and shifts[best] != 0.0:
            return fit_pose(
                model,
                points,
                tuple(params + shifts[best] * axis),
                fit_z=fit_z,
                huber_m=huber_m,
                iterations=iterations,
                slide=False,
            )
    rms = float(np.sqrt(np.mean(np.minimum(r**2, (3 * huber_m) ** 2))))
    return FitResult(params[:3].copy(), float(math.remainder(params[3], 2 * math.pi)), rms, len(points))
