"""The objects' contact physics: what keeps the oracle's placed objects where it put them."""

from __future__ import annotations

import numpy as np
import pytest

from galley_core.episode import Episode, ObjectPlacement
from galley_core.geometry import Pose2D
from galley_core.scene import load_scene
from galley_sim.mjcf import object_body_name
from galley_sim.simulator import KitchenSim


@pytest.fixture(scope="module")
def kitchen(request):
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


def test_an_apple_set_down_rolling_comes_to_rest_on_the_table(kitchen):
    """A ball released with a little roll stops within a few centimetres.

    Without rolling friction (the objects' contacts had condim 4) a ball never slows down: apples
    that the oracle had placed in a table zone rolled off its edge during the next steps.
    """
    zone = kitchen.zone("blue")
    x, y = zone.center
    apple = ObjectPlacement("apple", "blue", x, y, 0.0, "red", -3.0, 2.6)
    sim = KitchenSim(kitchen)
    sim.reset(Episode("kitchen", 0, Pose2D(*zone.approach), (apple,), {}))
    sim.step(250)  # settle on the table (0.5 s)
    radius = kitchen.object("apple").size[0]
    dof = sim._object_dof["apple"]
    sim.data.qvel[dof : dof + 6] = [0.0, 0.05, 0.0, -0.05 / radius, 0.0, 0.0]  # rolling at 5 cm/s
    body = sim.data.body(object_body_name("apple"))  # its centre of mass: the ball's centre
    start = body.xipos.copy()
    sim.step(1500)  # 3 s
    end = body.xipos.copy()
    sim.close()
    centre_moved = np.linalg.norm((end - start)[:2])
    assert end[2] > zone.z, "the apple left the table"
    assert centre_moved < 0.05, f"the apple rolled {centre_moved:.3f} m"
