"""``galley eval-planner``: EM of a planner on the suite (Kitchen-R eq. 1) and the Table II ablation.

Reports EM on the suite's ``test`` split (held-out instructions of seen templates) and ``unseen``
split (held-out templates), optionally with the image blanked, and (``--ablation``) Kitchen-R's
Table II rows. Shows progress; ends with one JSON line of the figures. ``galley eval --mode planner``
of the tasks issue calls :func:`run_planner_eval`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from galley_nodes.cli import whole_number

__all__ = ["add_parser", "run_planner_eval"]


def run_planner_eval(
    backend: str | None,
    *,
    params_file: Path | None = None,
    splits: tuple[str, ...] = ("test", "unseen"),
    limit: int = 0,
    ablation: bool = False,
    blank: bool = False,
    weights: str = "",
    progress: Any = print,
) -> dict[str, Any]:
    """The figures of ``galley eval-planner`` as a dict (EM per split, ablation rows)."""
    from dataclasses import replace

    from galley_learning.planners import make_planner
    from galley_learning.planners.evaluate import ablation as run_ablation
    from galley_learning.planners.evaluate import evaluate_planner, format_ablation
    from galley_nodes.cli.plan import planner_from_params
    from galley_nodes.nodes.task_planner import backend_options, load_suite_entries, prompt_config

    planner, scene, config = planner_from_params(
        backend, params_file, {"weights": weights} if weights else None
    )
    entries = load_suite_entries(config.suite)
    figures: dict[str, Any] = {"backend": config.backend}
    results = evaluate_planner(planner, scene, entries, splits=splits, limit=limit, progress=progress)
    for split, r in results.items():
        figures[f"em_{split}"] = round(r.em, 4)
        figures[f"count_{split}"] = r.count
        figures[f"failures_{split}"] = r.failures
        print(
            f"EM {r.em:.3f} on {r.count} {split} instructions ({r.seconds:.0f} s)"
            + (f", failures {r.failures}" if r.failures else "")
        )
    if blank:
        blanked = evaluate_planner(planner, scene, entries, splits=splits[:1], limit=limit, blank_image=True)
        for split, r in blanked.items():
            figures[f"em_{split}_blank_image"] = round(r.em, 4)
            print(f"EM {r.em:.3f} on {split} with the image blanked")
    if ablation:
        suite = entries if config.backend != "galley" else []

        def make(prompt: Any) -> Any:
            return make_planner(config.backend, prompt=prompt, suite=suite, options=backend_options(config))

        base = replace(prompt_config(config))
        rows = run_ablation(
            make,
            scene,
            entries,
            base=base,
            split=splits[0],
            galley=config.backend == "galley",
            limit=limit,
            progress=progress,
        )
        print(format_ablation(rows, config.backend, splits[0]))
        figures["ablation_em"] = {label: em for label, em, _ in rows}
    return figures


def _run(args: argparse.Namespace) -> int:
    from galley_core.tasks.planning import PlanningError
    from galley_nodes.cli.errors import UsageError

    try:
        figures = run_planner_eval(
            args.planner,
            params_file=args.params_file,
            splits=tuple(args.splits.split(",")),
            limit=args.limit,
            ablation=args.ablation,
            blank=args.blank_image,
            weights=str(args.weights or ""),
            progress=lambda m: print(m, flush=True),
        )
    except (PlanningError, ValueError) as err:
        raise UsageError(str(err)) from None
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures))
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("eval-planner", help="EM of a planner on the suite, and Kitchen-R's Table II ablation")
    p.add_argument("--planner", default=None, help="backend (default: the parameter file's, galley)")
    p.add_argument("--params-file", type=Path, default=None, help="parameters (default: config/galley.yaml)")
    p.add_argument(
        "--splits", default="test,unseen", help="suite splits, comma-separated (default: test,unseen)"
    )
    p.add_argument(
        "--limit", type=whole_number(0), default=0, help="at most this many instructions per split (0: all)"
    )
    p.add_argument("--ablation", action="store_true", help="also the Table II ablation on the first split")
    p.add_argument("--blank-image", action="store_true", help="also EM with a blank image (does it look?)")
    p.add_argument("--weights", type=Path, default=None, help="galley: weights file (default: shipped)")
    p.add_argument("--out", type=Path, default=None, help="also write the figures to this JSON file")
    p.set_defaults(run=_run)
