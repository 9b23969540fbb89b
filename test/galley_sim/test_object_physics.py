"""The objects' contact physics: what keeps the oracle's placed objects where it put them."""

from __future__ import annotations

import numpy as np
import pytest

from galley_core.episode import Episode, ObjectPlacement
from galley_core.geometry import Pose2D
from galley_sim.mjcf import object_body_name
from galley_sim.simulator import KitchenSim


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


@pytest.mark.parametrize("name", ["apple", "bowl", "cup", "fork", "plate"])
def test_an_object_handed_over_is_carried_through_turns_drives_and_base_teleports(kitchen, name):
    """A failed pick's teleport (evaluation): the object ends in the closed gripper, the arm tucked,
    its bottom above the counters, and stays there as the base turns, drives and is teleported."""
    zone = kitchen.zone("blue")
    sim = KitchenSim(kitchen)
    sim.reset(
        Episode(
            "kitchen",
            0,
            Pose2D(*zone.approach),
            (ObjectPlacement(name, "blue", *zone.center, 0.3, "red", -3.0, 2.6),),
            {},
        )
    )
    sim.step(250)
    time_s = sim.data.time
    sim.hand_over(name)
    assert sim.data.time == time_s  # no time passes
    assert sim.held_objects() == [name]

    def grasp() -> np.ndarray:
        return sim.site_transform("tcp").inverse().apply(sim.object_poses()[name].translation)

    held = grasp()
    assert np.linalg.norm(held) == pytest.approx(np.linalg.norm(kitchen.object(name).grasp_offset), abs=0.005)
    assert sim.object_poses()[name].translation[2] > 0.94  # task_executor.pick_carry_height_m
    sim.set_base_command(0.0, 1.0)  # faster than the oracle turns
    sim.step(1000)
    sim.set_base_command(0.5, 0.0)
    sim.step(1000)
    sim.set_base_command(0.0, 0.0)
    sim.step(250)
    sim.teleport_base(Pose2D(-3.0, 1.95, 1.0))
    sim.step(250)
    assert np.linalg.norm(grasp() - held) < 0.01
    assert sim.held_objects() == [name]
    sim.close()
