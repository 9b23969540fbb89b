"""A training set for the diffusion policy, built from a folder of recorded episodes.

:func:`build_dataset` reads every bag (:func:`~galley_learning.policy.frames.episode_frames`) and
writes one folder, laid out like Diffusion Policy's replay buffer (frames of all episodes end to
end, ``episode_ends`` marking the boundaries), as numpy files that training memory-maps:

==========================  ==================  =============================================
file                        shape, dtype        content
==========================  ==================  =============================================
``images_<camera>.npy``     (N, H, W, 3) uint8  RGB per camera (``base``, ``wrist``; none for low-dim)
``state.npy``               (N, D) float32      robot state of the observation preset (meta ``state_names``)
``action.npy``              (N, 10) float32     Kitchen-R's action point (frames.ACTION_NAMES), absolute
                                                or delta (``config.actions``)
``step.npy``                (N,) int16          index into ``meta.json``'s ``steps``; -1 none
``episode_ends.npy``        (E,) int64          one past each episode's last frame
``sampled.npy``             (N,) bool           whether a training window may end at the frame
``meta.json``                                   settings, step texts, episodes (bag, split),
                                                normalisation statistics of state and action
``params.yaml``                                 the collection's sensor settings (its copy), which
                                                ``galley train`` passes on to the run
==========================  ==================  =============================================

The statistics (min, max, mean, std per dimension, over the training episodes) are saved with the
data: the policy normalises with them in training and in the node. A move's frames once the base is
within ``move_done_m`` of its goal are not sampled (see :func:`sampled_frames`). A fixed share of the episodes
(``val_fraction``, chosen by a seeded shuffle) is held out for the MSE of Kitchen-R's eq. (2).
"""

from __future__ import annotations

import json
import math
import random
import shutil
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from galley_learning.policy.config import CAMERAS, DatasetConfig, saved_config
from galley_learning.policy.frames import ACTION_NAMES, NoEstimatesError, episode_frames
from galley_learning.policy.observations import GOAL_NAMES, state_names
from galley_learning.policy.shipped import RUN_PARAMS
from galley_runtime.recording.staging import interrupted_bags, interrupted_error, is_staging, staged_splits

__all__ = [
    "DatasetConfig",
    "PolicyData",
    "build_dataset",
    "find_bags",
    "normalizer_stats",
    "sampled_frames",
    "training_stats",
]


def sampled_frames(
    goal: NDArray[Any], move_done_m: float, move_done_rad: float = math.pi
) -> NDArray[np.bool_]:
    """Frames a training window may end at: all but a move's once it is done.

    Done: the goal within ``move_done_m`` and its heading within ``move_done_rad`` of the base's.
    ``goal`` holds :func:`~galley_learning.policy.observations.goal_features` rows. The executor
    ends a policy's move there (completion 'criteria': ``nav_success_radius_m``, 0.10 m, and
    ``nav_heading_tolerance_rad``, 0.1 rad), so what the oracle does after that is never asked of
    the policy. The oracle's controller stops at 0.09 m and turns in place to the goal heading, for
    up to 20 s, then stands; with the heading free (``move_done_rad`` pi) the turn is dropped too
    and the policy starts its pick facing wherever it arrived, which the oracle never does. The
    windows ending before that keep the stop in their action chunks.
    """
    g = np.asarray(goal, dtype=float)
    col = {n: i for i, n in enumerate(GOAL_NAMES)}
    has_goal = np.hypot(g[:, col["goal_cos"]], g[:, col["goal_sin"]]) > 0.5
    heading = np.abs(np.arctan2(g[:, col["goal_sin"]], g[:, col["goal_cos"]]))
    arrived = (g[:, col["is_move"]] == 1.0) & has_goal & (g[:, col["goal_dist"]] <= move_done_m)
    return ~(arrived & (heading <= move_done_rad))


def find_bags(collection: str | Path) -> list[Path]:
    """The bag folders of a collection, in name order.

    A collection with an ``episodes/`` folder (``galley collect``'s) gives only the bags below it
    (successful episodes); otherwise every bag below ``collection`` except those under ``failed/``.

    Raises:
        FileNotFoundError: ``collection`` is not a folder or holds no bag (the message says what to do).
        UnfinishedBagError: a bag was interrupted while recording (the message names ``galley bag repair``).
    """
    root = Path(collection)
    if not root.is_dir():
        raise FileNotFoundError(
            f"{root} is not a folder; give a collection folder of recorded episodes (bags), "
            "as galley collect writes"
        )
    search = root / "episodes" if (root / "episodes").is_dir() else root
    failed = root / "failed"
    interrupted = [b for b in interrupted_bags(search) if b != failed and failed not in b.parents]
    if interrupted:
        raise interrupted_error(interrupted, search)
    bags = sorted(
        p.parent
        for p in search.rglob("metadata.yaml")
        if failed not in p.parents and p.parent != root and not is_staging(p.parent)
    )
    if (root / "metadata.yaml").exists() and search == root:
        bags.insert(0, root)
    bags = [b for b in bags if not staged_splits(b)]  # being recorded now: not an episode yet
    if not bags:
        where = f"{search} (successful episodes)" if search != root else str(root)
        raise FileNotFoundError(
            f"no bags under {where}: a bag is a folder with metadata.yaml; record episodes first "
            f"(galley collect --out {root}, or galley run --video --out {root}/episodes/NAME)"
        )
    return bags


def normalizer_stats(values: NDArray[Any]) -> dict[str, list[float]]:
    """Per-dimension min, max, mean and std of (N, D) values."""
    v = np.asarray(values, dtype=np.float64)
    return {
        "min": v.min(axis=0).tolist(),
        "max": v.max(axis=0).tolist(),
        "mean": v.mean(axis=0).tolist(),
        "std": v.std(axis=0).tolist(),
    }


def build_dataset(
    collection: str | Path,
    out: str | Path,
    config: DatasetConfig | None = None,
    *,
    workers: int = 1,
    progress: Callable[[int, int, Path], None] | None = None,
) -> dict[str, Any]:
    """Read every bag of ``collection`` into a dataset folder ``out``; returns its ``meta.json``.

    ``workers`` processes read bags in parallel; the dataset is the same for any number.

    Raises:
        FileNotFoundError: no bags in ``collection``.
        FileExistsError: ``out`` exists and is not an empty folder.
        ValueError: a bag lacks a stream the frames need (the message names bag and topic).
    """
    config = config or DatasetConfig()
    bags = find_bags(collection)
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not empty; choose a new dataset folder")
    parts = out / ".parts"
    parts.mkdir(parents=True, exist_ok=True)
    scenes = [bag_scene(bag, Path(collection), config.scene) for bag in bags]
    jobs = [
        (bag, parts / f"{i:06d}.npz", config, s) for i, (bag, s) in enumerate(zip(bags, scenes, strict=True))
    ]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            read = pool.map(_read_episode, *zip(*jobs, strict=True))
            results = _reported(read, bags, progress)
    else:
        results = _reported(map(_read_episode, *zip(*jobs, strict=True)), bags, progress)
    skipped = [
        {"bag": str(bag), "reason": r} for bag, r in zip(bags, results, strict=True) if isinstance(r, str)
    ]
    kept = [(bag, n, s) for bag, n, s in zip(bags, results, scenes, strict=True) if isinstance(n, int)]
    if not kept:
        shutil.rmtree(parts)
        raise ValueError(f"no bag of {collection} could be read into frames: {skipped[0]['reason']}")
    episodes = [
        {"bag": str(bag), "frames": n, **_episode_meta(bag)}
        | ({"scene_file": s} if s.endswith(".yaml") else {})
        for bag, n, s in kept
    ]
    order = list(range(len(episodes)))
    random.Random(config.seed).shuffle(order)
    n_val = max(1, round(len(order) * config.val_fraction)) if len(order) > 1 and config.val_fraction else 0
    for k, e in enumerate(order):
        episodes[e]["split"] = "val" if k < n_val else "train"
    steps: list[str] = []
    meta = _merge(parts, out, episodes, list(config.cameras), steps)
    shutil.rmtree(parts)
    meta |= {
        "config": asdict(config),
        "steps": steps,
        "state_names": list(state_names(config.observation)),
        "action_names": list(ACTION_NAMES),
        "episodes": episodes,
    } | ({"skipped": skipped} if skipped else {})
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    if (Path(collection) / RUN_PARAMS).is_file():  # its sensor settings, for the runs trained on it
        shutil.copyfile(Path(collection) / RUN_PARAMS, out / RUN_PARAMS)
    return meta


def bag_scene(bag: Path, collection: Path, default: str) -> str:
    """The scene a bag was recorded in, as :func:`~galley_runtime.config_files.find_scene` takes it.

    The bag's ``episode.json`` names its scene; a collection across kitchens (``galley collect
    --scenes``) keeps each scene file in ``<collection>/scenes/<name>.yaml``, which wins over a
    scene of that name elsewhere. A bag that names none is of ``default`` (``config.scene``).
    """
    name = _episode_meta(bag).get("scene") or default
    kept = collection / "scenes" / f"{name}.yaml"
    return str(kept) if kept.is_file() else name


def _read_episode(bag: Path, part: Path, config: DatasetConfig, scene: str) -> int | str:
    """Write one bag's frames to ``part`` (.npz, step texts as strings); returns its frame count.

    ``scene``: the scene the bag was recorded in (:func:`bag_scene`), for its objects' grasps. A bag
    the observation cannot be made from (:class:`~galley_learning.policy.frames.NoEstimatesError`:
    perception never saw an object of its steps) is skipped: the reason is returned instead.
    """
    cameras = {c: CAMERAS[c] for c in config.cameras}
    try:
        frames = episode_frames(
            bag,
            rate_hz=config.rate_hz,
            image_size=config.image_size,
            cameras=cameras,
            observation=config.observation,
            actions=config.actions,
            scene=scene,
            arm_target=config.arm_target,
        )
    except NoEstimatesError as err:
        return str(err)
    np.savez(
        part,
        state=frames.state.astype(np.float32),
        action=frames.action.astype(np.float32),
        step_text=np.asarray(frames.step, dtype=str),
        sampled=sampled_frames(frames.goal, config.move_done_m, config.move_done_rad),
        **{f"images_{c}": frames.images[c] for c in cameras},
    )
    return len(frames)


def _reported(
    lengths: Iterator[int | str], bags: list[Path], progress: Callable[[int, int, Path], None] | None
) -> list[int | str]:
    """Drain ``lengths`` (one per bag, in order: frames, or why it was skipped), reporting each bag."""
    done = []
    for n in lengths:
        done.append(n)
        if progress is not None:
            progress(len(done), len(bags), bags[len(done) - 1])
    return done


def _episode_meta(bag: Path) -> dict[str, Any]:
    sidecar = bag / "episode.json"
    if not sidecar.exists():
        return {}
    data = json.loads(sidecar.read_text())
    return {k: data[k] for k in ("instruction", "plan", "seed", "scene") if k in data}


def _merge(
    parts: Path, out: Path, episodes: list[dict[str, Any]], cameras: list[str], steps: list[str]
) -> dict[str, Any]:
    """Concatenate the per-episode parts into memory-mappable .npy files; statistics over train.

    Step texts become indices into ``steps`` (filled here in order of first appearance; -1: none).
    """
    files = sorted(parts.glob("*.npz"))
    lengths = [e["frames"] for e in episodes]
    total = sum(lengths)
    with np.load(files[0]) as first:
        keys = [k for k in first.files if k != "step_text"]
        shapes = {k: first[k].shape[1:] for k in keys}
        dtypes = {k: first[k].dtype for k in keys}
    arrays = {
        k: np.lib.format.open_memmap(out / f"{k}.npy", mode="w+", dtype=dtypes[k], shape=(total, *shapes[k]))
        for k in keys
    }
    step_ids = np.lib.format.open_memmap(out / "step.npy", mode="w+", dtype=np.int16, shape=(total,))
    index: dict[str, int] = {}
    train: dict[str, list[NDArray[Any]]] = {"state": [], "action": []}
    start = 0
    for path, episode in zip(files, episodes, strict=True):
        with np.load(path) as part:
            n = len(part["state"])
            for k in keys:
                arrays[k][start : start + n] = part[k]
            texts = part["step_text"].tolist()
            for s in texts:
                if s and s not in index:
                    index[s] = len(steps)
                    steps.append(s)
            step_ids[start : start + n] = [index.get(s, -1) for s in texts]
            if episode["split"] == "train":
                train["state"].append(part["state"])
                train["action"].append(part["action"])
        path.unlink()  # a part merged is not needed: the disk holds the dataset about once, not twice
        start += n
    for a in [*arrays.values(), step_ids]:
        a.flush()
    np.save(out / "episode_ends.npy", np.cumsum(lengths, dtype=np.int64))
    pool = (
        train
        if train["state"]
        else {"state": [np.load(out / "state.npy")], "action": [np.load(out / "action.npy")]}
    )
    return {
        "frames": total,
        "cameras": cameras,
        "stats": {k: normalizer_stats(np.concatenate(v)) for k, v in pool.items()},
    }


@dataclass
class PolicyData:
    """A dataset folder, memory-mapped (see the module docstring)."""

    root: Path
    meta: dict[str, Any]
    images: dict[str, NDArray[np.uint8]]
    state: NDArray[np.float32]
    action: NDArray[np.float32]
    step: NDArray[np.int16]
    episode_ends: NDArray[np.int64]
    splits: list[str] = field(default_factory=list)
    sampled: NDArray[np.bool_] | None = None  # where a training window may end; None: every frame

    @classmethod
    def open(cls, root: str | Path) -> PolicyData:
        """Open the dataset at ``root``.

        Raises:
            FileNotFoundError: not a dataset folder (no meta.json): build one with `galley train --data`.
            SavedSettingsError: its settings (``meta.json``'s ``config``) name one this galley does not
                know, or a value it does not allow (:func:`~galley_learning.policy.config.saved_config`).
        """
        root = Path(root)
        if not (root / "meta.json").exists():
            raise FileNotFoundError(f"{root} is not a policy dataset (no meta.json)")
        meta = json.loads((root / "meta.json").read_text())
        # an older galley's dataset: the settings it had no name for yet as it used them
        meta["config"] = asdict(saved_config(DatasetConfig, meta["config"], root / "meta.json"))
        load = lambda name: np.load(root / f"{name}.npy", mmap_mode="r")  # noqa: E731
        return cls(
            root=root,
            meta=meta,
            images={c: load(f"images_{c}") for c in meta["cameras"]},
            state=load("state"),
            action=load("action"),
            step=load("step"),
            episode_ends=np.load(root / "episode_ends.npy"),
            splits=[e["split"] for e in meta["episodes"]],
            sampled=load("sampled") if (root / "sampled.npy").exists() else None,  # older datasets: all
        )

    def episode_ranges(self, split: str | Sequence[str] = ("train", "val")) -> list[tuple[int, int]]:
        """(start, end) frame ranges of the episodes in ``split``."""
        wanted = (split,) if isinstance(split, str) else tuple(split)
        starts = np.concatenate([[0], self.episode_ends[:-1]])
        return [
            (int(s), int(e))
            for s, e, sp in zip(starts, self.episode_ends, self.splits, strict=True)
            if sp in wanted
        ]


def training_stats(data: Sequence[PolicyData]) -> dict[str, dict[str, list[float]]]:
    """The normaliser's statistics of state and action over the training episodes of ``data``.

    Every frame counts where no episode is marked ``train`` (a dataset without splits).
    """
    train = [(d, a, b) for d in data for (a, b) in d.episode_ranges("train")] or [
        (d, 0, len(d.state)) for d in data
    ]
    return {
        k: normalizer_stats(np.concatenate([np.asarray(getattr(d, k)[a:b]) for d, a, b in train]))
        for k in ("state", "action")
    }
