"""A bag's layout while galley's split writer records it, and the check readers make before they open one.

:class:`~galley_runtime.recording.rosbags_writer.RosbagsWriter` writes file ``n`` of a bag in a hidden
staging folder ``<bag>/.writing_<n>/`` (rosbags' own one-file bag: ``.writing_<n>.mcap`` or ``.db3``
and, once closed, its metadata.yaml). :func:`adopt_split` then makes it a finished file of the bag:
``<bag>/<bag name>_<n>.mcap``, listed in the bag's metadata.yaml. rosbag2 readers see only listed
files, so a staging folder left behind is the part of the recording that a killed process never
finished; ``galley bag repair`` (:mod:`.repair`) recovers it.

While it records, the writer holds an advisory lock (``flock``) on the bag folder, which the kernel
drops when the process ends however it ends (SIGKILL included). A bag with a staging folder is
therefore either being recorded (locked) or interrupted (not locked): :func:`check_bag` lets a
reader play the finished part of the first and refuses the second with one line naming the repair.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from typing import Any

from galley_runtime.recording.metadata_file import load_yaml, merge_split_info, write_metadata

__all__ = [
    "REPAIR_PREFIX",
    "STAGING_PREFIX",
    "RecordingLock",
    "UnfinishedBagError",
    "adopt_split",
    "check_bag",
    "interrupted_bags",
    "interrupted_error",
    "is_being_recorded",
    "is_staging",
    "split_file_name",
    "staged_splits",
    "staging_folder",
]

#: Staging folders of the writer (``.writing_<n>``) and of ``galley bag repair`` (``.repair_<n>``).
STAGING_PREFIX = ".writing_"
REPAIR_PREFIX = ".repair_"


class UnfinishedBagError(Exception):
    """A bag whose recording was interrupted (or is still running): the message names the fix."""


def staging_folder(bag: Path, index: int, prefix: str = STAGING_PREFIX) -> Path:
    """Where file ``index`` of ``bag`` is written until it is finished."""
    return Path(bag) / f"{prefix}{index}"


def split_file_name(bag: Path, index: int, suffix: str) -> str:
    """The name of the bag's finished file ``index`` (``<bag name>_<index><suffix>``, as rosbag2's splits)."""
    return f"{Path(bag).name}_{index}{suffix}"


def is_staging(path: Path) -> bool:
    """Whether ``path`` is, or lies in, a staging folder (``.writing_<n>`` or ``.repair_<n>``)."""
    return any(
        part.startswith(prefix) and part.removeprefix(prefix).isdigit()
        for part in Path(path).parts
        for prefix in (STAGING_PREFIX, REPAIR_PREFIX)
    )


def staged_splits(bag: Path, prefix: str = STAGING_PREFIX) -> list[tuple[int, Path]]:
    """The staging folders of ``bag`` as (file index, folder), by index."""
    found = []
    for p in Path(bag).glob(f"{prefix}*"):
        index = p.name.removeprefix(prefix)
        if p.is_dir() and index.isdigit():
            found.append((int(index), p))
    return sorted(found)


class RecordingLock:
    """An exclusive advisory lock on a bag folder, held while a process writes the bag.

    :meth:`acquire` returns None when another open of the folder holds it (another process
    records or repairs the bag). The kernel releases the lock when the holder exits, whatever kills it.
    """

    def __init__(self, fd: int | None) -> None:
        self._fd = fd

    @classmethod
    def acquire(cls, bag: Path) -> RecordingLock | None:
        fd = os.open(bag, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError:
            # A file system without flock (rare network mounts): record unlocked rather than not at all;
            # readers then take an unfinished bag there for an interrupted one.
            os.close(fd)
            return cls(None)
        return cls(fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None

    def __del__(self) -> None:
        self.release()  # a writer dropped unclosed must not leave its bag looking recorded


def is_being_recorded(bag: Path) -> bool:
    """Whether a live process holds ``bag``'s :class:`RecordingLock` (records or repairs it now)."""
    lock = RecordingLock.acquire(bag)
    if lock is None:
        return True
    lock.release()
    return False


def adopt_split(
    bag: Path, staging: Path, index: int, merged: dict[str, Any] | None, custom_data: dict[str, str]
) -> dict[str, Any]:
    """Make the closed file in ``staging`` (with its one-file metadata.yaml) file ``index`` of ``bag``.

    The file moves into the bag folder, metadata.yaml lists it (written atomically), and only then
    is the staging folder removed, so a crash at any point leaves either the staged file or the
    listed one (:func:`~galley_runtime.recording.repair.repair_bag` finishes an adoption cut short).

    Args:
        bag: the bag folder.
        staging: the staging folder, closed by rosbags (its metadata.yaml written).
        index: the file's index in the bag.
        merged: the bag's metadata so far (None: no finished file yet).
        custom_data: the bag's ``custom_data``.

    Returns:
        The bag's merged metadata, as written.
    """
    split = load_yaml(staging / "metadata.yaml")["rosbag2_bagfile_information"]
    [storage_file] = split["relative_file_paths"]
    name = split_file_name(bag, index, Path(storage_file).suffix)
    source = staging / Path(storage_file).name
    if source.exists():  # else moved already, by an adoption a crash cut short
        os.replace(source, Path(bag) / name)
    merged = merge_split_info(merged, split, name)
    write_metadata(bag, merged, custom_data)
    shutil.rmtree(staging)
    return merged


def _describe(staged: list[tuple[int, Path]], bag: Path) -> str:
    parts = []
    for _, folder in staged:
        size_mb = sum(f.stat().st_size for f in folder.iterdir() if f.is_file()) / 1e6
        files = sorted(f.name for f in folder.iterdir() if f.suffix in (".mcap", ".db3")) or ["no file"]
        parts.append(f"{folder.relative_to(bag)}/{files[0]} ({size_mb:.1f} MB)")
    return ", ".join(parts)


def check_bag(bag: Path) -> str | None:
    """Check a bag before reading it; a note to show when only its finished part can be read.

    Returns:
        None for a finished bag (or a path that is no bag folder: the reader says so itself), a
        note when the bag is being recorded (its finished files can be read, the one being written
        not yet).

    Raises:
        UnfinishedBagError: the recording was interrupted (a staging folder that no live process
            holds, or ``bag`` is a file inside one), or it is being recorded and no file is finished
            yet. The message is one line that names the bag and the fix.
    """
    bag = Path(bag)
    if is_staging(bag):
        owner = bag
        while is_staging(owner):
            owner = owner.parent
        raise UnfinishedBagError(
            f"{bag} is a staged file of an unfinished recording of {owner}; "
            f"recover it with: galley bag repair {owner}"
        )
    if not bag.is_dir():
        return None
    staged = staged_splits(bag)
    if not staged:
        return None
    has_metadata = (bag / "metadata.yaml").exists()
    if is_being_recorded(bag):
        if not has_metadata:
            raise UnfinishedBagError(
                f"{bag} is being recorded and has no finished file yet; wait until the recorder stops "
                "(or finishes its first file, every split_period_s of ROS time)"
            )
        return (
            f"{bag} is still being recorded: reading its finished files, without "
            f"{_describe(staged, bag)} that is being written"
        )
    missing = "" if has_metadata else " and the bag has no metadata.yaml"
    raise UnfinishedBagError(
        f"{bag}: its recording was interrupted: {_describe(staged, bag)} was never finished{missing}; "
        f"recover what it holds with: galley bag repair {bag}"
    )


def interrupted_bags(folder: Path) -> list[Path]:
    """The bag folders below ``folder`` (itself included) whose recording was interrupted, in name order."""
    bags = {
        p.parent
        for p in Path(folder).rglob(f"{STAGING_PREFIX}*")
        if p.is_dir() and is_staging(Path(p.name)) and not is_staging(p.parent)
    }
    return sorted(b for b in bags if not is_being_recorded(b))


def interrupted_error(bags: list[Path], folder: Path) -> UnfinishedBagError:
    """The one-line error for readers of a collection ``folder`` that holds interrupted ``bags``."""
    more = f" and {len(bags) - 1} more" if len(bags) > 1 else ""
    return UnfinishedBagError(
        f"{folder} holds {len(bags)} bag(s) whose recording was interrupted ({bags[0]}{more}); recover "
        f"each with: galley bag repair {bags[0]}, or move them out of {folder}"
    )
