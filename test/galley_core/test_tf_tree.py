from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from galley_core.geometry import Pose2D, Transform
from galley_core.tf_tree import (
    ConnectivityError,
    ExtrapolationError,
    FrameNotFoundError,
    TransformTree,
)

S = 1_000_000_000


@pytest.fixture
def tree() -> TransformTree:
    t = TransformTree()
    t.set_transform("map", "odom", 0, Pose2D(1.0, 0.0, 0.0).to_transform(), static=True)
    t.set_transform("odom", "base_link", 1 * S, Pose2D(0.0, 0.0, 0.0).to_transform())
    t.set_transform("odom", "base_link", 3 * S, Pose2D(2.0, 0.0, math.pi / 2).to_transform())
    t.set_transform("base_link", "camera", 0, Pose2D(0.5, 0.0, 0.0).to_transform(), static=True)
    return t


def test_chain_lookup_interpolates_dynamic_links(tree):
    tf, stamp = tree.lookup("map", "camera", 2 * S)
    assert stamp == 2 * S
    # base_link halfway: x = 1 (odom) + 1 (map offset), yaw pi/4; camera 0.5 m ahead along that yaw.
    expected = [2.0 + 0.5 * math.cos(math.pi / 4), 0.5 * math.sin(math.pi / 4), 0.0]
    np.testing.assert_allclose(tf.translation, expected, atol=1e-12)
    assert tf.yaw() == pytest.approx(math.pi / 4)


def test_latest_common_time_and_inverse_direction(tree):
    tf, stamp = tree.lookup("camera", "map")
    assert stamp == 3 * S
    forward, _ = tree.lookup("map", "camera")
    np.testing.assert_allclose((tf * forward).translation, 0.0, atol=1e-12)


def test_errors_name_the_problem(tree):
    with pytest.raises(FrameNotFoundError, match="'gripper' does not exist"):
        tree.lookup("map", "gripper")
    tree.set_transform("world", "table", 0, Pose2D().to_transform(), static=True)
    with pytest.raises(ConnectivityError, match="not connected"):
        tree.lookup("map", "table")
    with pytest.raises(ExtrapolationError, match=r"known for t in \[1.000, 3.000\]"):
        tree.lookup("map", "base_link", 4 * S)
    assert not tree.can_transform("map", "base_link", 0)


def test_cache_drops_old_transforms():
    tree = TransformTree(cache_time_ns=2 * S)
    for t in range(10):
        tree.set_transform("odom", "base_link", t * S, Pose2D(float(t), 0, 0).to_transform())
    assert tree.can_transform("odom", "base_link", 8 * S)
    assert not tree.can_transform("odom", "base_link", 5 * S)


def test_lookup_composes_as_transforms_do():
    """The tree's float arithmetic agrees with Transform's along a 3D chain, both directions."""
    rng = np.random.default_rng(0)
    chain = ["map", "a", "b", "c"]
    tree, expected = TransformTree(), Transform.identity()
    for parent, child in itertools.pairwise(chain):
        step = Transform(rng.normal(size=3), rng.normal(size=4))
        tree.set_transform(parent, child, 1 * S, step)
        expected = expected * step
    found, _ = tree.lookup("map", "c")
    np.testing.assert_allclose(found.translation, expected.translation, atol=1e-12)
    np.testing.assert_allclose(found.rotation, expected.rotation, atol=1e-12)
    back, _ = tree.lookup("c", "map")
    np.testing.assert_allclose(back.translation, expected.inverse().translation, atol=1e-12)
    np.testing.assert_allclose(back.rotation, expected.inverse().rotation, atol=1e-12)


def test_set_transforms_holds_what_set_transform_one_by_one_holds():
    one_by_one, batched = TransformTree(2 * S), TransformTree(2 * S)
    steps = [
        [
            ("map", "odom", (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)),
            ("odom", "base", (0.1, 0.2, 0.0, 0.0, 0.0, 0.0, 1.0)),
        ],
        [
            ("map", "odom", (1.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)),
            ("odom", "base", (0.3, 0.2, 0.0, 0.0, 0.0, 0.6, 0.8)),
        ],
        [
            ("map", "odom", (2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)),
            ("map", "base", (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)),
        ],
    ]
    for i, entries in enumerate(steps * 2):  # a re-parented edge, repeated and older stamps, pruning
        stamp = [1, 2, 2, 3, 4, 5][i] * S
        for parent, child, values in entries:
            one_by_one.set_transform(parent, child, stamp, values)
        assert batched.set_transforms(entries, stamp) == []
    for target, source in (("map", "base"), ("map", "odom")):
        assert batched.lookup_values(target, source) == one_by_one.lookup_values(target, source)
    assert batched._edges.keys() == one_by_one._edges.keys()
    for child, edge in batched._edges.items():
        assert (edge.parent, edge.stamps, edge.transforms) == (
            one_by_one._edges[child].parent,
            one_by_one._edges[child].stamps,
            one_by_one._edges[child].transforms,
        )


def test_set_transforms_refuses_bad_frames_and_keeps_the_rest():
    tree = TransformTree()
    refused = tree.set_transforms(
        [
            ("map", "map", (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)),
            ("map", "odom", (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)),
        ],
        S,
    )
    assert [(p, c) for p, c, _ in refused] == [("map", "map")]
    assert tree.lookup_values("map", "odom")[0][0] == 1.0
