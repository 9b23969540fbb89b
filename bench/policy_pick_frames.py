"""Where a learned policy's picks go wrong, frame by frame, against the oracle at the nearest state.

    python bench/policy_pick_frames.py --policy RUN --seed SEED --plan "move to ...; pick the ..." \
        [--params FILE ...] [--out DIR] [--every 5] [--kind pick|place]

Runs one recorded episode with the policy (``galley run`` with ``--policy``, completion 'criteria'),
reads its bag into frames (galley_learning.policy.frames, the run's own observation and action
kind) and prints, for every ``--every``-th frame of each pick (or place, ``--kind``): the contact
point (a pick's grasp point, a place's release point) from the end-effector, what
the policy commanded (base twist, the arm target relative to the contact point, the gripper) and what the
oracle commanded in the run's training data at the pick frame whose state is nearest (normalised
by the data's standard deviation; the oracle is a state machine that cannot be asked at an
arbitrary state, so its nearest recorded state stands in). Last line: JSON with the means.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from galley_episodes import run_episode
from galley_learning.policy.frames import ACTION_NAMES, episode_frames
from galley_learning.policy.observations import state_names

COLUMNS = ("v", "w", "tgt-contact x", "y", "z", "grip")


def _pick_rows(state: NDArray[Any], action: NDArray[Any], names: list[str], kind: str) -> NDArray[Any]:
    """(N, 6): v, ω, the arm target minus the step's contact point (base_link axes), gripper command.

    The contact point is the grasp point of a pick, the release point of a place
    (goals.GoalTracker.contact_point): where the oracle's target is when its gripper switches.
    """
    col = names.index
    a = {n: action[:, i] for i, n in enumerate(ACTION_NAMES)}
    arm = np.stack([a["x"], a["y"], a["z"]], axis=1)
    if kind == "contact":  # already relative to the contact point
        offset = arm
    elif kind == "delta":  # relative to the end-effector: target - contact = delta - (contact - ee)
        offset = arm - state[:, [col("contact_ee_x"), col("contact_ee_y"), col("contact_ee_z")]]
    else:  # absolute, in base_link
        offset = arm - state[:, [col("contact_x"), col("contact_y"), col("contact_z")]]
    return np.column_stack([a["v"], a["w"], offset, a["gripper"]])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--policy", type=Path, required=True, help="training run (galley train --out)")
    parser.add_argument("--seed", type=int, required=True, help="episode seed")
    parser.add_argument("--plan", required=True, help='steps separated by ";", with at least one pick')
    parser.add_argument("--params", type=Path, action="append", default=[], help="extra params YAML")
    parser.add_argument("--out", type=Path, default=Path("runs/pick_frames"))
    parser.add_argument("--every", type=int, default=5, help="print every N-th pick frame")
    parser.add_argument("--kind", choices=("pick", "place"), default="pick", help="the steps to log")
    args = parser.parse_args()

    meta = json.loads((args.policy / "dataset" / "meta.json").read_text())
    data = args.policy / "dataset"
    settings = meta["config"]
    observation, kind = settings["observation"], settings["actions"]
    names = list(meta.get("state_names") or state_names(observation))
    if "contact_ee_x" not in names:
        parser.error(
            f"--policy {args.policy}: its observation {observation!r} holds no target; use a goal one"
        )
    summary = run_episode(
        "pick frames",
        seed=args.seed,
        plan=args.plan,
        out_dir=args.out,
        params=args.params,
        progress=False,
        policy=args.policy,
    )
    print("episode:", [(s["step"], s["success"], s["reason"]) for s in summary["steps"]])

    frames = episode_frames(
        args.out / "bag", image_size=None, cameras={}, observation=observation, actions=kind
    )
    state, steps = np.load(data / "state.npy"), np.load(data / "step.npy")  # step: index into meta's steps
    picks = [k for k, text in enumerate(meta["steps"]) if text.startswith(args.kind)]
    oracle_pick = np.isin(steps, picks)
    o_state, o_action = state[oracle_pick], np.load(data / "action.npy")[oracle_pick]
    scale = np.maximum(np.asarray(meta["stats"]["state"]["std"]), 1e-2)
    policy_rows, oracle_rows = [], []
    for i in np.flatnonzero(np.char.startswith(frames.step.astype(str), args.kind)):
        s = frames.state[i]
        j = int(np.argmin((((o_state - s) / scale) ** 2).sum(axis=1)))
        policy_rows.append(_pick_rows(s[None], frames.action[i][None], names, kind)[0])
        oracle_rows.append(_pick_rows(o_state[j][None], o_action[j][None], names, kind)[0])
        if len(policy_rows) % args.every == 1:
            at = s[[names.index(n) for n in ("contact_ee_x", "contact_ee_y", "contact_ee_z")]]
            where = ", ".join(f"{v:+.3f}" for v in at)
            print(f"t {frames.t_s[i]:6.1f} s  contact point from the end-effector ({where})")
            for who, row in (("policy", policy_rows[-1]), ("oracle", oracle_rows[-1])):
                print(f"    {who}: " + "  ".join(f"{c} {v:+.3f}" for c, v in zip(COLUMNS, row, strict=True)))
    if not policy_rows:
        print(json.dumps({"pick_frames": 0}))
        return
    p, o = np.abs(np.array(policy_rows)), np.abs(np.array(oracle_rows))
    print(
        json.dumps(
            {
                "pick_frames": len(policy_rows),
                "policy_mean_abs": dict(zip(COLUMNS, np.round(p.mean(axis=0), 4).tolist(), strict=True)),
                "oracle_mean_abs": dict(zip(COLUMNS, np.round(o.mean(axis=0), 4).tolist(), strict=True)),
            }
        )
    )


if __name__ == "__main__":
    main()
