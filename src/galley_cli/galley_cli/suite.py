"""``galley suite``: (re)generate the instruction suite of a scene into config/suites/.

``galley suite`` writes the suite (58 templates, train / test / unseen splits) to
``config/suites/<scene>_v<N>.yaml``; ``galley suite --seed S`` draws a fresh suite from the same templates
for evaluation on episodes nobody tuned on (shuffled with the same seed, so that ``galley eval --episodes N``
takes a mix of templates) to ``runs/suites/<scene>_v<N>_seed<S>.yaml``, away from config/suites/, whose
suites are galley's defaults; ``galley suite --phrasing`` writes the held-out phrasing split
and the out-of-scope set of :mod:`galley_core.language.phrasings` (a second phrase grammar, written
apart from the suite's templates) to ``config/suites/<scene>_phrasing_v<N>.yaml``.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path
from typing import Any

from galley_cli import SCENE_HELP, say, seed_number
from galley_cli.errors import UsageError
from galley_core.language.phrasings import generate_phrasing_suite
from galley_core.tasks.suite import SUITE_VERSION, generate_suite, save_suite
from galley_episodes.scenes import resolve_scene

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    files = resolve_scene(args.scene, say=say(args))
    scene = files.scene
    folder = files.suite.parent  # where galley finds the scene's suites
    if args.phrasing and args.seed:
        raise UsageError(
            "--seed draws a fresh instruction suite; the phrasing split has one fixed grammar draw"
        )
    if args.phrasing:
        entries = generate_phrasing_suite(scene)
        name = f"{scene.name}_phrasing_v{SUITE_VERSION}.yaml"
    elif args.seed:
        entries = generate_suite(scene, seed=args.seed)
        random.Random(args.seed).shuffle(entries)
        folder, name = Path("runs") / "suites", f"{scene.name}_v{SUITE_VERSION}_seed{args.seed}.yaml"
    else:
        entries = generate_suite(scene)
        name = f"{scene.name}_v{SUITE_VERSION}.yaml"
    out = args.out or folder / name
    out.parent.mkdir(parents=True, exist_ok=True)
    save_suite(entries, out, scene=scene.name)
    splits = ", ".join(f"{n} {s}" for s, n in sorted(Counter(e.split for e in entries).items()))
    print(f"galley suite: wrote {len(entries)} instructions ({splits}) to {out}")
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "suite",
        help="generate a scene's instruction suite (58 templates, gold plans); --phrasing: the held-out "
        "phrasing split and the out-of-scope set",
        description="Write config/suites/<scene>_v1.yaml (the suite: train, test, unseen), or with "
        "--phrasing config/suites/<scene>_phrasing_v1.yaml: 320 instructions in everyday wording from a "
        "second phrase grammar (split phrasing; template phrasing/<kind>/<relocation>) and 84 that the "
        "scene cannot ground (split out_of_scope, empty plans). galley eval-planner reports both.",
    )
    p.add_argument("--scene", default="kitchen", help=SCENE_HELP + " (default: kitchen)")
    p.add_argument(
        "--phrasing",
        action="store_true",
        help="write the phrasing split and out-of-scope set instead (config/suites/<scene>_phrasing_v1.yaml)",
    )
    p.add_argument(
        "--seed",
        type=seed_number,
        default=0,
        help="draw a fresh suite with this seed, shuffled, for evaluation (default 0: the shipped suite); "
        "written to runs/suites/<scene>_v<N>_seed<S>.yaml",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output (default: config/suites/<scene>_v<N>.yaml, or suites/ beside a scene file)",
    )
    p.set_defaults(run=_run)
