"""The sim's robot cameras: drawn together as alone, supersampled, coarser round geoms at small sizes."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
import pytest

from galley_core.episode import sample_episode
from galley_sim.rendering import COARSE_TESSELLATION, COARSE_UP_TO_HEIGHT, SideBySideRenderer, average_blocks
from galley_sim.simulator import KitchenSim, SimOptions


@pytest.mark.parametrize("hide", [True, False])
def test_cameras_rendered_together_equal_cameras_rendered_alone(kitchen, episode_at, hide):
    sim = KitchenSim(kitchen, SimOptions(image_width=96, image_height=72, hide_zones_from_robot_cameras=hide))
    sim.reset(episode_at(kitchen.zone("blue").approach))
    cameras = ["base_camera", "wrist_camera"]
    together = sim.render_cameras(cameras)
    alone = [sim.render_cameras([camera])[0] for camera in cameras]
    sim.close()
    for a, b in zip(together, alone, strict=True):
        assert a.shape == b.shape == (72, 96, 3)
        np.testing.assert_array_equal(a, b)


def test_average_blocks_rounds_the_mean_of_each_block():
    pixels = np.array([[[0], [1], [10], [10]], [[2], [2], [10], [11]]], dtype=np.uint8)
    np.testing.assert_array_equal(average_blocks(pixels, 2), [[[1], [10]]])  # 5/4 -> 1, 41/4 -> 10
    white = np.full((4, 6, 3), 255, np.uint8)
    np.testing.assert_array_equal(average_blocks(white, 2), np.full((2, 3, 3), 255))


def test_supersampled_cameras_are_closer_to_a_fine_reference_than_aliased_ones(kitchen, episode_at):
    """Four samples per pixel from 2x2 supersampling, against 64 (an 8x8-supersampled drawing)."""
    sim = KitchenSim(kitchen, SimOptions(image_width=96, image_height=72))
    sim.reset(episode_at(kitchen.zone("blue").approach))
    cameras = ["base_camera", "wrist_camera"]
    published = np.stack(sim.render_cameras(cameras)).astype(float)
    sim.model.vis.quality.offsamples = 0  # the aliased drawing: one sample per pixel
    drawn = {}
    for factor in (1, 8):
        renderer = SideBySideRenderer(sim.model, 96, 72, 2, supersampling=factor)
        drawn[factor] = np.stack(renderer.render(sim.data, cameras, mujoco.MjvOption())).astype(float)
        renderer.close()
    sim.close()
    error = np.abs(published - drawn[8]).mean()
    aliased_error = np.abs(drawn[1] - drawn[8]).mean()
    assert error < 0.6 * aliased_error
    assert error < 1.0  # grey levels, mean over pixels and channels


@pytest.mark.parametrize("size", [(96, 72), (320, 240)])
def test_small_images_draw_round_geoms_coarser_within_the_anti_aliasing_error(kitchen, size):
    """At 96x72 round geoms are coarser polygons than MuJoCo's 28 by 16, and the images still differ
    from near-exact ones (100 by 50) by less than anti-aliasing's own error there (0.27 grey
    levels); 320x240 images keep MuJoCo's tessellation."""
    sim = KitchenSim(kitchen, SimOptions(image_width=size[0], image_height=size[1]))
    cameras = ["base_camera", "wrist_camera"]
    drawn: dict[Any, list[np.ndarray]] = {}
    for tessellation in (None, (28, 16), (100, 50)):
        renderer = SideBySideRenderer(sim.model, *size, 2, tessellation=tessellation)
        drawn[tessellation] = []
        for seed in range(3):
            sim.reset(sample_episode(kitchen, seed))
            drawn[tessellation] += renderer.render(sim.data, cameras, mujoco.MjvOption())
        renderer.close()
    assert (sim.model.vis.quality.numslices, sim.model.vis.quality.numstacks) == (28, 16)
    sim.close()
    published, mujocos, exact = (np.stack(drawn[t]).astype(float) for t in (None, (28, 16), (100, 50)))
    if size[1] <= COARSE_UP_TO_HEIGHT:
        assert np.any(published != mujocos)
        assert np.abs(published - exact).mean() < 0.27
    else:
        np.testing.assert_array_equal(published, mujocos)


def test_small_depth_images_share_the_rgb_images_round_geoms(kitchen):
    sim = KitchenSim(kitchen, SimOptions(image_width=96, image_height=72))
    sim.reset(sample_episode(kitchen, 0))
    depth = sim.render("wrist_camera", depth=True)
    quality = sim.model.vis.quality
    assert (quality.numslices, quality.numstacks) == (28, 16)  # the model's own, left alone
    quality.numslices, quality.numstacks = COARSE_TESSELLATION
    with mujoco.Renderer(sim.model, 72, 96) as renderer:
        renderer.enable_depth_rendering()
        renderer.update_scene(sim.data, camera="wrist_camera")
        np.testing.assert_array_equal(depth, renderer.render())
    sim.close()
