"""Scenes from YAML and per-episode randomisation."""

from __future__ import annotations

import math

import pytest
import yaml

from galley_core.episode import Episode, sample_episode
from galley_core.scene import SceneError, load_scene, scene_path


@pytest.fixture(scope="module")
def kitchen(request):
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


def test_the_kitchen_has_the_benchmark_zones_and_objects(kitchen):
    assert kitchen.zone_names == ["red", "green", "blue", "yellow", "purple"]
    assert kitchen.object_names == ["apple", "bowl", "cup", "fork", "plate"]
    assert kitchen.zone("blue").z == pytest.approx(0.75)  # on the table
    assert {b.name for b in kitchen.boxes} >= {"counter", "sink", "fridge", "table", "shelf"}
    with pytest.raises(SceneError, match="no object 'spoon'; objects: apple, bowl, cup, fork, plate"):
        kitchen.object("spoon")
    with pytest.raises(SceneError, match="no zone 'orange'"):
        kitchen.zone("orange")


def write(tmp_path, data) -> str:
    path = tmp_path / "scene.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.fixture
def raw(request):
    return yaml.safe_load((request.config.rootpath / "config" / "scenes" / "kitchen.yaml").read_text())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r["objects"]["bowl"].pop("mass"), r"objects.bowl.mass: missing"),
        (lambda r: r["objects"]["cup"].update(mass=-1), r"objects.cup.mass: -1 must be > 0"),
        (lambda r: r["objects"]["cup"].update(shape="torus"), r"objects.cup.shape: 'torus' is not one of"),
        (
            lambda r: r["zones"]["red"].update(surface="fridge"),
            r"zones.red.surface: 'fridge' is not a furniture",
        ),
        (lambda r: r["furniture"]["table"].update(center=[0, float("nan"), 0.3]), r"furniture.table.center"),
        (lambda r: r["zones"]["blue"].update(rgba=[2, 0, 0]), r"zones.blue.rgba: colour components"),
        (lambda r: r.pop("robot_start"), r"scene.robot_start: missing"),
    ],
)
def test_scene_mistakes_are_named(tmp_path, raw, edit, message):
    edit(raw)
    with pytest.raises(SceneError, match=message) as err:
        load_scene(write(tmp_path, raw))
    assert "scene.yaml" in str(err.value)


def test_scene_lookup_by_name_lists_the_scenes(request, tmp_path):
    folder = request.config.rootpath / "config" / "scenes"
    assert scene_path("kitchen", [folder]).name == "kitchen.yaml"
    with pytest.raises(SceneError, match="scenes: kitchen"):
        scene_path("garage", [folder])


def test_episodes_are_reproducible_and_vary_with_the_seed(kitchen):
    a, b, c = sample_episode(kitchen, 11), sample_episode(kitchen, 11), sample_episode(kitchen, 12)
    assert a == b and a != c
    assert Episode.from_dict(a.to_dict()) == a
    assert {p.name for p in a.objects} == set(kitchen.object_names)


def test_episode_placements_respect_the_distribution(kitchen):
    for seed in range(40):
        episode = sample_episode(kitchen, seed)
        start = episode.robot_start
        # on a start segment (both are horizontal lines here)
        assert any(
            abs(start.y - a[1]) < 1e-9 and min(a[0], b[0]) - 1e-9 <= start.x <= max(a[0], b[0]) + 1e-9
            for a, b in kitchen.start_segments
        )
        starts = [p.zone for p in episode.objects]
        goals = [p.goal_zone for p in episode.objects]
        assert len(set(starts)) == len(starts) and len(set(goals)) == len(goals)
        for p in episode.objects:
            assert p.goal_zone != p.zone
            zone, goal = kitchen.zone(p.zone), kitchen.zone(p.goal_zone)
            assert math.dist((p.x, p.y), zone.center) <= zone.spawn_radius + 1e-9
            assert math.dist((p.goal_x, p.goal_y), goal.center) <= goal.spawn_radius + 1e-9
        assert set(episode.colors) == {"floor", "walls", "kettle", "bread_box", "vase", "tray"}
