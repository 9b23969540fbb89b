"""Episode monitoring (Kitchen-R Sec. V-E): rules that judge every step and abort bad episodes early.

Pure logic, no ROS and no I/O: the ``monitor`` node (galley_nodes) feeds it the episode events,
the world state it reads from TF and topics, and message arrival times, and publishes what comes out.

* :mod:`.verdicts`: :class:`Verdict`, what a rule concludes;
* :mod:`.rate`: :class:`SlidingWindowRate`, a topic's rate over a sliding window of simulated time;
* :mod:`.rules`: one class per rule, each with its own frozen Config dataclass;
* :mod:`.monitor`: :class:`EpisodeMonitor`, which runs the rules over an episode of steps.
"""

from galley_core.monitoring.monitor import EpisodeMonitor, MonitorConfig, WorldState
from galley_core.monitoring.rate import SlidingWindowRate
from galley_core.monitoring.rules import (
    FallenObjectConfig,
    FallenObjectRule,
    MoveCheckConfig,
    MoveCheckRule,
    PickCheckConfig,
    PickCheckRule,
    PlaceCheckConfig,
    PlaceCheckRule,
    TimeLimitConfig,
    TimeLimitRule,
    TopicRateConfig,
    TopicRateRule,
    parse_rate_rules,
)
from galley_core.monitoring.verdicts import ActiveStep, Level, Verdict

__all__ = [
    "ActiveStep",
    "EpisodeMonitor",
    "FallenObjectConfig",
    "FallenObjectRule",
    "Level",
    "MonitorConfig",
    "MoveCheckConfig",
    "MoveCheckRule",
    "PickCheckConfig",
    "PickCheckRule",
    "PlaceCheckConfig",
    "PlaceCheckRule",
    "SlidingWindowRate",
    "TimeLimitConfig",
    "TimeLimitRule",
    "TopicRateConfig",
    "TopicRateRule",
    "Verdict",
    "WorldState",
    "parse_rate_rules",
]
