"""galley_core.perception on frames the simulator renders: every object that shows is found, near its pose.

Small images (160x120) from views of the zones in two episodes; an object counts as showing when a
segmentation rendering (ground truth, for the test only) gives it at least 20 pixels.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from galley_core.episode import sample_episode
from galley_core.geometry import Pose2D, Transform
from galley_core.perception import Intrinsics, ObjectPerception, PerceptionConfig
from galley_core.perception.pointcloud import GALLEY_MM_CAPSULES
from galley_core.scene import load_scene
from galley_sim.simulator import KitchenSim, SimOptions

WIDTH, HEIGHT = 160, 120
#: MuJoCo's camera frame (x right, y up, looking along -z) to the optical frame: 180 degrees about x.
OPTICAL = Transform(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))
LINKS = ["base_link", *sorted({frame for frame, *_ in GALLEY_MM_CAPSULES})]


@pytest.fixture(scope="module")
def sim(request):
    scene = load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")
    sim = KitchenSim(scene, SimOptions(image_width=WIDTH, image_height=HEIGHT))
    yield sim
    sim.close()


def shown_pixels(sim: KitchenSim, renderer: mujoco.Renderer) -> dict[str, int]:
    renderer.update_scene(sim.data, camera="base_camera")
    seg = renderer.render()
    bodies = sim.model.geom_bodyid[seg[:, :, 0][seg[:, :, 1] == int(mujoco.mjtObj.mjOBJ_GEOM)]]
    return {o.name: int(np.sum(bodies == sim.model.body(f"object/{o.name}").id)) for o in sim.scene.objects}


@pytest.mark.parametrize("seed", [3, 7])
def test_every_object_in_view_is_found_within_a_centimetre_and_a_half(sim, seed):
    scene = sim.scene
    sim.reset(sample_episode(scene, seed))
    perception = ObjectPerception(scene, PerceptionConfig())
    renderer = mujoco.Renderer(sim.model, HEIGHT, WIDTH)
    renderer.enable_segmentation_rendering()
    checked = 0
    try:
        for zone in scene.zones:
            x, y, yaw = zone.approach
            # backed off 0.6 m and turned a little: the tucked arm hides what lies straight ahead
            sim.teleport_base(Pose2D(x - 0.6 * math.cos(yaw), y - 0.6 * math.sin(yaw), yaw + 0.35))
            sim.step(10)
            depth = sim.render("base_camera", depth=True)
            rgb = sim.render_cameras(["base_camera"])[0]
            intrinsics = Intrinsics(*sim.camera_intrinsics("base_camera", WIDTH, HEIGHT), WIDTH, HEIGHT)
            camera = sim.camera_transform("base_camera") * OPTICAL
            links = {name: sim.body_transform(name) for name in LINKS}
            result = perception.frame(depth, rgb, intrinsics, camera, links, sim.time_s)
            found = {d.name: d for d in result.detections}
            truth = sim.object_poses()
            for name, pixels in shown_pixels(sim, renderer).items():
                if pixels < 20:
                    continue
                checked += 1
                assert name in found, f"{name} shows {pixels} px from the {zone.name} zone's view, not found"
                error = np.linalg.norm(found[name].position - truth[name].translation)
                assert error < 0.015, (
                    f"{name} found {100 * error:.1f} cm off from the {zone.name} zone's view"
                )
            for name in found:  # nothing is found that does not show
                assert shown_pixels(sim, renderer)[name] > 0
    finally:
        renderer.close()
    assert checked >= 3
