"""galley_core.perception without a simulator: shape fits, static and robot filters, clusters, tracking."""

from __future__ import annotations

import math

import numpy as np
import pytest

from galley_core.geometry import Transform, quaternion_from_yaw
from galley_core.perception import (
    DepthView,
    Detection,
    Intrinsics,
    ObjectTracker,
    PerceptionConfig,
    RobotMask,
    ShapeModel,
    StaticScene,
    back_project,
    cluster,
    fit_pose,
)
from galley_core.perception.shapes import initial_xy
from galley_core.scene import load_scene

SCENE = load_scene(__file__.rsplit("/test/", 1)[0] + "/config/scenes/kitchen.yaml")


def visible_side(model: ShapeModel, position: np.ndarray, yaw: float, camera: np.ndarray) -> np.ndarray:
    """Surface points of ``model`` at a pose that face ``camera`` (what a depth camera sees of it)."""
    c, s = math.cos(yaw), math.sin(yaw)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    local = model.surface(0.004)
    eps = 1e-4
    normals = np.stack(
        [(model.sdf(local + eps * e) - model.sdf(local - eps * e)) / (2 * eps) for e in np.eye(3)], 1
    )
    world = local @ rot.T + position
    facing = np.sum((normals @ rot.T) * (camera - world), axis=1) > 0
    return world[facing]


@pytest.mark.parametrize("name", ["apple", "bowl", "cup", "fork", "plate"])
def test_a_shape_fit_recovers_the_pose_from_the_visible_side_where_the_centroid_cannot(name):
    model = ShapeModel(SCENE.object(name))
    truth, yaw = np.array([0.4, -0.2, 0.75]), 0.7
    camera = np.array([-0.5, -0.2, 1.5])
    points = visible_side(model, truth, yaw, camera)
    x, y = initial_xy(model, points, camera[:2])
    fit = fit_pose(model, points, (x, y, truth[2], yaw + 0.15), fit_z=False)
    assert np.linalg.norm(fit.position - truth) < 0.002
    assert fit.rms_m < 0.001
    if model.fits_yaw:
        assert abs(math.remainder(fit.yaw - yaw, 2 * math.pi)) < 0.03
    # the plain centroid of what is seen lies off the object's axis, towards the camera
    if name in ("apple", "cup"):
        assert np.linalg.norm(points.mean(axis=0)[:2] - truth[:2]) > 0.01


def test_the_static_scene_keeps_what_stands_on_a_surface_and_nothing_of_the_furniture():
    static = StaticScene(SCENE, height_threshold_m=0.004, margin_m=0.015)
    table = SCENE.box("table")
    top = table.top_z
    points = np.array(
        [
            [0.0, -0.8, top + 0.001],  # the table top
            [0.0, -0.8, top + 0.02],  # something standing on it
            [0.3, 0.5, 0.001],  # the floor
            [0.3, 0.5, 0.05],  # something on the floor
            [0.0, 3.05, 1.0],  # the north wall
            [0.0, -1.05, top + 0.02],  # the tray, a background object
            [9.0, 9.0, 1.0],  # outside the map
        ]
    )
    assert static.foreground(points).tolist() == [False, True, False, True, False, False, False]
    assert static.support_height(points[:2, :2]).tolist() == [pytest.approx(top)] * 2


def test_the_robot_mask_drops_the_arm_and_body_and_keeps_an_object_beyond_them():
    mask = RobotMask(margin_m=0.01)
    base = Transform(np.array([1.0, 2.0, 0.0]), quaternion_from_yaw(0.5))
    shoulder = base * Transform(np.array([0.2, 0.0, 1.08]), np.array([0.0, -0.5, 0.0, math.sqrt(0.75)]))
    links = {"base_link": base, "shoulder_link": shoulder}
    points = np.array(
        [
            shoulder.apply([0.15, 0.0, 0.03]),  # on the upper arm, between its ends
            base.apply([0.0, 0.0, 0.3]),  # the body
            base.apply([0.8, 0.0, 0.9]),  # an object in front of the robot
        ]
    )
    assert mask.keep(points, links).tolist() == [False, False, True]
    assert "gripper_link" in mask.frames


def test_back_projection_puts_a_pixel_at_its_depth_along_its_ray():
    k = Intrinsics(100.0, 100.0, 49.5, 39.5, 100, 80)
    depth = np.full((80, 100), np.nan, dtype=np.float32)
    depth[39, 79] = 2.0
    camera = Transform(np.array([1.0, 0.0, 1.0]), np.array([0.0, 0.0, 0.0, 1.0]))
    points, pixels = back_project(depth, k, camera, max_range_m=3.0)
    assert pixels.tolist() == [39 * 100 + 79]
    assert points[0] == pytest.approx([1.0 + 2.0 * 29.5 / 100, 2.0 * -0.5 / 100, 3.0], abs=1e-6)


def test_clusters_split_where_the_image_or_the_depth_separates_points():
    shape = (10, 10)
    pixels = np.array([0, 1, 2, 11, 55, 56, 57])  # two patches apart in the image ...
    points = np.array([[0, 0, 1], [0.005, 0, 1], [0.01, 0, 1], [0.005, 0.005, 1]] + [[1, 1, 1]] * 3, float)
    points[6] = [1, 1, 1.5]  # ... and one pixel of the second patch far behind it
    ranges = np.ones(len(points))
    groups = cluster(points, pixels, ranges, shape, link_m=0.012, focal_px=500.0)
    assert sorted(sorted(g.tolist()) for g in groups) == [[0, 1, 2, 3], [4, 5], [6]]


def _view(depth_m: float) -> DepthView:
    depth = np.full((60, 80), depth_m, dtype=np.float32)
    return DepthView(depth, Intrinsics(60.0, 60.0, 39.5, 29.5, 80, 60), Transform().inverse())


def test_an_unseen_object_keeps_its_estimate_and_fades_slowly_out_of_view_fast_where_it_should_show():
    config = PerceptionConfig(out_of_view_half_life_s=10.0, missed_in_view_decay=0.5, min_confidence=0.05)
    tracker = ObjectTracker(config, {"cup": 0.09})
    seen = Detection("cup", np.array([0.0, 0.0, 1.0]), 0.0, 0.8, 0.001, 50, np.zeros(3))
    tracker.update(0.0, [seen], _view(1.0))
    # hidden: something 0.5 m nearer covers the cup's place
    (estimate,) = tracker.update(10.0, [], _view(0.5))
    assert estimate.confidence == pytest.approx(0.4)
    assert not estimate.seen_now and estimate.position.tolist() == [0.0, 0.0, 1.0]
    # its place in plain sight (the depth reaches it), and no cup there: it has been moved
    (estimate,) = tracker.update(10.1, [], _view(1.2))
    assert estimate.confidence == pytest.approx(0.2)
    for k in range(3):  # 0.1, 0.05, then below min_confidence: dropped
        tracker.update(10.2 + 0.1 * k, [], _view(1.2))
    assert tracker.estimates == []


@pytest.mark.parametrize(
    ("name", "local", "distance"),
    [
        ("apple", (0.0, 0.0, 0.0), 0.0),  # a sphere resting on its lowest point
        ("cup", (0.0, 0.0, 0.5), None),  # above the top: the height above it
        ("cup", (1.0, 0.0, 0.02), None),  # beside the wall: the distance to it
        ("bowl", (0.0, 0.0, 0.02), None),  # inside the bowl, above its base: off the base
        ("plate", (0.0, 0.0, -0.1), 0.1),  # under the middle of its base
        ("fork", (0.0, 0.0, 1.0), None),  # high above: about its height over the top
    ],
)
def test_a_shape_s_distance_is_its_geometry_s(name, local, distance):
    """ShapeModel.sdf (the compiled kernel) against the shapes' sizes, worked out by hand."""
    spec = SCENE.object(name)
    s = spec.size
    x, y, z = local
    if distance is None:
        if spec.shape == "cylinder":
            radius, height = s[0], s[1]
            distance = z - height if z > height else math.hypot(x, y) - radius
        elif spec.shape == "bowl":
            distance = z - s[2]  # the base's top, its wall thick
        else:  # the fork: its thickness is its height
            distance = z - s[2]
    got = float(ShapeModel(spec).sdf(np.array([local]))[0])
    assert got == pytest.approx(distance, abs=1e-9)


def test_a_shape_s_distances_at_a_pose_are_those_of_the_points_moved_into_its_frame():
    model = ShapeModel(SCENE.object("fork"))  # not round: yaw matters
    rng = np.random.default_rng(3)
    points = rng.normal(scale=0.1, size=(50, 3))
    poses = np.array([[0.3, -0.2, 0.8, 0.9], [0.0, 0.0, 0.0, 0.0], [-1.0, 2.0, 0.1, -2.5]])
    got = model.sdf_at(points, poses)
    for pose, row in zip(poses, got, strict=True):
        c, s = math.cos(pose[3]), math.sin(pose[3])
        d = points - pose[:3]
        local = np.stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1], d[:, 2]], 1)
        np.testing.assert_allclose(row, model.sdf(local), atol=1e-12)
