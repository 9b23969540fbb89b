"""Tasks: plans and what happens to them: the plan grammar, the suite, execution, judging, metrics.

* :mod:`.grammar`: the plan steps (:class:`Step`), parsing and validation (:class:`InvalidPlanError`);
* :mod:`.suite`: the instruction suite, its templates and gold plans;
* :mod:`.executor`: running a plan step by step; :mod:`.judging`: whether each step did what it says;
* :mod:`.replanning`: the state of the world after a failure (:class:`PlanContext`) and what remains;
* :mod:`.metrics`: the evaluation metrics.

Reading an instruction into a plan is :mod:`galley_core.language`'s; it imports this package's
grammar, and nothing here imports it (test/test_floors.py holds both directions).
"""
