"""Planar base kinematics: the unicycle model of a differential-drive base.

A differential-drive base commanded by (v, w) moves as a unicycle; :func:`integrate_unicycle`
integrates the command exactly over a step (arc of a circle), so the result does not depend on
how finely a simulation is stepped.
"""

from __future__ import annotations

import math

from galley_core.geometry import Pose2D, normalize_angle

__all__ = ["integrate_unicycle", "square_command", "square_lap_s"]


def integrate_unicycle(pose: Pose2D, v: float, w: float, dt: float) -> Pose2D:
    """Pose after moving at linear speed ``v`` (m/s) and yaw rate ``w`` (rad/s) for ``dt`` seconds.

    Exact for constant (v, w): the base follows a circular arc of radius v / w (a straight line
    when w is zero).
    """
    if dt < 0.0:
        raise ValueError(f"dt = {dt} s must be >= 0")
    theta = pose.theta
    dtheta = w * dt
    if abs(dtheta) < 1e-9:
        # Straight line (second-order term keeps tiny rotations accurate).
        mid = theta + 0.5 * dtheta
        return Pose2D(
            pose.x + v * dt * math.cos(mid),
            pose.y + v * dt * math.sin(mid),
            normalize_angle(theta + dtheta),
        )
    radius = v / w
    return Pose2D(
        pose.x + radius * (math.sin(theta + dtheta) - math.sin(theta)),
        pose.y - radius * (math.cos(theta + dtheta) - math.cos(theta)),
        normalize_angle(theta + dtheta),
    )


def square_command(
    t: float, dt: float, *, side_m: float, speed_mps: float, turn_rate_rps: float, laps: int
) -> tuple[float, float]:
    """Open-loop (v, w) that drives ``laps`` counter-clockwise squares: an edge, a 90-degree turn, ...

    The command is the mean of the ideal piecewise-constant pattern over [t, t + dt], so a base
    that holds each command for ``dt`` turns exactly 90 degrees per corner and closes the square
    whatever the command rate. After the last lap the command is zero.

    Args:
        t: seconds since the start of the pattern.
        dt: seconds the command will be held (the publishing period).
        side_m: edge length, metres.
        speed_mps: forward speed on an edge, m/s.
        turn_rate_rps: yaw rate in the corners, rad/s.
        laps: number of laps.

    Returns:
        (v in m/s, w in rad/s).
    """
    if dt <= 0.0:
        raise ValueError(f"dt = {dt} s must be > 0")
    edge_s = side_m / speed_mps
    turn_s = (math.pi / 2.0) / turn_rate_rps
    end_s = laps * square_lap_s(side_m, speed_mps, turn_rate_rps)

    def travelled(time: float) -> tuple[float, float]:
        """(distance, rotation) of the ideal pattern from 0 to ``time``."""
        time = min(max(time, 0.0), end_s)
        corners, phase = divmod(time, edge_s + turn_s)
        distance = speed_mps * (corners * edge_s + min(phase, edge_s))
        rotation = turn_rate_rps * (corners * turn_s + max(0.0, phase - edge_s))
        return distance, rotation

    (d0, r0), (d1, r1) = travelled(t), travelled(t + dt)
    return (d1 - d0) / dt, (r1 - r0) / dt


def square_lap_s(side_m: float, speed_mps: float, turn_rate_rps: float) -> float:
    """Duration of one lap of :func:`square_command`: four edges and four turns, seconds."""
    return 4.0 * (side_m / speed_mps + (math.pi / 2.0) / turn_rate_rps)
