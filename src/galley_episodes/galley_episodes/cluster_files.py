"""Files between the driver and a cluster's nodes, which share no filesystem.

* An episode's folder travels back whole as one tar archive in memory (:func:`pack_folder`) and
  is written into the driver's output folder by :func:`unpack_folder`: into a staging folder
  beside its destination, renamed into place once every file is written, so that a reader (or a
  ``--resume``) never sees half an episode.
* What an episode reads from the driver (the configuration folder with its scenes and suites, the
  maps beside it, ``--params`` files, a ``--policy`` run) travels out as a :class:`Shipment`: one
  archive put once into the cluster's object store; each node unpacks it once into its temporary
  folder (:func:`materialise`), and the episode's arguments that named driver paths are rewritten to
  the node's copies (:meth:`Shipment.encode`, :func:`decode`).
* :class:`EpisodeJournal`: the rows of an evaluation's finished episodes, one file each, so that
  ``galley eval --resume`` goes on from what reached ``--out``.

Nothing here imports ray: the transport (galley_episodes.cluster_ray) moves the bytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from galley_core.files import replacing

__all__ = [
    "EpisodeJournal",
    "Shipment",
    "ShippedPath",
    "decode",
    "materialise",
    "pack_folder",
    "unpack_folder",
]


def pack_folder(folder: Path) -> bytes:
    """Every file under ``folder`` as an uncompressed tar archive (bags are compressed already)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buffer.getvalue()


def unpack_folder(data: bytes, destination: Path) -> None:
    """Write the archive ``data`` as the folder ``destination``, all at once (staged, then renamed).

    Raises:
        FileExistsError: ``destination`` exists (an episode is never written twice).
    """
    if destination.exists():
        raise FileExistsError(f"{destination} exists already; an episode is written once")
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.staging-", dir=destination.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
            archive.extractall(staging, filter="data")
        staging.rename(destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@dataclass(frozen=True)
class ShippedPath:
    """An argument that named a driver path: the part of the shipment and the path inside it."""

    part: str
    inside: str
    as_text: bool  # the argument was a str, not a Path


@dataclass
class Shipment:
    """Driver files that episodes read, packed once: ``parts`` maps a part's name to its driver path."""

    parts: dict[str, Path] = field(default_factory=dict)
    config_part: str = ""  # the part that holds the configuration folder (GALLEY_CONFIG_DIR on the node)

    @classmethod
    def of_configuration(cls, config_dir: Path | None) -> Shipment:
        """The driver's configuration folder (scenes, suites, galley.yaml) and the maps beside it."""
        shipment = cls()
        if config_dir is not None:
            shipment.parts["config"] = config_dir.resolve()
            shipment.config_part = "config"
            maps = config_dir.resolve().parent / "maps"
            if maps.is_dir():
                shipment.parts["maps"] = maps
        return shipment

    def encode(self, value: Any) -> Any:
        """``value`` with every path (str or Path, also in lists and tuples) made a :class:`ShippedPath`.

        A path under a part already shipped is found inside it; another one becomes a new part.

        Raises:
            FileNotFoundError: the path does not exist on the driver.
        """
        if isinstance(value, (list, tuple)):
            return type(value)(self.encode(v) for v in value)
        if value is None or value == "":
            return value
        path = Path(value).resolve()
        if not path.exists():
            raise FileNotFoundError(f"{value} does not exist on this machine, so no node can have it")
        for name, root in self.parts.items():
            if path == root or root in path.parents:
                return ShippedPath(name, str(path.relative_to(root)), isinstance(value, str))
        name = f"p{len(self.parts)}-{path.name}"
        self.parts[name] = path
        return ShippedPath(name, ".", isinstance(value, str))

    def pack(self) -> tuple[str, bytes]:
        """(digest, archive) of every part: a node unpacks one digest once."""
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            for name, root in sorted(self.parts.items()):
                archive.add(root, arcname=name)
        data = buffer.getvalue()
        return hashlib.sha256(data).hexdigest()[:16], data


def materialise(digest: str, fetch: Any, config_part: str) -> Path:
    """This node's copy of shipment ``digest`` (unpacked by the first episode that needs it).

    ``fetch()`` returns the archive's bytes (from the object store). Sets ``GALLEY_CONFIG_DIR`` to
    the shipped configuration folder, so that scenes, suites and maps come from the driver.
    """
    root = Path(tempfile.gettempdir()) / "galley-shipments" / digest
    if not root.is_dir():
        root.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=root.parent))
        with tarfile.open(fileobj=io.BytesIO(fetch()), mode="r") as archive:
            archive.extractall(staging, filter="data")
        try:
            staging.rename(root)
        except OSError:  # another worker on this node unpacked it first
            shutil.rmtree(staging, ignore_errors=True)
    if config_part:
        os.environ["GALLEY_CONFIG_DIR"] = str(root / config_part)
    return root


def decode(value: Any, root: Path) -> Any:
    """``value`` with every :class:`ShippedPath` made the node's path under ``root``."""
    if isinstance(value, (list, tuple)):
        return type(value)(decode(v, root) for v in value)
    if isinstance(value, ShippedPath):
        path = (root / value.part / value.inside).resolve()
        return str(path) if value.as_text else path
    return value


class EpisodeJournal:
    """One JSON file per finished episode under ``folder``, written whole; what ``--resume`` reads.

    A file records the episode's index, id and seed with its row, so that resuming against another
    suite, split or ``--steps`` is refused instead of mixing two evaluations.
    """

    def __init__(self, folder: Path, *, resume: bool) -> None:
        self.folder = folder
        if not resume and folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True, exist_ok=True)

    def _path(self, index: int) -> Path:
        return self.folder / f"{index:06d}.json"

    def finished(self, index: int, key: dict[str, Any]) -> dict[str, Any] | None:
        """The row of episode ``index`` if it finished before, else None.

        Raises:
            ValueError: the recorded episode is another one than ``key`` (id, seed, plan).
        """
        path = self._path(index)
        if not path.is_file():
            return None
        record = json.loads(path.read_text())
        if record["key"] != key:
            raise ValueError(
                f"{path} holds episode {record['key']}, not {key}: resume with the same --suite, "
                "--split, --episodes and --steps, or evaluate into another --out"
            )
        return dict(record["row"])

    def record(self, index: int, key: dict[str, Any], row: dict[str, Any]) -> None:
        """Write episode ``index``'s row (atomically)."""
        with replacing(self._path(index)) as tmp:
            tmp.write_text(json.dumps({"key": key, "row": row}, default=_plain) + "\n")


def _plain(value: Any) -> Any:
    """numpy scalars and arrays as JSON numbers and lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
