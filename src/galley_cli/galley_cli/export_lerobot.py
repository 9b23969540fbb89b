"""``galley export-lerobot DIR OUT``: a collection of recorded episodes as a LeRobotDataset v3.0.

DIR is a collection folder: bag folders below it, or, where DIR/episodes exists, only the bags
below that (DIR/failed is never exported). Every bag is resampled to ``--fps`` and written to OUT
(a new or empty folder) as LeRobot's v3.0 layout: meta/ (info, stats, tasks, episodes), data/
(parquet) and videos/ (one mp4 per camera, AV1 by default). See :mod:`galley_learning.lerobot`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from galley_cli import image_size
from galley_cli.errors import UsageError
from galley_core.arguments import add_arguments, config_from_arguments
from galley_core.config import ConfigError
from galley_learning.lerobot_config import LeRobotExportConfig

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    from galley_learning.lerobot import LeRobotExportError, export_lerobot  # noqa: PLC0415 (deferred: cv2, pyarrow)

    try:
        config = config_from_arguments(LeRobotExportConfig, args)
    except ConfigError as err:  # image_size's sides must be even: the parser checks each side alone
        value = "x".join(map(str, err.value)) if err.field == "image_size" else repr(err.value)
        raise UsageError(f"--{err.field.replace('_', '-')} {value} is not allowed: {err.allowed}") from None
    try:
        summary = export_lerobot(args.dir, args.out, config, progress=print)
    except LeRobotExportError as err:
        raise UsageError(str(err)) from None
    print(
        f"exported {summary.episodes} episode{'s' * (summary.episodes != 1)}, {summary.frames} frames, "
        f"{len(summary.tasks)} task{'s' * (len(summary.tasks) != 1)} at {config.fps} fps to {summary.out} "
        "(LeRobotDataset v3.0)"
    )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("export-lerobot", help="export recorded episodes as a LeRobotDataset (v3.0)")
    p.add_argument("dir", type=Path, help="collection folder of bags (only DIR/episodes/ where it exists)")
    p.add_argument("out", type=Path, help="dataset folder to create (new or empty)")
    add_arguments(p, LeRobotExportConfig, readers={"image_size": image_size})  # --image-size WxH
    p.set_defaults(run=_run)
