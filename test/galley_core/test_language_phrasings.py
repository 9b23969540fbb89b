"""The second phrase grammar: a held-out phrasing split with right gold plans, and an out-of-scope set."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from galley_core.episode import sample_episode
from galley_core.language.out_of_scope import generate_out_of_scope
from galley_core.language.phrase_grammar import (
    EPISODE_SEED_BASE,
    OUT_OF_SCOPE_KINDS,
    PHRASING_KINDS,
    RELOCATION_KINDS,
)
from galley_core.language.phrasings import (
    generate_phrasing_suite,
    generate_phrasings,
    location_references,
    phrasing_kind,
)
from galley_core.language.typos import edit_distance, typo
from galley_core.scene import load_scene
from galley_core.tasks.grammar import InvalidPlanError, parse_plan, validate_plan
from galley_core.tasks.suite import gold_plan, load_suite, plan_for_instruction


@pytest.fixture(scope="module")
def kitchen(request):
    return load_scene(request.config.rootpath / "config" / "scenes" / "kitchen.yaml")


@pytest.fixture(scope="module")
def phrased(kitchen):
    return generate_phrasings(kitchen)


def test_the_generator_is_deterministic_and_the_seed_matters(kitchen, phrased):
    assert [p.entry for p in generate_phrasings(kitchen)] == [p.entry for p in phrased]
    other = [p.entry.instruction for p in generate_phrasings(kitchen, seed=7)]
    assert other != [p.entry.instruction for p in phrased]
    assert generate_out_of_scope(kitchen) == generate_out_of_scope(kitchen)


def test_a_few_hundred_distinct_instructions_cover_every_phrasing_and_relocation_kind(phrased):
    assert len({p.entry.instruction.lower() for p in phrased}) == len(phrased) >= 300
    cells = Counter((p.kind, p.relocation) for p in phrased)
    assert set(cells) == {(k, r) for k in PHRASING_KINDS for r in RELOCATION_KINDS}
    assert all(p.entry.template == f"phrasing/{p.kind}/{p.relocation}" for p in phrased)
    assert all(phrasing_kind(p.entry) == p.kind and p.entry.split == "phrasing" for p in phrased)
    words = {w for p in phrased for w in p.entry.instruction.lower().split()}
    assert len(words) > 250  # variety: many verbs, connectors, fillers


def test_every_gold_plan_is_valid_and_right_for_its_episode(kitchen, phrased):
    for p in phrased:
        entry = p.entry
        assert entry.seed >= EPISODE_SEED_BASE  # disjoint from the suite's seeds and training's
        plan = parse_plan(entry.plan)
        validate_plan(plan, kitchen)
        episode = sample_episode(kitchen, entry.seed)
        start = {o.name: o.zone for o in episode.objects}
        assert p.request.start == start, entry.id
        assert plan == gold_plan(p.request.relocations(), start), entry.id
        where, at, holding = dict(start), None, None
        for step in plan:  # physically consistent: pick where the object is, place what is held
            if step.action == "move":
                at = step.target
            elif step.action == "pick":
                assert holding is None and where[step.target] == at, entry.id
                holding = step.target
            else:
                assert holding == step.target, entry.id
                where[step.target], holding = at, None
        assert 4 <= len(plan) <= 8 and any(where[o] != start[o] for o in start), entry.id


def test_no_instruction_is_worded_as_a_suite_template(kitchen, phrased):
    for p in phrased:
        with pytest.raises(InvalidPlanError):
            plan_for_instruction(p.entry.instruction, kitchen, sample_episode(kitchen, p.entry.seed))


def test_references_by_location_name_exactly_one_object_that_nothing_moved_there_first(kitchen, phrased):
    referring = [p for p in phrased if p.location_zones]
    assert {p.kind for p in referring} >= {"location", "mixed"}
    assert all(p.location_zones for p in phrased if p.kind == "location")
    for p in referring:
        start = p.request.start
        for zone in p.location_zones:
            assert sum(z == zone for z in start.values()) == 1, p.entry.id
            if p.relocation in (
                "two",
                "same",
            ):  # the first object goes to z: "the thing in z" after it is not unique
                assert zone != p.request.z, p.entry.id
    # nothing in the other kinds reads as a reference by location
    assert not any(location_references(p.clean, kitchen) for p in phrased if p.kind in ("synonyms", "polite"))


def test_typos_are_one_edit_in_one_or_two_words_and_never_another_name(kitchen, phrased):
    names = set(kitchen.object_names) | set(kitchen.zone_names)
    typed = [p for p in phrased if p.clean != p.entry.instruction]
    assert {p.kind for p in typed} == {"typo", "mixed"}
    assert all(p.clean != p.entry.instruction for p in phrased if p.kind == "typo")
    for p in typed:
        clean, text = p.clean.split(" "), p.entry.instruction.split(" ")
        assert len(clean) == len(text), p.entry.id
        changed = [(a, b) for a, b in zip(clean, text, strict=True) if a != b]
        assert 1 <= len(changed) <= 2, p.entry.id
        for right, wrong in changed:
            assert edit_distance(right, wrong) == 1, (right, wrong)
            assert wrong not in names
            assert all(edit_distance(wrong, n) >= 2 for n in names if n != right), (right, wrong)
    assert {p.kind for p in phrased if p.clean == p.entry.instruction} >= {"terse", "synonyms", "polite"}


def test_typo_and_edit_distance():
    assert edit_distance("bowl", "bowl") == 0
    assert edit_distance("bowl", "bwol") == 1  # transposition
    assert edit_distance("bowl", "bowls") == 1 and edit_distance("bowl", "bol") == 1
    assert edit_distance("bowl", "bowk") == 1 and edit_distance("fork", "cup") == 4
    rng = random.Random(3)
    for word in ("plate", "purple", "yellow", "the", "carry"):
        for _ in range(30):
            assert edit_distance(typo(word, rng), word) == 1


def test_the_out_of_scope_set_has_every_kind_no_plans_and_names_nothing_absent_as_present(kitchen):
    entries = generate_out_of_scope(kitchen)
    assert Counter(phrasing_kind(e) for e in entries) == dict.fromkeys(OUT_OF_SCOPE_KINDS, 12)
    assert all(e.split == "out_of_scope" and e.plan == () and e.seed >= EPISODE_SEED_BASE for e in entries)
    assert len({e.instruction.lower() for e in entries}) == len(entries)
    for entry in entries:
        words = set(entry.instruction.lower().replace("?", " ").replace("!", " ").split())
        if phrasing_kind(entry) == "absent_object":
            assert words & {
                "knife",
                "spoon",
                "mug",
                "banana",
                "glass",
                "pan",
                "bottle",
                "teapot",
                "sponge",
                "orange",
            }
        if phrasing_kind(entry) == "absent_zone":
            assert not any(f"{z} zone" in entry.instruction.lower() for z in kitchen.zone_names)


def test_the_shipped_file_is_what_the_generator_makes(request, kitchen):
    scene, entries = load_suite(request.config.rootpath / "config" / "suites" / "kitchen_phrasing_v1.yaml")
    assert scene == "kitchen"
    assert entries == generate_phrasing_suite(kitchen), (
        "config/suites/kitchen_phrasing_v1.yaml is stale: run `galley suite --phrasing`"
    )
