"""LeRobot v3.0 statistics of an export, computed as LeRobot's ``compute_stats`` does.

Per feature min, max, mean, std, count and the quantiles q01, q10, q50, q90, q99 (exact here;
LeRobot estimates them from histograms); images are sampled and reduced per channel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "QUANTILES",
    "aggregate",
    "episode_stats",
    "image_stats",
    "jsonable",
    "quantile_keys",
    "stat_block",
]

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)


def stat_block(rows: NDArray[Any], count: int) -> dict[str, NDArray[Any]]:
    """min/max/mean/std/count/q01..q99 over the first axis of ``rows`` (N, D)."""
    rows = rows.astype(np.float64)
    stats = {
        "min": rows.min(axis=0),
        "max": rows.max(axis=0),
        "mean": rows.mean(axis=0),
        "std": rows.std(axis=0),
        "count": np.array([count], dtype=np.int64),
    }
    # LeRobot estimates quantiles from 5000-bin histograms and, below two samples, uses the mean.
    q = np.quantile(rows, QUANTILES, axis=0) if len(rows) >= 2 else np.stack([stats["mean"]] * 5)
    for name, values in zip(quantile_keys(), q, strict=True):
        stats[name] = values
    return stats


def quantile_keys() -> list[str]:
    return [f"q{round(q * 100):02d}" for q in QUANTILES]


def sample_indices(n: int) -> NDArray[np.int64]:
    """LeRobot's image sampling for statistics (compute_stats.sample_indices)."""
    samples = max(min(n, 100), min(int(n**0.75), 10_000))
    return np.round(np.linspace(0, n - 1, samples)).astype(np.int64)


def image_stats(images: NDArray[np.uint8]) -> dict[str, NDArray[Any]]:
    """Per-channel stats of sampled frames, in [0, 1], shaped (3, 1, 1) as LeRobot stores them."""
    sampled = images[sample_indices(len(images))]
    h, w = sampled.shape[1:3]
    if max(h, w) >= 300:  # LeRobot's auto_downsample_height_width
        step = int(max(h, w) / 150)
        sampled = sampled[:, ::step, ::step]
    stats = stat_block(sampled.reshape(-1, 3), len(sampled))
    return {k: v if k == "count" else (v / 255.0).reshape(3, 1, 1) for k, v in stats.items()}


def episode_stats(columns: dict[str, NDArray[Any]], images: dict[str, NDArray[np.uint8]]) -> dict[str, Any]:
    stats: dict[str, Any] = {key: image_stats(frames) for key, frames in images.items()}
    for key, values in columns.items():
        rows = values.reshape(len(values), -1)
        stats[key] = stat_block(rows, len(rows))
    return stats


def aggregate(per_episode: list[dict[str, Any]]) -> dict[str, Any]:
    """LeRobot's aggregate_stats: count-weighted means, pooled variance, weighted quantiles."""
    out: dict[str, Any] = {}
    for key in per_episode[0]:
        blocks = [s[key] for s in per_episode]
        counts = np.stack([b["count"] for b in blocks]).astype(np.float64)
        means = np.stack([b["mean"] for b in blocks])
        weights = counts.reshape(-1, *([1] * (means.ndim - 1)))
        total = counts.sum()
        mean = (means * weights).sum(axis=0) / total
        var = ((np.stack([b["std"] for b in blocks]) ** 2 + (means - mean) ** 2) * weights).sum(
            axis=0
        ) / total
        agg = {
            "min": np.min(np.stack([b["min"] for b in blocks]), axis=0),
            "max": np.max(np.stack([b["max"] for b in blocks]), axis=0),
            "mean": mean,
            "std": np.sqrt(var),
            "count": np.array([int(total)], dtype=np.int64),
        }
        for q in quantile_keys():
            agg[q] = (np.stack([b[q] for b in blocks]) * weights).sum(axis=0) / total
        out[key] = agg
    return out


def jsonable(stats: dict[str, Any]) -> dict[str, Any]:
    return {k: {s: v.tolist() for s, v in block.items()} for k, block in stats.items()}
