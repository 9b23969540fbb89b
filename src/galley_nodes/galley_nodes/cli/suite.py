"""``galley suite``: (re)generate the instruction suite of a scene into config/suites/."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from galley_nodes.config_files import config_dirs

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    from galley_core.scene import load_scene, scene_path
    from galley_core.tasks.suite import SUITE_VERSION, generate_suite, save_suite

    scene = load_scene(scene_path(args.scene, [d / "scenes" for d in config_dirs()]))
    entries = generate_suite(scene)
    out = args.out or Path("config") / "suites" / f"{scene.name}_v{SUITE_VERSION}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    save_suite(entries, out, scene=scene.name)
    splits = ", ".join(f"{n} {s}" for s, n in sorted(Counter(e.split for e in entries).items()))
    print(f"galley suite: wrote {len(entries)} instructions ({splits}) to {out}")
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("suite", help="generate a scene's instruction suite (58 templates, gold plans)")
    p.add_argument("--scene", default="kitchen", help="scene name or file (default: kitchen)")
    p.add_argument("--out", type=Path, default=None, help="output (default: config/suites/<scene>_v<N>.yaml)")
    p.set_defaults(run=_run)
