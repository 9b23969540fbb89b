"""Where each pick of recorded episodes starts: the object in base_link, the move's last heading error.

    python bench/policy_pick_starts.py BAG [BAG ...]

For every pick step of each bag (oracle or policy, recorded with ``task_executor.move_with:
goal_pose`` so that the move's goal is on /goal_pose): the object's point in ``base_link`` at the
pick's first frame and, at the move's last frame before it, the base's distance from the move's
goal and its heading error. The collected oracle picks all start with the object 0.58 to 0.83 m
ahead and within 0.115 m of the base's axis (docs/history.md).
"""

from __future__ import annotations

import math
import sys

from galley_learning.policy.frames import episode_frames
from galley_learning.policy.goals import GOAL_NAMES

COL = {n: i for i, n in enumerate(GOAL_NAMES)}


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for bag in sys.argv[1:]:
        f = episode_frames(bag, image_size=None, cameras={}, observation="privileged", actions="delta")
        for i in range(1, len(f)):
            if f.step[i] != f.step[i - 1] and str(f.step[i]).startswith("pick"):
                before, g = f.goal[i - 1], f.goal[i]
                error = math.degrees(math.atan2(before[COL["goal_sin"]], before[COL["goal_cos"]]))
                print(
                    f"{bag}: {f.step[i]!s}: object at ({g[COL['target_x']]:.3f}, {g[COL['target_y']]:.3f}) m "
                    f"in base_link; the move's last frame {before[COL['goal_dist']]:.3f} m from its goal, "
                    f"heading error {error:.1f} deg"
                )


if __name__ == "__main__":
    main()
