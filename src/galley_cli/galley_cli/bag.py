"""``galley bag repair BAG``: make a bag whose recording was killed readable again.

A recording killed mid-file leaves that file unfinished in ``BAG/.writing_<n>/``, which no rosbag2
reader opens (``galley replay`` and the dataset readers refuse such a bag and name this command).
The repair recovers every message of the file's whole chunks into a finished file listed in
metadata.yaml (:mod:`galley_runtime.recording.repair`); on a finished bag it changes nothing. Bags
that ``ros2 bag record`` left unfinished are repaired with ``ros2 bag reindex``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from galley_cli.errors import UsageError
from galley_runtime.recording.repair import RepairError, repair_bag

__all__ = ["add_parser"]


def _repair(args: argparse.Namespace) -> int:
    # Imported when run, as every command's work: rosbags would otherwise load for any galley command.

    try:
        report = repair_bag(args.bag)
    except RepairError as err:
        raise UsageError(str(err)) from None
    summary = (
        f"{report.files} file(s), {report.messages:,} messages on {report.topics} topics, "
        f"{report.duration_ns / 1e9:.1f} s"
    )
    if not report.changed:
        print(f"galley bag repair: {args.bag} is complete ({summary}); nothing to repair")
        return 0
    for r in report.recovered:
        where = f"{r.staged} ({r.size_bytes / 1e6:.1f} MB)"
        if r.file is None:
            print(f"  {where}: {r.note}")
            continue
        span = f"{r.start_ns / 1e9:.2f} to {r.end_ns / 1e9:.2f} s" if r.messages else "no messages"
        print(
            f"  {where}: {r.messages:,} messages on {r.topics} topics, {span} -> {r.file} "
            f"({r.note}, leaving out the {r.dropped_bytes / 1e6:.2f} MB after it)"
        )
    if report.files == 0:
        print(f"galley bag repair: nothing in {args.bag} could be recovered; it holds no message")
        return 1
    print(f"galley bag repair: {args.bag} now holds {summary}; play it with: galley replay {args.bag}")
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("bag", help="work on recorded bags: repair one a killed recording left unfinished")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    repair = actions.add_parser(
        "repair",
        help="recover the files a killed recording left unfinished (.writing_<n>/) into the bag",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    repair.add_argument("bag", type=Path, help="bag folder (holds metadata.yaml and/or .writing_<n>/)")
    repair.set_defaults(run=_repair)
