"""Generated kitchens and the checks every scene passes before anything runs in it.

* :mod:`~galley_core.scenes.catalogue`: the kinds of objects, with their grasps;
* :mod:`~galley_core.scenes.layout`: rooms and furniture;
* :mod:`~galley_core.approach`: approach poses derived from a zone's surface and the robot;
* :mod:`~galley_core.scenes.generate`: a scene document from a seed;
* :mod:`~galley_core.scenes.checks`: reachability by base and arm, fit, overlap;
* :mod:`~galley_core.scenes.splits`: the training and unseen kitchens, by seed.

Pure Python: the occupancy map a check needs is made by galley_sim (:mod:`galley_sim.scene_gen`).
"""
