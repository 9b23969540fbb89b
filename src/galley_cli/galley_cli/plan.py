"""``galley plan "<instruction>" [--seed N | --image PNG] [--planner NAME] [--json]``: print a plan.

One step per line (``--json``: ``{"plan": [...]}``). ``--seed`` renders the top-down image of that
episode with the simulator; ``--image`` reads one. Options of the backends come from the
``task_planner`` section of the parameter file (config/galley.yaml), as the node reads them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from galley_cli import SCENE_HELP, say, seed_number
from galley_cli.errors import UsageError
from galley_core.language.planning import PlanningError
from galley_episodes.scenes import resolve_scene
from galley_learning.planners.configured import planner_from_params
from galley_learning.planners.images import read_png, render_top_down

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:

    if args.seed is not None and args.image is not None:
        raise UsageError("give either --seed or --image, not both")
    overrides = {"scene": resolve_scene(args.scene, say=say(args)).ref} if args.scene else None
    try:
        planner, scene, _ = planner_from_params(args.planner, args.params_file, overrides)
    except (PlanningError, ValueError) as err:
        raise UsageError(str(err)) from None
    image = None
    if args.image is not None:
        try:
            image = read_png(args.image)
        except ValueError as err:
            raise UsageError(str(err)) from None
    elif args.seed is not None:
        if args.seed < 0:
            raise UsageError(f"--seed {args.seed}: seeds are >= 0")
        image = render_top_down(scene, args.seed)
    try:
        plan = planner.plan(args.instruction, image, scene)
    except PlanningError as err:
        print(f"galley plan: no plan ({err})", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"plan": list(plan.steps)}))
    else:
        print("\n".join(plan.steps))
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("plan", help="plan an instruction: one step per line (or --json)")
    p.add_argument("instruction", help='e.g. "Move the bowl to the green zone."')
    p.add_argument("--scene", default=None, help=SCENE_HELP + " (default: the parameter file's, kitchen)")
    p.add_argument("--seed", type=seed_number, default=None, help="render the top-down image of this episode")
    p.add_argument("--image", type=Path, default=None, help="top-down image (PNG) to plan on")
    p.add_argument(
        "--planner", default=None, help="backend: galley (default), openai, llama_cpp, transformers"
    )
    p.add_argument("--params-file", type=Path, default=None, help="parameters (default: config/galley.yaml)")
    p.add_argument("--json", action="store_true", help='print {"plan": [...]}')
    p.set_defaults(run=_run)
