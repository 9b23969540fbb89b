"""``galley collect``: record randomised oracle episodes for training, in parallel, with progress.

The options are :class:`galley_episodes.CollectConfig`'s fields
(:func:`galley_core.arguments.add_arguments`; ``--image-size`` is written ``WxH``, ``--camera-rate`` is
``camera_rate_hz``); the collection is :func:`galley_episodes.collect`, whose module says what
``--out`` ends up holding.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from galley_cli import add_config_options, image_size, positive_number, require_option
from galley_cli.errors import UsageError
from galley_core.arguments import argument_help, config_from_arguments
from galley_core.config import describe_fields
from galley_episodes import CollectConfig, collect
from galley_episodes.cluster import check_cluster_address
from galley_episodes.scenes import SceneCheckError

__all__ = ["add_parser"]


def _run(args: argparse.Namespace) -> int:
    config = config_from_arguments(CollectConfig, args)
    try:
        report = collect(config, out=args.out)
    except SceneCheckError:
        raise  # one line per problem (galley_cli.main)
    except ValueError as err:
        raise UsageError(str(err)) from None
    run = report["this_run"]
    print(
        f"galley collect: {report['episodes_succeeded']} successful and {report['episodes_failed']} failed "
        f"episodes in {args.out}; this run {run['episodes']} in {run['wall_s']:.0f} s "
        f"({run['episodes_per_hour']} episodes/h); train with: galley train --data {args.out} --out RUN"
    )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("collect", help="record randomised oracle episodes (bags) for training, in parallel")
    add_config_options(
        p, CollectConfig, skip=("image_size", "camera_rate_hz"), types={"cluster": check_cluster_address}
    )
    require_option(p, "episodes")  # how many is the user's choice
    fields = {f.name: f for f in describe_fields(CollectConfig)}
    size, rate = fields["image_size"], fields["camera_rate_hz"]
    p.add_argument(
        "--image-size",
        type=image_size,
        default=argparse.SUPPRESS,
        dest="image_size",
        metavar="WxH",
        help=argument_help(size).replace(_comma(size.default), "x".join(map(str, size.default))),
    )
    # Spelt --camera-rate since the first collections; checked here already (the library leaves
    # the rate to the simulator's parameter check).
    p.add_argument(
        "--camera-rate",
        type=positive_number,
        default=argparse.SUPPRESS,
        dest="camera_rate_hz",
        metavar="HZ",
        help=argument_help(rate),
    )
    p.add_argument(
        "--out", type=Path, required=True, help="collection folder (episodes already there are kept)"
    )
    p.set_defaults(run=_run)


def _comma(values: tuple[int, ...]) -> str:
    return ",".join(map(str, values))  # how argument_help shows a tuple's default
