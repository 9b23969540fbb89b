"""Where each object lies, read from the top-down image by what the scene file says it looks like.

The learned presence score (:meth:`.galley_slots.SlotPlannerNet.presence`) compares a 32 px glimpse
of a zone with an object's description; in generated kitchens it confuses objects a few pixels
wide that look alike (a sponge and a banana, a mug and a can). This module reads the image at its
native resolution instead, with no learned part:

1. **Lighting.** Every zone patch is a flat, upward face of a colour the scene file gives; the
   median of each patch against that colour gives one gain per channel (the scene's lights and
   tint), so that an object's colour in the file predicts its colour in the image.
2. **Object pixels.** In a window around each zone, a pixel belongs to the background when it lies
   near the zone's colour, near a colour that fills much of the window's rim (the counter, the
   floor), or on a blend of two of these (anti-aliased edges). The rest are object pixels.
3. **Scores.** Each object is fitted to a zone's object pixels as a blend of its predicted colour
   (shaded, for round things) over the zone's colour: the blend weights sum to the object's
   visible area, and their spread gives its long and short extent. The score of object k in zone z
   is a log-likelihood: colour residual, area and extents against the object's footprint
   (:func:`object_look`), in metres (the image's pixel size is known from the scene's bounds).

Episodes start with one object per zone, so the planner places the objects jointly from these
scores (:func:`.galley_planner.assign`). Reads only the image and the scene file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from galley_core.scene import ObjectSpec, Scene
from galley_learning.planners.images import map_to_pixel, pixels_per_metre

__all__ = ["ObjectLook", "colour_gain", "object_look", "presence_scores"]

#: How far past a zone's patch the window reaches, metres (objects stand up to ~0.18 m off centre).
WINDOW_MARGIN_M = 0.06
#: A pixel within this distance (0..255 RGB) of a background colour or blend is background.
BACKGROUND_TOLERANCE = 16.0
#: Colour residual of a well-fitted object pixel (0..255 RGB), for the colour term.
COLOUR_SIGMA = 14.0
#: Spread of log(observed / expected) for the area and the extents.
AREA_SIGMA, EXTENT_SIGMA = 0.35, 0.25
#: Score lost per share of the blob's pixels that the object's colour cannot explain (> 3 sigma).
UNEXPLAINED_PENALTY = 4.0
#: Score of an object in a zone that shows (almost) no object pixels.
EMPTY_SCORE = -12.0
#: The least score of an object in a zone that shows an object unlike it.
FLOOR_SCORE = -11.0
#: Round things are shaded: their pixels may be this much darker or brighter than the flat colour.
SHADE_RANGE = {"round": (0.55, 1.1), "flat": (0.85, 1.1)}


@dataclass(frozen=True)
class ObjectLook:
    """What an object looks like from above.

    Attributes:
        rgb: colour from the scene file, 0..1.
        area_m2: footprint area seen from above, m^2.
        extents_m: (long, short) standard deviation of the footprint along its axes, metres.
        round: shaded (a sphere) rather than a flat top.
    """

    rgb: tuple[float, float, float]
    area_m2: float
    extents_m: tuple[float, float]
    round: bool


def _footprint(obj: ObjectSpec, step: float) -> np.ndarray[Any, Any]:
    """Points (N, 2), ``step`` apart, covering the object's footprint in its own frame, metres."""
    s = obj.size
    if obj.shape == "box":
        rects = [(0.0, s[0], s[1])]
    elif obj.shape == "fork":  # as galley_sim.mjcf builds it: a narrow handle and a wider head
        length, width = s[0], s[1]
        handle = 0.62 * length
        rects = [
            (-length / 2 + handle / 2, handle, 0.55 * width),
            (length / 2 - (length - handle) / 2, length - handle, width),
        ]
    else:
        r = s[0]
        g = np.arange(-r, r + step / 2, step)
        xx, yy = np.meshgrid(g, g)
        keep = xx**2 + yy**2 <= r * r
        return np.stack([xx[keep], yy[keep]], axis=1)
    points = []
    for cx, lx, ly in rects:
        gx = np.arange(cx - lx / 2 + step / 2, cx + lx / 2, step)
        gy = np.arange(-ly / 2 + step / 2, ly / 2, step)
        xx, yy = np.meshgrid(gx, gy)
        points.append(np.stack([xx.ravel(), yy.ravel()], axis=1))
    return np.concatenate(points)


def object_look(obj: ObjectSpec) -> ObjectLook:
    """The scene file's object as seen from above (:class:`ObjectLook`)."""
    step = 0.002
    points = _footprint(obj, step)
    long_var, short_var = _spread(points, np.ones(len(points)))
    rgb = (float(obj.rgba[0]), float(obj.rgba[1]), float(obj.rgba[2]))
    extents = (float(np.sqrt(long_var)), float(np.sqrt(short_var)))
    return ObjectLook(rgb, len(points) * step * step, extents, obj.shape == "sphere")


def _spread(points: np.ndarray[Any, Any], weights: np.ndarray[Any, Any]) -> tuple[float, float]:
    """(largest, smallest) variance of weighted 2-D points along their principal axes."""
    w = weights / max(float(weights.sum()), 1e-9)
    mean = (points * w[:, None]).sum(axis=0)
    d = points - mean
    cov = (d * w[:, None]).T @ d
    values = np.linalg.eigvalsh(cov)
    return float(values[1]), float(values[0])


def _zone_window(scene: Scene, image: np.ndarray[Any, Any], index: int) -> tuple[np.ndarray[Any, Any], ...]:
    """The window around zone ``index``: its pixels, their places, the patch, the window's shape.

    Returns (N, 3) float pixels, their (N, 2) positions in metres about the zone's centre (x
    right, y up), whether each lies inside the patch (shrunk by a pixel), and (rows, columns).
    """
    height, width = image.shape[:2]
    zone = scene.zones[index]
    ppm = pixels_per_metre(scene, width, height)
    col, row = map_to_pixel(scene, zone.center[0], zone.center[1], width, height)
    half_x, half_y = zone.size[0] / 2 + WINDOW_MARGIN_M, zone.size[1] / 2 + WINDOW_MARGIN_M
    c0, c1 = max(0, int(np.floor(col - half_x * ppm))), min(width, int(np.ceil(col + half_x * ppm)))
    r0, r1 = max(0, int(np.floor(row - half_y * ppm))), min(height, int(np.ceil(row + half_y * ppm)))
    cols, rows = np.meshgrid(np.arange(c0, c1), np.arange(r0, r1))
    x = (cols + 0.5 - col) / ppm
    y = (row - rows - 0.5) / ppm
    inside = (np.abs(x) < zone.size[0] / 2 - 1.0 / ppm) & (np.abs(y) < zone.size[1] / 2 - 1.0 / ppm)
    pixels = image[r0:r1, c0:c1, :3].reshape(-1, 3).astype(np.float64)
    return pixels, np.stack([x.ravel(), y.ravel()], axis=1), inside.ravel(), np.array(x.shape)


def colour_gain(scene: Scene, image: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """(3,) per-channel gain from a colour in the scene file (0..1) to its pixels (0..255): the lighting.

    Fitted on the zone patches (flat, upward, of known colour), each read as its median pixel.
    """
    seen, drawn = [], []
    for i, zone in enumerate(scene.zones):
        pixels, _, inside, _ = _zone_window(scene, image, i)
        if inside.any():
            seen.append(np.median(pixels[inside], axis=0))
            drawn.append(np.array(zone.rgba[:3]))
    if not seen:
        return np.full(3, 255.0)
    s, d = np.array(seen), np.array(drawn)
    return (s * d).sum(axis=0) / np.maximum((d * d).sum(axis=0), 1e-6)


def _distance_to_segments(
    pixels: np.ndarray[Any, Any], a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """(N,) distance of each pixel to the nearest segment a[i]-b[i] (colours (K, 3))."""
    ab = b - a  # (K, 3)
    t = ((pixels[:, None, :] - a[None]) * ab[None]).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-9)[None]
    nearest = a[None] + np.clip(t, 0.0, 1.0)[..., None] * ab[None]
    return np.linalg.norm(pixels[:, None, :] - nearest, axis=-1).min(axis=1)


def _background_colours(pixels: np.ndarray[Any, Any], inside: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """(K, 3): the zone's colour (median of the patch) and the colours filling much of the rim."""
    colours = [np.median(pixels[inside], axis=0)] if inside.any() else []
    rim = pixels[~inside]
    if len(rim):
        bins = (rim // 24).astype(int)
        _, inverse, counts = np.unique(bins, axis=0, return_inverse=True, return_counts=True)
        for k in np.flatnonzero(counts >= 0.12 * len(rim)):
            colours.append(np.median(rim[inverse.ravel() == k], axis=0))
    return np.array(colours)


def _object_pixels(
    pixels: np.ndarray[Any, Any], inside: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Which pixels are not background, and the zone's colour.

    Inside the patch only the zone's colour is background; outside it (and on its anti-aliased
    edge), the rim's colours too and any blend of two background colours. A blend test inside
    the patch would hide an object whose colour lies between the zone's and the counter's.
    """
    colours = _background_colours(pixels, inside)
    pairs = [(i, j) for i in range(len(colours)) for j in range(len(colours)) if i <= j]
    a = np.array([colours[i] for i, _ in pairs])
    b = np.array([colours[j] for _, j in pairs])
    outside = _distance_to_segments(pixels, a, b) > BACKGROUND_TOLERANCE
    in_patch = np.linalg.norm(pixels - colours[0], axis=1) > BACKGROUND_TOLERANCE
    return np.where(inside, in_patch, outside), colours[0]


def _grow(mask: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``mask`` (H, W) grown by one pixel in all eight directions."""
    padded = np.pad(mask, 1)
    h, w = mask.shape
    return np.any(
        [padded[1 + dr : 1 + dr + h, 1 + dc : 1 + dc + w] for dr in (-1, 0, 1) for dc in (-1, 0, 1)], axis=0
    )


def _main_blob(mask: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The largest 8-connected part of ``mask`` (H, W) and the parts within 2 pixels of it.

    An episode puts one object in a zone; stray pixels (an edge, a neighbour's corner) would
    stretch its measured extent. A thin object's parts (a fork's head and handle) stay together.
    """
    if not mask.any():
        return mask
    labels = np.where(mask, np.arange(1, mask.size + 1).reshape(mask.shape), 0)
    while True:
        padded = np.pad(labels, 1)
        h, w = mask.shape
        grown = np.max(
            [padded[1 + dr : 1 + dr + h, 1 + dc : 1 + dc + w] for dr in (-1, 0, 1) for dc in (-1, 0, 1)],
            axis=0,
        )
        grown = np.where(mask, grown, 0)
        if np.array_equal(grown, labels):
            break
        labels = grown
    ids, counts = np.unique(labels[mask], return_counts=True)
    blob = labels == ids[np.argmax(counts)]
    return mask & _grow(_grow(_grow(blob)))


def _fit(
    pixels: np.ndarray[Any, Any],
    zone: np.ndarray[Any, Any],
    colour: np.ndarray[Any, Any],
    shade: tuple[float, float],
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Each pixel as (1 - a) * zone + a * s * colour, s in ``shade``: (coverage a, residual)."""
    d = pixels - zone  # = a * (s * colour - zone)
    basis = np.stack([colour, -zone], axis=1)  # d = beta * colour - a * zone, beta = a * s
    gram = basis.T @ basis + 1e-3 * np.eye(2)
    beta, a = np.linalg.solve(gram, basis.T @ d.T)
    a = np.clip(a, 0.0, 1.0)
    beta = np.clip(
        (d + a[:, None] * zone) @ colour / max(float(colour @ colour), 1e-9), a * shade[0], a * shade[1]
    )
    residual = np.linalg.norm(d + a[:, None] * zone - beta[:, None] * colour, axis=1)
    return a, residual


def presence_scores(scene: Scene, image: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """(zones, objects) log-likelihood that each object lies in each zone, in scene order.

    Args:
        scene: the scene file's zones (colour, patch) and objects (shape, size, colour).
        image: (H, W, 3) uint8 top-down image as the simulator renders it (any size: the pixel
            size follows from the scene's bounds).
    """
    image = np.asarray(image)
    gain = colour_gain(scene, image)
    ppm = pixels_per_metre(scene, image.shape[1], image.shape[0])
    pixel_area = 1.0 / (ppm * ppm)
    blur = 1.0 / (12.0 * ppm * ppm)  # a pixel's own spread (variance, m^2)
    looks = [object_look(o) for o in scene.objects]
    reach = max((o.footprint_radius for o in scene.objects), default=0.0) + 1.0 / ppm
    scores = np.full((len(scene.zones), len(looks)), EMPTY_SCORE)
    for z in range(len(scene.zones)):
        pixels, where, inside, shape = _zone_window(scene, image, z)
        is_object, zone_colour = _object_pixels(pixels, inside)
        # Objects stand within the spawn radius of the centre: farther pixels are something else.
        near = np.hypot(where[:, 0], where[:, 1]) <= scene.zones[z].spawn_radius + reach
        blob = _main_blob((is_object & near).reshape(shape))
        if blob.sum() < 2:
            continue
        # The blob's anti-aliased fringe (pixels too close to the zone's colour to count as the
        # object's) still carries part of its area: a thin fork's is half its pixels.
        region = (_grow(blob).ravel() & near & inside) | blob.ravel()
        fg, at = pixels[region], where[region]
        for k, look in enumerate(looks):
            colour = gain * np.array(look.rgb)
            a, residual = _fit(fg, zone_colour, colour, SHADE_RANGE["round" if look.round else "flat"])
            area = max(float(a.sum()) * pixel_area, 1e-6)
            colour_term = -0.5 * float((a * (residual / COLOUR_SIGMA) ** 2).sum() / max(float(a.sum()), 1e-6))
            # Pixels the object's colour cannot explain at all are something else (or another object).
            unexplained = float(((residual > 3 * COLOUR_SIGMA) * 1.0).mean())
            long_var, short_var = _spread(at, a + 1e-6)
            extents = np.sqrt([max(long_var - blur, 1e-8), max(short_var - blur, 1e-8)])
            shape_term = -0.5 * float(
                (np.log(area / look.area_m2) / AREA_SIGMA) ** 2
                + (np.log(extents[0] / look.extents_m[0]) / EXTENT_SIGMA) ** 2
                + (np.log(extents[1] / look.extents_m[1]) / EXTENT_SIGMA) ** 2
            )
            # A poor fit is bounded below (softly, keeping the order): a zone holding *something*
            # stays likelier than an empty one, however unlike the object it is.
            fit = colour_term + shape_term - UNEXPLAINED_PENALTY * unexplained - FLOOR_SCORE
            scores[z, k] = FLOOR_SCORE + float(np.logaddexp(0.0, fit))
    return scores
