"""galley's planner in kitchens whose names it never trained on: the 20 unseen generated kitchens.

Usage::

    python bench/planner_scenes.py [--quick] [--kitchens N] [--per-split N] [--weights PT]
        [--grounding scene|learned]

For each unseen kitchen (:data:`galley_core.scenes.splits.SPLITS` ``unseen``, seeds 1000..1019;
nothing trains on them) the ``galley`` backend plans, on each entry's rendered top-down image:

* ``templates``: the kitchen's suite, seen templates (``test`` split) and held-out templates
  (``unseen`` split), with the kitchen's own names;
* ``phrasings``: the held-out phrase grammar (:func:`galley_core.language.phrasings.generate_phrasings`);
* ``everyday``: requests written blind to the reading layer
  (:func:`galley_learning.planners.everyday.everyday_set`, fed the kitchen's names);
* ``out_of_scope``: requests to refuse (:func:`galley_core.language.out_of_scope.generate_out_of_scope`).

Figures: whole-plan accuracy (every step right; refusals count as wrong), false refusals of in-scope
requests, refusals of out-of-scope ones. Then the shipped kitchen's splits (suite test / unseen,
the phrasing split and out-of-scope set of ``kitchen_phrasing_v1``, everyday requests) for the v2
weights (the baseline: the kitchen's names built in) and the weights given, in the same run.
The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from galley_core.language.out_of_scope import generate_out_of_scope
from galley_core.language.phrasings import generate_phrasings
from galley_core.scene import Scene, load_scene
from galley_core.scenes.splits import split_seeds
from galley_core.tasks.suite import SuiteEntry, generate_suite, load_suite
from galley_learning.planners.evaluate import Outcome, plan_entries, spread
from galley_learning.planners.everyday import everyday_set
from galley_learning.planners.galley_model import V2_WEIGHTS, V3_WEIGHTS
from galley_learning.planners.galley_planner import GROUNDINGS, GalleyPlanner
from galley_learning.planners.images import TopDownRenderer

EVERYDAY_SEED_BASE = 30_000_000
IN_SCOPE = ("templates", "held_out_templates", "phrasings", "everyday")


class CachedRenderer:
    """A :class:`TopDownRenderer` that renders each episode once (two planners share the images)."""

    def __init__(self, scene: Scene) -> None:
        self._renderer = TopDownRenderer(scene)
        self.render = lru_cache(maxsize=None)(self._renderer.render)


def _sets(scene: Scene, per_split: int, everyday: int) -> dict[str, list[SuiteEntry]]:
    suite = generate_suite(scene)
    per_cell = max(1, per_split // 40)
    return {
        "templates": spread([e for e in suite if e.split == "test"], per_split),
        "held_out_templates": spread([e for e in suite if e.split == "unseen"], per_split),
        "phrasings": spread([p.entry for p in generate_phrasings(scene, per_cell=per_cell)], per_split),
        "everyday": everyday_set(scene, [EVERYDAY_SEED_BASE + i for i in range(everyday)], seed=9),
        "out_of_scope": generate_out_of_scope(scene, per_kind=max(2, per_split // 7), seed=1),
    }


def _figures(outcomes: Sequence[Outcome], name: str) -> dict[str, Any]:
    count = len(outcomes)
    refused = sum(o.refused for o in outcomes) / max(1, count)
    if name == "out_of_scope":
        return {"count": count, "refused": round(refused, 4)}
    right = sum(o.steps == o.entry.plan for o in outcomes) / max(1, count)
    return {"count": count, "whole_plan": round(right, 4), "false_refusal": round(refused, 4)}


def _failures(outcomes: Sequence[Outcome], scene: str) -> list[str]:
    out = []
    for o in outcomes:
        if o.entry.split == "out_of_scope" and not o.refused:
            out.append(f"[{scene}] {o.entry.instruction!r}: planned {list(o.steps or ())}, should refuse")
        elif o.entry.split != "out_of_scope" and o.steps != o.entry.plan:
            got = f"refused ({o.failure})" if o.refused else str(list(o.steps or ()))
            out.append(f"[{scene}] {o.entry.instruction!r}: {got}; gold {list(o.entry.plan)}")
    return out


def _pooled(per: list[dict[str, dict[str, Any]]], name: str) -> dict[str, Any]:
    rows = [p[name] for p in per if name in p]
    count = sum(r["count"] for r in rows)
    out: dict[str, Any] = {"count": count}
    for key in ("whole_plan", "false_refusal", "refused"):
        if rows and key in rows[0]:
            out[key] = round(sum(r[key] * r["count"] for r in rows) / max(1, count), 4)
    return out


def unseen_kitchens(
    planner: GalleyPlanner, seeds: Sequence[int], per_split: int, everyday: int
) -> dict[str, Any]:
    """Figures per unseen kitchen and pooled, and the failures."""
    from galley_sim.scene_gen import generate  # noqa: PLC0415 (deferred: mujoco)

    per, failures = [], []
    for seed in seeds:
        scene = generate(seed).scene
        renderer = CachedRenderer(scene)
        figures = {}
        for name, entries in _sets(scene, per_split, everyday).items():
            outcomes = plan_entries(planner, scene, entries, renderer=renderer)  # type: ignore[arg-type]
            figures[name] = _figures(outcomes, name)
            failures += _failures(outcomes, scene.name)
        per.append(figures)
        cells = "  ".join(f"{k} {v.get('whole_plan', v.get('refused')):.3f}" for k, v in figures.items())
        print(f"{scene.name:<13} {len(scene.zones)} zones {len(scene.objects)} objects  {cells}", flush=True)
    pooled = {name: _pooled(per, name) for name in (*IN_SCOPE, "out_of_scope")}
    in_scope = sum(pooled[n]["count"] for n in IN_SCOPE)
    pooled["false_refusal_in_scope"] = round(
        sum(pooled[n]["false_refusal"] * pooled[n]["count"] for n in IN_SCOPE) / max(1, in_scope), 4
    )
    return {"pooled": pooled, "failures": failures}


def shipped_kitchen(planners: dict[str, GalleyPlanner], per_split: int, everyday: int) -> dict[str, Any]:
    """The shipped kitchen's splits for each planner, on the same images."""
    scene = load_scene("config/scenes/kitchen.yaml")
    _, suite = load_suite("config/suites/kitchen_v1.yaml")
    _, phrasing = load_suite("config/suites/kitchen_phrasing_v1.yaml")
    sets = {
        "templates": spread([e for e in suite if e.split == "test"], per_split),
        "held_out_templates": spread([e for e in suite if e.split == "unseen"], per_split),
        "phrasings": spread([e for e in phrasing if e.split == "phrasing"], per_split),
        "everyday": everyday_set(scene, [EVERYDAY_SEED_BASE + i for i in range(everyday)], seed=9),
        "out_of_scope": [e for e in phrasing if e.split == "out_of_scope"],
    }
    renderer = CachedRenderer(scene)
    out: dict[str, Any] = {}
    for label, planner in planners.items():
        figures, failures = {}, []
        for name, entries in sets.items():
            outcomes = plan_entries(planner, scene, entries, renderer=renderer)  # type: ignore[arg-type]
            figures[name] = _figures(outcomes, name)
            failures += _failures(outcomes, "kitchen")
        out[label] = {**figures, "failures": failures[:20]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 kitchens, 20 requests per set")
    parser.add_argument("--kitchens", type=int, default=20, help="unseen kitchens (seeds 1000 on)")
    parser.add_argument("--per-split", type=int, default=60, help="requests per set and kitchen")
    parser.add_argument("--everyday", type=int, default=60, help="everyday requests per kitchen")
    parser.add_argument("--weights", default=str(V3_WEIGHTS), help="galley planner weights (.pt)")
    parser.add_argument(
        "--grounding", choices=GROUNDINGS, default="scene", help="where v3 reads each object's zone from"
    )
    args = parser.parse_args()
    kitchens, per_split, everyday = (
        (5, 20, 24) if args.quick else (args.kitchens, args.per_split, args.everyday)
    )
    started = time.monotonic()
    planner = GalleyPlanner(weights=args.weights, grounding=args.grounding)
    unseen = unseen_kitchens(planner, split_seeds("unseen")[:kitchens], per_split, everyday)
    shipped = shipped_kitchen(
        {"v2": GalleyPlanner(weights=V2_WEIGHTS), "new": planner}, 4 * per_split, 4 * everyday
    )
    pooled = unseen["pooled"]
    print(f"\n{kitchens} unseen kitchens ({args.weights}, grounding {args.grounding}):")
    print(f"{'set':<20} {'count':>6} {'whole plan':>11} {'refused':>8}")
    for name in (*IN_SCOPE, "out_of_scope"):
        row = pooled[name]
        plan = f"{row['whole_plan']:.3f}" if "whole_plan" in row else "-"
        print(
            f"{name:<20} {row['count']:>6} {plan:>11} {row.get('false_refusal', row.get('refused', 0)):>8.3f}"
        )
    print(f"false refusals in scope: {pooled['false_refusal_in_scope']:.3f}")
    print("\nshipped kitchen, whole plan right (out_of_scope: share refused):")
    print(f"{'set':<20} {'v2':>7} {'new':>7} {'new/v2':>7}")
    ratios = {}
    for name in (*IN_SCOPE, "out_of_scope"):
        key = "refused" if name == "out_of_scope" else "whole_plan"
        old, new = shipped["v2"][name][key], shipped["new"][name][key]
        ratios[name] = round(new / old, 3) if old else None
        print(f"{name:<20} {old:>7.3f} {new:>7.3f} {ratios[name] or 0:>7.3f}")
    print("\nfailures in unseen kitchens (first 40):")
    for line in unseen["failures"][:40]:
        print("  " + line)
    figures = {
        "weights": args.weights,
        "grounding": args.grounding,
        "unseen_kitchens": kitchens,
        "unseen": pooled,
        "unseen_failures": unseen["failures"][:30],
        "shipped_kitchen": {k: {n: v for n, v in f.items() if n != "failures"} for k, f in shipped.items()},
        "shipped_ratio_new_over_v2": ratios,
        "shipped_failures_new": shipped["new"]["failures"],
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
