"""Occupancy grids: nav2 map_server files (modes, thresholds, negate, paths), cells, inflation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from galley_core.geometry import Pose2D
from galley_core.navigation.grid import (
    MapFileError,
    OccupancyGrid,
    inflate,
    load_map_yaml,
    read_pgm,
    save_map_yaml,
    write_pgm,
)

YAML = """image: {image}
mode: {mode}
resolution: 0.05
origin: [-1.0, 2.0, 0.0]
negate: {negate}
occupied_thresh: 0.65
free_thresh: 0.25
"""


def write_map(folder, pixels, *, mode="trinary", negate=0, image="m.pgm"):
    write_pgm(folder / image, np.asarray(pixels, dtype=np.uint8))
    path = folder / "m.yaml"
    path.write_text(YAML.format(image=image, mode=mode, negate=negate))
    return path


def test_trinary_thresholds_and_row_order_follow_nav2(tmp_path):
    # Top row of the image is the far end of the map (largest y).
    pixels = [[0, 254, 205], [100, 200, 255]]  # occ = 1 - p/255: 1.0, 0.004, 0.196 / 0.61, 0.22, 0.0
    grid = load_map_yaml(write_map(tmp_path, pixels))
    # With free_thresh 0.25, nav2 reads 205 (occ 0.196) as free; galley saves with 0.196 (see below).
    assert grid.data.tolist() == [[-1, 0, 0], [100, 0, 0]]
    assert grid.resolution == 0.05 and grid.origin == Pose2D(-1.0, 2.0, 0.0)
    negated = load_map_yaml(write_map(tmp_path, pixels, negate=1))
    assert negated.data.tolist() == [[-1, 100, 100], [0, 100, 100]]


def test_scale_and_raw_modes(tmp_path):
    grid = load_map_yaml(write_map(tmp_path, [[0, 128, 255]], mode="scale"))
    # occ = 1 - 128/255 = 0.498: (0.498 - 0.25) / 0.4 * 100 = 62
    assert grid.data.tolist() == [[100, 62, 0]]
    raw = load_map_yaml(write_map(tmp_path, [[0, 55, 100, 101, 255]], mode="raw"))
    assert raw.data.tolist() == [[0, 55, 100, -1, -1]]


def test_save_then_load_round_trips_a_trinary_map(tmp_path):
    data = np.zeros((4, 6), dtype=np.int8)
    data[1, 2] = 100
    data[3, :] = -1
    grid = OccupancyGrid(data, 0.1, Pose2D(1.0, -2.0, 0.0))
    (tmp_path / "sub").mkdir()
    image = save_map_yaml(grid, tmp_path / "sub" / "map.yaml")
    assert image.name == "map.pgm"
    back = load_map_yaml(tmp_path / "sub" / "map.yaml")
    assert np.array_equal(back.data, data) and back.resolution == 0.1 and back.origin == grid.origin
    assert read_pgm(image)[0].tolist() == [205] * 6  # the unknown top row


def test_relative_image_paths_resolve_against_the_yaml_folder(tmp_path, monkeypatch):
    (tmp_path / "maps" / "img").mkdir(parents=True)
    path = write_map(tmp_path / "maps", [[254]], image="img/k.pgm")
    monkeypatch.chdir(tmp_path)
    assert load_map_yaml(path).data.tolist() == [[0]]


def test_ascii_pgm_with_comments(tmp_path):
    (tmp_path / "a.pgm").write_bytes(b"P2\n# made by hand\n3 1\n# max\n15\n0 15 7\n")
    assert read_pgm(tmp_path / "a.pgm").tolist() == [[0, 255, 119]]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("resolution: 0.05\norigin: [0, 0, 0]\n", ["no 'image' entry"]),
        ("image: m.pgm\norigin: [0, 0, 0]\n", ["no 'resolution' entry"]),
        ("image: m.pgm\nresolution: 0.05\norigin: [0, 0]\n", ["'origin'", "[x, y, yaw]"]),
        ("image: m.pgm\nresolution: -1\norigin: [0, 0, 0]\n", ["'resolution' = -1.0 must be > 0"]),
        ("image: m.pgm\nresolution: 0.05\norigin: [0, 0, 0]\nmode: fancy\n", ["'mode' = 'fancy'"]),
        ("image: missing.pgm\nresolution: 0.05\norigin: [0, 0, 0]\n", ["missing.pgm", "No such file"]),
        ("image: [m.pgm\n", ["not valid YAML"]),
        ("- just\n- a list\n", ["must be a YAML mapping"]),
        ("image: m.pgm\nresolution: 0.05\norigin: [0, 0, 0]\nfree_thresh: 0.9\n", ["free_thresh (0.9)"]),
    ],
)
def test_malformed_map_files_name_the_file_and_the_entry(tmp_path, text, words):
    write_pgm(tmp_path / "m.pgm", np.full((2, 2), 254, dtype=np.uint8))
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(MapFileError) as err:
        load_map_yaml(path)
    for word in words:
        assert word in str(err.value)
    assert "bad.yaml" in str(err.value) or "missing.pgm" in str(err.value)


def test_missing_yaml_and_broken_images(tmp_path):
    with pytest.raises(MapFileError, match="yaml_filename"):
        load_map_yaml(tmp_path / "nope.yaml")
    (tmp_path / "m.pgm").write_bytes(b"P5\n4 4\n255\n" + bytes(3))
    (tmp_path / "m.yaml").write_text("image: m.pgm\nresolution: 0.05\norigin: [0, 0, 0]\n")
    with pytest.raises(MapFileError, match="truncated"):
        load_map_yaml(tmp_path / "m.yaml")
    (tmp_path / "m.pgm").write_bytes(b"P6\n1 1\n255\n\x00\x00\x00")
    with pytest.raises(MapFileError, match="not a PGM"):
        load_map_yaml(tmp_path / "m.yaml")


def test_png_images_load_through_pillow(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    Image.fromarray(np.array([[0, 254]], dtype=np.uint8)).save(tmp_path / "m.png")
    (tmp_path / "m.yaml").write_text("image: m.png\nresolution: 0.05\norigin: [0, 0, 0]\n")
    assert load_map_yaml(tmp_path / "m.yaml").data.tolist() == [[100, 0]]


def test_world_and_cell_conversions_with_a_rotated_origin():
    grid = OccupancyGrid(np.zeros((10, 20), dtype=np.int8), 0.5, Pose2D(1.0, 1.0, math.pi / 2))
    # Cell columns run along the map's +y, rows along its -x.
    assert grid.world_to_cell(1.0 - 0.25, 1.0 + 0.25) == (0, 0)
    assert grid.cell_to_world(0, 0) == pytest.approx((0.75, 1.25))
    assert grid.world_to_cell(1.0 - 1.25, 1.0 + 2.75) == (2, 5)
    pts = np.array([[0.3, 4.1], [-2.0, 1.5]])
    assert np.allclose(grid.grid_to_world(grid.world_to_grid(pts)), pts)
    assert not grid.contains(10, 0) and grid.contains(9, 19)


def test_inflation_blocks_cells_whose_centre_is_too_close():
    obstacles = np.zeros((7, 7), dtype=bool)
    obstacles[3, 3] = True
    blocked, distance = inflate(obstacles, 2.0)
    assert distance[3, 5] == 2.0 and not blocked[3, 5]
    assert distance[4, 5] == pytest.approx(math.sqrt(5)) and not blocked[4, 5]
    assert blocked[4, 4] and blocked[3, 4] and blocked[3, 3]
    assert blocked.sum() == 9
    empty, far = inflate(np.zeros((2, 2), dtype=bool), 3.0)
    assert not empty.any() and np.isinf(far).all()


def test_grid_rejects_bad_values():
    with pytest.raises(ValueError, match="resolution"):
        OccupancyGrid(np.zeros((2, 2)), 0.0)
    with pytest.raises(ValueError, match=r"\[-1, 100\]"):
        OccupancyGrid(np.full((2, 2), 101), 0.1)
    with pytest.raises(ValueError, match="2D"):
        OccupancyGrid(np.zeros(4), 0.1)
