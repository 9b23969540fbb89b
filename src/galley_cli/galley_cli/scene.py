"""``galley scene``: generate kitchens and check scenes (one's own included) before anything runs.

* ``galley scene generate --seed S`` writes kitchen ``S`` (``config/scenes/kitchen_<S>.yaml`` unless
  ``--out FILE``), its occupancy map and its instruction suite where galley finds them (see
  :func:`galley_sim.scene_gen.companion_paths`), so that ``galley run --scene kitchen_<S>`` runs in it;
* ``galley scene generate --split train|unseen [--out DIR]`` writes every kitchen of a split
  (:data:`galley_core.scenes.splits.SPLITS`) under ``DIR/config/scenes``, ``DIR/config/suites`` and
  ``DIR/maps``; the default DIR, ``runs/scenes/<split>``, is the scene cache where ``--scene
  kitchen_<seed>`` and ``--scenes <split>`` find them (:mod:`galley_episodes.scenes`; they are
  generated there on first use anyway); elsewhere, point ``GALLEY_CONFIG_DIR`` at ``DIR/config``;
* ``galley scene check FILE`` runs the checks every generated kitchen passes (galley_core.scenes.checks
  and the simulator's preflight): one line per problem and exit status 2, or a summary and 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from galley_cli import positive_number, seed_number
from galley_cli.errors import UsageError
from galley_core.scenes.splits import SPLITS, scene_name, split_seeds
from galley_episodes.scenes import cache_dir
from galley_runtime.config_files import find_scene

__all__ = ["add_parser"]


def _generate(args: argparse.Namespace) -> int:
    from galley_sim import scene_gen  # noqa: PLC0415 (deferred: mujoco)

    if (args.seed is None) == (args.split is None):
        raise UsageError("give one of --seed S (one kitchen) or --split train|unseen (all of a split)")
    if args.split is not None:
        root = args.out or cache_dir() / args.split
        if root.suffix in (".yaml", ".yml"):
            raise UsageError(f"--out {root}: a split is written into a folder, not one file")
        seeds = split_seeds(args.split)
        files = [root / "config" / "scenes" / f"{scene_name(s)}.yaml" for s in seeds]
    else:
        files = [args.out or Path("config") / "scenes" / f"{scene_name(args.seed)}.yaml"]
        seeds = [args.seed]
        if files[0].suffix not in (".yaml", ".yml"):
            raise UsageError(f"--out {files[0]}: a scene file ends in .yaml")
    for i, (seed, path) in enumerate(zip(seeds, files, strict=True)):
        start = time.perf_counter()
        generated = scene_gen.generate(seed)
        written = scene_gen.write_kitchen(generated, path, resolution_m=args.resolution)
        scene = generated.scene
        print(
            f"galley scene generate: [{i + 1}/{len(seeds)}] {scene.name}: {len(scene.zones)} zones "
            f"({', '.join(scene.zone_names)}), {len(scene.objects)} objects "
            f"({', '.join(scene.object_names)}); "
            f"draw {generated.attempt}, {time.perf_counter() - start:.1f} s; wrote "
            f"{', '.join(str(p) for p in written if p.suffix != '.pgm')}",
            flush=True,
        )
    if args.split is not None and root.resolve() == (cache_dir() / args.split).resolve():
        print(
            f"galley scene generate: run in them with: galley run --scene {scene_name(seeds[0])} ..., "
            f"or galley eval --scenes {args.split} ..."
        )
    elif args.split is not None:
        print(
            "galley scene generate: run in them with "
            f"GALLEY_CONFIG_DIR={root / 'config'} galley run --scene {scene_name(seeds[0])} ..."
        )
    return 0


def _check(args: argparse.Namespace) -> int:
    from galley_sim import scene_gen  # noqa: PLC0415 (deferred: mujoco)

    scene = find_scene(args.scene)  # a file that does not load fails here with its one line
    problems = scene_gen.check(scene)
    where = scene.source or args.scene
    if problems:
        for problem in problems:
            print(f"galley scene check: {where}: {problem}", file=sys.stderr)
        print(f"galley scene check: {where}: {len(problems)} problem(s)", file=sys.stderr)
        return 2
    print(
        f"galley scene check: {where} is fine: {len(scene.zones)} zones reachable by the base and the arm, "
        f"{len(scene.objects)} objects fit every zone, nothing overlaps, and it loads in the simulator"
    )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "scene",
        help="generate kitchens (scene file, map, suite) and check scenes before anything runs in them",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="scene_command", required=True, metavar="ACTION")
    g = actions.add_parser("generate", help="write a generated kitchen with its map and suite")
    g.add_argument("--seed", type=seed_number, default=None, help="the kitchen's seed")
    g.add_argument(
        "--split",
        choices=sorted(SPLITS),
        default=None,
        help="write every kitchen of a split: "
        + "; ".join(f"{k}: seeds {r.start}..{r.stop - 1}" for k, r in SPLITS.items()),
    )
    g.add_argument(
        "--out",
        type=Path,
        default=None,
        help="with --seed: the scene file (default config/scenes/kitchen_<seed>.yaml); with --split: the "
        "folder (default runs/scenes/<split>: the scene cache, where --scene kitchen_<seed> finds them)",
    )
    g.add_argument(
        "--resolution", type=positive_number, default=0.05, help="map cell size in metres (default 0.05)"
    )
    g.set_defaults(run=_generate)
    c = actions.add_parser("check", help="check a scene: reachability by base and arm, fit, overlaps")
    c.add_argument("scene", help="a scene file, or the name of one in config/scenes/")
    c.set_defaults(run=_check)
