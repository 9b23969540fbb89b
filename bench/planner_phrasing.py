"""galley's planner on everyday phrasing: its own dev sets, refusal, and false refusal on the suite.

Usage::

    python bench/planner_phrasing.py [--quick] [--weights PT] [--count N] [--everyday N] [--relations N]
                                     [--only-everyday]

Measures the ``galley`` backend (shipped weights, or ``--weights``) on

* two dev sets from galley's paraphrase grammar (:mod:`galley_learning.planners.phrasing`), on
  episode seeds that training never renders and with a seed of their own: ``dev_trained`` uses the
  training wordings, ``dev_held_out`` the held-out ones (verbs, zone words, connectors, sentence
  forms and fillers the model never saw). Kitchen-R EM (eq. 1) and whole-plan accuracy (every
  step right), overall and per kind of request; refused in-scope requests count as wrong and are
  reported as false refusals;
* the suite's ``test`` and ``unseen`` splits (EM, and how many were refused);
* everyday requests (:mod:`galley_learning.planners.everyday`, written apart from the training
  grammar; ``--everyday N``, ``--only-everyday``), figures per style and per kind of request;
* everyday swaps and "next to" requests (:mod:`galley_learning.planners.everyday_relations`,
  ``--relations N``), per style and kind;
* the out-of-scope examples (:data:`~galley_learning.planners.phrasing.OUT_OF_SCOPE` and the
  everyday ones): share refused, and any planned.

The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

from galley_core.language.planning import PlanningError
from galley_core.scene import load_scene
from galley_core.tasks.metrics import exact_match
from galley_core.tasks.suite import SuiteEntry, load_suite
from galley_learning.planners.everyday import EVERYDAY_OUT_OF_SCOPE, everyday_set
from galley_learning.planners.everyday_relations import relations_set
from galley_learning.planners.galley_model import DEFAULT_WEIGHTS
from galley_learning.planners.galley_planner import GalleyPlanner
from galley_learning.planners.images import TopDownRenderer
from galley_learning.planners.phrasing import HELD_OUT, OUT_OF_SCOPE, TRAINING, dev_set

#: Dev episodes: far from the suite's seeds (< 1,000,000) and from training's (10,000,000 on).
DEV_SEED_BASE = 20_000_000
EVERYDAY_SEED_BASE = 30_000_000
RELATIONS_SEED_BASE = 31_000_000


def score(
    planner: GalleyPlanner, scene: Any, entries: Sequence[SuiteEntry], renderer: TopDownRenderer
) -> dict[str, Any]:
    """EM, whole-plan accuracy and refusals of ``entries``, overall and per template (kind)."""
    predicted: list[tuple[str, ...]] = []
    refused: list[str] = []
    for entry in entries:
        try:
            predicted.append(planner.plan(entry.instruction, renderer.render(entry.seed), scene).steps)
        except PlanningError as err:
            predicted.append(())
            refused.append(f"{entry.instruction!r}: {err.kind}")
    gold = [e.plan for e in entries]
    out: dict[str, Any] = {
        "count": len(entries),
        "em": round(exact_match(predicted, gold), 4),
        "whole_plan": round(sum(p == g for p, g in zip(predicted, gold, strict=True)) / len(gold), 4),
        "refused": len(refused),
        "per_kind": {},
    }
    # An everyday entry's template is "style/kind": figures per style and per kind.
    groups = {part for e in entries for part in e.template.split("/")}
    for kind in sorted(groups):
        rows = [i for i, e in enumerate(entries) if kind in e.template.split("/")]
        out["per_kind"][kind] = {
            "em": round(exact_match([predicted[i] for i in rows], [gold[i] for i in rows]), 3),
            "whole_plan": round(sum(predicted[i] == gold[i] for i in rows) / len(rows), 3),
        }
    out["wrong"] = [
        f"{e.instruction!r} -> {list(p)}" for e, p in zip(entries, predicted, strict=True) if p != e.plan
    ][:40]
    out["refused_examples"] = refused[:20]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="60 requests per dev set, 30 per suite split")
    parser.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="galley planner weights (.pt)")
    parser.add_argument("--count", type=int, default=300, help="requests per dev set")
    parser.add_argument("--everyday", type=int, default=350, help="requests in the everyday dev set")
    parser.add_argument("--relations", type=int, default=240, help="swap and next-to requests (everyday)")
    parser.add_argument("--only-everyday", action="store_true", help="the everyday dev set and refusals only")
    args = parser.parse_args()
    count = 60 if args.quick else args.count
    scene = load_scene("config/scenes/kitchen.yaml")
    _, suite = load_suite("config/suites/kitchen_v1.yaml")
    planner = GalleyPlanner(weights=args.weights)
    renderer = TopDownRenderer(scene)
    started = time.monotonic()
    seeds = [DEV_SEED_BASE + i for i in range(count)]
    figures: dict[str, Any] = {"weights": args.weights}
    everyday_seeds = [EVERYDAY_SEED_BASE + i for i in range(args.everyday)]
    figures["dev_everyday"] = score(planner, scene, everyday_set(scene, everyday_seeds, seed=9), renderer)
    relations_seeds = [RELATIONS_SEED_BASE + i for i in range(args.relations)]
    figures["dev_relations"] = score(planner, scene, relations_set(scene, relations_seeds, seed=13), renderer)
    names = ["dev_everyday", "dev_relations"]
    if not args.only_everyday:
        figures["dev_trained"] = score(
            planner, scene, dev_set(scene, seeds, TRAINING, seed=7, label="dev"), renderer
        )
        figures["dev_held_out"] = score(
            planner, scene, dev_set(scene, seeds, HELD_OUT, seed=8, label="dev"), renderer
        )
        for split in ("test", "unseen"):
            entries = [e for e in suite if e.split == split][: 30 if args.quick else None]
            figures[f"suite_{split}"] = score(planner, scene, entries, renderer)
        names += ["dev_trained", "dev_held_out", "suite_test", "suite_unseen"]
    image = renderer.render(DEV_SEED_BASE)
    refusals = {}
    out_of_scope = {**OUT_OF_SCOPE, **{f"everyday {k}": v for k, v in EVERYDAY_OUT_OF_SCOPE.items()}}
    for kind, examples in out_of_scope.items():
        kept = []
        for text in examples:
            try:
                planner.plan(text, image, scene)
                kept.append(text)
            except PlanningError:
                pass
        refusals[kind] = {"refused": len(examples) - len(kept), "count": len(examples), "planned": kept}
    figures["out_of_scope"] = refusals
    total = sum(r["count"] for r in refusals.values())
    figures["out_of_scope_refused"] = round(sum(r["refused"] for r in refusals.values()) / total, 4)
    figures["seconds"] = round(time.monotonic() - started, 1)
    for name in names:
        f = figures[name]
        print(
            f"{name:<14} EM {f['em']:.3f}  whole plan {f['whole_plan']:.3f}  "
            f"refused {f['refused']}/{f['count']}"
        )
        for kind, k in f["per_kind"].items():
            if name.startswith("dev"):
                print(f"  {kind:<10} EM {k['em']:.3f}  whole plan {k['whole_plan']:.3f}")
    print(f"out of scope refused {figures['out_of_scope_refused']:.3f}")
    for kind, r in refusals.items():
        if r["planned"]:
            print(f"  planned ({kind}): {r['planned']}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
