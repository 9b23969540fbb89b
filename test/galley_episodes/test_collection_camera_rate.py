"""A collection at a camera rate other than the simulator's default (``galley collect --camera-rate``)."""

from __future__ import annotations

from pathlib import Path

import yaml

from galley_episodes import collect
from galley_episodes.config import CollectConfig


def test_the_monitor_watches_the_cameras_at_the_collections_rate_and_keeps_the_episode(
    tmp_path: Path,
) -> None:
    """galley.yaml's camera rules (8 Hz for 10 Hz cameras) aborted every 5 Hz episode within 1 s."""
    config = CollectConfig(episodes=1, steps=1, image_size=(32, 24), camera_rate_hz=5.0, seed=1_000_003)
    summary = collect(config, out=tmp_path / "c", progress=False)
    params = yaml.safe_load((tmp_path / "c" / "params.yaml").read_text())
    rules = dict(rule.split() for rule in params["monitor"]["ros__parameters"]["rate_rules"])
    assert rules["/camera/base/image_raw"] == "4" and rules["/odom"] == "40"
    kept = list((tmp_path / "c" / "episodes").iterdir())
    assert len(kept) == 1, summary
