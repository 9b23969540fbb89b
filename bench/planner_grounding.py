"""Where galley's planner v3 sees each object: the description match against the learned score.

Usage::

    python bench/planner_grounding.py [--quick] [--split train|unseen] [--kitchens N] [--episodes N]

For each generated kitchen of the split (training kitchens: seeds 0.., unseen: 1000..) and each
episode, the top-down image is rendered and every object placed in a zone by the joint
one-object-per-zone assignment (:func:`galley_learning.planners.galley_planner.assign`) from:

* ``learned``: the v3 network's presence logits (glimpse against description);
* ``described``: :func:`galley_learning.planners.grounding.presence_scores` alone;
* ``planner``: what the planner uses, the description match plus the learned logits at
  :data:`~galley_learning.planners.galley_planner.LEARNED_WEIGHT`.

An image counts as right when every object is placed in its start zone. The shipped kitchen's
images are scored too. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from galley_core.episode import sample_episode
from galley_core.scene import Scene, load_scene
from galley_core.scenes.splits import split_seeds
from galley_learning.planners.galley_model import V3_WEIGHTS, image_inputs, to_tensors
from galley_learning.planners.galley_planner import LEARNED_WEIGHT, GalleyPlanner, assign
from galley_learning.planners.galley_slots import SLOTS, NameSlots, SlotPlannerNet
from galley_learning.planners.grounding import presence_scores
from galley_learning.planners.images import TopDownRenderer

EPISODE_SEED_BASE = 50_000_000
METHODS = ("learned", "described", "planner")


def learned_scores(net: SlotPlannerNet, scene: Scene, image: np.ndarray) -> torch.Tensor:
    """(zones, objects) presence logits of the v3 network for one image."""
    glimpses, view = image_inputs(scene, image, net.config)
    glimpses_t, view_t = to_tensors(glimpses[None], view[None])
    z = len(scene.zones)
    padded = torch.zeros(1, SLOTS, *glimpses_t.shape[2:])
    padded[:, :z] = glimpses_t
    zone_mask = torch.zeros(1, SLOTS, dtype=torch.bool)
    zone_mask[:, :z] = True
    features, _ = NameSlots.of(scene).features(scene)
    with torch.no_grad():
        looked, _ = net.see(padded, view_t, zone_mask)
        logits = net.presence(looked, torch.from_numpy(features)[None], zone_mask)
    return logits[0, :z, : len(scene.objects)]


def score_scene(net: SlotPlannerNet, scene: Scene, episodes: int) -> tuple[dict[str, int], list[str], float]:
    """Images right per method, the failures of ``planner``, and seconds spent matching."""
    renderer = TopDownRenderer(scene)
    right = dict.fromkeys(METHODS, 0)
    failures, matching_s = [], 0.0
    for i in range(episodes):
        seed = EPISODE_SEED_BASE + i
        image = renderer.render(seed)
        truth = {p.name: p.zone for p in sample_episode(scene, seed).objects}
        learned = learned_scores(net, scene, image)
        started = time.monotonic()
        described = torch.from_numpy(presence_scores(scene, image)).float()
        matching_s += time.monotonic() - started
        for method, scores in zip(
            METHODS, (learned, described, described + LEARNED_WEIGHT * learned), strict=True
        ):
            placed = assign(scene, scores)
            right[method] += placed == truth
            if method == "planner" and placed != truth:
                wrong = {o: f"{placed[o]} (is in {truth[o]})" for o in truth if placed[o] != truth[o]}
                failures.append(f"[{scene.name} episode {seed}] {wrong}")
    return right, failures, matching_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 kitchens, 4 episodes each")
    parser.add_argument("--split", choices=("train", "unseen"), default="train", help="generated kitchens")
    parser.add_argument("--kitchens", type=int, default=40, help="kitchens of the split")
    parser.add_argument("--episodes", type=int, default=5, help="episodes (images) per kitchen")
    args = parser.parse_args()
    kitchens, episodes = (5, 4) if args.quick else (args.kitchens, args.episodes)
    torch.set_num_threads(1)
    net = GalleyPlanner(weights=V3_WEIGHTS).net
    assert isinstance(net, SlotPlannerNet)
    from galley_sim.scene_gen import generate  # noqa: PLC0415 (deferred: mujoco)

    started = time.monotonic()
    totals, failures, matching_s, images = dict.fromkeys(METHODS, 0), [], 0.0, 0
    for seed in split_seeds(args.split)[:kitchens]:
        right, failed, seconds = score_scene(net, generate(seed).scene, episodes)
        totals = {m: totals[m] + right[m] for m in METHODS}
        failures += failed
        matching_s += seconds
        images += episodes
    shipped, _, _ = score_scene(net, load_scene("config/scenes/kitchen.yaml"), episodes)
    share = {m: round(totals[m] / max(1, images), 4) for m in METHODS}
    shipped_share = {m: round(shipped[m] / max(1, episodes), 4) for m in METHODS}
    print(f"{kitchens} {args.split} kitchens x {episodes} episodes: images with every object placed right")
    print(f"{'method':<10} {args.split:>8} {'shipped':>8} {'ratio to learned':>17}")
    for m in METHODS:
        ratio = share[m] / max(share["learned"], 1e-9)
        print(f"{m:<10} {share[m]:>8.3f} {shipped_share[m]:>8.3f} {ratio:>17.2f}")
    print("failures (planner):" if failures else "no failures (planner)")
    for line in failures[:20]:
        print("  " + line)
    figures = {
        "split": args.split,
        "kitchens": kitchens,
        "images": images,
        "all_objects_right": share,
        "shipped_all_objects_right": shipped_share,
        "description_match_ms_per_image": round(1000 * matching_s / max(1, images), 1),
        "failures": failures[:20],
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
