"""``galley train --data DIR --out RUN``: train the diffusion policy on collected episodes.

``--data`` is a collection (``galley collect``'s folder of bags) or a dataset folder built from one
(``meta.json`` inside). A collection is first turned into a dataset at ``RUN/dataset`` (frames at the
cameras' rate, images resized to ``--image-size``). Several folders, collected with the same settings
(a collection made in parts, on several machines), are joined into ``RUN/dataset``. Training shows
progress, writes checkpoints, ``loss.png`` and ``report.json`` into RUN, and resumes where it stopped
when RUN has a checkpoint (``--steps`` may raise the total). The collection's ``params.yaml`` (its
cameras) goes with the dataset into RUN, so that ``galley eval --policy RUN`` sees the cameras the
policy learnt from.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from galley_cli import image_size, whole_number
from galley_cli.errors import UsageError
from galley_core.arguments import add_arguments, config_from_arguments
from galley_learning.policy.config import SIZES, DatasetConfig, TrainConfig

__all__ = ["add_parser"]

#: Today's short spellings of options that are named after their fields.
TRAIN_ALIASES = {"cpu_threads": ["--threads"]}
DATASET_ALIASES = {"move_done_m": ["--move-done"], "move_done_rad": ["--move-done-heading"]}
#: Dataset settings the command sets itself: the cameras follow --size (a low-dim preset reads
#: none), and --seed is training's (the held-out episodes are the dataset seed's default).
DATASET_SET_HERE = ("cameras", "seed")


def _run(args: argparse.Namespace) -> int:
    from galley_learning.policy.train import train  # noqa: PLC0415 (deferred: torch)

    run = Path(args.out)
    try:
        config = config_from_arguments(TrainConfig, args)
        images = bool(SIZES[config.size].cameras)
        settings = config_from_arguments(
            DatasetConfig,
            args,
            fields=args.dataset_fields,
            cameras=tuple(DatasetConfig.cameras) if images else (),  # low-dim: no images to read
        )
        data = _dataset(args.data, run, settings, args.workers)
        report = train(data, run, config, progress=_progress)
    except (ValueError, FileExistsError) as err:
        raise UsageError(str(err)) from None
    print(f"galley train: {json.dumps(report)}")
    print(f"galley train: loss curve {run / 'loss.png'}")
    print(f"galley train: evaluate with: galley eval --mode policy --policy {run}")
    return 0


def _dataset(sources: list[Path], run: Path, settings: DatasetConfig, workers: int) -> Path:
    """The dataset to train on: ``sources``' one dataset folder, else built (and joined) into RUN/dataset.

    A collection is read into a dataset; several sources (collections or datasets, built alike) are
    each made a dataset (a collection's in RUN/datasets/<k>) and joined into RUN/dataset.
    """
    from galley_learning.policy.merge import merge_datasets  # noqa: PLC0415 (deferred: torch)

    dataset = run / "dataset"
    if len(sources) == 1:
        return _built(sources[0], dataset, settings, workers)
    if (dataset / "meta.json").exists():
        print(f"galley train: using the dataset built before in {dataset}")
        return dataset
    parts = [_built(src, run / "datasets" / str(k), settings, workers) for k, src in enumerate(sources)]
    print(f"galley train: joining {len(parts)} datasets into {dataset}", flush=True)
    _summary(merge_datasets(parts, dataset))
    return dataset


def _built(source: Path, dataset: Path, settings: DatasetConfig, workers: int) -> Path:
    """``source`` if it is a dataset folder; else its bags read into ``dataset`` (kept from before)."""
    from galley_learning.policy.dataset import build_dataset  # noqa: PLC0415 (deferred: torch)

    if (source / "meta.json").exists():
        return source
    if (dataset / "meta.json").exists():
        print(f"galley train: using the dataset built before in {dataset}")
        return dataset
    print(f"galley train: building a dataset from the bags in {source} into {dataset}", flush=True)
    meta = build_dataset(
        source,
        dataset,
        settings,
        workers=workers,
        progress=lambda i, n, bag: print(f"  [{i}/{n}] {bag}", flush=True),
    )
    _summary(meta)
    return dataset


def _summary(meta: dict[str, Any]) -> None:
    split = [e["split"] for e in meta["episodes"]]
    print(
        f"galley train: {meta['frames']} frames from {len(split)} episodes "
        f"({split.count('train')} train, {split.count('val')} held out)",
        flush=True,
    )
    for skipped in meta.get("skipped", []):
        print(f"galley train: skipped {skipped['bag']}: {skipped['reason']}", flush=True)


def _progress(step: int, steps: int, loss: float, seconds: float) -> None:
    rate = step / seconds if seconds > 0 else 0.0
    left = (steps - step) / rate if rate > 0 else 0.0
    print(f"  step {step}/{steps}  loss {loss:.4f}  {rate:.1f} steps/s  {left:.0f} s left", flush=True)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("train", help="train the diffusion policy on collected episodes (progress, resumable)")
    p.add_argument(
        "--data",
        type=Path,
        nargs="+",
        required=True,
        help="collection folder (galley collect) or dataset folder; several (collected alike) are joined",
    )
    p.add_argument("--out", type=Path, required=True, help="run folder (resumes when it has a checkpoint)")
    add_arguments(
        p.add_argument_group("training (a resumed run keeps its own; --steps may raise the total)"),
        TrainConfig,
        aliases=TRAIN_ALIASES,
    )
    dataset = p.add_argument_group("dataset (read when --data is a collection of bags)")
    fields = add_arguments(
        dataset,
        DatasetConfig,
        skip=DATASET_SET_HERE,
        aliases=DATASET_ALIASES,
        readers={"image_size": image_size},
    )
    dataset.add_argument(
        "--workers",
        type=whole_number(1),
        default=1,
        help="processes reading bags into the dataset (default: 1)",
    )
    p.set_defaults(run=_run, dataset_fields=tuple(fields))
