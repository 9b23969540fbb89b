"""Where episodes run: this machine's processes, or a Ray cluster (``--cluster``).

``galley collect``, ``galley eval`` and ``galley eval-planner`` hand their units of work (an
episode; a planner backend's evaluation) to an :class:`EpisodeRunner` and wait on the futures it
returns (galley_episodes.runners), whichever runner it is:

* :class:`LocalRunner` (the default): ``--workers`` spawned processes of this machine
  (:func:`galley_episodes.pool.episode_pool`); an episode writes straight into the output folder.
* ``RayRunner`` (galley_episodes.cluster_ray, with ``--cluster ADDRESS``): one Ray task per episode with
  its resources declared; the episode runs in a temporary folder on its node and its files come
  back through the object store, to be written into the output folder whole. ray is imported only
  then: without ``--cluster`` nothing of it is loaded.

Every result that is a dict gains ``ran_on``: where it ran (``host pid N`` here; ``host node
<id> pid N`` on a cluster), which the reports carry per episode.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any

from galley_episodes.cluster_files import EpisodeJournal
from galley_episodes.config import CLUSTER_DOC, CLUSTER_PATTERN
from galley_episodes.runners import EpisodeResources, EpisodeRunner, LocalRunner, located
from galley_runtime.config_files import default_params_files
from galley_runtime.params_file import load_params_files, parameters_for

__all__ = [
    "add_cluster_option",
    "check_cluster_address",
    "episode_runner",
    "policy_resources",
    "run_episodes",
]


def check_cluster_address(text: str) -> str:
    """argparse type of ``--cluster``: auto, local, ray://HOST:PORT or HOST:PORT (the fields' pattern)."""
    if not text.strip() or not re.fullmatch(CLUSTER_PATTERN, text.strip()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a cluster address: use auto, local, ray://HOST:PORT or HOST:PORT"
        )
    return text.strip()


def add_cluster_option(parser: argparse.ArgumentParser, *, resume: str = "") -> None:
    """``--cluster ADDRESS`` (default: none, this machine's processes); ``--resume`` with its help."""
    parser.add_argument(
        "--cluster", type=check_cluster_address, default=None, metavar="ADDRESS", help=CLUSTER_DOC
    )
    if resume:
        parser.add_argument("--resume", action="store_true", help=resume)


def episode_runner(
    workers: int,
    cluster: str | None = None,
    *,
    resources: EpisodeResources | None = None,
    announce: Callable[[str], None] | None = None,
) -> EpisodeRunner:
    """The runner of a command: ``workers`` local processes, or the Ray cluster at ``cluster``.

    ``workers`` with ``cluster`` ``local``: the CPUs of the Ray instance started here. ``announce``
    gets the runner's one-line description (the cluster's nodes and workers).

    Raises:
        ValueError: ``cluster`` given and ray not installed, or no cluster at that address.
    """
    if cluster is None:
        runner: EpisodeRunner = LocalRunner(workers)
    else:
        try:
            from galley_episodes.cluster_ray import RayRunner  # noqa: PLC0415 (optional: ray)
        except ImportError as err:
            raise ValueError(
                f"--cluster {cluster}: ray is not installed ({err}); "
                "install it with: pip install -r requirements-cluster.txt"
            ) from None
        runner = RayRunner(cluster, workers=workers, resources=resources or EpisodeResources())
    if announce is not None:
        announce(runner.describe())
    return runner


def policy_resources(policy: Path | None, params: list[Path]) -> EpisodeResources:
    """An episode's resources: a GPU when a learned ``policy`` runs on CUDA by the layered params.

    ``diffusion_policy.device`` ``cuda`` or ``cuda:N`` reserves one GPU per episode; ``auto`` takes a
    GPU only where a node happens to have a free one, so it reserves none.
    """
    if policy is None:
        return EpisodeResources()
    from galley_nodes.nodes.diffusion_policy import DiffusionPolicyNode  # noqa: PLC0415 (deferred: nodes)

    entries = load_params_files([*default_params_files(), *params])
    fields = DiffusionPolicyNode.Config.__dataclass_fields__
    device = str(
        parameters_for(entries, f"/{DiffusionPolicyNode.name}", fields).get("device", ("cpu", ""))[0]
    )
    return EpisodeResources(gpus=1.0 if device.startswith("cuda") else 0.0)


def run_episodes(
    fn: Callable[..., dict[str, Any]],
    calls: list[dict[str, Any]],
    *,
    keys: list[dict[str, Any]],
    journal: EpisodeJournal,
    workers: int,
    cluster: str | None,
    progress: Callable[[dict[int, dict[str, Any]]], None],
    files: tuple[str, ...] = (),
    resources: EpisodeResources | None = None,
) -> list[dict[str, Any]]:
    """``fn(**call)`` for every call, in order, keeping each result in ``journal`` as it arrives.

    Calls whose result ``journal`` holds under the same key are not run again (``--resume``).
    One worker and no cluster: in this process, one after another (today's ``--workers 1``).
    ``progress`` gets the results so far by call index after each one.
    """
    done = {i: row for i in range(len(calls)) if (row := journal.finished(i, keys[i])) is not None}
    todo = [i for i in range(len(calls)) if i not in done]
    if done:
        print(f"  {len(done)} episode(s) already in {journal.folder}: {len(todo)} to run", flush=True)

    def finish(i: int, row: dict[str, Any]) -> None:
        journal.record(i, keys[i], row)
        done[i] = row
        progress(done)

    if workers <= 1 and cluster is None:
        for i in todo:
            finish(i, located(fn(**calls[i])))
    else:
        announce = lambda line: print(line, flush=True)  # noqa: E731 (one line, used once)
        with episode_runner(workers, cluster, resources=resources, announce=announce) as pool:
            futures = {pool.submit(fn, files=files, **calls[i]): i for i in todo}
            for future in as_completed(futures):
                finish(futures[future], future.result())
    return [done[i] for i in range(len(calls))]
