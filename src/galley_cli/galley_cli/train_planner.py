"""``galley train-planner``: (re)train galley's offline vision-language planner, with progress.

Renders fresh episodes with the simulator, trains on the CPU and writes the weights (.pt) and their
vocabulary and training record (.json). The defaults reproduce the weights shipped with galley.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from galley_cli import seed_number, whole_number
from galley_cli.errors import UsageError
from galley_core.config import ConfigError
from galley_learning.planners.configured import load_suite_entries
from galley_runtime.config_files import find_scene

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    from galley_learning.planners.galley_model import DEFAULT_WEIGHTS  # noqa: PLC0415 (deferred: torch)
    from galley_learning.planners.galley_train import TrainConfig, train_planner  # noqa: PLC0415 (deferred: torch)

    scene = find_scene(args.scene)
    suite = load_suite_entries(args.suite)
    if not suite:
        raise UsageError(f"suite {args.suite!r} has no entries; generate it with: galley suite")
    try:
        config = TrainConfig(
            episodes=args.episodes,
            instructions=args.instructions,
            paraphrases=args.paraphrases,
            epochs=args.epochs,
            seed=args.seed,
            threads=args.threads,
            validation=args.validation,
        )
    except ConfigError as err:  # the options are the config's fields: name the option
        raise UsageError(f"--{err.field} {err.value!r} is not allowed: {err.allowed}") from None
    out = args.out or DEFAULT_WEIGHTS
    record = train_planner(scene, suite, config=config, out=out, progress=lambda m: print(m, flush=True))
    print(
        f"galley train-planner: EM {record['val_em_suite_train']:.3f} on the suite's train split; "
        f"evaluate with: galley eval-planner --weights {out}"
    )
    return 0


def add_parser(sub: Any) -> None:
    d = {"episodes": 1500, "instructions": 3000, "paraphrases": 5000, "epochs": 8}
    p = sub.add_parser("train-planner", help="train galley's offline planner (CPU, minutes, shows progress)")
    p.add_argument("--scene", default="kitchen", help="scene name or file (default: kitchen)")
    p.add_argument(
        "--suite", default="kitchen_v1", help="suite whose held-out parts are kept out of training"
    )
    p.add_argument(
        "--episodes", type=whole_number(10), default=d["episodes"], help="distinct rendered episodes"
    )
    p.add_argument(
        "--instructions",
        type=whole_number(10),
        default=d["instructions"],
        help="training samples from the suite's templates",
    )
    p.add_argument(
        "--paraphrases",
        type=whole_number(0),
        default=d["paraphrases"],
        help="training samples from galley's own paraphrase grammar (0: templates only)",
    )
    p.add_argument("--epochs", type=whole_number(1), default=d["epochs"], help="passes over the samples")
    p.add_argument("--seed", type=seed_number, default=0, help="seed of data, initialisation and batch order")
    p.add_argument("--threads", type=whole_number(1), default=1, help="torch CPU threads (default: 1)")
    p.add_argument(
        "--validation",
        type=whole_number(0),
        default=0,
        help="suite train-split instructions to validate on (0: all)",
    )
    p.add_argument("--out", type=Path, default=None, help="weights file (default: the shipped weights)")
    p.set_defaults(run=_run)
