"""Generated kitchens end to end: draw, check on the simulator's own model, write with map and suite.

:func:`check` judges a scene as it will run: the occupancy grid is the one ``galley map`` writes
(:func:`galley_sim.map_export.rasterize_scene`), the arm is read from the robot file the simulator
includes, the planner's clearance is Theta*'s; and the scene must compile in MuJoCo and hold an
episode without interpenetration (:meth:`galley_sim.scene_model.SceneModel.preflight`).

:func:`generate` draws kitchen ``seed`` (attempt ``a`` from ``random.Random(seed * 1000 + a)``) until
a draw passes every check. :func:`write_kitchen` writes it where galley looks for scenes, maps and
suites (see :func:`companion_paths`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import mujoco
import yaml

from galley_core.episode import sample_episode
from galley_core.manipulation.kinematics import ArmKinematics, load_arm
from galley_core.navigation.theta_star import ThetaStarConfig
from galley_core.scene import Scene, SceneError, parse_scene
from galley_core.scenes.checks import check_scene
from galley_core.scenes.generate import draw_scene
from galley_core.scenes.splits import GENERATOR_VERSION, scene_name
from galley_core.tasks.suite import SUITE_VERSION, generate_suite, save_suite
from galley_sim.map_export import export_map, rasterize_scene
from galley_sim.mjcf import ROBOT_XML
from galley_sim.scene_model import SceneModel, SimOptions

__all__ = ["Generated", "check", "companion_paths", "generate", "write_kitchen"]

#: Draws tried per seed before giving up (a draw fails about one time in five).
MAX_ATTEMPTS = 40


@cache
def _arm() -> ArmKinematics:
    return load_arm(ROBOT_XML, root_body="base_link", tcp_site="tcp")


def check_in_simulator(scene: Scene) -> list[str]:
    """The scene compiles in MuJoCo and an episode's objects and robot start without interpenetrating."""
    try:
        model = SceneModel(scene, SimOptions())
        episode = sample_episode(scene, 0)
        model.place(episode)
        mujoco.mj_forward(model.model, model.data)
        model.preflight()
    except SceneError as err:  # PreflightError included
        return [f"the simulator refuses it: {err}"]
    except ValueError as err:  # MuJoCo's compiler
        return [f"MuJoCo cannot compile it: {err}"]
    return []


def check(scene: Scene, *, planner: ThetaStarConfig | None = None, resolution_m: float = 0.05) -> list[str]:
    """Every problem of ``scene`` (galley_core.scenes.checks and the simulator's), one line each."""
    problems = check_scene(scene, grid=rasterize_scene(scene, resolution_m), arm=_arm(), planner=planner)
    return problems or check_in_simulator(scene)


@dataclass(frozen=True)
class Generated:
    """A generated kitchen: its document (the scene file), the scene, and how it was found.

    Attributes:
        seed: the kitchen's seed.
        attempt: the draw that passed (0: the first).
        rejected: one line per draw that failed, with its first problem.
    """

    seed: int
    document: dict[str, Any]
    scene: Scene
    attempt: int
    rejected: tuple[str, ...]


def generate(seed: int, *, name: str | None = None, max_attempts: int = MAX_ATTEMPTS) -> Generated:
    """Kitchen ``seed``: the first draw that passes :func:`check`.

    Raises:
        SceneError: no draw of ``max_attempts`` passed (the message gives the last problems).
    """
    if seed < 0:
        raise SceneError(f"--seed {seed}: a kitchen's seed is a whole number >= 0")
    name = name or scene_name(seed)
    rejected = []
    for attempt in range(max_attempts):
        document = draw_scene(name, random.Random(seed * 1000 + attempt))
        if document is None:
            rejected.append(f"attempt {attempt}: the room left too little space for zones")
            continue
        scene = parse_scene(document, f"generated kitchen {seed}")
        problems = check(scene)
        if not problems:
            return Generated(seed, document, scene, attempt, tuple(rejected))
        rejected.append(f"attempt {attempt}: {problems[0]}")
    raise SceneError(f"kitchen {seed}: none of {max_attempts} draws passed the checks; last: {rejected[-1]}")


def companion_paths(scene_file: Path, name: str) -> tuple[Path, Path]:
    """Where the map and the suite of the scene file go: (map YAML, suite file).

    A scene in a configuration folder's ``scenes/`` (``<root>/config/scenes/<name>.yaml``, as in the
    repository) gets ``<root>/maps/<name>.yaml`` and ``<root>/config/suites/<name>_v<N>.yaml``, where
    ``galley`` finds them (with ``GALLEY_CONFIG_DIR=<root>/config`` outside the repository);
    elsewhere they go into ``maps/`` and ``suites/`` beside the scene file.
    """
    folder = scene_file.parent
    if folder.name == "scenes":
        config = folder.parent
        return config.parent / "maps" / f"{name}.yaml", config / "suites" / f"{name}_v{SUITE_VERSION}.yaml"
    return folder / "maps" / f"{name}.yaml", folder / "suites" / f"{name}_v{SUITE_VERSION}.yaml"


_HEADER = (
    "# A kitchen generated by galley (galley scene generate --seed {seed}; draw {attempt}; "
    "generator version {version}).\n"
    "# Zones leave approach out: the loader derives it from the surface, the furniture and the\n"
    "# robot's footprint. Check it after an edit with: galley scene check <this file>.\n"
    "# Format: config/scenes/kitchen.yaml.\n"
)


def write_kitchen(generated: Generated, scene_file: Path, *, resolution_m: float = 0.05) -> list[Path]:
    """Write the scene file, its occupancy map and its instruction suite; returns the paths written."""
    scene_file.parent.mkdir(parents=True, exist_ok=True)
    header = _HEADER.format(seed=generated.seed, attempt=generated.attempt, version=GENERATOR_VERSION)
    scene_file.write_text(header + yaml.safe_dump(generated.document, sort_keys=False, width=110))
    return [scene_file, *write_companions(generated.scene, scene_file, resolution_m=resolution_m)]


def write_companions(scene: Scene, scene_file: Path, *, resolution_m: float = 0.05) -> list[Path]:
    """Write the map (nav2 YAML + PGM) and the instruction suite of ``scene`` (:func:`companion_paths`)."""
    map_yaml, suite_file = companion_paths(scene_file, scene.name)
    map_yaml, image = export_map(scene, map_yaml.parent, resolution_m)
    suite_file.parent.mkdir(parents=True, exist_ok=True)
    save_suite(generate_suite(scene), suite_file, scene=scene.name)
    return [map_yaml, image, suite_file]
