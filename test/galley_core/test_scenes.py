"""Generated kitchens' pure parts: the catalogue, derived approach poses, layouts, documents, splits."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import yaml

from galley_core.approach import ApproachConfig, derive_approach
from galley_core.episode import sample_episode
from galley_core.manipulation.gripper import GALLEY_MM_GRIPPER
from galley_core.manipulation.kinematics import load_arm
from galley_core.scene import SceneError, load_scene, parse_scene
from galley_core.scenes.catalogue import (
    CATALOGUE,
    MAX_GRASP_WIDTH_M,
    PAD_CLEARANCE_M,
    RIM_GRIP_M,
    draw_object,
    grasp_of,
    grasp_width,
)
from galley_core.scenes.checks import check_arm, check_fit, check_names, check_overlaps
from galley_core.scenes.generate import ZONE_COLOURS, ZONE_SPACING_M, draw_scene
from galley_core.scenes.splits import SPLITS, scene_name, split_seeds
from galley_core.tasks.suite import generate_suite, plan_for_instruction
from galley_description import ROBOT_XML

REPO = Path(__file__).resolve().parents[2]
KITCHEN = REPO / "config" / "scenes" / "kitchen.yaml"


def _document(seed: int) -> dict:
    rng = random.Random(seed)
    for _ in range(20):
        document = draw_scene(scene_name(seed), rng)
        if document is not None:
            return document
    raise AssertionError(f"seed {seed}: no draw in 20")


def test_the_catalogue_has_twelve_kinds_the_gripper_can_hold() -> None:
    names = [k.name for k in CATALOGUE]
    assert len(set(names)) == len(names) >= 12
    assert {"apple", "bowl", "cup", "fork", "plate"} <= set(names)
    rng = random.Random(0)
    for kind in CATALOGUE:
        for _ in range(5):
            entry = draw_object(kind, rng)
            width = grasp_width(kind.shape, tuple(entry["size"]), entry.get("grasp_yaw", 0.0))
            assert width <= MAX_GRASP_WIDTH_M, kind.name
            assert entry["grasp_offset"][2] > 0.0, kind.name


def test_the_shipped_five_keep_the_kitchens_size_and_grasp() -> None:
    kitchen = load_scene(KITCHEN)
    rng = random.Random(1)
    for kind in CATALOGUE:
        if kind.shipped:
            entry = draw_object(kind, rng)
            spec = kitchen.object(kind.name)
            assert tuple(entry["size"]) == spec.size
            assert tuple(entry["grasp_offset"]) == spec.grasp_offset
            assert entry.get("grasp_yaw", 0.0) == spec.grasp_yaw


def test_rim_grasps_keep_the_finger_pads_off_the_base_and_on_the_rim() -> None:
    """The pads reach 15 mm below the tcp: a plate's grasp 16 mm up put their tips on its base."""
    reach = GALLEY_MM_GRIPPER.pad_reach_m
    rng = random.Random(2)
    for kind in (k for k in CATALOGUE if k.shape in ("bowl", "plate")):
        for _ in range(5):
            entry = draw_object(kind, rng)
            _, height, wall = entry["size"]
            tips = entry["grasp_offset"][2] - reach
            assert tips >= wall + PAD_CLEARANCE_M - 1e-9, kind.name
            assert height - tips >= RIM_GRIP_M - 1e-9, kind.name
    plate = next(k for k in CATALOGUE if k.name == "plate")
    assert grasp_of("plate", "plate", plate.size)[0][2] == pytest.approx(0.006 + reach + PAD_CLEARANCE_M)
    assert grasp_of("bowl", "bowl", (0.065, 0.05, 0.006))[0] == (0.062, 0.0, 0.04)  # 80 % up: clear anyway
    with pytest.raises(ValueError, match="too low"):
        grasp_of("saucer", "plate", (0.07, 0.015, 0.006))


def test_the_fit_check_refuses_a_rim_grasp_whose_pads_catch_the_base() -> None:
    document = yaml.safe_load(KITCHEN.read_text())
    document["objects"]["plate"]["grasp_offset"] = [0.087, 0.0, 0.016]  # the grasp that flipped plates
    (problem,) = check_fit(parse_scene(document))
    assert "'plate'" in problem and "base" in problem and "at least 0.022 m" in problem
    document["objects"]["plate"]["grasp_offset"] = [0.087, 0.0, 0.024]  # 11 mm of rim: it slid out
    (problem,) = check_fit(parse_scene(document))
    assert "'plate'" in problem and "at most 0.023 m" in problem


def test_derived_approaches_match_the_kitchens_hand_set_ones() -> None:
    """The derivation from surface, furniture and footprint lands where a person put the base."""
    kitchen = load_scene(KITCHEN)
    for zone in kitchen.zones:
        derived = derive_approach(kitchen.box(zone.surface), zone.center, kitchen.boxes, kitchen.bounds)
        assert derived is not None, zone.name
        assert math.dist(derived[:2], zone.approach[:2]) < 0.06, (zone.name, derived, zone.approach)
        assert abs(math.remainder(derived[2] - zone.approach[2], 2 * math.pi)) < 1e-3, zone.name


def test_a_zone_without_approach_gets_the_derived_one_and_a_blocked_one_is_refused(tmp_path: Path) -> None:
    document = yaml.safe_load(KITCHEN.read_text())
    del document["zones"]["purple"]["approach"]
    scene = parse_scene(document)
    x, y, yaw = scene.zone("purple").approach
    standoff = ApproachConfig().standoff_m
    assert (x, y) == pytest.approx((3.3 - standoff, -1.0), abs=1e-3)  # in front of the side counter
    assert yaw == pytest.approx(0.0)
    # A cupboard right in front of the side counter leaves the base nowhere to stand.
    document["furniture"]["cupboard"] = {
        "center": [2.9, -1.0, 0.5],
        "size": [0.5, 2.4, 1.0],
        "surface": False,
    }
    with pytest.raises(SceneError, match=r"zones.purple: no side of 'side_counter' leaves room for the base"):
        parse_scene(document)


def test_generation_is_deterministic_per_seed() -> None:
    assert _document(7) == _document(7)
    assert _document(7) != _document(8)


@pytest.mark.parametrize("seed", [0, 3, 1000, 1017])
def test_generated_documents_load_and_pass_the_pure_checks(seed: int) -> None:
    scene = parse_scene(_document(seed))
    assert 3 <= len(scene.zones) <= 7
    assert 3 <= len(scene.objects) <= len(scene.zones)
    assert check_names(scene) == []
    assert check_overlaps(scene) == []
    assert check_fit(scene) == []
    for i, a in enumerate(scene.zones):
        for b in scene.zones[i + 1 :]:
            assert math.dist(a.center, b.center) >= ZONE_SPACING_M - 1e-9
            assert math.dist(a.approach[:2], b.approach[:2]) >= ZONE_SPACING_M - 1e-9
    assert set(scene.extras["lighting"]) == {"ambient", "diffuse", "sun_diffuse", "sun_direction"}


def test_zones_are_named_by_colour_or_by_their_furniture() -> None:
    furniture_named = 0
    for seed in range(40):
        names = list(_document(seed)["zones"])
        if all(n in ZONE_COLOURS for n in names):
            continue
        furniture_named += 1
        for n in names:  # "island", "left counter", "middle side counter"
            words = n.split(" ")
            assert words[-1] in ("counter", "island", "table"), n
            assert set(words[:-1]) <= {"left", "middle", "right", "side"}, n
    assert 10 <= furniture_named <= 30


def test_lighting_is_validated(tmp_path: Path) -> None:
    document = yaml.safe_load(KITCHEN.read_text())
    document["lighting"] = {"ambient": [0.3, 0.3, 0.3], "sun_direction": [0.1, 0.1, 0.5]}
    with pytest.raises(SceneError, match=r"lighting\.sun_direction: the sun must shine downwards"):
        parse_scene(document)
    document["lighting"] = {"glow": [1, 1, 1]}
    with pytest.raises(SceneError, match="lighting: unknown keys glow"):
        parse_scene(document)


def test_the_splits_are_fixed_and_disjoint() -> None:
    assert split_seeds("train") == list(range(100))
    assert split_seeds("unseen") == list(range(1000, 1020))
    assert not set(SPLITS["train"]) & set(SPLITS["unseen"])
    with pytest.raises(ValueError, match="no scene split 'test'; splits: train, unseen"):
        split_seeds("test")


def test_a_generated_suite_reads_back_with_zone_names_of_several_words() -> None:
    """plan_for_instruction finds the template and gold plan of every instruction of the suite."""
    seed = next(s for s in range(40) if any(" " in z for z in _document(s)["zones"]))
    scene = parse_scene(_document(seed))
    entries = generate_suite(scene, per_template=2)
    for entry in entries:
        template, plan = plan_for_instruction(entry.instruction, scene, sample_episode(scene, entry.seed))
        assert template == entry.template, entry.instruction
        assert tuple(str(step) for step in plan) == entry.plan, entry.instruction


def test_the_arm_check_flags_a_zone_beyond_reach_from_its_approach() -> None:
    arm = load_arm(ROBOT_XML)
    document = yaml.safe_load(KITCHEN.read_text())
    assert check_arm(parse_scene(document), arm) == []
    document["zones"]["red"]["approach"] = [-3.0, 1.55, 1.5708]  # 0.4 m further back than set
    problems = check_arm(parse_scene(document), arm)
    assert len(problems) == 1
    assert problems[0].startswith("zone 'red': the arm cannot reach the apple at")
