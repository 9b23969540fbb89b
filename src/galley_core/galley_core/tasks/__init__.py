"""Tasks: the plan grammar, instructions and how they are read, planning, execution and metrics.

* :mod:`.grammar`: the plan steps (:class:`Step`), parsing and validation (:class:`InvalidPlanError`);
* :mod:`.suite`: the instruction suite, its templates and gold plans;
* :mod:`.phrasings`: the held-out ``phrasing`` split and the ``out_of_scope`` set, from a second
  phrase grammar (:mod:`.phrase_grammar`: kinds and vocabulary; :mod:`.wording`: wording a request;
  :mod:`.typos`; :mod:`.out_of_scope`);
* :mod:`.lexicon`, :mod:`.language`, :mod:`.refusal`: the words galley knows, reading an instruction
  as people write it, and refusing what the scene cannot ground;
* :mod:`.planning`: the planner interface every backend shares (:class:`PlanningError`);
* :mod:`.executor`: running a plan step by step; :mod:`.judging`: whether each step did what it says;
* :mod:`.metrics`: the evaluation metrics.
"""
