"""Re-make a ``sensors``/``anchor`` dataset's place anchors as SensorGoals makes them now.

    python scripts/relabel_place_anchors.py SRC_DATASET OUT_DATASET

Until 2026-11-29 a place's anchor (sensors.py) was chosen afresh every frame; it is now chosen at
the place's first frame and held, chosen again only after the base moved more than REANCHOR_M.
A dataset built before then can be rebuilt from its bags (``galley train --data COLLECTION``);
this is for one whose bags were not kept (the shipped policy's second collection part). Per place
step it holds the first frame's anchor fixed in the ``odom`` frame (the base stands still in a
place), rewrites the state's ``anchor_*`` columns in ``base_link`` and the anchor-relative actions,
and recomputes the statistics. On 4 bags of the shipped collection it matches a rebuild from the
bags to 0.2 mm (float32). Prints how many frames changed.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
from pathlib import Path

import numpy as np

from galley_learning.policy.dataset import PolicyData, training_stats
from galley_learning.policy.sensors import REANCHOR_M


def relabel(src: Path, out: Path) -> tuple[int, int]:
    """Write ``out`` from ``src``; returns (place steps, frames whose anchor moved > 1 mm)."""
    meta = json.loads((src / "meta.json").read_text())
    if (meta["config"]["observation"], meta["config"]["actions"]) != ("sensors", "anchor"):
        raise SystemExit(f"{src}: not a sensors observation with anchor actions; nothing to relabel")
    names, steps = meta["state_names"], meta["steps"]
    state_in = np.load(src / "state.npy", mmap_mode="r")
    action_in = np.load(src / "action.npy", mmap_mode="r")
    state, action = np.asarray(state_in, dtype=np.float64), np.asarray(action_in, dtype=np.float64)
    step, ends = np.load(src / "step.npy"), np.load(src / "episode_ends.npy")
    col = names.index
    has, anchor, anchor_ee = col("has_anchor"), col("anchor_x"), col("anchor_ee_x")
    ox, oy, oc, osin = col("odom_x"), col("odom_y"), col("odom_cos"), col("odom_sin")
    places = changed = 0
    for start, end in zip(np.r_[0, ends[:-1]], ends, strict=True):
        for k in np.unique(step[start:end]):
            if k < 0 or not steps[k].startswith("place"):
                continue
            frames = np.nonzero(step[start:end] == k)[0] + start
            frames = frames[state[frames, has] > 0.5]
            places += len(frames) > 0
            held = None  # (x, y, z) in odom, and where the base stood
            for t in frames:
                px, py = state[t, ox], state[t, oy]
                c, s = state[t, oc], state[t, osin]
                norm = math.hypot(c, s) or 1.0
                c, s = c / norm, s / norm
                if held is None or math.hypot(px - held[3], py - held[4]) > REANCHOR_M:
                    a = state[t, anchor : anchor + 3]
                    held = (px + c * a[0] - s * a[1], py + s * a[0] + c * a[1], a[2], px, py)
                dx, dy = held[0] - px, held[1] - py
                new = np.array([c * dx + s * dy, -s * dx + c * dy, held[2]])
                old = state[t, anchor : anchor + 3].copy()
                ee = old - state[t, anchor_ee : anchor_ee + 3]
                changed += float(np.linalg.norm(new - old)) > 1e-3
                state[t, anchor : anchor + 3] = new
                state[t, anchor_ee : anchor_ee + 3] = new - ee
                action[t, 2:5] += old - new  # the same absolute target, from the new anchor
    out.mkdir(parents=True)
    np.save(out / "state.npy", state.astype(state_in.dtype))
    np.save(out / "action.npy", action.astype(action_in.dtype))
    for name in ("step.npy", "episode_ends.npy", "sampled.npy", "params.yaml"):
        if (src / name).exists():
            shutil.copyfile(src / name, out / name)
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    meta["stats"] = training_stats([PolicyData.open(out)])
    meta["relabelled_from"] = str(src)
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return places, changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "src", type=Path, help="a dataset folder (galley train's RUN/dataset or COLLECTION/dataset)"
    )
    parser.add_argument("out", type=Path, help="a new folder for the relabelled dataset")
    args = parser.parse_args()
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; choose a new folder")
    places, changed = relabel(args.src, args.out)
    print(f"{places} place steps; {changed} frames' anchors moved more than 1 mm")


if __name__ == "__main__":
    main()
