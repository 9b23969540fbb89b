"""A learned policy in closed loop: collect fresh oracle episodes, train on a CPU, evaluate on held-out seeds.

    python bench/policy_closed_loop.py [--quick] [--episodes N] [--steps K] [--size lowdim-mlp] ...

1. ``galley collect`` (with ``--perturb``: DART-style recoveries) records ``--episodes`` episodes
   with fresh seeds (``--seed``), each the first ``--steps`` steps of a training-split gold plan
   (0: whole plans).
2. ``galley train`` builds the dataset (``--observation``, ``--actions``) and trains ``--size`` for
   ``--train-steps`` (or ``--train-minutes``) on the CPU.
3. ``galley eval --mode policy`` runs the policy on ``--eval-episodes`` held-out suite episodes
   (the test split, whose seeds collection never draws), every step scored (teleport on failure),
   and on as many of its training episodes (same seeds and plans as collected), so that
   generalisation and fitting can be told apart.

Prints per-kind SR (move, pick, place; and as "ran", over the steps that ran: ``sr_by_action``
counts a step that an episode's end left unrun as failed), episode SR, the
base's mean distance from its goal at the start and end (move-only runs), collection and training
minutes and inference ms per chunk, and as its last line one JSON object. ``--quick``: 6 move-only
episodes, 600 training steps of the MLP head, 3 + 3 evaluation episodes (a few minutes on 2 cores).
Everything stays in ``--out``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from galley_core.arguments import add_arguments, config_from_arguments
from galley_episodes import CollectConfig, EvalConfig, collect, evaluate, parse_image_size
from galley_learning.policy.config import SIZES, DatasetConfig, TrainConfig
from galley_learning.policy.dataset import PolicyData, build_dataset
from galley_learning.policy.runtime import PolicyRunner
from galley_learning.policy.train import train

KINDS = ("move", "pick", "place")
#: The settings this bench varies, with galley train's spellings; the rest are the fields' defaults.
TRAIN_OPTIONS = ("size", "lr", "lr_schedule")
DATASET_OPTIONS = ("observation", "actions", "arm_target", "move_done_m", "move_done_rad")
DATASET_ALIASES = {"move_done_m": ["--move-done"], "move_done_rad": ["--move-done-heading"]}


def _eval_params(out: Path, step_limit_s: float) -> Path:
    path = out / "eval.yaml"
    path.write_text(
        "# every step scored: teleport past a failed step; the policy on the CPU\n"
        "diffusion_policy:\n  ros__parameters:\n    device: cpu\n    cpu_threads: 1\n"
        f"task_executor:\n  ros__parameters:\n    teleport_on_failure: true\n"
        f"    step_time_limit_s: {step_limit_s}\n"
        "monitor:\n  ros__parameters:\n    abort_on_failure: false\n"
    )
    return path


def _training_suite(collection: Path, out: Path, count: int) -> Path:
    """A suite file of the first ``count`` successful collected episodes (their seeds and plans)."""
    records = json.loads((collection / "collection.json").read_text())["episodes"]
    chosen = [(n, r) for n, r in sorted(records.items()) if r["success"]][:count]
    entries = [
        {
            "id": name,
            "template": "collected",
            "split": "train",
            "instruction": r["instruction"],
            "seed": r["seed"],
            "plan": r["plan"],
        }
        for name, r in chosen
    ]
    path = out / "training_suite.yaml"
    path.write_text(
        yaml.safe_dump({"version": 1, "scene": "kitchen", "instructions": entries}, sort_keys=False)
    )
    return path


def _chunk_ms(run: Path, dataset: Path, repeats: int = 20) -> float:
    """Median wall time of one action chunk on one CPU thread, on the dataset's states."""
    runner = PolicyRunner(run, device="cpu", threads=1)
    data = PolicyData.open(dataset)
    c = runner.config
    rows = np.linspace(0, len(data.state) - c.obs_horizon, repeats).astype(int)
    times = []
    for r in rows:
        images = {cam: np.asarray(data.images[cam][r : r + c.obs_horizon]) for cam in c.cameras}
        start = time.perf_counter()
        runner.act(images, np.asarray(data.state[r : r + c.obs_horizon]), "move to the blue zone")
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1000.0)


def _figures(metrics: dict[str, Any], prefix: str) -> dict[str, Any]:
    by_kind = metrics.get("sr_by_action") or {}
    ran = metrics.get("sr_executed_by_action") or {}
    out = {f"{prefix}_sr_{k}": by_kind.get(k) for k in KINDS}
    out |= {f"{prefix}_sr_executed_{k}": ran.get(k) for k in KINDS}
    out |= {f"{prefix}_sr_episode": metrics["sr_episode"], f"{prefix}_sr": metrics["sr"]}
    for key in ("goal_dist_start_m", "goal_dist_end_m"):
        if key in metrics:
            out[f"{prefix}_{key}"] = metrics[key]
    return out


def _table(args: argparse.Namespace, data: DatasetConfig, figures: dict[str, Any]) -> None:
    setting = f"observation {data.observation}, actions {data.actions}, perturb {args.perturb}"
    print(f"closed loop: {args.size}, {setting}")
    print(f"{'':>10} {'move':>6} {'pick':>6} {'place':>6} {'episode':>8} {'goal m start->end':>18}")
    for prefix in ("heldout", "train"):
        row = [figures[f"{prefix}_sr_{k}"] for k in KINDS]
        cells = " ".join(f"{v:>6.2f}" if v is not None else f"{'-':>6}" for v in row)
        start, end = figures.get(f"{prefix}_goal_dist_start_m"), figures.get(f"{prefix}_goal_dist_end_m")
        dist = f"{start:.2f} -> {end:.2f}" if end is not None else ""
        print(f"{prefix:>10} {cells} {figures[f'{prefix}_sr_episode']:>8.2f} {dist:>18}")
        ran = [figures[f"{prefix}_sr_executed_{k}"] for k in KINDS]
        print(f"{'  ran':>10} " + " ".join(f"{v:>6.2f}" if v is not None else f"{'-':>6}" for v in ran))
    print(
        f"collection {figures['collect_minutes']} min ({figures['episodes_succeeded']} episodes"
        f"{', reused: none recorded now' if not figures['episodes_recorded_now'] else ''}), dataset "
        f"{figures['dataset_minutes']} min, training {figures['train_minutes']} min "
        f"({figures['train_steps']} steps), "
        f"{figures['inference_ms_per_chunk']:.1f} ms per chunk"
    )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="move-only, 6 episodes, a few minutes")
    parser.add_argument("--out", type=Path, default=Path("runs/bench_policy_closed_loop"))
    parser.add_argument("--episodes", type=int, default=40, help="episodes to collect")
    parser.add_argument("--steps", type=int, default=0, help="first K steps of each plan (0: whole plans)")
    parser.add_argument(
        "--perturb", type=float, default=1.0, help="DART noise scale while collecting (0: none)"
    )
    parser.add_argument("--seed", type=int, default=3_000_000, help="collection seeds: SEED + k")
    # the MLP head: trains in minutes on 2 cores
    add_arguments(parser, TrainConfig, only=TRAIN_OPTIONS, defaults={"size": "lowdim-mlp"})
    add_arguments(parser, DatasetConfig, only=DATASET_OPTIONS, aliases=DATASET_ALIASES)
    parser.add_argument("--train-steps", type=int, default=4000)
    parser.add_argument("--train-minutes", type=float, default=0.0, help="> 0: train this long instead")
    parser.add_argument("--eval-episodes", type=int, default=10, help="held-out (and training) episodes")
    parser.add_argument("--step-limit", type=float, default=60.0, help="seconds per step in evaluation")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--image-size",
        type=parse_image_size,
        default=None,
        help="cameras WxH while collecting (default: 32x24 for the low-dimensional sizes, else the "
        "dataset's image_size); a collection in --out is continued with its own",
    )
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    if args.quick:
        args.episodes, args.steps, args.train_steps, args.eval_episodes = 6, 1, 600, 3
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    start = time.perf_counter()
    collection = out / "collection"
    images = bool(SIZES[args.size].cameras)
    settings = CollectConfig(
        episodes=args.episodes,
        workers=args.workers,
        seed=args.seed,
        image_size=args.image_size or (DatasetConfig.image_size if images else (32, 24)),
        perturb=args.perturb,
        steps=args.steps,
    )
    report = collect(settings, out=collection)
    collect_min = (time.perf_counter() - start) / 60.0

    config = config_from_arguments(
        DatasetConfig,
        args,
        fields=DATASET_OPTIONS,
        cameras=DatasetConfig.cameras if images else (),
        image_size=settings.image_size,  # the collection's: no resampling
    )
    data_name = f"{config.observation}_{config.actions}_{config.move_done_m:g}_{config.move_done_rad:g}"
    run, dataset = out / f"run_{args.size}_{data_name}", out / f"dataset_{data_name}"
    start = time.perf_counter()
    if not (dataset / "meta.json").exists():
        build_dataset(collection, dataset, config, workers=args.workers)
    dataset_min = (time.perf_counter() - start) / 60.0  # 0 where the dataset was built before
    steps = args.train_steps
    # the probe's too: a resumed run keeps the settings it was started with (all but the steps)
    base = config_from_arguments(TrainConfig, args, fields=TRAIN_OPTIONS, device="cpu", cpu_threads=1)
    if args.train_minutes > 0:  # measure the rate on a short run, then train for the time asked
        marks: list[tuple[int, float]] = []  # (step, seconds) from step 10 on: no start-up in the rate
        probe = replace(base, steps=100)
        train(dataset, run, probe, progress=lambda s, n, loss, secs: marks.append((s, secs)))
        if len(marks) >= 2:  # none: the run had trained past the probe before (resumed)
            (s0, t0), (s1, t1) = marks[0], marks[-1]
            steps = max(100, int((s1 - s0) / max(t1 - t0, 1e-6) * args.train_minutes * 60.0))
    trained = train(
        dataset,
        run,
        replace(base, steps=steps, eval_every=max(1, steps // 10)),
        progress=lambda s, n, loss, secs: (
            print(f"  step {s}/{n} loss {loss:.4f} {secs:.0f} s", flush=True)
            if s % max(1, n // 10) == 0
            else None
        ),
    )
    chunk_ms = _chunk_ms(run, dataset)

    params = [collection / "params.yaml", _eval_params(out, args.step_limit)]
    common = {"policy": run, "params": params}
    evaluation = EvalConfig(
        mode="policy", episodes=args.eval_episodes, workers=args.workers, steps=args.steps
    )
    held_out = evaluate(dataclasses.replace(evaluation, split="test"), out_dir=out / "eval_heldout", **common)
    suite = _training_suite(collection, out, args.eval_episodes)
    on_train = evaluate(
        dataclasses.replace(evaluation, suite=str(suite), split="train"), out_dir=out / "eval_train", **common
    )

    figures = {
        "episodes_collected": report["episodes_total"],
        "episodes_succeeded": report["episodes_succeeded"],
        "episodes_recorded_now": report["this_run"]["episodes"],  # 0: a collection from before, reused
        "collect_minutes": round(collect_min, 2),
        "dataset_minutes": round(dataset_min, 2),
        "train_minutes": round(trained["train_seconds"] / 60.0, 2),
        "train_steps": trained["steps"],
        "inference_ms_per_chunk": round(chunk_ms, 2),
        "parameters": trained["parameters"],
        **_figures(held_out, "heldout"),
        **_figures(on_train, "train"),
    }
    _table(args, config, figures)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
