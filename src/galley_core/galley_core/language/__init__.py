"""Language: instructions as people write them, read into plans, and the phrasings they are tested on.

Reading (pure Python, shared by every planner backend):

* :mod:`.lexicon`: the words galley knows, by what they do in an instruction;
* :mod:`.asides`: what in a request only addresses the listener, and verbs in any inflection;
* :mod:`.structure`: clauses, and the (object, zone) pairs of a plain relocation;
* :mod:`.relations`: swaps, and one object put next to (or where) another is;
* :mod:`.reading`: words with typos corrected, location references, the canonical text;
* :mod:`.refusal`: why the scene cannot ground an instruction;
* :mod:`.planning`: the planner interface every backend shares (:class:`Planner`,
  :class:`PlanningError`), its prompts and constrained decoding.

Writing the held-out language the reader is tested on (a second phrase grammar, independent of
the suite's templates):

* :mod:`.phrasings`: the ``phrasing`` split and the ``out_of_scope`` set;
* :mod:`.phrase_grammar`: the grammar's kinds and vocabulary; :mod:`.wording`: wording a request;
  :mod:`.typos`: one-edit typos; :mod:`.out_of_scope`: requests the scene cannot ground.

A plan is :mod:`galley_core.tasks`' grammar: this package imports :mod:`galley_core.tasks`
(grammar, suite, replanning), never the reverse (test/test_floors.py).
"""
