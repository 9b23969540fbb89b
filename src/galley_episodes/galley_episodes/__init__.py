"""galley's episodes as a library: run one, evaluate a suite, collect training data.

Every episode runs the whole stack (galley_nodes' stack description) in one embedded host with the
built-in simulator. The ``galley run``, ``galley eval`` and ``galley collect`` commands are thin
layers over these functions, and benchmarks and tests call them the same way::

    from galley_episodes import EpisodeConfig, run_episode

    summary = run_episode("Move the bowl to the green zone", EpisodeConfig(seed=3), out_dir=Path("runs/x"))

The settings are :class:`~galley_core.config.Config` dataclasses (:mod:`galley_episodes.config`);
the functions take where files go and come from as arguments.
"""

from galley_episodes.collection import CollectError, collect, parse_image_size
from galley_episodes.config import CollectConfig, EpisodeConfig, EpisodeError, EvalConfig
from galley_episodes.episode import run_episode
from galley_episodes.evaluation import evaluate
from galley_episodes.pool import episode_pool

__all__ = [
    "CollectConfig",
    "CollectError",
    "EpisodeConfig",
    "EpisodeError",
    "EvalConfig",
    "collect",
    "episode_pool",
    "evaluate",
    "parse_image_size",
    "run_episode",
]

__version__ = "0.1.0"
