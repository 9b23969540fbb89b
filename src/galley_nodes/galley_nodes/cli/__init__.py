"""The ``galley`` command line."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_params_option(parser: argparse.ArgumentParser) -> None:
    """``--params FILE`` (repeatable): ROS 2 params files layered on config/galley.yaml."""
    parser.add_argument(
        "--params",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="extra ROS 2 params YAML (layered)",
    )
