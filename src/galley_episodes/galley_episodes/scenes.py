"""Where a ``--scene`` value leads: the scene file, with its map and suite found or made, checked.

Every command's ``--scene`` and ``--scenes`` goes through :func:`resolve_scene` (one place), which
takes

* a scene file (a path ending in ``.yaml``): used where it is;
* a scene name: ``config/scenes/<name>.yaml`` of the configuration folders
  (:func:`galley_runtime.config_files.config_dirs`), else a generated kitchen ``kitchen_<seed>`` in
  the scene cache (:func:`cache_dir`, ``runs/scenes`` by default): ``<cache>/<split>/config/scenes/``
  for a seed of a split (:data:`galley_core.scenes.splits.SPLITS`), ``<cache>/generated/...`` for
  any other seed, drawn there on first use exactly as ``galley scene generate`` draws it.

The map and the instruction suite go where ``galley scene generate`` puts them
(:func:`galley_sim.scene_gen.companion_paths`: ``<root>/maps/`` and ``<root>/config/suites/`` for a
file in ``<root>/config/scenes/``, else ``maps/`` and ``suites/`` beside the file) and are written
there when missing or older than the scene file. Before anything runs the scene must pass the
checks of ``galley scene check`` (:func:`galley_sim.scene_gen.check`); a pass is remembered by the
file's SHA-256 under ``<cache>/checked/`` (a scene takes 1 to 3 s to check), so an edited file is
checked again. A scene that fails raises :class:`SceneCheckError`, one line per problem.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from galley_core.scene import Scene, SceneError, load_scene, scene_path
from galley_core.scenes.splits import GENERATOR_VERSION, SPLITS, generator_version, scene_name, split_seeds
from galley_runtime.config_files import config_dirs

__all__ = [
    "SceneCheckError",
    "SceneFiles",
    "cache_dir",
    "outside_configuration",
    "resolve_scene",
    "resolve_scenes",
]

#: The environment variable that moves the scene cache (default ``runs/scenes`` in the working folder).
CACHE_ENV = "GALLEY_SCENE_CACHE"

_GENERATED = re.compile(r"kitchen_(\d+)")


class SceneCheckError(SceneError):
    """A scene that fails ``galley scene check``'s checks: ``problems`` holds one line each."""

    def __init__(self, where: str, problems: list[str]) -> None:
        self.where = where
        self.problems = list(problems)
        super().__init__(f"{where}: {'; '.join(problems)}")

    def lines(self) -> list[str]:
        """One line per problem, then what to run to see them again."""
        return [f"{self.where}: {p}" for p in self.problems] + [
            f"{self.where}: {len(self.problems)} problem(s); nothing ran (galley scene check {self.where})"
        ]


@dataclass(frozen=True)
class SceneFiles:
    """A scene ready to run in: the scene, its file, its map and its suite.

    Attributes:
        scene: the parsed scene (``scene.name`` is its name).
        file: the scene file.
        map: its occupancy map (nav2 map YAML).
        suite: its instruction suite.
        ref: what the nodes get as their ``scene`` parameter: the name where the configuration
            folders find this file by it (so that parameter files and bags name it as before),
            else the file's absolute path.
    """

    scene: Scene
    file: Path
    map: Path
    suite: Path
    ref: str

    @property
    def name(self) -> str:
        """The scene's name (its file's ``name:``)."""
        return self.scene.name


def cache_dir() -> Path:
    """Where generated kitchens and checked scenes' marks go: ``$GALLEY_SCENE_CACHE``, else runs/scenes."""
    return Path(os.environ.get(CACHE_ENV) or Path("runs") / "scenes")


def _scene_dirs() -> list[Path]:
    return [folder / "scenes" for folder in config_dirs()]


def _looks_like_file(value: str) -> bool:
    return Path(value).suffix in (".yaml", ".yml") or os.sep in value or "/" in value


def _cached_kitchen(seed: int) -> Path:
    split = next((name for name, seeds in SPLITS.items() if seed in seeds), "generated")
    return cache_dir() / split / "config" / "scenes" / f"{scene_name(seed)}.yaml"


def _locate(value: str, say: Callable[[str], None]) -> Path:
    """The scene file of a ``--scene`` value (generating a kitchen into the cache where needed)."""
    if _looks_like_file(value):
        path = Path(value)
        if not path.is_file():
            raise SceneError(
                f"scene file {value} does not exist"
                if not path.exists()
                else f"scene file {value} is not a file; give a scene .yaml or a scene name"
            )
        return path
    try:
        return scene_path(value, _scene_dirs())
    except SceneError:
        match = _GENERATED.fullmatch(value)
        if match is None:
            raise
    seed = int(match[1])
    cached = _cached_kitchen(seed)
    stale = cached.is_file() and generator_version(cached) != GENERATOR_VERSION
    if not cached.is_file() or stale:
        from galley_sim import scene_gen  # noqa: PLC0415 (deferred: mujoco)

        if stale:  # the generator or its catalogue changed since: the seed draws another kitchen now
            say(f"kitchen {seed} in {cached} was written by an older galley: drawing it again")
        else:
            say(f"generating kitchen {seed} into {cached} (galley scene generate --seed {seed})")
        generated = scene_gen.generate(seed)
        scene_gen.write_kitchen(generated, cached)
        _remember_pass(cached)  # generate() checked it
    return cached


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _remember_pass(path: Path) -> None:
    marker = cache_dir() / "checked" / _digest(path)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(f"{path}\n")


def _check(scene: Scene, path: Path, say: Callable[[str], None]) -> None:
    """Raise :class:`SceneCheckError` where ``scene`` fails ``galley scene check``; remember a pass."""
    if (cache_dir() / "checked" / _digest(path)).is_file():
        return
    from galley_sim import scene_gen  # noqa: PLC0415 (deferred: mujoco)

    say(f"checking scene {scene.name} ({path}) as galley scene check does")
    problems = scene_gen.check(scene)
    if problems:
        raise SceneCheckError(str(path), problems)
    _remember_pass(path)


def _companions(scene: Scene, path: Path, say: Callable[[str], None]) -> tuple[Path, Path]:
    """(map, suite) of the scene file, written where missing or older than the file."""
    from galley_sim import scene_gen  # noqa: PLC0415 (deferred: mujoco)

    map_yaml, suite = scene_gen.companion_paths(path, scene.name)
    written = path.stat().st_mtime_ns
    stale = [p for p in (map_yaml, suite) if not p.is_file() or p.stat().st_mtime_ns < written]
    if stale:
        say(f"writing the map and suite of {scene.name}: {map_yaml}, {suite}")
        scene_gen.write_companions(scene, path)
    return map_yaml, suite


def _ref(value: str, path: Path) -> str:
    """The name the configuration folders find ``path`` by, else its absolute path."""
    try:
        if scene_path(path.stem, _scene_dirs()).resolve() == path.resolve():
            return path.stem
    except SceneError:
        pass
    return str(path.resolve())


def resolve_scene(value: str, *, check: bool = True, say: Callable[[str], None] | None = None) -> SceneFiles:
    """The scene of a ``--scene`` value (a name or a file), with its map and suite; checked.

    Args:
        value: a scene name or a scene file.
        check: refuse a scene that fails ``galley scene check``'s checks.
        say: where the notes go (a kitchen generated, a map written); default: nowhere.

    Raises:
        SceneError: no such scene (the message lists those found) or an invalid file.
        SceneCheckError: the scene fails a check (one line per problem).
    """
    say = say or (lambda _line: None)
    path = _locate(str(value), say)
    scene = load_scene(path)
    if check:
        _check(scene, path, say)
    map_yaml, suite = _companions(scene, path, say)
    return SceneFiles(scene=scene, file=path, map=map_yaml, suite=suite, ref=_ref(str(value), path))


def resolve_scenes(value: str, *, say: Callable[[str], None] | None = None) -> list[SceneFiles]:
    """The scenes of a ``--scenes`` value: a split (``train``, ``unseen``) or a comma list of names and files.

    Raises:
        SceneError: a scene is missing or invalid, or the list is empty.
        SceneCheckError: a scene fails a check.
    """
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise SceneError(f"--scenes {value!r}: give a split ({', '.join(SPLITS)}) or scene names or files")
    if len(names) == 1 and names[0] in SPLITS:
        names = [scene_name(seed) for seed in split_seeds(names[0])]
    found = [resolve_scene(n, say=say) for n in names]
    seen: dict[str, Path] = {}
    for files in found:
        if files.name in seen and seen[files.name].resolve() != files.file.resolve():
            raise SceneError(
                f"--scenes: two scenes are named {files.name!r} ({seen[files.name]}, {files.file}); "
                "reports are kept by name: rename one (its name: field)"
            )
        seen[files.name] = files.file
    return found


def outside_configuration(scenes: list[SceneFiles]) -> list[str]:
    """The scenes a Ray cluster would not find: given by file or cached, not a configuration folder's."""
    return [s.name for s in scenes if Path(s.ref).is_absolute()]
