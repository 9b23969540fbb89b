"""``galley map``: export a scene's occupancy map for nav2's map_server (YAML + PGM)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from galley_cli import SCENE_HELP, positive_number, say
from galley_episodes.scenes import resolve_scene

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    from galley_sim.map_export import export_map  # noqa: PLC0415 (deferred: mujoco)

    files = resolve_scene(args.scene, say=say(args))
    yaml_path, image_path = export_map(files.scene, args.out or files.map.parent, args.resolution)
    print(f"galley map: wrote {yaml_path} and {image_path} ({args.resolution} m cells)")
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("map", help="write a scene's occupancy map (nav2 map_server YAML + PGM)")
    p.add_argument("--scene", default="kitchen", help=SCENE_HELP + " (default: kitchen)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default: where galley finds the scene's map: maps/ for config/scenes/, "
        "else maps/ beside the scene file)",
    )
    p.add_argument(
        "--resolution", type=positive_number, default=0.05, help="cell size in metres (default: 0.05)"
    )
    p.set_defaults(run=_run)
