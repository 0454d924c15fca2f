"""Degradation: the two stacks, their shared draws, the trace's internal arithmetic, and bit-identical training."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, rejections

from helpers import golden, nan_spirals_stop, nan_stops
from pages.degradation import fixtures as fx
from pages.degradation.figures import LABEL, LABEL_RU, _description, _description_ru
from pages.degradation.trace import ARMS, BUDGETS, DEPTHS, RATES, RECORDED, SEEDS, Trace, column
from site_builder.autograd import parameter, tensor
from site_builder.measure import MIN_SEEDS, compare
from site_builder.trace import layout_of

parse = layout_of(Trace).parse
C = fx.Constants()
GOLDEN = golden("degradation")
TRACE = parse(GOLDEN)


# ------------------------------------------------------------------ the stacks
def numpy_block(h: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    return np.maximum(h @ w1, 0.0) @ w2


def unused_norm(h):
    raise AssertionError("the plain and the residual stacks never normalize")


def test_the_stacks_compute_what_the_page_says():
    rng = np.random.default_rng(0)
    h0 = rng.standard_normal((2, 5, 4))
    weights = [(rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 4, 4))) for _ in range(3)]
    blocks = [(tensor(a), tensor(b)) for a, b in weights]
    plain, residual = h0, h0
    for a, b in weights:
        plain = numpy_block(plain, a, b)
        residual = residual + numpy_block(residual, a, b)
    np.testing.assert_allclose(fx.plain_stack(tensor(h0), blocks, unused_norm).data, plain, rtol=1e-13)
    np.testing.assert_allclose(fx.residual_stack(tensor(h0), blocks, unused_norm).data, residual, rtol=1e-13)


def test_the_residual_stacks_input_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    h0 = rng.standard_normal((1, 3, 4))
    weights = [(rng.standard_normal((1, 4, 4)) * 0.5, rng.standard_normal((1, 4, 4)) * 0.5) for _ in range(2)]
    h = parameter(h0, name="h")
    fx.residual_stack(h, [(tensor(a), tensor(b)) for a, b in weights], unused_norm).sum().backward()

    def objective(x: np.ndarray) -> float:
        for a, b in weights:
            x = x + numpy_block(x, a, b)
        return float(x.sum())

    direction = rng.standard_normal(h0.shape)
    eps = 1e-6
    numeric = (objective(h0 + eps * direction) - objective(h0 - eps * direction)) / (2 * eps)
    assert float(np.sum(h.grad * direction)) == pytest.approx(numeric, rel=1e-7)


def test_the_stacks_of_a_seed_start_from_the_same_draws_and_differ_only_where_the_page_says():
    draws = [fx.seed_draws(C, s) for s in SEEDS[:2]]
    plain, residual = fx.build(C, draws, "plain", 8), fx.build(C, draws, "residual", 8)
    scaled = fx.build(C, draws, "scaled-residual", 8)
    scale = 1 / math.sqrt(2 * 8)
    assert fx.branch_scale("scaled-residual", 8) == scale
    assert fx.branch_scale("plain", 8) == fx.branch_scale("residual", 8) == fx.branch_scale("normalized-plain", 8) == 1
    for (p1, p2), (r1, r2), (_s1, s2) in zip(plain.blocks, residual.blocks, scaled.blocks):
        assert p1.shape == (2, C.width, C.width)
        np.testing.assert_array_equal(p1.data, r1.data)
        np.testing.assert_array_equal(p2.data, r2.data)  # the identity path is the only difference
        np.testing.assert_array_equal(r2.data * scale, s2.data)  # the branch scale is the only difference
    np.testing.assert_array_equal(plain.ends.embed_weight.data, residual.ends.embed_weight.data)
    shallow = fx.build(C, draws, "plain", 2)
    np.testing.assert_array_equal(shallow.blocks[1][0].data, plain.blocks[1][0].data)
    assert (
        fx.parameter_count(plain)
        == fx.parameter_count(scaled)
        == 2 * C.width + C.width + 8 * 2 * C.width**2 + C.width * 2 + 2
    )


def test_the_normalized_plain_stack_keeps_its_signal_at_any_depth():
    draws = [fx.seed_draws(C, s) for s in SEEDS[:2]]
    data = C.task.dataset()
    _, top = fx.build(C, draws, "normalized-plain", DEPTHS[-1]).stream(data)
    np.testing.assert_allclose(np.mean(top.data**2, axis=-1), 1.0, rtol=1e-3)  # every row at mean square one


def test_the_seeds_draws_follow_he_and_differ_by_seed():
    a, b = fx.seed_draws(C, 1), fx.seed_draws(C, 2)
    assert len(a.first) == max(DEPTHS) and not np.array_equal(a.first[0], b.first[0])
    first, second = np.concatenate(a.first), np.concatenate(a.second)
    assert np.std(first) == pytest.approx(math.sqrt(1 / C.width), rel=0.1)
    assert np.std(second) == pytest.approx(math.sqrt(2 / C.width), rel=0.1)


# ------------------------------------------------------------------ the trace
def test_the_trace_covers_every_arm_depth_rate_and_step_over_at_least_eight_seeds():
    assert [c.step for c in TRACE.curves] == list(RECORDED) and RECORDED[-1] == TRACE.setup.steps == BUDGETS[-1]
    assert TRACE.setup.seeds == len(SEEDS) >= MIN_SEEDS and TRACE.setup.rates == len(RATES)
    assert [(s.depth, s.arm) for s in TRACE.starts] == [(d, a) for d in DEPTHS for a in ARMS]
    assert [(s.depth, s.arm, s.rate) for s in TRACE.sweeps] == [(d, a, r) for d in DEPTHS for a in ARMS for r in RATES]


def test_each_arm_is_reported_at_the_rate_no_other_rate_beats():
    for depth in DEPTHS:
        for arm in ARMS:
            rows = [s for s in TRACE.sweeps if (s.depth, s.arm) == (depth, arm)]
            assert sum(s.chosen for s in rows) == 1
            chosen = next(s for s in rows if s.chosen)
            assert all(s.versus_chosen != "lower" for s in rows)  # no rate beats the chosen one beyond the spread
            assert getattr(TRACE.curves[-1], column(arm, depth)) == chosen.loss  # the curves follow the chosen rate
            assert [s.versus_chosen for s in rows] == [compare(s.loss, chosen.loss) for s in rows]


def test_the_verdicts_are_the_comparisons_of_the_measured_losses():
    for e in TRACE.effects:
        row = TRACE.curves[RECORDED.index(e.budget)]
        deep, shallow = getattr(row, column(e.arm, DEPTHS[-1])), getattr(row, column(e.arm, DEPTHS[0]))
        assert e.deep == compare(deep, shallow)
    for v in TRACE.versus:
        row = TRACE.curves[RECORDED.index(v.budget)]
        assert v.order == compare(getattr(row, column(v.arm, v.depth)), getattr(row, column("plain", v.depth)))


def test_the_start_losses_are_the_first_curve_point():
    for s in TRACE.starts:
        assert s.loss == getattr(TRACE.curves[0], column(s.arm, s.depth))


def test_what_was_measured_only_the_unnormalized_plain_stack_ends_worse_deeper_and_the_residual_stacks_beat_it():
    """Not a law: what this set-up measured. If a change flips it, the page's words flip with it, and this test
    says so loudly."""
    effects = {(e.arm, e.budget): e.deep for e in TRACE.effects}
    assert effects[("plain", BUDGETS[-1])] == "higher"
    assert {effects[("normalized-plain", b)] for b in BUDGETS} == {"indistinguishable"}
    orders = {(v.depth, v.arm, v.budget): v.order for v in TRACE.versus}
    assert orders[(DEPTHS[-1], "residual", BUDGETS[0])] == "indistinguishable"
    assert orders[(DEPTHS[-1], "residual", BUDGETS[-1])] == "lower"
    assert {orders[(DEPTHS[-1], "scaled-residual", b)] for b in BUDGETS} == {"lower"}


@pytest.mark.parametrize("field", ["eps"])
def test_a_nan_constant_stops_the_page_before_training(field):
    assert field in nan_stops("degradation", **{field: math.nan})


@pytest.mark.parametrize("field", ["turns", "noise", "inner_radius"])
def test_a_nan_in_the_spirals_stops_the_page_before_training(field):
    assert field in nan_spirals_stop("degradation", field)


# ------------------------------------------------------------------ what the charts say to a screen reader
def test_chart_descriptions_follow_the_numbers():
    lowest = min(ARMS, key=lambda arm: getattr(TRACE.curves[-1], column(arm, DEPTHS[-1])).median)
    assert f"the lowest median belongs to the {LABEL[lowest]} stack" in _description(TRACE, DEPTHS[-1])
    swapped = dataclasses.replace(TRACE.curves[-1], plain_8=dataclasses.replace(TRACE.curves[-1].plain_8, median=-1.0))
    flipped = dataclasses.replace(TRACE, curves=(*TRACE.curves[:-1], swapped))
    assert "the lowest median belongs to the plain stack" in _description(flipped, DEPTHS[-1])
    assert f"самая низкая медиана у стека «{LABEL_RU[lowest]}»" in _description_ru(TRACE, DEPTHS[-1])
    assert "самая низкая медиана у стека «обычный»" in _description_ru(flipped, DEPTHS[-1])


# ------------------------------------------------------------------ parsing
G = Golden(GOLDEN)
START = G.number("START depth=2 arm=plain ")
CASES = [
    G.value_case("a loss in scientific notation", START, "branch-scale=1.000000", "branch-scale=1e0", "six decimals"),
    G.value_case("unknown arm", START, "arm=plain", "arm=highway", "one of plain, normalized-plain"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="degradation")
