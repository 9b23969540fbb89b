"""``galley train-planner``: (re)train galley's offline vision-language planner, with progress.

Renders fresh episodes with the simulator, in the scene and in the generated training kitchens, trains
galley's planner v3 (names from the scene: galley_learning.planners.galley_slots) on the CPU and writes
the weights (.pt) and their vocabulary and training record (.json). The defaults reproduce the
weights shipped with galley.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from galley_cli import SCENE_HELP, say
from galley_cli.errors import UsageError
from galley_core.arguments import add_arguments, config_from_arguments
from galley_episodes.scenes import resolve_scene
from galley_learning.planners.configured import load_suite_entries
from galley_learning.planners.train_config import PlannerTrainConfig

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    from galley_learning.planners.galley_model import V3_WEIGHTS  # noqa: PLC0415 (deferred: torch)
    from galley_learning.planners.galley_slot_train import train_slot_planner  # noqa: PLC0415 (deferred: torch)

    files = resolve_scene(args.scene, say=say(args))
    scene = files.scene
    suite = load_suite_entries(args.suite or str(files.suite))
    if not suite:
        raise UsageError(f"suite {args.suite!r} has no entries; generate it with: galley suite")
    config = config_from_arguments(PlannerTrainConfig, args)  # each value checked by the parser
    out = args.out or V3_WEIGHTS
    record = train_slot_planner(scene, suite, config=config, out=out, progress=lambda m: print(m, flush=True))
    print(
        f"galley train-planner: whole plans right {record['val_em_suite_train']:.3f} on the suite's "
        "train split; "
        f"evaluate with: galley eval-planner --weights {out}"
    )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("train-planner", help="train galley's offline planner (CPU, minutes, shows progress)")
    p.add_argument("--scene", default="kitchen", help=SCENE_HELP + " (default: kitchen)")
    p.add_argument(
        "--suite",
        default="",
        help="suite whose held-out parts are kept out of training (default: the scene's own)",
    )
    add_arguments(p.add_argument_group("training"), PlannerTrainConfig)
    p.add_argument("--out", type=Path, default=None, help="weights file (default: the shipped v3 weights)")
    p.set_defaults(run=_run)
