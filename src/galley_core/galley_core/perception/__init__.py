"""Object poses from the robot's own RGB-D camera: classical, on depth and colour.

One frame goes through :class:`ObjectPerception`:

1. :func:`~galley_core.perception.pointcloud.back_project` the depth image into map points
   (the camera's intrinsics and its pose from TF);
2. drop what the scene's static geometry explains (:class:`StaticScene`: floor, walls, furniture
   and their tops, background objects) and the robot itself (:class:`RobotMask`, from its link frames);
3. average the rest per small cube, cluster it (:func:`~galley_core.perception.detector.cluster`);
4. fit each object's shape to each cluster it could be and assign clusters to objects
   (:func:`~galley_core.perception.detector.detect`);
5. keep estimates across frames with a decaying confidence (:class:`ObjectTracker`).

Nothing here reads an object's true pose: only the scene description (static geometry, the
objects' shapes and colours), the images, the camera's pose and the robot's link poses.
"""

from galley_core.perception.config import PerceptionConfig
from galley_core.perception.detector import DepthView, Detection, cluster, detect
from galley_core.perception.perceiver import ObjectPerception
from galley_core.perception.pointcloud import Intrinsics, RobotMask, StaticScene, back_project
from galley_core.perception.shapes import ShapeModel, fit_pose
from galley_core.perception.tracker import ObjectEstimate, ObjectTracker

__all__ = [
    "DepthView",
    "Detection",
    "Intrinsics",
    "ObjectEstimate",
    "ObjectPerception",
    "ObjectTracker",
    "PerceptionConfig",
    "RobotMask",
    "ShapeModel",
    "StaticScene",
    "back_project",
    "cluster",
    "detect",
    "fit_pose",
]
