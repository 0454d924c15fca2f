"""Pre-norm against post-norm: the layouts, the gradient profile, the trace's verdicts and bit-identical training."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, rejections

from helpers import golden, nan_spirals_stop, nan_stops
from pages.prenorm import fixtures as fx
from pages.prenorm.figures import WORDS, _loss_description, _profile_description, tilt
from pages.prenorm.trace import (
    ARMS,
    BUDGETS,
    PAIRS,
    PROFILE_DEPTHS,
    PROFILE_SEEDS,
    RATES,
    RECORDED,
    SEEDS,
    Trace,
)
from site_builder.autograd import parameter, tensor
from site_builder.measure import MIN_SEEDS, compare
from site_builder.trace import layout_of
from site_builder.trace.numbers import Measurement

parse = layout_of(Trace).parse
C = fx.Constants()
GOLDEN = golden("prenorm")
TRACE = parse(GOLDEN)


def numpy_norm(h: np.ndarray, eps: float) -> np.ndarray:
    centred = h - h.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps)


def numpy_stack(h: np.ndarray, weights, layout: str, eps: float) -> np.ndarray:
    for w1, w2 in weights:
        if layout == "pre":
            h = h + np.maximum(numpy_norm(h, eps) @ w1, 0.0) @ w2
        else:
            h = numpy_norm(h + np.maximum(h @ w1, 0.0) @ w2, eps)
    return numpy_norm(h, eps) if layout == "pre" else h


def small_case(seed: int = 0):
    rng = np.random.default_rng(seed)
    h0 = rng.standard_normal((2, 5, 4))
    weights = [(rng.standard_normal((2, 4, 4)) * 0.5, rng.standard_normal((2, 4, 4)) * 0.5) for _ in range(3)]
    # ends=None: these tests run only the stacks between the embedding and the read-out, which never read the ends.
    models = fx.Models(ends=None, blocks=[(tensor(a), tensor(b)) for a, b in weights], layout="pre", eps=C.eps)  # type: ignore[arg-type]  # see above
    return h0, weights, models


@pytest.mark.parametrize("layout", ["pre", "post"])
def test_the_layouts_compute_what_the_page_says(layout):
    h0, weights, models = small_case()
    out = fx.STACKS[layout](tensor(h0), models.blocks, models.norm)
    np.testing.assert_allclose(out.data, numpy_stack(h0, weights, layout, C.eps), rtol=1e-12)


@pytest.mark.parametrize("layout", ["pre", "post"])
def test_the_layouts_input_gradient_matches_finite_differences(layout):
    h0, weights, models = small_case(1)
    h = parameter(h0, name="h")
    probe = np.random.default_rng(2).standard_normal(h0.shape)
    (fx.STACKS[layout](h, models.blocks, models.norm) * probe).sum().backward()
    direction = np.random.default_rng(3).standard_normal(h0.shape)
    eps = 1e-6

    def objective(x):
        return float(np.sum(numpy_stack(x, weights, layout, C.eps) * probe))

    numeric = (objective(h0 + eps * direction) - objective(h0 - eps * direction)) / (2 * eps)
    assert float(np.sum(h.grad * direction)) == pytest.approx(numeric, rel=1e-6)


def test_both_layouts_of_a_seed_start_from_the_same_draws():
    draws = [fx.seed_draws(C, s) for s in SEEDS]
    pre, post = fx.build(C, draws, "pre", 6), fx.build(C, draws, "post", 6)
    for (a1, a2), (b1, b2) in zip(pre.blocks, post.blocks):
        np.testing.assert_array_equal(a1.data, b1.data)
        np.testing.assert_array_equal(a2.data, b2.data)
    assert np.std(np.concatenate(draws[0].second)) == pytest.approx(math.sqrt(2 / C.width), rel=0.05)


def test_the_arms_are_the_two_layouts_and_only_the_warm_up_arm_warms_up():
    assert [fx.LAYOUT_OF[a] for a in ARMS] == ["pre", "post", "post"]
    assert [fx.WARMUP_OF[a] > 0 for a in ARMS] == [False, False, True]
    assert TRACE.setup.warmup == fx.WARMUP_OF["post-norm-warm-up"] < TRACE.setup.steps


def test_the_profile_is_each_models_gradient_norm_and_leaves_no_gradient_behind():
    data = C.task.dataset()
    models = fx.build(C, [fx.seed_draws(C, s) for s in (1, 2)], "post", 3)
    blocks, inputs = fx.gradient_profile(models, data)
    assert blocks.shape == (3, 2) and inputs.shape == (2,)
    assert all(p.grad is None for p in models.parameters())
    # Model 1 alone gives the same numbers: the models side by side do not mix.
    alone = fx.build(C, [fx.seed_draws(C, 2)], "post", 3)
    blocks_alone, inputs_alone = fx.gradient_profile(alone, data)
    np.testing.assert_allclose(blocks[:, 1], blocks_alone[:, 0], rtol=1e-12)
    np.testing.assert_allclose(inputs[1], inputs_alone[0], rtol=1e-12)


# ------------------------------------------------------------------ the trace
def test_the_trace_covers_every_block_depth_arm_rate_and_step_over_at_least_eight_seeds():
    assert [(p.depth, p.block) for p in TRACE.profiles] == [(d, b) for d in PROFILE_DEPTHS for b in range(1, d + 1)]
    assert [s.depth for s in TRACE.starts] == list(PROFILE_DEPTHS)
    assert [c.step for c in TRACE.curves] == list(RECORDED) and RECORDED[-1] == TRACE.setup.steps == BUDGETS[-1]
    assert [(s.arm, s.rate) for s in TRACE.sweeps] == [(a, r) for a in ARMS for r in RATES]
    assert [(v.arm, v.other, v.budget) for v in TRACE.versus] == [(a, o, b) for a, o in PAIRS for b in BUDGETS]
    s = TRACE.setup
    assert s.seeds == len(SEEDS) >= MIN_SEEDS and s.profile_seeds == len(PROFILE_SEEDS) >= MIN_SEEDS
    assert s.rates == len(RATES) and s.budget == BUDGETS[0] and s.fit_bar == pytest.approx(math.log(2) / 10, abs=1e-6)


def test_each_arm_is_reported_at_the_rate_no_other_rate_beats():
    for arm in ARMS:
        rows = [s for s in TRACE.sweeps if s.arm == arm]
        assert sum(s.chosen for s in rows) == 1
        chosen = next(s for s in rows if s.chosen)
        assert getattr(TRACE.curves[-1], arm.replace("-", "_")) == chosen.loss
        assert next(a for a in TRACE.arms if a.arm == arm).rate == chosen.rate
        assert [s.worse for s in rows] == [compare(s.loss, chosen.loss) == "higher" for s in rows]
        assert all(compare(s.loss, chosen.loss) != "lower" for s in rows)  # no rate beats the chosen one


def test_the_verdicts_are_the_comparisons_of_the_measured_results():
    bar = TRACE.setup.fit_bar
    line = Measurement(bar, bar, bar, 0.0, 0.0)

    def loss(arm: str, step: int) -> Measurement:
        return getattr(TRACE.curves[RECORDED.index(step)], arm.replace("-", "_"))

    for v in TRACE.versus:
        assert v.differs == (compare(loss(v.arm, v.budget), loss(v.other, v.budget)) != "indistinguishable")
    for a in TRACE.arms:
        assert a.fit_early == (compare(loss(a.arm, BUDGETS[0]), line) == "lower")
        assert a.fit == (compare(loss(a.arm, BUDGETS[-1]), line) == "lower")
        assert a.falling == (compare(loss(a.arm, BUDGETS[-1]), loss(a.arm, BUDGETS[0])) == "lower")
    one = Measurement(1.0, 1.0, 1.0, 0.0, 0.0)
    for s in TRACE.starts:
        orders = (compare(s.pre_growth, one), compare(s.post_growth, one), compare(s.input_ratio, one))
        assert (s.pre_tilted, s.post_tilted, s.input_differs) == tuple(o != "indistinguishable" for o in orders)


def test_what_was_measured_pre_norms_profile_falls_toward_the_output_and_training_does_not_separate_the_arms():
    """Not a law: what this set-up measured. A change that flips it flips the page's words, and this test says so."""
    assert all(s.pre_tilted and s.pre_growth.median < 1 for s in TRACE.starts)
    assert not any(v.differs for v in TRACE.versus)


@pytest.mark.parametrize("field", ["eps", "fit_divisor"])
def test_a_nan_constant_stops_the_page_before_training(field):
    assert field in nan_stops("prenorm", **{field: math.nan})


def test_a_nan_in_the_spirals_stops_the_page():
    assert "turns" in nan_spirals_stop("prenorm", "turns")


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_chart_descriptions_follow_the_numbers(lang):
    pre, post, lowest = {
        "en": (
            "pre-norm stack the last block's gradient is ",
            "post-norm stack the last block's gradient is ",
            "the post-norm arm",
        ),
        "ru": (
            "стеке pre-norm градиент последнего блока ",
            "стеке post-norm градиент последнего блока ",
            "варианта post-norm",
        ),
    }[lang]
    trend = WORDS[lang]["trend"]
    deep = TRACE.starts[-1]
    said = _profile_description(TRACE, deep.depth, lang)
    pre_way, post_way = tilt(deep.pre_tilted, deep.pre_growth.median), tilt(deep.post_tilted, deep.post_growth.median)
    assert pre + trend[pre_way] in said and post + trend[post_way] in said
    flipped = dataclasses.replace(
        deep,
        pre_tilted=True,
        pre_growth=dataclasses.replace(deep.pre_growth, median=2.0),
        post_tilted=True,
        post_growth=dataclasses.replace(deep.post_growth, median=0.5),
    )
    said = _profile_description(dataclasses.replace(TRACE, starts=(*TRACE.starts[:-1], flipped)), deep.depth, lang)
    assert pre + trend["higher"] in said and post + trend["lower"] in said
    swapped = dataclasses.replace(
        TRACE.curves[-1], post_norm=dataclasses.replace(TRACE.curves[-1].post_norm, median=-1.0)
    )
    assert lowest in _loss_description(dataclasses.replace(TRACE, curves=(*TRACE.curves[:-1], swapped)), lang)


G = Golden(GOLDEN)
CASES = [
    G.value_case(
        "block out of order", G.number("PROFILE depth=6 block=1 "), "block=1 ", "block=2 ", "expected block=1"
    ),
    G.value_case("a depth that is not profiled", G.number("START depth=6"), "depth=6", "depth=7", "expected depth=6"),
    G.value_case("unknown arm", G.number("ARM arm=pre-norm"), "arm=pre-norm", "arm=highway", "one of pre-norm"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="prenorm")
