"""The scene cache: a generated kitchen written by an older generator is drawn again on use."""

from __future__ import annotations

from pathlib import Path

import pytest

from galley_core.scenes.splits import GENERATOR_VERSION, generator_version
from galley_episodes.scenes import CACHE_ENV, resolve_scene


def test_a_kitchen_of_an_older_generator_is_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    said: list[str] = []
    first = resolve_scene("kitchen_5", check=False, say=said.append)
    assert generator_version(first.file) == GENERATOR_VERSION
    assert any("generating kitchen 5" in line for line in said)

    fresh = first.file.read_text()
    old = fresh.split("\n", 1)[1].replace("0.022", "0.016")  # no stamp: version 1, an older grasp
    first.file.write_text(old)
    assert generator_version(first.file) == 1
    said.clear()
    again = resolve_scene("kitchen_5", check=False, say=said.append)
    assert again.file == first.file and again.file.read_text() == fresh
    assert any("written by an older galley: drawing it again" in line for line in said)

    said.clear()
    resolve_scene("kitchen_5", check=False, say=said.append)  # current: used as it is
    assert not any("kitchen 5" in line for line in said)


def test_a_scene_file_of_ones_own_is_never_rewritten(tmp_path: Path) -> None:
    own = tmp_path / "mine.yaml"
    kitchen = Path(__file__).resolve().parents[2] / "config" / "scenes" / "kitchen.yaml"
    own.write_text(kitchen.read_text())  # no stamp, as every hand-written scene
    resolve_scene(str(own), check=False)
    assert own.read_text() == kitchen.read_text()
