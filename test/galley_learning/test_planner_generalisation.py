"""galley's default planner on held-out phrasings and out-of-scope requests (issue 21), and the figures.

The phrasing split and out-of-scope set (config/suites/kitchen_phrasing_v1.yaml) come from a second
phrase grammar written apart from the suite's templates and from galley's training data; this test
fails when the default planner's accuracy on them drops below the bars below.
"""

from __future__ import annotations

import pytest

from galley_core.language.phrase_grammar import OUT_OF_SCOPE_KINDS, PHRASING_KINDS
from galley_core.tasks.suite import SuiteEntry, load_suite
from galley_learning.planners import make_planner
from galley_learning.planners.evaluate import (
    Outcome,
    format_comparison,
    generalisation_figures,
    plan_entries,
    spread,
)

# Bars for the default planner (``galley``), set from what it measured on this split, which was
# written apart from its training language and from the reading rules, and seen by nobody who
# wrote them: with the v2 weights and the reading of issue 21's third round (swaps and "next to"
# read and resolved from the image: galley_core.language.relations) phrasing EM 0.9786, whole-plan
# accuracy 0.975, out-of-scope refused 1.000 (84 of 84), in-scope refused 3 of this test's 400
# (0.0094 of phrasing alone: 3 of 320). Second round: 0.8955, 0.878, 1.000, 23 of 400; first
# round: 0.847, 0.819, 1.000, 0.075; the v1 planner 0.415, 0.297, 0.333, 0.2125. Issue 21 asks
# for >= 0.97, >= 0.95, >= 0.95 and <= 0.02 (docs/results.md, "The task planner").
MIN_PHRASING_EM = 0.97
MIN_PHRASING_ACCURACY = 0.965
MIN_OUT_OF_SCOPE_REFUSAL = 0.97
MAX_IN_SCOPE_FALSE_REFUSAL = 0.015  # this sample: 3 of 400 (0.0075)
#: Instructions planned, taken evenly (so every kind keeps its share): all 320 of the phrasing split,
#: 40 of each of the suite's test and unseen splits (for the false refusal rate), all 84 of the
#: out-of-scope set. About 5 s on one thread.
PHRASING_SAMPLE = 320
SUITE_SAMPLE = 40


@pytest.fixture
def one_torch_thread():
    """Plan on one thread: on a busy machine torch's intra-op threads wait on each other (20x slower)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def phrasing_suite(request):
    return load_suite(request.config.rootpath / "config" / "suites" / "kitchen_phrasing_v1.yaml")[1]


def test_the_default_planner_clears_the_bars_on_held_out_phrasings_and_refuses_the_out_of_scope(
    kitchen, suite, phrasing_suite, renderer, one_torch_thread
):
    planner = make_planner("galley")
    entries = spread([e for e in suite if e.split == "test"], SUITE_SAMPLE)
    entries += spread([e for e in suite if e.split == "unseen"], SUITE_SAMPLE)
    entries += spread([e for e in phrasing_suite if e.split == "phrasing"], PHRASING_SAMPLE)
    entries += [e for e in phrasing_suite if e.split == "out_of_scope"]
    figures = generalisation_figures(plan_entries(planner, kitchen, entries, renderer=renderer))
    phrasing = figures["splits"]["phrasing"]
    assert phrasing["count"] == PHRASING_SAMPLE and figures["count_out_of_scope"] == 84
    print(format_comparison({"galley": figures}))
    assert phrasing["em"] >= MIN_PHRASING_EM
    assert phrasing["accuracy"] >= MIN_PHRASING_ACCURACY
    assert 1.0 - figures["false_acceptance"] >= MIN_OUT_OF_SCOPE_REFUSAL
    assert figures["false_refusal_in_scope"] <= MAX_IN_SCOPE_FALSE_REFUSAL
    assert set(figures["phrasing_by_kind"]) == set(PHRASING_KINDS)
    assert set(figures["false_acceptance_by_kind"]) == set(OUT_OF_SCOPE_KINDS)


def _entry(split: str, template: str, plan: tuple[str, ...]) -> SuiteEntry:
    return SuiteEntry(id="x", template=template, split=split, instruction="i", seed=0, plan=plan)


def test_refusals_count_as_false_refusals_in_scope_and_plans_as_false_acceptances_out_of_scope():
    gold = ("move to the red zone", "pick the cup", "move to the blue zone", "place the cup")
    half = (*gold[:2], "move to the green zone", "place the cup")
    outcomes = [
        Outcome(_entry("phrasing", "phrasing/terse/one", gold), gold),
        Outcome(_entry("phrasing", "phrasing/terse/one", gold), half),
        Outcome(_entry("phrasing", "phrasing/typo/one", gold), None, "unknown_name", "no object 'cpu'"),
        Outcome(_entry("test", "move_1", gold), gold),
        Outcome(_entry("out_of_scope", "out_of_scope/question", ()), None, "model", "not a request"),
        Outcome(_entry("out_of_scope", "out_of_scope/question", ()), gold),
        Outcome(_entry("out_of_scope", "out_of_scope/nonsense", ()), gold),
    ]
    figures = generalisation_figures(outcomes)
    assert figures["splits"]["phrasing"] == {
        "count": 3,
        "em": 0.5833,  # Kitchen-R's EM: (1 + 3/4 + 0) / 3
        "accuracy": 0.3333,
        "false_refusal": 0.3333,
    }
    assert figures["phrasing_by_kind"]["terse"] == {
        "count": 2,
        "em": 0.875,
        "accuracy": 0.5,
        "false_refusal": 0.0,
    }
    assert figures["phrasing_by_kind"]["typo"]["em"] == 0.0
    assert figures["false_refusal_in_scope"] == 0.25
    assert figures["false_acceptance"] == 0.6667
    assert figures["false_acceptance_by_kind"] == {"question": 0.5, "nonsense": 1.0}
    assert figures["refusal_kinds"] == {"phrasing": {"unknown_name": 1}, "out_of_scope": {"model": 1}}
    table = format_comparison({"galley": figures, "transformers": "unavailable: no model_path"})
    assert "transformers    skipped: unavailable: no model_path" in table
    assert "0.875 / 0.500 (2)" in table  # EM / whole-plan accuracy of the terse kind


def test_eval_planner_reports_every_split_and_says_why_a_backend_is_skipped(capsys, one_torch_thread):
    from galley_cli.eval_planner import _backend, run_planner_eval
    from galley_core.language.planning import PlanningError

    figures = run_planner_eval("galley", limit=8, progress=lambda _m: None)
    assert {"em_test", "em_unseen", "em_phrasing", "false_acceptance", "false_refusal_in_scope"} <= set(
        figures
    )
    assert figures["count_phrasing"] == 8 and figures["count_out_of_scope"] == 8
    out = capsys.readouterr().out
    assert "Table II style" in out and "False refusal per in-scope split" in out
    with pytest.raises(PlanningError) as err, _backend("transformers", None, ""):
        pass
    assert err.value.kind == "unavailable" and "model_path" in err.value.reason


#: Everyday requests (galley_learning/planners/everyday.py, the dev set written apart from the
#: training grammar): 120 on episodes the dev runs never drew, every style and kind. On 600 dev
#: requests (bench/planner_phrasing.py) the planner got 0.995 of the plans right and refused 1.
EVERYDAY_SAMPLE = 120
MIN_EVERYDAY_ACCURACY = 0.95
MAX_EVERYDAY_REFUSED = 2


def test_everyday_requests_are_planned_and_everyday_out_of_scope_requests_refused(
    kitchen, renderer, one_torch_thread
):
    from galley_core.language.planning import PlanningError
    from galley_learning.planners.everyday import EVERYDAY_OUT_OF_SCOPE, STYLES, everyday_set

    entries = everyday_set(kitchen, [40_000_000 + i for i in range(EVERYDAY_SAMPLE)], seed=11)
    assert {e.template.split("/")[0] for e in entries} == set(STYLES)
    outcomes = plan_entries(make_planner("galley"), kitchen, entries, renderer=renderer)
    refused = [o for o in outcomes if o.refused]
    right = [o for o in outcomes if o.steps == o.entry.plan]
    assert len(refused) <= MAX_EVERYDAY_REFUSED, [o.entry.instruction for o in refused]
    assert len(right) / len(outcomes) >= MIN_EVERYDAY_ACCURACY
    planner, image = make_planner("galley"), renderer.render(40_000_000)
    for kind, texts in EVERYDAY_OUT_OF_SCOPE.items():
        for text in texts:
            with pytest.raises(PlanningError):
                planner.plan(text, image, kitchen)
                pytest.fail(f"{kind}: {text!r} was planned")


#: Swaps and "next to" requests in everyday wording (galley_learning/planners/everyday_relations.py,
#: dev data written apart from the training grammar and the held-out split): 60 on episodes the dev
#: runs never drew. On 480 fresh dev requests (other seeds than the 240 the rules were written on)
#: the planner got 479 right and refused 1.
RELATIONS_SAMPLE = 60
MIN_RELATIONS_ACCURACY = 0.95


def test_everyday_swaps_and_next_to_requests_are_planned(kitchen, renderer, one_torch_thread):
    from galley_learning.planners.everyday_relations import KINDS, STYLES, relations_set

    entries = relations_set(kitchen, [41_000_000 + i for i in range(RELATIONS_SAMPLE)], seed=17)
    assert {tuple(e.template.split("/")) for e in entries} == {(s, k) for s in STYLES for k in KINDS}
    outcomes = plan_entries(make_planner("galley"), kitchen, entries, renderer=renderer)
    right = [o for o in outcomes if o.steps == o.entry.plan]
    assert len(right) / len(outcomes) >= MIN_RELATIONS_ACCURACY, [
        o.entry.instruction for o in outcomes if o.steps != o.entry.plan
    ]
