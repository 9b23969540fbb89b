"""``galley run "<instruction>"``: one episode on the built-in simulator, recorded, with a report.

The options are :class:`galley_episodes.EpisodeConfig`'s fields (:func:`galley_core.arguments.add_arguments`);
the episode itself is :func:`galley_episodes.run_episode`, whose module says what the run writes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from galley_cli import add_config_options, add_params_option, add_policy_option, replan_as_count
from galley_cli.errors import UsageError
from galley_cli.view import add_view_option, viewing
from galley_core.arguments import config_from_arguments
from galley_episodes import EpisodeConfig, EpisodeError, run_episode
from galley_episodes.overrides import PRECEDENCE_HELP

__all__ = ["EPISODE_OPTIONS", "add_parser"]

#: The EpisodeConfig fields that ``galley run`` offers (cameras, perturb and topdown are the
#: library's, for ``galley collect``).
EPISODE_OPTIONS = ("seed", "scene", "plan", "video", "replan", "inject")


def _run(args: argparse.Namespace) -> int:
    config = config_from_arguments(EpisodeConfig, args)
    out = args.out or Path("runs") / time.strftime("run_%Y%m%d_%H%M%S")
    driver = f" driven by the policy {args.policy}" if args.policy else ""
    print(f"galley run: {args.instruction!r}, episode seed {config.seed}{driver}; report in {out}/")
    try:
        with viewing(args.view):
            summary = run_episode(
                args.instruction, config, out_dir=out, params=list(args.params), policy=args.policy
            )
    except EpisodeError as err:
        raise UsageError(str(err)) from None
    ok = sum(s["success"] for s in summary["steps"])
    print(
        f"galley run: {'succeeded' if summary['success'] else 'failed'}: {ok}/{len(summary['plan'])} steps, "
        f"{summary['sim_time_s']:.0f} s simulated in {summary['wall_time_s']:.0f} s; EM {summary['em']}"
    )
    return 0 if summary["success"] else 1


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run one instruction on the built-in simulator, recorded, with a report",
        description="Run one instruction on the built-in simulator, recorded, with a report. "
        + PRECEDENCE_HELP,
    )
    p.add_argument("instruction", help='e.g. "Move the bowl to the green zone"')
    add_config_options(p, EpisodeConfig, only=EPISODE_OPTIONS)
    replan_as_count(p)
    add_policy_option(
        p,
        "diffusion policy to drive instead of the oracle: a shipped policy's name (default) or a "
        "galley train run folder; its params.yaml comes under --params",
    )
    p.add_argument("--out", type=Path, default=None, help="output folder (default: runs/run_<time>)")
    add_params_option(p)
    add_view_option(p)
    p.set_defaults(run=_run)
