"""The pick-and-place machine's failure verdicts: when a measured arm has failed, and the reason.

Pure functions of what :class:`galley_core.manipulation.pick_place.PickPlace` measured; each returns
the reason a user reads (naming the object, the phase and the fix), or None while nothing failed.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["grasp_missed", "short_of_target"]


def short_of_target(  # noqa: PLR0917 - one judgement's measured inputs and its two limits
    where: str,
    error_m: float,
    error_rad: float,
    after_blend_s: float,
    plan_there: bool,
    settle_limit_s: float,
    track_limit_s: float,
) -> str | None:
    """Why a tcp still short of its target ``after_blend_s`` past the blend has failed, if it has.

    ``plan_there``: RMPflow's own plan has reached the target. If not, joint limits or obstacles
    hold the plan back: unreachable at ``settle_limit_s``. If so, the measured arm lags its command
    (a perturbation spell pushing it off, a slow controller), which waits ``track_limit_s`` more.
    """
    off = f"{error_m * 1000:.0f} mm and {error_rad:.2f} rad"
    if not plan_there and after_blend_s > settle_limit_s:
        return (
            f"unreachable: {where}: the tcp is still {off} from its target {settle_limit_s:g} s after the "
            "blend (joint limits or obstacles in the way); park the base closer or move the object"
        )
    if after_blend_s > settle_limit_s + track_limit_s:
        return (
            f"unreachable: {where}: the arm's plan reached its target but the tcp is still {off} from it "
            f"{settle_limit_s + track_limit_s:g} s after the blend (the arm does not follow its command: "
            "something holds it, or its controller is not running)"
        )
    return None


def grasp_missed(
    name: str, fingers: NDArray[np.floating], finger_closed_m: float, distance_m: float, check_m: float
) -> str | None:
    """Why a closed grasp of ``name`` holds nothing, if it does not.

    ``fingers``: the measured finger positions (m); ``distance_m``: from the tcp to where the grasp
    point of the object now is; ``check_m``: the most that distance may be.
    """
    if fingers.size and float(np.max(fingers)) < finger_closed_m:
        return (
            f"grasp missed: the fingers closed fully on {name!r} ({float(np.max(fingers)) * 1000:.1f} mm); "
            "nothing is between them"
        )
    if distance_m > check_m:
        return (
            f"grasp missed: {name!r} is not between the fingers "
            f"({distance_m * 1000:.0f} mm from the tcp after closing)"
        )
    return None
