"""What runs without a cluster: episode folders packed and written whole, driver files shipped and
found again, the evaluation's journal for --resume, and the commands without --cluster (no ray)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from galley_episodes.cluster_files import (
    EpisodeJournal,
    Shipment,
    ShippedPath,
    decode,
    materialise,
    pack_folder,
    unpack_folder,
)


def _episode(folder: Path) -> Path:
    (folder / "bag").mkdir(parents=True)
    (folder / "bag" / "bag_0.mcap").write_bytes(bytes(range(256)) * 40)
    (folder / "episode.json").write_text('{"success": true}\n')
    return folder


def test_an_episode_folder_arrives_whole_and_only_once(tmp_path):
    archive = pack_folder(_episode(tmp_path / "node" / "ep_000003"))
    destination = tmp_path / "out" / ".work" / "ep_000003"
    unpack_folder(archive, destination)
    assert (destination / "bag" / "bag_0.mcap").read_bytes() == bytes(range(256)) * 40
    assert json.loads((destination / "episode.json").read_text()) == {"success": True}
    assert sorted(p.name for p in destination.parent.iterdir()) == ["ep_000003"]  # no staging left
    with pytest.raises(FileExistsError, match="written once"):
        unpack_folder(archive, destination)


def test_a_broken_archive_leaves_no_episode_behind(tmp_path):
    destination = tmp_path / "out" / "ep_000001"
    archive = pack_folder(_episode(tmp_path / "node" / "ep_000001"))
    with pytest.raises(Exception):  # noqa: B017 (tarfile's error for a cut archive)
        unpack_folder(archive[: len(archive) // 2] + b"\x01" * 700, destination)
    assert not destination.exists() and list(destination.parent.iterdir()) == []


def test_driver_paths_reach_a_node_and_arguments_point_to_its_copies(tmp_path, monkeypatch):
    config = tmp_path / "driver" / "config"
    (config / "scenes").mkdir(parents=True)
    (config / "scenes" / "kitchen.yaml").write_text("scene: 1\n")
    (tmp_path / "driver" / "maps").mkdir()
    (tmp_path / "driver" / "maps" / "kitchen.yaml").write_text("map: 1\n")
    params = tmp_path / "elsewhere" / "short.yaml"
    params.parent.mkdir()
    params.write_text("a: 1\n")
    policy = _episode(tmp_path / "runs" / "policy")
    shipment = Shipment.of_configuration(config)
    sent = {
        "params": shipment.encode([params]),
        "text": shipment.encode(str(params)),
        "policy": shipment.encode(policy),
        "scene": shipment.encode(config / "scenes" / "kitchen.yaml"),
        "none": shipment.encode(None),
    }
    assert sent["scene"] == ShippedPath("config", "scenes/kitchen.yaml", as_text=False)
    assert sent["text"].as_text and sent["text"].part == sent["params"][0].part  # one copy of a file
    with pytest.raises(FileNotFoundError, match="no node can have it"):
        shipment.encode(tmp_path / "missing.yaml")
    digest, archive = shipment.pack()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "node"))
    monkeypatch.setenv("GALLEY_CONFIG_DIR", "")  # so that the value materialise sets is undone after
    monkeypatch.delenv("GALLEY_CONFIG_DIR")
    (tmp_path / "node").mkdir()
    root = materialise(digest, lambda: archive, shipment.config_part)
    assert materialise(digest, lambda: pytest.fail("fetched twice"), shipment.config_part) == root
    got = {k: decode(v, root) for k, v in sent.items()}
    assert got["params"][0].read_text() == "a: 1\n" and isinstance(got["text"], str)
    assert (got["policy"] / "bag" / "bag_0.mcap").stat().st_size == 256 * 40
    assert got["scene"].read_text() == "scene: 1\n" and got["none"] is None
    assert Path(__import__("os").environ["GALLEY_CONFIG_DIR"]) == root / "config"
    assert (root / "maps" / "kitchen.yaml").read_text() == "map: 1\n"  # find_map: beside config


def test_the_journal_resumes_the_same_evaluation_and_refuses_another(tmp_path):
    key = {"id": "move_1-08", "seed": 464197, "plan": ["move to the red zone"]}
    journal = EpisodeJournal(tmp_path / "episodes", resume=False)
    journal.record(0, key, {"success": False, "outcomes": [False], "x": __import__("numpy").float64(0.5)})
    again = EpisodeJournal(tmp_path / "episodes", resume=True)
    assert again.finished(0, key) == {"success": False, "outcomes": [False], "x": 0.5}
    assert again.finished(1, key) is None
    with pytest.raises(ValueError, match="resume with the same --suite"):
        again.finished(0, key | {"seed": 1})
    assert EpisodeJournal(tmp_path / "episodes", resume=False).finished(0, key) is None  # a new run


def test_without_cluster_ray_is_never_imported(repo):
    """The commands' modules and local runs of episodes (in this process, in 2 workers) leave ray out."""
    code = (
        "import sys\n"
        "from galley_cli.main import _build_parser as build_parser\n"
        "from galley_episodes.cluster import run_episodes\n"
        "from galley_episodes.cluster_files import EpisodeJournal\n"
        "import tempfile, pathlib\n"
        "args = build_parser().parse_args(['eval', '--mode', 'policy', '--episodes', '1'])\n"
        "assert not getattr(args, 'cluster', '') and not getattr(args, 'resume', False)  # not given\n"
        "j = EpisodeJournal(pathlib.Path(tempfile.mkdtemp()) / 'e', resume=False)\n"
        "for workers in (1, 2):\n"
        "    calls = [{'a': 1}, {'a': 2}, {'a': 3}]\n"
        "    rows = run_episodes(dict, calls, keys=[{}] * 3, journal=j, workers=workers, cluster=None,"
        " progress=lambda done: None)\n"
        "    assert [r['a'] for r in rows] == [1, 2, 3] and all('pid' in r['ran_on'] for r in rows), rows\n"
        "    j = EpisodeJournal(j.folder, resume=False)\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=repo, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_a_bad_cluster_address_is_one_line(repo, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "galley_cli.main", "eval", "--mode", "policy", "--cluster", "ray:/x"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=repo,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "is not a cluster address: use auto, local, ray://HOST:PORT or HOST:PORT" in proc.stderr
