"""Initialization schemes: the factors, the stack, what is measured at initialization, and bit-identical training."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, rejections

from helpers import golden, nan_spirals_stop, nan_stops
from pages.init_schemes import fixtures as fx
from pages.init_schemes.figures import (
    _curves_description,
    _growth_description,
    chart_facts,
    charts,
    hidden_under_zero_last,
)
from pages.init_schemes.trace import (
    BUDGETS,
    DEPTHS,
    INIT_SEEDS,
    RATES,
    RECORDED,
    SCHEMES,
    SEEDS,
    TRAIN_DEPTH,
    Trace,
    column,
)
from site_builder.autograd import tensor
from site_builder.measure import MIN_SEEDS, compare
from site_builder.render.charts import ChartError
from site_builder.trace import layout_of

parse = layout_of(Trace).parse
C = fx.Constants()
GOLDEN = golden("init_schemes")
TRACE = parse(GOLDEN)


def test_the_factors_follow_each_schemes_rule():
    assert fx.factors("he", 32) == (1.0, 1.0) and fx.factors("rezero", 32) == (1.0, 1.0)
    assert fx.factors("zero-last", 32) == (1.0, 0.0)
    assert fx.factors("fixup", 32) == (32**-0.5, 0.0)  # m = 2 layers: L^(-1/(2m-2)) = L^(-1/2)
    assert fx.factors("scaled-last", 32) == (1.0, 1 / math.sqrt(64))
    with pytest.raises(ValueError, match="unknown scheme 'xavier'"):
        fx.factors("xavier", 8)


def test_the_stack_with_and_without_gates():
    rng = np.random.default_rng(0)
    h0 = rng.standard_normal((2, 3, 4))
    w = [(rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 4, 4))) for _ in range(2)]
    blocks = [(tensor(a), tensor(b)) for a, b in w]
    gates = [tensor(np.array([0.5, -1.0]).reshape(2, 1, 1)) for _ in w]
    plain_gate = h0
    gated = h0
    for a, b in w:
        plain_gate = plain_gate + np.maximum(plain_gate @ a, 0) @ b
        gated = gated + np.array([0.5, -1.0]).reshape(2, 1, 1) * (np.maximum(gated @ a, 0) @ b)
    np.testing.assert_allclose(fx.stack(tensor(h0), blocks, None).data, plain_gate, rtol=1e-13)
    np.testing.assert_allclose(fx.stack(tensor(h0), blocks, gates).data, gated, rtol=1e-13)


def test_rezeros_gate_gets_a_gradient_at_zero_and_the_branch_weights_do_not():
    draws = [fx.seed_draws(C, 1)]
    models = fx.build(draws, "rezero", 3)
    models.losses(C.task.dataset()).sum().backward()
    assert all(np.any(g.grad != 0) for g in models.gates)  # dL/dalpha = <upstream, F(h)>, not zero
    assert all(not np.any(a.grad) and not np.any(b.grad) for a, b in models.blocks)


@pytest.mark.parametrize("scheme", ["zero-last", "rezero", "fixup"])
def test_the_schemes_that_start_at_the_identity_give_one_both_ways(scheme):
    models = fx.build([fx.seed_draws(C, s) for s in (1, 2)], scheme, 8)
    forward, backward, identity = fx.growth_at_init(C, models, C.task.dataset())
    assert identity and np.all(forward == 1.0) and np.all(backward == 1.0)


def test_he_initialization_grows_by_about_the_square_root_of_two_per_block():
    models = fx.build([fx.seed_draws(C, s) for s in INIT_SEEDS], "he", 32)
    forward, backward, identity = fx.growth_at_init(C, models, C.task.dataset())
    assert not identity
    per_block = fx.geometric_mean(forward) ** (1 / 32)
    assert 1.2 < per_block < math.sqrt(2) * 1.05


def test_all_schemes_start_from_the_same_draws():
    draws = [fx.seed_draws(C, 1)]
    he, scaled = fx.build(draws, "he", 8), fx.build(draws, "scaled-last", 8)
    for (a1, a2), (b1, b2) in zip(he.blocks, scaled.blocks):
        np.testing.assert_array_equal(a1.data, b1.data)
        np.testing.assert_array_equal(a2.data / 4.0, b2.data)


# ------------------------------------------------------------------ the trace
def test_the_trace_covers_every_scheme_depth_rate_step_and_budget_over_at_least_eight_seeds():
    assert [(s.scheme, s.depth) for s in TRACE.starts] == [(s, d) for s in SCHEMES for d in DEPTHS]
    assert [(s.scheme, s.rate) for s in TRACE.sweeps] == [(s, r) for s in SCHEMES for r in RATES]
    assert [c.step for c in TRACE.curves] == list(RECORDED) and RECORDED[-1] == TRACE.setup.steps == BUDGETS[-1]
    assert TRACE.setup.seeds == len(SEEDS) >= MIN_SEEDS and TRACE.setup.rates == len(RATES)
    assert TRACE.setup.train_depth == TRAIN_DEPTH and TRACE.setup.init_seeds == len(INIT_SEEDS)
    for s in TRACE.starts:
        assert (s.first_factor, s.second_factor) == pytest.approx(fx.factors(s.scheme, s.depth), abs=5e-7)


def test_each_scheme_is_reported_at_the_rate_no_other_rate_beats():
    for scheme in SCHEMES:
        rows = [s for s in TRACE.sweeps if s.scheme == scheme]
        assert sum(s.chosen for s in rows) == 1
        chosen = next(s for s in rows if s.chosen)
        assert all(s.versus_chosen != "lower" for s in rows)
        assert getattr(TRACE.curves[-1], column(scheme)) == chosen.loss  # the curves follow the chosen rate
        assert [s.versus_chosen for s in rows] == [compare(s.loss, chosen.loss) for s in rows]


def test_the_verdicts_are_the_comparisons_of_the_measured_losses():
    for budget in BUDGETS:
        row = TRACE.curves[RECORDED.index(budget)]
        ranks = [r for r in TRACE.ranks if r.budget == budget]
        best = min(SCHEMES, key=lambda s: getattr(row, column(s)).median)
        for r in ranks:
            expected = (
                "lowest" if r.scheme == best else compare(getattr(row, column(r.scheme)), getattr(row, column(best)))
            )
            assert r.standing == expected
    for v in TRACE.versus_he:
        row = TRACE.curves[RECORDED.index(v.budget)]
        assert v.order == compare(getattr(row, column(v.scheme)), row.he)


def test_what_was_measured():
    """Not a law: what this set-up measured; a change that flips it flips the page's words, and this test says so."""
    rows = {(s.scheme, s.depth): s for s in TRACE.starts}
    assert rows["he", 128].forward > 1e15 and rows["he", 128].backward > 1e15
    assert all(rows["scaled-last", d].forward < 1.5 for d in DEPTHS)
    assert {v.order for v in TRACE.versus_he} == {"indistinguishable"}
    assert {r.standing for r in TRACE.ranks} == {"lowest", "indistinguishable"}


def test_the_growth_charts_refuse_to_hide_a_scheme_whose_values_differ():
    assert hidden_under_zero_last(TRACE) == ["rezero", "fixup"]
    moved = tuple(dataclasses.replace(s, forward=2.0) if s.scheme == "fixup" else s for s in TRACE.starts)
    t = dataclasses.replace(TRACE, starts=moved)
    facts = {
        **{
            f"START[{s.scheme},{s.depth}].{f}": getattr(s, f.replace("-", "_"))
            for s in t.starts
            for f in ("depth", "forward", "backward")
        },
        **chart_facts(t),
    }
    with pytest.raises(ChartError, match="under zero-last's line"):
        charts(t, facts)


def test_chart_descriptions_follow_the_numbers():
    assert "ReZero has exactly the same values" in _growth_description(TRACE, "forward")
    assert "The line of He initialization rises with depth" in _growth_description(TRACE, "backward")
    assert "у схемы ReZero в точности те же значения" in _growth_description(TRACE, "forward", "ru")
    lowest = min(("he", "scaled-last", "zero-last"), key=lambda s: getattr(TRACE.curves[-1], column(s)).median)
    names = {"he": "He initialization", "scaled-last": "scaled last layer", "zero-last": "zero last layer"}
    assert f"lowest median of these three belongs to {names[lowest]}" in _curves_description(TRACE, "far")


def test_a_nan_constant_stops_the_page_before_training():
    assert "width" in nan_stops("init_schemes", width=math.nan)
    assert "noise" in nan_spirals_stop("init_schemes", "noise")


G = Golden(GOLDEN)
CASES = [
    G.value_case("unknown scheme", G.number("START"), "scheme=he", "scheme=xavier", "one of he, zero-last"),
    G.value_case(
        "growth in fixed notation", G.number("START"), "forward=1.836271e+01", "forward=18.362710", "scientific"
    ),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="init-schemes")
