"""What the embedded host's TF buffer takes in: /tf messages, or the numbers they were built from.

Every /tf and /tf_static message goes into the host's :class:`~galley_core.tf_tree.TransformTree`
(:func:`ingest_message`). A node that sends its transforms as numbers
(:meth:`galley_runtime.node.Node.send_transform_values`, the simulator's 50 Hz state) has them
inserted from those numbers (:func:`ingest_values`), with the same normalisation and the same
checks, so the buffer holds exactly what reading its message back would give, without reading it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from galley_core.tf_tree import TransformError, TransformTree
from galley_runtime import messages
from galley_runtime.conversions import transform_values, transform_values_from_msg
from galley_runtime.node import TransformItem

__all__ = ["ingest_message", "ingest_values"]

_log = logging.getLogger("galley.tf")


def ingest_message(tree: TransformTree, msg: Any, *, static: bool) -> None:
    """Insert every transform of a ``tf2_msgs/msg/TFMessage``; a bad one is logged and skipped."""
    set_transform = tree.set_transform
    stamp, stamp_ns = None, 0
    for t in msg.transforms:
        header = t.header
        try:
            if header.stamp is not stamp:  # a broadcaster's transforms usually share one stamp
                stamp_ns = messages.time_ns_from_msg(header.stamp)
                stamp = header.stamp
            set_transform(
                header.frame_id, t.child_frame_id, stamp_ns, transform_values_from_msg(t), static=static
            )
        except (TransformError, ValueError) as err:
            _log.warning(f"ignored transform {header.frame_id} -> {t.child_frame_id}: {err}")


def ingest_values(tree: TransformTree, items: Sequence[TransformItem], stamp_ns: int) -> None:
    """Insert dynamic transforms given as (parent, child, (x, y, z), (qx, qy, qz, qw)) at ``stamp_ns``."""
    entries = []
    for parent, child, translation, rotation in items:
        try:
            entries.append((parent, child, transform_values(translation, rotation)))
        except ValueError as err:
            _log.warning(f"ignored transform {parent} -> {child}: {err}")
    for parent, child, refused in tree.set_transforms(entries, stamp_ns):
        _log.warning(f"ignored transform {parent} -> {child}: {refused}")
