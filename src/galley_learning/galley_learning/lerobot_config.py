"""How ``galley export-lerobot`` exports a collection: the settings, without pyarrow or cv2.

Kept apart from the exporter (lerobot.py) so that the command line builds its options from the
fields without importing the exporter's dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass

from galley_core.config import Config, ConfigError, param

__all__ = ["PIX_FMT", "LeRobotExportConfig"]

#: The videos' pixel format (LeRobot's): 4:2:0 chroma, so both image sides must be even.
PIX_FMT = "yuv420p"


@dataclass(frozen=True)
class LeRobotExportConfig(Config):
    """How a collection is exported (``galley export-lerobot``)."""

    fps: int = param(10, "frames per second the episodes are resampled to", unit="Hz", ge=1)
    image_size: tuple[int, ...] = param(
        (), "(width, height) every image is resized to; () keeps the recorded size", unit="px", ge=2
    )
    robot_type: str = param("galley_mm", "robot_type written to meta/info.json")
    vcodec: str = param(
        "libsvtav1",
        "video encoder: AV1 (LeRobot's default) or h264, which LeRobot also decodes",
        choices=("libsvtav1", "h264"),
    )
    crf: int = param(30, "encoder quality: lower is better and larger (LeRobot's default)", ge=0, le=63)
    gop: int = param(2, "keyframe interval (LeRobot's default g: cheap random access)", unit="frames", ge=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.image_size and (len(self.image_size) != 2 or any(v % 2 for v in self.image_size)):
            raise ConfigError(
                "image_size",
                self.image_size,
                f"width and height, both even ({PIX_FMT} video); () for the recorded size",
            )
