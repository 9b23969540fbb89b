"""``galley eval``: Kitchen-R's evaluation over the instruction suite, planner (EM), policy (SR), joint.

The options are :class:`galley_episodes.EvalConfig`'s fields (:func:`galley_core.arguments.add_arguments`);
the evaluation is :func:`galley_episodes.evaluate`, whose module says what it measures and writes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from galley_cli import (
    add_config_options,
    add_params_option,
    add_policy_option,
    replan_as_count,
    require_option,
)
from galley_cli.errors import UsageError
from galley_cli.view import add_view_option, viewing
from galley_core.arguments import config_from_arguments
from galley_episodes import EvalConfig, evaluate
from galley_episodes.cluster import check_cluster_address
from galley_episodes.overrides import PRECEDENCE_HELP
from galley_episodes.scenes import SceneCheckError

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    config = config_from_arguments(EvalConfig, args)
    where = f" in each scene of {config.scenes!r}" if config.scenes else ""
    print(
        f"galley eval --mode {config.mode}: {config.episodes or 'all'} episodes of split {config.split!r}"
        f"{where}; report in {args.out}/"
    )
    if args.view is not None and (config.workers > 1 or config.cluster):
        elsewhere = f"--cluster {config.cluster}" if config.cluster else f"--workers {config.workers}"
        raise UsageError(f"--view shows the episodes this process runs: use --workers 1 (not {elsewhere})")
    try:
        with viewing(args.view):
            metrics = evaluate(config, out_dir=args.out, policy=args.policy, params=list(args.params))
    except SceneCheckError:
        raise  # one line per problem (galley_cli.main)
    except ValueError as err:
        raise UsageError(str(err)) from None
    if "scenes" in metrics:
        print(scene_table(metrics))
    headline = metrics["headline"]
    value = "n/a" if headline["value"] is None else f"{headline['value']:.3f}"
    print(f"galley eval: {headline['metric']} = {value}: {headline['counts']}")
    print(json.dumps({k: v for k, v in metrics.items() if not isinstance(v, dict)}))  # last: for scripts
    return 0


def _cell(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def scene_table(metrics: dict[str, Any]) -> str:
    """The per-scene figures of ``galley eval --scenes`` as a table, the overall row last."""
    keys = [k for k in ("em", "sr", "sr_episode", "m") if metrics.get(k) is not None]
    header = ["scene", "episodes", *keys, "failed"]
    body = [
        [name, str(block["episodes"]), *(_cell(block.get(k)) for k in keys), _failures(block)]
        for name, block in metrics["scenes"].items()
    ]
    blocks = list(metrics["scenes"].values())
    failed = str(sum(len(b["failed"]) for b in blocks)) if "failed" in blocks[0] else "-"
    body.append(["overall", str(metrics["episodes"]), *(_cell(metrics[k]) for k in keys), failed])
    rows = [header, *body]
    widths = [max(len(r[c]) for r in rows) for c in range(len(header) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1] for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    return "\n".join(lines)


def _failures(block: dict[str, Any]) -> str:
    failed = block.get("failed")
    if failed is None:
        return "-"
    shown = "; ".join(f"{f['id']} (seed {f['seed']}): {f['failure'] or 'no result'}" for f in failed[:2])
    return f"{len(failed)}" + (f": {shown}" if shown else "") + (" ..." if len(failed) > 2 else "")


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
    add_policy_option(
        p,
        "diffusion policy to execute instead of the oracle: a shipped policy's name (default) or a "
        "galley train run folder; its params.yaml comes under --params",
    )
    p.add_argument("--out", type=Path, default=Path("runs/eval"), help="output folder (default: runs/eval)")
    add_params_option(p)
    add_view_option(p)
    p.set_defaults(run=_run)
