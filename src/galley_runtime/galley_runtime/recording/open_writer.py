"""How the ``recorder`` node's bag writer is chosen: rosbags (embedded host) or rosbag2_py (ROS 2).

The factory lives beside the implementations it knows, not in :mod:`.writer` (the interface they
import), and imports each only when it is chosen: neither library is needed by the other host.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from galley_runtime import messages
from galley_runtime.recording.writer import STORAGES, BagWriter, BagWriterError

__all__ = ["open_bag_writer"]


def open_bag_writer(
    path: Path,
    *,
    storage: str = "mcap",
    split_period_s: float = 5.0,
    implementation: str = "auto",
    warn: Callable[[str], None] | None = None,
) -> BagWriter:
    """A writer for a new bag folder ``path``.

    Args:
        path: the bag folder to create; it must not exist.
        storage: ``mcap`` or ``sqlite3``.
        split_period_s: start a new bag file every this many seconds of ROS time (what readers lose of a
            killed recording until ``galley bag repair``).
        implementation: ``rosbags`` (embedded host), ``rosbag2_py`` (ROS 2's own writer), or ``auto``:
            rosbag2_py when it imports and the messages are rclpy's, else rosbags. In ``auto``, a
            rosbag2_py that fails to import or to open the bag (no plugin for ``storage``) gives way
            to rosbags, and ``warn`` receives one line saying why.
        warn: where that line goes (e.g. the node's logger's ``warning``).

    Raises:
        BagWriterError: the folder exists, an unknown storage, or the implementation is missing.
    """
    if storage not in STORAGES:
        raise BagWriterError(f"storage {storage!r} is not supported; use one of {', '.join(STORAGES)}")
    if path.exists():
        raise BagWriterError(f"bag folder {path} exists already; choose another bag_name or output_dir")
    auto = implementation == "auto"
    if auto:
        rclpy_messages = type(messages.backend()).__name__ == "RclpyMessages"
        have_rosbag2 = importlib.util.find_spec("rosbag2_py") is not None
        implementation = "rosbag2_py" if rclpy_messages and have_rosbag2 else "rosbags"
    if implementation == "rosbag2_py":
        try:
            return _rosbag2_writer(path, storage, split_period_s)
        except (ImportError, BagWriterError) as err:
            if not auto:
                raise BagWriterError(f"bag writer rosbag2_py: {err}") from None
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()  # what rosbag2 created before it failed
            if warn is not None:
                warn(f"rosbag2_py cannot write {path} ({err}); writing it with rosbags instead")
            implementation = "rosbags"
    if implementation == "rosbags":
        # optional: rosbags (not needed by nodes under ROS 2)
        from galley_runtime.recording.rosbags_writer import RosbagsWriter  # noqa: PLC0415 (optional: rosbags)

        return RosbagsWriter(path, storage=storage, split_period_s=split_period_s)
    raise BagWriterError(f"bag writer {implementation!r} is unknown; use auto, rosbags or rosbag2_py")


def _rosbag2_writer(path: Path, storage: str, split_period_s: float) -> BagWriter:
    # optional: rosbag2_py (ROS 2 only)
    from galley_runtime.recording.rosbag2_writer import Rosbag2PyWriter  # noqa: PLC0415 (optional: rosbag2_py)

    return Rosbag2PyWriter(path, storage=storage, split_period_s=split_period_s)
