"""Grounding by description: each object's zone read from the image by what the scene file says of it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from galley_core.episode import sample_episode
from galley_core.scene import load_scene
from galley_learning.planners.grounding import EMPTY_SCORE, colour_gain, object_look, presence_scores
from galley_learning.planners.images import map_to_pixel, pixels_per_metre

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kitchen():
    return load_scene(REPO / "config" / "scenes" / "kitchen.yaml")


def _painted(scene, gain, where):
    """A synthetic top-down image: grey floor, each zone's patch, and discs / boxes of objects.

    ``where``: object name -> zone name; colours go through ``gain`` (per channel, 0..255 per unit).
    """
    width, height = 640, 480
    image = np.full((height, width, 3), 0.5 * gain, dtype=np.float64)
    ppm = pixels_per_metre(scene, width, height)
    rows, cols = np.mgrid[0:height, 0:width] + 0.5
    for zone in scene.zones:
        col, row = map_to_pixel(scene, *zone.center, width, height)
        patch = (np.abs(cols - col) <= zone.size[0] / 2 * ppm) & (
            np.abs(rows - row) <= zone.size[1] / 2 * ppm
        )
        image[patch] = gain * np.array(zone.rgba[:3])
    for name, zone_name in where.items():
        obj, zone = scene.object(name), scene.zone(zone_name)
        col, row = map_to_pixel(scene, zone.center[0] + 0.03, zone.center[1] - 0.02, width, height)
        if obj.shape == "box":
            inside = (np.abs(cols - col) <= obj.size[0] / 2 * ppm) & (
                np.abs(rows - row) <= obj.size[1] / 2 * ppm
            )
        else:
            inside = np.hypot(cols - col, rows - row) <= obj.footprint_radius * ppm
        image[inside] = gain * np.array(obj.rgba[:3])
    return np.clip(image, 0, 255).astype(np.uint8)


def test_the_lighting_is_read_from_the_zone_patches(kitchen):
    gain = np.array([200.0, 230.0, 250.0])  # a dim, cool light
    image = _painted(kitchen, gain, {})
    assert np.allclose(colour_gain(kitchen, image), gain, rtol=0.02)


def test_a_sponge_and_a_banana_of_one_colour_and_area_are_told_apart_by_their_extents(kitchen):
    yellow = (0.95, 0.85, 0.2, 1.0)
    sponge = replace(
        kitchen.object("apple"), name="sponge", shape="box", size=(0.1, 0.065, 0.035), rgba=yellow
    )
    banana = replace(
        kitchen.object("cup"), name="banana", shape="box", size=(0.18, 0.036, 0.035), rgba=yellow
    )
    looks = object_look(sponge), object_look(banana)
    assert abs(looks[0].area_m2 / looks[1].area_m2 - 1.0) < 0.05  # the same area seen from above
    assert looks[1].extents_m[0] > 1.5 * looks[0].extents_m[0]  # the banana is longer ...
    assert looks[1].extents_m[1] < 0.7 * looks[0].extents_m[1]  # ... and narrower
    scene = replace(kitchen, objects=(sponge, banana))
    for where in ({"sponge": "red", "banana": "blue"}, {"sponge": "blue", "banana": "red"}):
        scores = presence_scores(scene, _painted(scene, np.array([240.0, 235.0, 225.0]), where))
        zones = scene.zone_names
        for k, name in enumerate(("sponge", "banana")):
            assert zones[int(scores[:, k].argmax())] == where[name]


def test_an_image_with_nothing_in_the_zones_scores_every_object_as_absent(kitchen):
    scores = presence_scores(kitchen, _painted(kitchen, np.full(3, 255.0), {}))
    assert scores.shape == (len(kitchen.zones), len(kitchen.objects))
    assert (scores == EMPTY_SCORE).all()


def test_look_alike_objects_of_a_generated_kitchen_are_grounded_each_in_its_zone():
    pytest.importorskip("mujoco", reason="renders the top-down image with MuJoCo")
    from galley_learning.planners.galley_planner import assign
    from galley_learning.planners.images import TopDownRenderer
    from galley_sim.scene_gen import generate

    torch = pytest.importorskip("torch", reason="the joint assignment takes a tensor")
    for seed in (23, 34):  # a mug, a can and a cup; a sponge and a banana (training kitchens)
        scene = generate(seed).scene
        renderer = TopDownRenderer(scene)
        for episode in range(3):
            truth = {p.name: p.zone for p in sample_episode(scene, episode).objects}
            scores = presence_scores(scene, renderer.render(episode))
            assert assign(scene, torch.from_numpy(scores)) == truth, (scene.name, episode)
