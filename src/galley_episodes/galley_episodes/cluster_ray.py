"""Episodes as Ray tasks (``--cluster``): one task per episode, files back through the object store.

Imported only when a command is given ``--cluster``. Each episode is one task asking for
:class:`~galley_episodes.runners.EpisodeResources` (1 CPU, memory, a GPU where a policy runs on one).

* **Files out.** What an episode reads from the driver (the configuration folder, the maps,
  ``--params`` files, a ``--policy`` run) is packed once and put into the object store; a node
  unpacks it once into its temporary folder and the episode's arguments are rewritten to point
  there (galley_episodes.cluster_files). Code is not shipped: every node runs the same galley install
  (the project's image, docker/Dockerfile).
* **Files back.** The episode runs in a fresh temporary folder of its node; the task returns its
  files as one tar archive (bytes, through the object store), which the driver writes into the
  output folder staged and renamed, so that no half-written episode appears there.
* **Faults.** A worker process or node that dies mid-episode fails the task as a system failure,
  which Ray retries (``max_retries``) on whichever node has room; the dead attempt's folder stays
  on its node, never reaches the driver, and is deleted by the next episode that runs there. An
  exception raised by the episode itself is not retried: it is the episode's result, as locally.
  The driver receives exactly one result per episode, so nothing is counted twice.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import ray

from galley_episodes.cluster_files import Shipment, decode, materialise, pack_folder, unpack_folder
from galley_episodes.runners import EpisodeResources, EpisodeRunner, located
from galley_runtime.config_files import config_dirs

__all__ = ["MAX_RETRIES", "RayRunner"]

#: attempts after the first when a worker process or node dies under an episode
MAX_RETRIES = 3

#: the name Ray gives a worker process while it runs an episode (``ray::run_episode_task``)
TASK_NAME = "run_episode_task"


class RayRunner(EpisodeRunner):
    """Episodes as tasks of the Ray cluster at ``address`` (``local``: a Ray instance started here)."""

    def __init__(self, address: str, *, workers: int, resources: EpisodeResources) -> None:
        self.address = address
        self._started_here = not ray.is_initialized()
        if self._started_here:
            _check_reachable(address)
            try:
                if address == "local":
                    ray.init(
                        address="local", num_cpus=workers, include_dashboard=False, logging_level="WARNING"
                    )
                else:
                    ray.init(address=address, logging_level="WARNING")
            except (ConnectionError, RuntimeError, ValueError) as err:
                raise ValueError(
                    f"--cluster {address}: no Ray cluster to join ({err}); start one with `ray start "
                    "--head` (docs/tutorials/cluster.md) or give --cluster local"
                ) from None
        self.resources = resources
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        self._nodes = nodes
        self._cpus = sum(n["Resources"].get("CPU", 0.0) for n in nodes)
        self._gpus = sum(n["Resources"].get("GPU", 0.0) for n in nodes)
        self.episode_workers = int(self._cpus // resources.cpus)
        if resources.gpus:
            self.episode_workers = min(self.episode_workers, int(self._gpus // resources.gpus))
        # twice the workers, so that a node that finishes an episode finds the next one queued
        self.slots = max(1, 2 * self.episode_workers)
        dirs = config_dirs()
        self._shipment = Shipment.of_configuration(dirs[0] if dirs else None)
        self._packed: tuple[tuple[str, ...], str, Any] | None = None
        self._task = ray.remote(run_episode_task).options(
            num_cpus=resources.cpus,
            memory=resources.memory_bytes,
            num_gpus=resources.gpus,
            max_retries=MAX_RETRIES,
            retry_exceptions=False,
        )

    def describe(self) -> str:
        hosts = sorted(
            {n.get("NodeManagerHostname") or n.get("NodeManagerAddress", "?") for n in self._nodes}
        )
        gpu = f", {self.resources.gpus:g} GPU" if self.resources.gpus else ""
        memory = self.resources.memory_bytes / 1024**3
        return (
            f"Ray cluster {self.address}: {len(self._nodes)} node(s) on {', '.join(hosts)}, "
            f"{self._cpus:g} CPUs, {self._gpus:g} GPUs; {self.episode_workers} episode worker(s), each "
            f"episode asking {self.resources.cpus:g} CPU, {memory:.1f} GiB{gpu}"
        )

    def _shipment_ref(self) -> tuple[str, Any]:
        """(digest, object ref) of the shipment as it is now (packed again when parts were added)."""
        names = tuple(sorted(self._shipment.parts))
        if self._packed is None or self._packed[0] != names:
            digest, data = self._shipment.pack()
            self._packed = (names, digest, ray.put(data))
        return self._packed[1], self._packed[2]

    def submit(
        self,
        fn: Callable[..., Any],
        /,
        *,
        output: str | None = None,
        files: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> Future[Any]:
        sent = {k: self._shipment.encode(v) if k in files else v for k, v in kwargs.items()}
        destination = Path(kwargs[output]) if output else None
        if output:
            sent[output] = (destination.name, isinstance(kwargs[output], str))  # type: ignore[union-attr]
        digest, ref = self._shipment_ref()
        task = self._task.remote(fn, sent, output, digest, [ref], self._shipment.config_part)
        return _delivered(task, destination)

    def close(self) -> None:
        if self._started_here and ray.is_initialized():
            ray.shutdown()


def _delivered(task: Any, destination: Path | None) -> Future[Any]:
    """A future done when the task's result is here and its files (if any) are in ``destination``."""
    outer: Future[Any] = Future()

    def finish(inner: Future[Any]) -> None:
        if outer.cancelled():
            return
        try:
            result, archive = inner.result()
            if destination is not None and archive is not None:
                unpack_folder(archive, destination)
        except ray.exceptions.RayTaskError as err:  # the episode's own exception, as a local run raises it
            outer.set_exception(err.cause if isinstance(err.cause, Exception) else err)
        except BaseException as err:  # a system failure past its retries: handed to whoever waits
            outer.set_exception(err)
        else:
            outer.set_result(result)

    def cancel(done: Future[Any]) -> None:
        if done.cancelled():
            ray.cancel(task)

    outer.add_done_callback(cancel)
    task.future().add_done_callback(finish)
    return outer


def run_episode_task(  # noqa: PLR0917 (a Ray task's arguments are positional)
    fn: Callable[..., Any],
    kwargs: dict[str, Any],
    output: str | None,
    digest: str,
    shipment: list[Any],
    config_part: str,
) -> tuple[Any, bytes | None]:
    """On a node: ``fn(**kwargs)`` with the driver's files here; (result, the output folder's archive)."""
    logging.getLogger().setLevel(logging.ERROR)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    root = materialise(digest, lambda: ray.get(shipment[0]), config_part)
    kwargs = {k: decode(v, root) for k, v in kwargs.items()}
    scratch_root = Path(tempfile.gettempdir()) / "galley-episodes"
    _drop_abandoned(scratch_root)
    scratch = scratch_root / f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    scratch.mkdir(parents=True)
    folder = None
    if output:
        name, as_text = kwargs[output]
        folder = scratch / name
        kwargs[output] = str(folder) if as_text else folder
    try:
        result = fn(**kwargs)
        archive = pack_folder(folder) if folder is not None and folder.is_dir() else None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    node = ray.get_runtime_context().get_node_id()[:8]
    return located(result, f"{socket.gethostname()} node {node} pid {os.getpid()}"), archive


def _check_reachable(address: str) -> None:
    """Refuse a HOST:PORT or ray://HOST:PORT where nothing listens (ray.init would wait for minutes).

    Raises:
        ValueError: naming the address and how to start a cluster.
    """
    if address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5.0).close()
    except OSError as err:
        raise ValueError(
            f"--cluster {address}: nothing answers at {host}:{port} ({err.strerror or err}); start the "
            "head with `ray start --head` (docs/tutorials/cluster.md) or give --cluster local"
        ) from None


def _drop_abandoned(scratch_root: Path) -> None:
    """Delete the folders of episodes whose worker process died (a killed attempt's partial files)."""
    if not scratch_root.is_dir():
        return
    for folder in scratch_root.iterdir():
        pid = folder.name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
