"""``galley eval``: Kitchen-R's evaluation over the instruction suite, planner (EM), policy (SR), joint.

The options are :class:`galley_episodes.EvalConfig`'s fields (:func:`galley_core.arguments.add_arguments`);
the evaluation is :func:`galley_episodes.evaluate`, whose module says what it measures and writes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from galley_cli import add_config_options, add_params_option, replan_as_count, require_option
from galley_cli.errors import UsageError
from galley_cli.view import add_view_option, viewing
from galley_core.arguments import config_from_arguments
from galley_episodes import EvalConfig, evaluate
from galley_episodes.cluster import check_cluster_address
from galley_episodes.overrides import PRECEDENCE_HELP

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    config = config_from_arguments(EvalConfig, args)
    print(
        f"galley eval --mode {config.mode}: {config.episodes or 'all'} episodes of split {config.split!r}; "
        f"report in {args.out}/"
    )
    if args.view is not None and (config.workers > 1 or config.cluster):
        elsewhere = f"--cluster {config.cluster}" if config.cluster else f"--workers {config.workers}"
        raise UsageError(f"--view shows the episodes this process runs: use --workers 1 (not {elsewhere})")
    try:
        with viewing(args.view):
            metrics = evaluate(config, out_dir=args.out, policy=args.policy, params=list(args.params))
    except ValueError as err:
        raise UsageError(str(err)) from None
    headline = metrics["headline"]
    value = "n/a" if headline["value"] is None else f"{headline['value']:.3f}"
    print(f"galley eval: {headline['metric']} = {value}: {headline['counts']}")
    print(json.dumps({k: v for k, v in metrics.items() if not isinstance(v, dict)}))  # last: for scripts
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="Kitchen-R's evaluation: planner (EM), policy (SR), joint (EM, SR, M)",
        description="Kitchen-R's evaluation: planner (EM), policy (SR), joint (EM, SR, M). Every episode "
        "is a `galley run` of a suite entry: " + PRECEDENCE_HELP,
    )
    add_config_options(p, EvalConfig, types={"cluster": check_cluster_address})
    replan_as_count(p)
    require_option(p, "mode")  # which evaluation is the user's choice: no default mode is assumed
    p.add_argument(
        "--policy",
        type=Path,
        default=None,
        help="training run of a diffusion policy to execute instead of the oracle",
    )
    p.add_argument("--out", type=Path, default=Path("runs/eval"), help="output folder (default: runs/eval)")
    add_params_option(p)
    add_view_option(p)
    p.set_defaults(run=_run)
