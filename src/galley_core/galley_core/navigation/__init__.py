"""Navigation: occupancy grids, the Theta* planner, Kitchen-R's differential-drive controller, the base model.

* :mod:`.grid`: :class:`OccupancyGrid`, nav2 map_server files, inflation;
* :mod:`.theta_star`: :class:`ThetaStar`, any-angle paths that keep a clearance from obstacles;
* :mod:`.paths`: :class:`PlanResult` (what ThetaStar returns), waypoint resampling, footprint clearance;
* :mod:`.diff_drive`: :class:`DiffDriveController`, the rule-based path follower of Kitchen-R;
* :mod:`.unicycle`: the unicycle model of the differential-drive base (exact integration, test drives).
"""
