"""``square_driver``: drives the base around a square, open loop, by publishing /cmd_vel.

A demo source of motion for the embedded host and for checking a base or a simulator by eye:
edges at constant speed, 90-degree turns in place, a given number of laps, then zero commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from galley_core.config import Config, param
from galley_core.navigation.unicycle import square_command
from galley_runtime.node import Node, Publishes, Timer


@dataclass(frozen=True)
class SquareDriverConfig(Config):
    rate_hz: float = param(10.0, "command publishing rate", unit="Hz", gt=0.0)
    side_m: float = param(1.0, "edge length of the square", unit="m", gt=0.0)
    speed_mps: float = param(0.2, "forward speed on the edges", unit="m/s", gt=0.0)
    turn_rate_rps: float = param(0.5, "yaw rate in the corners", unit="rad/s", gt=0.0)
    laps: int = param(1, "laps to drive before stopping", ge=1)


class SquareDriverNode(Node):
    name = "square_driver"
    Config = SquareDriverConfig
    publishes = (Publishes("cmd_vel", "geometry_msgs/msg/Twist"),)
    timers = (Timer("on_tick", period_s=lambda c: 1.0 / c.rate_hz),)

    def __init__(self, host: Any, config: SquareDriverConfig) -> None:
        super().__init__(host, config)
        self._start_ns = self.now_ns()

    def on_tick(self) -> None:
        c = self.config
        period_s = 1.0 / c.rate_hz
        # The first tick comes one period after the start and starts the pattern.
        v, w = square_command(
            (self.now_ns() - self._start_ns) * 1e-9 - period_s,
            period_s,
            side_m=c.side_m,
            speed_mps=c.speed_mps,
            turn_rate_rps=c.turn_rate_rps,
            laps=c.laps,
        )
        self.publish("cmd_vel", self.msg("geometry_msgs/msg/Twist", linear={"x": v}, angular={"z": w}))
