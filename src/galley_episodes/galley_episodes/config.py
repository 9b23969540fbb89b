"""What an episode, an evaluation and a collection are run with: one Config dataclass each.

Each field is documented once, with its unit and bounds (:func:`galley_core.config.param`); the
``galley run``, ``galley eval`` and ``galley collect`` commands build their options from these fields
(:func:`galley_core.arguments.add_arguments`), so that no default or allowed value is written twice.
Where files go and come from (the output folder, ``--params`` files, a policy's training run) are
arguments of the functions, not settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from galley_core.config import Config, ConfigError, param

__all__ = ["EVAL_MODES", "INJECTIONS", "CollectConfig", "EpisodeConfig", "EpisodeError", "EvalConfig"]

#: Kitchen-R's evaluation modes (Sec. VII): plans only, execution only, both.
EVAL_MODES = ("planner", "policy", "joint")
#: ``--inject``: none, knock the held object out of the gripper, or move the next object.
INJECTIONS = ("", "knock", "move")

_SCENE_DOC = "scene name (config/scenes/<name>.yaml, or kitchen_<seed>: a generated kitchen) or scene file"
_REPLAN_DOC = "replans per episode after a failed step; -1: the params files' max_replans (0)"
_INJECT_DOC = "inject one failure: knock the held object out of the gripper, or move the next object"


class EpisodeError(ValueError):
    """The instruction, plan or stack cannot be run; the message says why and what to do."""


@dataclass(frozen=True)
class EpisodeConfig(Config):
    """One episode of the built-in simulator (:func:`galley_episodes.run_episode`)."""

    seed: int = param(0, "episode seed: robot start, object placement and colours", ge=0)
    scene: str = param("kitchen", _SCENE_DOC)
    plan: str = param("", 'steps separated by ";"; empty: ask the task_planner node')
    video: bool = param(False, "render the base camera and write video.mp4")
    cameras: bool = param(False, "render the robot's cameras even where nothing of this run needs them")
    perturb: float = param(0.0, "noise scale on the oracle's commands (perturber); 0: none", ge=0.0)
    replan: int = param(-1, _REPLAN_DOC, ge=-1)
    inject: str = param("", _INJECT_DOC, choices=INJECTIONS)
    topdown: str = param(
        "always",
        "when topdown.png is drawn: always, or for a failed episode only",
        choices=("always", "failed"),
    )

    @property
    def max_replans(self) -> int | None:
        """``replan``, or None where the params files decide."""
        return None if self.replan < 0 else self.replan


#: A Ray cluster's address (``--cluster``): auto, local, ray://HOST:PORT or HOST:PORT; empty: none.
CLUSTER_PATTERN = r"|auto|local|ray://[\w.\-]+:\d+|[\w.\-]+:\d+"
CLUSTER_DOC = (
    "run each episode as a task of a Ray cluster: auto (the cluster this machine belongs to), "
    "ray://HOST:PORT (Ray Client), HOST:PORT (its GCS) or local (start Ray here); episodes' files come "
    "back through Ray's object store (pip install -r requirements-cluster.txt); empty: this machine's "
    "processes"
)


@dataclass(frozen=True)
class EvalConfig(Config):
    """An evaluation over the instruction suite (:func:`galley_episodes.evaluate`)."""

    mode: str = param("policy", "planner (EM), policy (SR) or joint (EM, SR, M)", choices=EVAL_MODES)
    episodes: int = param(50, "instructions to evaluate (per scene with --scenes); 0: the whole split", ge=0)
    suite: str = param("", "suite file; empty: --scene's suite, else config/suites/<newest>.yaml")
    scene: str = param("", "scene name or file to evaluate in (its suite, found or made); empty: --suite's")
    scenes: str = param(
        "",
        "evaluate in each of these scenes, on its own suite, reported per scene and overall: a split "
        "(train, unseen: generated kitchens, made on first use) or a comma list of scene names and files; "
        "--episodes is per scene",
    )
    split: str = param("test", "suite split", choices=("train", "test", "unseen", "all"))
    planner: str = param("gold", "planner for EM: gold (sanity), galley, openai, ...")
    workers: int = param(1, "simulator processes running episodes in parallel", ge=1)
    steps: int = param(0, "run each plan's first N steps; 0: all", ge=0)
    replan: int = param(-1, _REPLAN_DOC, ge=-1)
    inject: str = param("", _INJECT_DOC, choices=INJECTIONS)
    cluster: str = param("", CLUSTER_DOC, pattern=CLUSTER_PATTERN)
    resume: bool = param(False, "keep the episodes an interrupted run left in OUT/episodes/, run the rest")
    whole_plans: bool = param(
        True,
        "policy and joint modes, where the params files repair failed steps (teleport_on_failure): run the "
        "same plans again without repair and report whole plans with no teleport (sr_episode_no_repair)",
    )

    @property
    def max_replans(self) -> int | None:
        """``replan``, or None where the params files decide."""
        return None if self.replan < 0 else self.replan


@dataclass(frozen=True)
class CollectConfig(Config):
    """A collection of randomised oracle episodes for training (:func:`galley_episodes.collect`)."""

    episodes: int = param(1, "episodes in the collection (episodes already there count)", ge=1)
    workers: int = param(1, "parallel simulator processes", ge=1)
    seed: int = param(1_000_000, "episode k uses seed SEED + k", ge=0)
    image_size: tuple[int, ...] = param((320, 240), "camera width and height", unit="px", ge=8)
    depth: bool = param(False, "record the base camera's depth too (large)")
    # Unbounded here: the simulator's parameter check names sim.camera_rate_hz, and a collection
    # stops at that first episode (CollectError) rather than recording failures.
    camera_rate_hz: float = param(10.0, "camera rate", unit="Hz")
    suite: str = param("", "instruction suite (its train split is used); empty: the scene's own")
    scene: str = param("kitchen", _SCENE_DOC)
    scenes: str = param(
        "",
        "draw episodes across these scenes, episode k in scene k mod their number, each on its own "
        "suite: a split (train: the 100 training kitchens) or a comma list of scene names and files",
    )
    perturb: float = param(
        0.0, "noise scale on the oracle's commands in short spells (DART); 0: none", ge=0.0
    )
    steps: int = param(0, "keep the first N steps of each gold plan; 0: all", ge=0)
    cluster: str = param(
        "", CLUSTER_DOC + "; a killed driver resumes by running again", pattern=CLUSTER_PATTERN
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.image_size) != 2:
            raise ConfigError("image_size", self.image_size, "two numbers: width and height in pixels")
