"""``galley train --data DIR --out RUN``: train the diffusion policy on collected episodes.

``--data`` is a collection (``galley collect``'s folder of bags) or a dataset folder built from one
(``meta.json`` inside). A collection is first turned into a dataset at ``RUN/dataset`` (frames at the
cameras' rate, images resized to ``--image-size``). Training shows progress, writes checkpoints,
``loss.png`` and ``report.json`` into RUN, and resumes where it stopped when RUN has a checkpoint
(``--steps`` may raise the total).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from galley_cli import image_size, positive_number, seed_number, whole_number
from galley_cli.errors import UsageError
from galley_learning.policy.observations import ACTIONS

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    from galley_learning.policy.dataset import DatasetConfig, build_dataset  # noqa: PLC0415 (deferred: torch)
    from galley_learning.policy.model import SIZES  # noqa: PLC0415 (deferred: torch)
    from galley_learning.policy.train import TrainConfig, train  # noqa: PLC0415 (deferred: torch)

    data, run = Path(args.data), Path(args.out)
    try:
        config = TrainConfig(
            size=args.size,
            steps=args.steps,
            batch_size=args.batch_size,
            lr=args.lr,
            lr_schedule=args.lr_schedule,
            device=args.device,
            checkpoint_every=args.checkpoint_every,
            eval_every=min(args.eval_every, args.steps),
            seed=args.seed,
            cpu_threads=args.threads,
        )
        if not (data / "meta.json").exists():
            dataset = run / "dataset"
            if (dataset / "meta.json").exists():
                print(f"galley train: using the dataset built before in {dataset}")
            else:
                print(f"galley train: building a dataset from the bags in {data} into {dataset}", flush=True)
                images = bool(SIZES[args.size].cameras) if args.size in SIZES else True
                settings = DatasetConfig(
                    image_size=args.image_size,
                    cameras=("base", "wrist") if images else (),  # low-dim: no images to read
                    observation=args.observation,
                    actions=args.actions,
                    move_done_m=args.move_done,
                    move_done_rad=args.move_done_heading,
                    arm_target=args.arm_target,
                )
                meta = build_dataset(
                    data,
                    dataset,
                    settings,
                    workers=args.workers,
                    progress=lambda i, n, bag: print(f"  [{i}/{n}] {bag}", flush=True),
                )
                split = [e["split"] for e in meta["episodes"]]
                print(
                    f"galley train: {meta['frames']} frames from {len(split)} episodes "
                    f"({split.count('train')} train, {split.count('val')} held out)",
                    flush=True,
                )
            data = dataset
        report = train(data, run, config, progress=_progress)
    except (ValueError, FileExistsError) as err:
        raise UsageError(str(err)) from None
    print(f"galley train: {json.dumps(report)}")
    print(f"galley train: loss curve {run / 'loss.png'}")
    print(f"galley train: evaluate with: galley eval --mode policy --policy {run}")
    return 0


def _progress(step: int, steps: int, loss: float, seconds: float) -> None:
    rate = step / seconds if seconds > 0 else 0.0
    left = (steps - step) / rate if rate > 0 else 0.0
    print(f"  step {step}/{steps}  loss {loss:.4f}  {rate:.1f} steps/s  {left:.0f} s left", flush=True)


def _device(text: str) -> str:
    """argparse type of --device: checked before the dataset is built, which can take minutes."""
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not auto, cpu, cuda or cuda:N")
    return text


def add_parser(sub: Any) -> None:
    p = sub.add_parser("train", help="train the diffusion policy on collected episodes (progress, resumable)")
    p.add_argument(
        "--data", type=Path, required=True, help="collection folder (galley collect) or dataset folder"
    )
    p.add_argument("--out", type=Path, required=True, help="run folder (resumes when it has a checkpoint)")
    p.add_argument(
        "--size",
        default="toy",
        help="network preset: lowdim, lowdim-mlp (state and goal vectors, no images: CPU), "
        "toy (images, CPU, minutes), small, base (images, GPU)",
    )
    p.add_argument(
        "--observation",
        choices=("goal", "kitchen_r", "proprio"),
        default="goal",
        help="what the policy sees: goal (the step's target in the robot's frame; default), kitchen_r "
        "(Kitchen-R's: images, step text, robot state), proprio (goal less the target: an ablation)",
    )
    p.add_argument(
        "--actions",
        choices=ACTIONS,
        default="contact",
        help="end-effector targets relative to a pick's grasp point or a place's release point (contact, "
        "default; the current pose in a move), to the current pose (delta) or in base_link (absolute)",
    )
    p.add_argument(
        "--arm-target",
        choices=("phase", "command"),
        default="phase",
        help="the arm's action in a pick or place: the pick-and-place machine's phase goal, where the "
        "arm is heading (phase, default; bags with /arm/target), or the next joint command's pose (command)",
    )
    p.add_argument(
        "--move-done",
        type=float,
        default=0.10,
        metavar="M",
        help="train on no move frame within M metres of its goal: the executor ends a policy's move "
        "there, and the oracle's turn in place after it teaches stopping short (default: 0.10; 0: all)",
    )
    p.add_argument(
        "--move-done-heading",
        type=float,
        default=0.1,
        metavar="RAD",
        help="... and facing the goal's heading within RAD (task_executor.nav_heading_tolerance_rad), so "
        "that the oracle's turn to it is learned (default: 0.1; 3.1416: any heading, the turn untrained)",
    )
    p.add_argument(
        "--steps", type=whole_number(1), default=2000, help="gradient steps in total (default: 2000)"
    )
    p.add_argument("--batch-size", type=whole_number(1), default=64, help="windows per step (default: 64)")
    p.add_argument("--lr", type=positive_number, default=1e-4, help="learning rate (backbones: 10 %% of it)")
    p.add_argument(
        "--lr-schedule",
        choices=("constant", "cosine"),  # TrainConfig.lr_schedule (train.py: torch, not imported here)
        default="constant",
        help="constant, or cosine: down to 0 at the last step (default: constant)",
    )
    p.add_argument("--device", type=_device, default="auto", help="auto, cpu, cuda, cuda:N (default: auto)")
    p.add_argument("--checkpoint-every", type=whole_number(1), default=500, help="steps between checkpoints")
    p.add_argument("--eval-every", type=whole_number(1), default=250, help="steps between validation losses")
    p.add_argument(
        "--image-size", type=image_size, default=(96, 72), help="images resized to WxH (default: 96x72)"
    )
    p.add_argument(
        "--workers",
        type=whole_number(1),
        default=1,
        help="processes reading bags into the dataset (default: 1)",
    )
    p.add_argument("--seed", type=seed_number, default=0, help="seed of initialisation and batches")
    p.add_argument(
        "--threads",
        type=whole_number(0),
        default=0,
        help="torch threads on a CPU (0: one per core; 1: fastest for the low-dim presets on a busy machine)",
    )
    p.set_defaults(run=_run)
