"""How the ``recorder`` node's bag writer is chosen: rosbags, or rosbag2_py (ROS 2's own).

The factory lives beside the implementations it knows, not in :mod:`.writer` (the interface they
import), and imports each only when it is chosen: neither library is needed by the other.

``auto`` prefers rosbags under either host. rosbag2_py of Jazzy stores the message definition of
each topic from the ament index, which its look-up cannot do for action types: the feedback topics
of the Nav2 actions every kitchen_sim launch runs (``nav2_msgs/action/NavigateToPose_FeedbackMessage``)
go into the bag with an empty definition of encoding ``unknown``, and rosbags, galley's reader
(training, replay, ``galley bag``), refuses to open such a bag at all (``KeyError: 'unknown'``). It
also writes metadata.yaml only when the bag is closed, where rosbags' split files survive a killed
recorder. ``ros2 bag info`` and ``ros2 bag play`` read the bags of either.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from galley_runtime import messages
from galley_runtime.recording.writer import STORAGES, BagWriter, BagWriterError

__all__ = ["open_bag_writer"]


def open_bag_writer(
    path: Path, *, storage: str = "mcap", split_period_s: float = 5.0, implementation: str = "auto"
) -> BagWriter:
    """A writer for a new bag folder ``path``.

    Args:
        path: the bag folder to create; it must not exist.
        storage: ``mcap`` or ``sqlite3``.
        split_period_s: start a new bag file every this many seconds of ROS time (what readers lose of a
            killed recording until ``galley bag repair``).
        implementation: ``rosbags``, ``rosbag2_py`` (ROS 2's own writer), or ``auto``: rosbags where
            it imports, else rosbag2_py under rclpy (see the module docstring).

    Raises:
        BagWriterError: the folder exists, an unknown storage, or the implementation is missing or
            cannot write the bag (e.g. rosbag2 has no plugin for ``storage``).
    """
    if storage not in STORAGES:
        raise BagWriterError(f"storage {storage!r} is not supported; use one of {', '.join(STORAGES)}")
    if path.exists():
        raise BagWriterError(f"bag folder {path} exists already; choose another bag_name or output_dir")
    if implementation == "auto":
        have_rosbags = importlib.util.find_spec("rosbags") is not None
        rclpy_messages = type(messages.backend()).__name__ == "RclpyMessages"
        implementation = "rosbags" if have_rosbags or not rclpy_messages else "rosbag2_py"
    if implementation == "rosbag2_py":
        try:
            # optional: rosbag2_py (ROS 2 only)
            from galley_runtime.recording.rosbag2_writer import Rosbag2PyWriter  # noqa: PLC0415 (optional: rosbag2_py)
        except ImportError as err:
            raise BagWriterError(f"bag writer rosbag2_py: {err} (source a ROS 2 with rosbag2)") from None
        return Rosbag2PyWriter(path, storage=storage, split_period_s=split_period_s)
    if implementation == "rosbags":
        # optional: rosbags (not needed by nodes under ROS 2)
        from galley_runtime.recording.rosbags_writer import RosbagsWriter  # noqa: PLC0415 (optional: rosbags)

        return RosbagsWriter(path, storage=storage, split_period_s=split_period_s)
    raise BagWriterError(f"bag writer {implementation!r} is unknown; use auto, rosbags or rosbag2_py")
