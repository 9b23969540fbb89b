from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

from galley_core.geometry import Pose2D, Transform, normalize_angle, quaternion_from_yaw, yaw_from_quaternion
from galley_core.navigation.unicycle import integrate_unicycle, square_command, square_lap_s


def test_compose_and_inverse():
    a = Pose2D(1.0, 2.0, math.pi / 2).to_transform()
    b = Pose2D(1.0, 0.0, 0.0).to_transform()
    ab = a * b
    np.testing.assert_allclose(ab.translation, [1.0, 3.0, 0.0], atol=1e-12)
    assert ab.yaw() == pytest.approx(math.pi / 2)
    ident = ab * ab.inverse()
    np.testing.assert_allclose(ident.translation, 0.0, atol=1e-12)
    np.testing.assert_allclose(ab.apply([0.0, 0.0, 0.0]), ab.translation)


def test_interpolation_is_linear_and_spherical():
    a = Transform(np.zeros(3), quaternion_from_yaw(0.0))
    b = Transform(np.array([2.0, 0.0, 0.0]), quaternion_from_yaw(1.0))
    mid = a.interpolate(b, 0.5)
    np.testing.assert_allclose(mid.translation, [1.0, 0.0, 0.0])
    assert mid.yaw() == pytest.approx(0.5)


def test_transform_rejects_nan_and_zero_quaternion():
    with pytest.raises(ValueError, match="non-finite"):
        Transform(np.array([np.nan, 0, 0]), np.array([0, 0, 0, 1.0]))
    with pytest.raises(ValueError, match="zero norm"):
        Transform(np.zeros(3), np.zeros(4))


def test_angles():
    assert normalize_angle(3 * math.pi / 2) == pytest.approx(-math.pi / 2)
    assert yaw_from_quaternion(quaternion_from_yaw(-2.5)) == pytest.approx(-2.5)


def test_unicycle_arc_is_exact_regardless_of_step():
    coarse = integrate_unicycle(Pose2D(), 0.5, 0.5, 2.0)
    fine = Pose2D()
    for _ in range(2000):
        fine = integrate_unicycle(fine, 0.5, 0.5, 0.001)
    assert (coarse.x, coarse.y, coarse.theta) == pytest.approx((fine.x, fine.y, fine.theta), abs=1e-9)
    # Quarter circle of radius 1: from (0, 0) heading +x to (1, 1) heading +y.
    quarter = integrate_unicycle(Pose2D(), 1.0, 1.0, math.pi / 2)
    assert (quarter.x, quarter.y, quarter.theta) == pytest.approx((1.0, 1.0, math.pi / 2))


def test_square_command_turns_exactly_ninety_degrees_per_corner_at_any_rate():
    kw = {"side_m": 1.0, "speed_mps": 0.2, "turn_rate_rps": 0.5, "laps": 1}
    lap = square_lap_s(1.0, 0.2, 0.5)
    for dt in (0.1, 0.07, 0.5):
        pose, t = Pose2D(), 0.0
        while t < lap + 1.0:
            v, w = square_command(t, dt, **kw)
            pose = integrate_unicycle(pose, v, w, dt)
            t += dt
        assert math.hypot(pose.x, pose.y) < 0.05 * dt / 0.1 + 1e-6
        assert abs(normalize_angle(pose.theta)) < 1e-9
    assert square_command(lap + 0.5, 0.1, **kw) == (0.0, 0.0)


def test_quaternion_math_matches_scipy():
    rng = np.random.default_rng(7)
    for _ in range(20):
        ra, rb = Rotation.random(random_state=rng), Rotation.random(random_state=rng)
        ta, tb = rng.normal(size=3), rng.normal(size=3)
        a, b = Transform(ta, ra.as_quat()), Transform(tb, rb.as_quat())
        ab = a * b
        np.testing.assert_allclose(ab.translation, ta + ra.apply(tb), atol=1e-12)
        assert abs(np.dot(ab.rotation, (ra * rb).as_quat())) == pytest.approx(1.0)
        np.testing.assert_allclose(a.inverse().apply(a.apply(tb)), tb, atol=1e-12)
        f = rng.uniform()
        expected = Slerp([0.0, 1.0], Rotation.concatenate([ra, rb]))([f]).as_quat()[0]
        assert abs(np.dot(a.interpolate(b, f).rotation, expected)) == pytest.approx(1.0)
