"""The oracle in generated kitchens it was never tuned on, beside the shipped kitchen, same run.

    python bench/scene_oracle.py [--quick] [--split unseen] [--episodes N] [--kitchen-episodes M]
                                 [--workers K] [--scenes DIR] [--seeds S1,S2] [--offset K] [--object NAME]

Without options it measures issue 33's figure: 10 episodes in each of the 20 unseen kitchens (200),
and 5 in the shipped kitchen as the baseline.

Writes (or reuses) every kitchen of the split under ``--scenes`` (default runs/scenes/<split>)
with ``galley scene generate``'s code, then executes the gold plans of the first N instructions of
each kitchen's suite (its ``test`` split; after the first K with ``--offset``; with ``--object``
only those whose plan moves that object, to diagnose it in training kitchens, and in the shipped
kitchen too, so that the baseline moves the same object) with the oracle
(Theta* + Kitchen-R's controller + RMPflow pick and place), exactly as ``galley eval --mode policy``
does one episode (``galley_episodes.run_episode``), and M instructions of the shipped kitchen's suite
as the baseline. Reports the episode success rate of both and their ratio, each failure with its
kitchen, instruction, step and reason, and failures by cause (the failed step's action and the first words of
its reason). ``--quick``: 3 kitchens, 1 episode each, 1 in the kitchen. Prints a table and,
last, one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections import Counter
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any

from galley_core.scenes.splits import GENERATOR_VERSION, generator_version, scene_name, split_seeds
from galley_core.tasks.suite import load_suite
from galley_episodes import episode_pool

REPO = Path(__file__).resolve().parents[1]


def _episode(scene: str, entry: dict[str, Any]) -> dict[str, Any]:
    from galley_episodes import EpisodeConfig, run_episode  # noqa: PLC0415 (deferred: the stack, in the worker)

    start = time.perf_counter()
    try:
        config = EpisodeConfig(scene=scene, seed=entry["seed"], plan="; ".join(entry["plan"]))
        summary = run_episode(entry["instruction"], config, progress=False)
    except Exception as err:  # a crash is a result here, reported with its cause
        return {
            "scene": scene,
            "seed": entry["seed"],
            "instruction": entry["instruction"],
            "success": False,
            "plan": entry["plan"],
            "failed_step": "",
            "reason": f"crashed: {type(err).__name__}: {err}",
            "wall_s": 0.0,
        }
    failed = next((s for s in summary["steps"] if not s["success"]), None)
    reason = failed["reason"] if failed else ("timed out" if summary["timed_out"] else "")
    return {
        "scene": scene,
        "seed": entry["seed"],
        "instruction": entry["instruction"],
        "success": summary["success"],
        "plan": entry["plan"],
        "failed_step": failed["step"] if failed else "",
        "reason": reason,
        "wall_s": time.perf_counter() - start,
    }


def _cause(result: dict[str, Any]) -> str:
    action = result["failed_step"].split(" ")[0] if result["failed_step"] else "episode"
    words = re.sub(r"[^a-z_ ]", " ", result["reason"].lower()).split()
    return f"{action}: {' '.join(words[:3]) or 'no reason given'}"


def _entries(suite: Path, count: int, offset: int = 0, moved: str = "") -> list[dict[str, Any]]:
    _, entries = load_suite(suite)
    test = [e for e in entries if e.split == "test" and (not moved or f"pick the {moved}" in e.plan)]
    test = test[offset : offset + count]
    return [{"instruction": e.instruction, "seed": e.seed, "plan": list(e.plan)} for e in test]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="3 kitchens x 1 episode, 1 in the kitchen")
    parser.add_argument("--split", default="unseen", help="the kitchens (default unseen)")
    parser.add_argument(
        "--episodes", type=int, default=10, help="episodes per generated kitchen (default 10)"
    )
    parser.add_argument(
        "--kitchen-episodes", type=int, default=5, help="episodes in the shipped kitchen (default 5)"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="parallel episodes")
    parser.add_argument("--scenes", type=Path, default=None, help="folder of the split's kitchens")
    parser.add_argument(
        "--seeds", default="", help="only these kitchens of the split, e.g. 1000,1008 (default: all)"
    )
    parser.add_argument(
        "--offset", type=int, default=0, help="skip this many test instructions per kitchen (default 0)"
    )
    parser.add_argument(
        "--object",
        default="",
        help="only instructions whose gold plan picks this object (e.g. spoon), in every kitchen",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write every result here")
    return parser


def main() -> None:
    parser = _parser()
    args = parser.parse_args()
    seeds = split_seeds(args.split)[: 3 if args.quick else None]
    if args.seeds:
        chosen = {int(s) for s in args.seeds.split(",")}
        if not chosen <= set(seeds):
            parser.error(f"--seeds {args.seeds}: the {args.split} split's seeds are {seeds[0]}..{seeds[-1]}")
        seeds = [s for s in seeds if s in chosen]
    per_kitchen, baseline = (1, 1) if args.quick else (args.episodes, args.kitchen_episodes)
    root = args.scenes or REPO / "runs" / "scenes" / args.split
    from galley_sim import scene_gen  # noqa: PLC0415 (deferred: mujoco, after argument errors)

    for seed in seeds:
        path = root / "config" / "scenes" / f"{scene_name(seed)}.yaml"
        if not path.exists() or generator_version(path) != GENERATOR_VERSION:  # drawn by an older galley
            scene_gen.write_kitchen(scene_gen.generate(seed), path)
    os.environ["GALLEY_CONFIG_DIR"] = str(root / "config")  # the workers find the kitchens there
    shipped_suite = REPO / "config" / "suites" / "kitchen_v1.yaml"
    jobs = [("kitchen", e) for e in _entries(shipped_suite, baseline, moved=args.object)]
    for seed in seeds:
        name = scene_name(seed)
        suite = root / "config" / "suites" / f"{name}_v1.yaml"
        jobs += [(name, e) for e in _entries(suite, per_kitchen, args.offset, args.object)]
    start = time.perf_counter()
    results = []
    with episode_pool(args.workers) as pool:
        futures = [pool.submit(_episode, scene, entry) for scene, entry in jobs]
        for i, future in enumerate(as_completed(futures)):
            r = future.result()
            results.append(r)
            print(
                f"[{i + 1}/{len(jobs)}] {r['scene']} seed {r['seed']}: "
                f"{'ok' if r['success'] else 'FAILED ' + r['failed_step'] + ': ' + r['reason']} "
                f"({r['wall_s']:.0f} s)",
                flush=True,
            )
    wall_s = time.perf_counter() - start
    kitchen = [r for r in results if r["scene"] == "kitchen"]
    generated = [r for r in results if r["scene"] != "kitchen"]
    sr_kitchen = sum(r["success"] for r in kitchen) / max(1, len(kitchen))
    sr_generated = sum(r["success"] for r in generated) / max(1, len(generated))
    print(f"\n{'scene':<14} {'episodes':>8} {'succeeded':>9}")
    for scene in ["kitchen"] + [scene_name(s) for s in seeds]:
        rows = [r for r in results if r["scene"] == scene]
        print(f"{scene:<14} {len(rows):>8} {sum(r['success'] for r in rows):>9}")
    baseline_text = f"shipped kitchen {sr_kitchen:.2f} ({len(kitchen)} episodes), " if kitchen else ""
    print(
        f"\noracle episode SR: {baseline_text}"
        f"{args.split} kitchens {sr_generated:.2f} ({len(generated)} episodes over {len(seeds)} kitchens)"
    )
    causes = Counter(_cause(r) for r in results if not r["success"])
    for r in sorted((r for r in results if not r["success"]), key=lambda r: r["scene"]):
        print(
            f'  failed: {r["scene"]} seed {r["seed"]}: "{r["instruction"]}": '
            f"{r['failed_step'] or 'episode'}: {r['reason']}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(
        json.dumps(
            {
                "oracle_sr_episode_generated": round(sr_generated, 3),
                "oracle_sr_episode_kitchen": round(sr_kitchen, 3) if kitchen else None,
                "sr_ratio_generated_to_kitchen": round(sr_generated / sr_kitchen, 3) if sr_kitchen else None,
                "episodes_generated": len(generated),
                "kitchens": len(seeds),
                "episodes_kitchen": len(kitchen),
                "failures_by_cause": dict(causes),
                "wall_s": round(wall_s, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
