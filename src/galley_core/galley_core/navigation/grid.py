"""2D occupancy grids: nav2 map_server files, world <-> cell conversions and inflation.

An :class:`OccupancyGrid` holds the cells of a ``nav_msgs/OccupancyGrid`` as an ``(height, width)``
int8 array: row ``r`` is ``y``, column ``c`` is ``x``, row 0 is the one at the origin (the bottom
of the picture), values are 0 (free) to 100 (occupied) and -1 (unknown), exactly as in the message.

:func:`load_map_yaml` and :func:`save_map_yaml` read and write the nav2 map_server format: a YAML
file (``image``, ``mode``, ``resolution``, ``origin``, ``negate``, ``occupied_thresh``,
``free_thresh``) and an image (PGM read natively, other formats through Pillow), with nav2's
trinary, scale and raw modes and its thresholds (``occ = 1 - shade``, or ``shade`` when negated;
occupied when ``occ > occupied_thresh``, free when ``occ < free_thresh``). A relative image path
resolves against the YAML file's folder, as in nav2.

:func:`inflate` marks every cell whose centre lies closer than a clearance to the centre of an
occupied cell (Euclidean distance transform), the way nav2's inflation layer measures distance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import ArrayLike, NDArray
from scipy import ndimage

from galley_core.files import read_yaml
from galley_core.geometry import Pose2D
from galley_core.navigation._grid_kernels import to_world

__all__ = [
    "FREE",
    "OCCUPIED",
    "UNKNOWN",
    "MapFileError",
    "OccupancyGrid",
    "inflate",
    "load_map_yaml",
    "read_pgm",
    "save_map_yaml",
    "write_pgm",
]

FREE = 0
OCCUPIED = 100
UNKNOWN = -1
_MODES = ("trinary", "scale", "raw")


class MapFileError(ValueError):
    """A map YAML or image is missing or malformed; the message names the file and the fix."""


@dataclass(frozen=True)
class OccupancyGrid:
    """A 2D occupancy grid.

    Attributes:
        data: ``(height, width)`` int8 cells, ``data[row, col]`` with row = y and col = x; 0 free,
            100 occupied, -1 unknown (values in between: probabilities in percent).
        resolution: cell size, metres.
        origin: pose of the lower-left corner of cell (0, 0) in the map frame (x, y in metres, yaw
            in radians).
    """

    data: NDArray[np.int8]
    resolution: float
    origin: Pose2D = field(default_factory=Pose2D)

    def __post_init__(self) -> None:
        data = np.asarray(self.data)
        if data.ndim != 2 or data.size == 0:
            raise ValueError(f"occupancy grid data must be a non-empty 2D array, got shape {data.shape}")
        if not (math.isfinite(self.resolution) and self.resolution > 0.0):
            raise ValueError(f"occupancy grid resolution = {self.resolution} m must be a number > 0")
        if not all(math.isfinite(v) for v in (self.origin.x, self.origin.y, self.origin.theta)):
            raise ValueError(f"occupancy grid origin {self.origin} has a non-finite value")
        if data.dtype != np.int8:
            if np.any((data < -1) | (data > 100)):
                raise ValueError("occupancy grid values must lie in [-1, 100]")
            data = data.astype(np.int8)
        object.__setattr__(self, "data", data)

    @property
    def height(self) -> int:
        """Number of rows (cells along y)."""
        return int(self.data.shape[0])

    @property
    def width(self) -> int:
        """Number of columns (cells along x)."""
        return int(self.data.shape[1])

    def world_to_cell(self, x: float, y: float) -> tuple[int, int]:
        """The (row, col) of the cell containing the map-frame point (x, y) in metres.

        The result may lie outside the grid; check with :meth:`contains`.
        """
        lx, ly = self._to_local(x, y)
        return math.floor(ly / self.resolution), math.floor(lx / self.resolution)

    def world_to_grid(self, points: ArrayLike) -> NDArray[np.float64]:
        """``(N, 2)`` map-frame points (x, y) to continuous grid coordinates (col, row) in cells.

        Cell (r, c) spans [c, c + 1) x [r, r + 1); its centre is (c + 0.5, r + 0.5).
        """
        p = np.atleast_2d(np.asarray(points, dtype=float))
        c, s = math.cos(self.origin.theta), math.sin(self.origin.theta)
        dx, dy = p[:, 0] - self.origin.x, p[:, 1] - self.origin.y
        out = np.empty((len(p), 2))  # filled column by column: np.stack costs more than the arithmetic
        out[:, 0] = c * dx + s * dy
        out[:, 1] = -s * dx + c * dy
        out /= self.resolution
        return out

    def world_to_grid_xy(self, x: float, y: float) -> tuple[float, float]:
        """One point of :meth:`world_to_grid`, as Python floats (the same numbers, no arrays)."""
        lx, ly = self._to_local(x, y)
        return lx / self.resolution, ly / self.resolution

    def grid_to_world(self, grid_points: ArrayLike) -> NDArray[np.float64]:
        """Inverse of :meth:`world_to_grid`: ``(N, 2)`` (col, row) in cells to map-frame (x, y)."""
        g = np.atleast_2d(np.asarray(grid_points, dtype=float))
        o = self.origin
        out: NDArray[np.float64] = to_world(
            g, o.x, o.y, math.cos(o.theta), math.sin(o.theta), self.resolution
        )
        return out

    def cell_to_world(self, row: int, col: int) -> tuple[float, float]:
        """Map-frame (x, y) of the centre of cell (row, col), metres."""
        x, y = self.grid_to_world([[col + 0.5, row + 0.5]])[0]
        return float(x), float(y)

    def contains(self, row: int, col: int) -> bool:
        """Whether (row, col) is a cell of the grid."""
        return 0 <= row < self.height and 0 <= col < self.width

    def _to_local(self, x: float, y: float) -> tuple[float, float]:
        c, s = math.cos(self.origin.theta), math.sin(self.origin.theta)
        dx, dy = x - self.origin.x, y - self.origin.y
        return c * dx + s * dy, -s * dx + c * dy


def inflate(
    obstacles: NDArray[np.bool_], clearance_cells: float
) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Cells whose centre is closer than ``clearance_cells`` to the centre of an obstacle cell.

    Args:
        obstacles: ``(H, W)`` mask of obstacle cells.
        clearance_cells: the clearance, in cells (metres / resolution).

    Returns:
        The blocked mask (obstacles included) and the distance of every cell centre to the nearest
        obstacle centre, in cells (0 on obstacles; ``inf`` everywhere when there is no obstacle).
    """
    if not obstacles.any():
        return obstacles.copy(), np.full(obstacles.shape, np.inf)
    distance = np.asarray(ndimage.distance_transform_edt(~obstacles), dtype=np.float64)
    return distance < clearance_cells, distance


# -- files ---------------------------------------------------------------------------------------


def read_pgm(path: str | Path) -> NDArray[np.uint8]:
    """Read a binary (P5) or ASCII (P2) PGM image as an ``(H, W)`` uint8 array, top row first.

    Raises:
        MapFileError: the file is missing or not an 8-bit PGM.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise MapFileError(f"cannot read map image {path}: {err.strerror}") from None
    tokens, pos = _pgm_header(raw)
    if len(tokens) < 4 or tokens[0] not in (b"P5", b"P2"):
        raise MapFileError(f"map image {path} is not a PGM (P5 or P2) file")
    try:
        width, height, maxval = (int(t) for t in tokens[1:4])
    except ValueError:
        raise MapFileError(f"map image {path} has a malformed PGM header") from None
    if not (0 < maxval < 256) or width <= 0 or height <= 0:
        raise MapFileError(f"map image {path}: only 8-bit PGM images are supported (maxval {maxval})")
    if tokens[0] == b"P5":
        body = raw[pos + 1 : pos + 1 + width * height]
        if len(body) != width * height:
            raise MapFileError(f"map image {path} is truncated: {len(body)} of {width * height} pixels")
        pixels = np.frombuffer(body, dtype=np.uint8)
    else:
        try:
            pixels = np.array(raw[pos:].split()[: width * height], dtype=np.int64).astype(np.uint8)
        except ValueError:
            raise MapFileError(f"map image {path} has a non-numeric pixel") from None
        if pixels.size != width * height:
            raise MapFileError(f"map image {path} is truncated: {pixels.size} of {width * height} pixels")
    image = pixels.reshape(height, width)
    if maxval != 255:
        image = np.round(image.astype(np.float64) * 255.0 / maxval).astype(np.uint8)
    return image


def _pgm_header(raw: bytes) -> tuple[list[bytes], int]:
    """The first four header tokens (magic, width, height, maxval) and the offset after them."""
    tokens: list[bytes] = []
    pos = 0
    while len(tokens) < 4 and pos < len(raw):
        ch = raw[pos : pos + 1]
        if ch == b"#":  # comment to the end of the line
            end = raw.find(b"\n", pos)
            pos = len(raw) if end < 0 else end + 1
        elif ch.isspace():
            pos += 1
        else:
            start = pos
            while pos < len(raw) and not raw[pos : pos + 1].isspace() and raw[pos : pos + 1] != b"#":
                pos += 1
            tokens.append(raw[start:pos])
    return tokens, pos


def write_pgm(path: str | Path, image: NDArray[np.uint8]) -> None:
    """Write an ``(H, W)`` uint8 array (top row first) as a binary PGM (P5)."""
    image = np.ascontiguousarray(image, dtype=np.uint8)
    header = f"P5\n{image.shape[1]} {image.shape[0]}\n255\n".encode()
    Path(path).write_bytes(header + image.tobytes())


def _read_image(path: Path) -> tuple[NDArray[np.float64], NDArray[np.bool_] | None]:
    """Shade in [0, 1] per pixel (mean of the colour channels) and, where there is one, the alpha mask."""
    if path.suffix.lower() == ".pgm":
        return read_pgm(path).astype(np.float64) / 255.0, None
    if not path.is_file():
        raise MapFileError(f"cannot read map image {path}: no such file")
    try:
        from PIL import Image  # noqa: PLC0415 (optional: Pillow)
    except ImportError:
        raise MapFileError(
            f"map image {path}: reading {path.suffix} images needs Pillow (pip install pillow); "
            "or convert the image to PGM"
        ) from None
    try:
        with Image.open(path) as img:
            array = np.asarray(img.convert("RGBA") if img.mode not in ("L", "LA") else img.convert("LA"))
    except OSError as err:
        raise MapFileError(f"cannot read map image {path}: {err}") from None
    color, alpha = array[..., :-1], array[..., -1]
    return color.mean(axis=-1) / 255.0, alpha < 255


def _yaml_value(doc: dict[str, Any], key: str, path: Path, kind: type, default: Any = None) -> Any:
    if key not in doc:
        if default is not None:
            return default
        raise MapFileError(f"map file {path} has no '{key}' entry; add it (nav2 map_server format)")
    value = doc[key]
    try:
        if kind is float and not isinstance(value, bool):
            value = float(value)
        elif kind is int and isinstance(value, (bool, int)):
            value = int(value)
        elif not isinstance(value, kind):
            raise TypeError
    except (TypeError, ValueError):
        raise MapFileError(
            f"map file {path}: '{key}' = {value!r} is not a {kind.__name__}; fix the entry"
        ) from None
    return value


def load_map_yaml(yaml_path: str | Path) -> OccupancyGrid:
    """Load a nav2 map_server map (YAML + image) as nav2's map_server does.

    ``mode`` defaults to trinary; ``negate`` to 0, ``occupied_thresh`` to 0.65 and ``free_thresh``
    to 0.196 (ROS map_server's values) when absent.

    Raises:
        MapFileError: the YAML or the image is missing or malformed; the message names the file,
            the entry and the fix.
    """
    path = Path(yaml_path)
    doc = read_yaml(path, what="map file", error=MapFileError, hint="; check the yaml_filename parameter")
    if not isinstance(doc, dict):
        raise MapFileError(f"map file {path} must be a YAML mapping with image, resolution and origin")
    image_name = _yaml_value(doc, "image", path, str)
    resolution = _yaml_value(doc, "resolution", path, float)
    origin = doc.get("origin")
    if (
        not isinstance(origin, (list, tuple))
        or len(origin) != 3
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in origin)
    ):
        raise MapFileError(f"map file {path}: 'origin' = {origin!r} must be a list [x, y, yaw] of numbers")
    mode = _yaml_value(doc, "mode", path, str, "trinary")
    if mode not in _MODES:
        raise MapFileError(f"map file {path}: 'mode' = {mode!r} must be one of {', '.join(_MODES)}")
    negate = _yaml_value(doc, "negate", path, int, 0)
    occupied_thresh = _yaml_value(doc, "occupied_thresh", path, float, 0.65)
    free_thresh = _yaml_value(doc, "free_thresh", path, float, 0.196)
    if not (math.isfinite(resolution) and resolution > 0.0):
        raise MapFileError(f"map file {path}: 'resolution' = {resolution} must be > 0 (metres per cell)")
    if not 0.0 <= free_thresh <= occupied_thresh <= 1.0:
        raise MapFileError(
            f"map file {path}: need 0 <= free_thresh ({free_thresh}) <= occupied_thresh "
            f"({occupied_thresh}) <= 1"
        )
    image_path = Path(image_name)
    if not image_path.is_absolute():
        image_path = path.parent / image_path
    shade, transparent = _read_image(image_path)
    data = _cells_from_shade(
        shade,
        transparent=transparent,
        mode=mode,
        negate=bool(negate),
        occupied_thresh=occupied_thresh,
        free_thresh=free_thresh,
    )
    return OccupancyGrid(
        data=np.flipud(data).copy(),
        resolution=resolution,
        origin=Pose2D(float(origin[0]), float(origin[1]), float(origin[2])),
    )


def _cells_from_shade(
    shade: NDArray[np.float64],
    *,
    transparent: NDArray[np.bool_] | None,
    mode: str,
    negate: bool,
    occupied_thresh: float,
    free_thresh: float,
) -> NDArray[np.int8]:
    """nav2's map_io pixel rules (image rows, top first)."""
    if mode == "raw":
        value = np.round(shade * 255.0)
        return np.where(value <= 100, value, UNKNOWN).astype(np.int8)
    occ = shade if negate else 1.0 - shade
    cells = np.full(shade.shape, UNKNOWN, dtype=np.int8)
    if mode == "scale":
        span = max(occupied_thresh - free_thresh, 1e-12)
        cells[:] = np.rint((occ - free_thresh) / span * 100.0).clip(0, 100).astype(np.int8)
    cells[occ > occupied_thresh] = OCCUPIED
    cells[occ < free_thresh] = FREE
    if mode == "scale" and transparent is not None:
        cells[transparent] = UNKNOWN
    return cells


def save_map_yaml(
    grid: OccupancyGrid,
    yaml_path: str | Path,
    *,
    mode: str = "trinary",
    occupied_thresh: float = 0.65,
    free_thresh: float = 0.196,
) -> Path:
    """Write ``grid`` as a nav2 map (YAML + PGM beside it, same stem) as nav2's map_saver does.

    Trinary: free 254, occupied 0, unknown 205; scale: ``255 * (100 - value) / 100``, unknown 205.
    ``free_thresh`` defaults to 0.196 (ROS map_server's value) so that 205 (occ 0.196) reads back as
    unknown; with nav2 map_saver's 0.25 it would read back as free.

    Returns:
        The path of the image written.
    """
    if mode not in ("trinary", "scale"):
        raise ValueError(f"mode {mode!r}: maps are saved in 'trinary' or 'scale' mode")
    path = Path(yaml_path)
    rows = np.flipud(grid.data).astype(np.int16)
    if mode == "trinary":
        image = np.full(rows.shape, 205, dtype=np.uint8)
        image[rows >= occupied_thresh * 100] = 0
        image[(rows >= 0) & (rows <= free_thresh * 100)] = 254
    else:
        image = np.where(rows < 0, 205, np.round(255.0 * (100 - rows) / 100.0)).astype(np.uint8)
    image_path = path.with_suffix(".pgm")
    write_pgm(image_path, image)
    doc = {
        "image": image_path.name,
        "mode": mode,
        "resolution": float(grid.resolution),
        "origin": [float(grid.origin.x), float(grid.origin.y), float(grid.origin.theta)],
        "negate": 0,
        "occupied_thresh": occupied_thresh,
        "free_thresh": free_thresh,
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return image_path
