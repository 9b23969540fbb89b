"""What the embedded host's TF buffer takes in: /tf messages, or the numbers they were built from.

Every /tf and /tf_static message goes into the host's :class:`~galley_core.tf_tree.TransformTree`
(:func:`ingest_message`). A node that sends its transforms as numbers
(:meth:`galley_runtime.node.Node.send_transform_values`, the simulator's 50 Hz state) has them
inserted from those numbers (:func:`ingest_values`, an array with a row per transform), with the
same normalisation and the same checks, so the buffer holds exactly what reading its message back
would give, without reading it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from galley_core._jit import njit
from galley_core.tf_tree import TransformError, TransformTree
from galley_runtime import messages
from galley_runtime.conversions import transform_values, transform_values_from_msg

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


def ingest_values(
    tree: TransformTree, frames: Sequence[tuple[str, str]], values: np.ndarray[Any, Any], stamp_ns: int
) -> None:
    """Insert dynamic transforms of (parent, child) ``frames`` at ``stamp_ns``, all in one pass.

    ``values`` has a row (x, y, z, qx, qy, qz, qw) per frame, normalised and checked here as
    :func:`transform_values` does: a row it would refuse is logged and skipped.
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    rows, good = np.empty_like(values), np.empty(len(values), dtype=np.bool_)
    _normalise(values, rows, good)
    rows_list, accepted = rows.tolist(), good.tolist()
    entries = [(p, c, tuple(row)) for (p, c), row, ok in zip(frames, rows_list, accepted, strict=True) if ok]
    for (parent, child), row, ok in zip(frames, rows_list, accepted, strict=True):
        if not ok:  # a refused row is kept as given: transform_values says why
            try:
                transform_values(row[:3], row[3:])
            except ValueError as err:
                _log.warning(f"ignored transform {parent} -> {child}: {err}")
    for parent, child, refused in tree.set_transforms(entries, stamp_ns):
        _log.warning(f"ignored transform {parent} -> {child}: {refused}")


@njit
def _normalise(values: Any, rows: Any, good: Any) -> None:
    """:func:`transform_values` row by row: ``rows`` normalised (as given where refused), ``good``."""
    for k in range(values.shape[0]):
        tx, ty, tz = values[k, 0], values[k, 1], values[k, 2]
        qx, qy, qz, qw = values[k, 3], values[k, 4], values[k, 5], values[k, 6]
        norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
        good[k] = math.isfinite(tx + ty + tz) and math.isfinite(norm) and norm >= 1e-9
        rows[k, 0], rows[k, 1], rows[k, 2] = tx, ty, tz
        if good[k]:
            rows[k, 3], rows[k, 4], rows[k, 5], rows[k, 6] = qx / norm, qy / norm, qz / norm, qw / norm
        else:
            rows[k, 3], rows[k, 4], rows[k, 5], rows[k, 6] = qx, qy, qz, qw
