"""Deep stack: the spec's experiment, its hand-written twin, the gradient check, and the strict trace."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, fixture_error, rejections

from helpers import golden, nan_stops, page
from pages.deep_stack import fixtures as fx
from pages.deep_stack.figures import _gradient_summary
from pages.deep_stack.trace import DEPTHS, PUBLISHED_DEPTHS, Trace
from site_builder.trace import format_real, format_sci, layout_of

parse, render = layout_of(Trace).parse, layout_of(Trace).render
C = fx.Constants()
GOLDEN = golden("deep_stack")
TRACE = parse(GOLDEN)


def test_bank_is_the_spec_recipe_drawn_from_the_global_generator():
    saved = np.random.get_state()
    try:
        np.random.seed(42)
        spec = [np.random.randn(16, 16) * (0.5 / math.sqrt(16)) for _ in range(20)]
        more = [np.random.randn(16, 16) * (0.5 / math.sqrt(16)) for _ in range(80)]
    finally:
        np.random.set_state(saved)
    bank = fx.weight_bank(C)
    assert len(bank) == 100
    assert all(np.array_equal(a.view(np.uint64), b.view(np.uint64)) for a, b in zip(bank, spec + more))


def test_the_fixture_leaves_the_global_generator_alone():
    saved = np.random.get_state()
    try:
        np.random.seed(7)
        fx.run()
        assert np.array_equal(np.random.randn(3), np.random.RandomState(7).randn(3))
    finally:
        np.random.set_state(saved)


def test_input_is_randomstate_zero():
    assert np.array_equal(fx.stack_input(C), np.random.RandomState(0).randn(4, 16))


@pytest.mark.parametrize("depth", [1, 5, 20, 100])
@pytest.mark.parametrize("residual", [False, True])
def test_engine_and_hand_written_backward_agree(depth, residual):
    bank, x0, seed = fx.weight_bank(C), fx.stack_input(C), fx.upstream(C)
    engine = fx.input_gradient_autograd(x0, bank[:depth], seed, residual=residual)
    hand = fx.input_gradient_by_hand(x0, bank[:depth], seed, residual=residual)
    np.testing.assert_allclose(engine, hand, rtol=1e-12, atol=0)


@pytest.mark.parametrize("residual", [False, True])
def test_hand_written_backward_matches_a_directional_finite_difference(residual):
    bank, x0 = fx.weight_bank(C)[:5], fx.stack_input(C)

    def forward(x):
        for w in bank:
            f = np.tanh(x @ w)
            x = x + f if residual else f
        return float(np.sum(x))

    direction = np.random.default_rng(3).standard_normal(x0.shape)
    eps = 1e-6
    numeric = (forward(x0 + eps * direction) - forward(x0 - eps * direction)) / (2 * eps)
    analytic = float(np.sum(fx.input_gradient_by_hand(x0, bank, fx.upstream(C), residual=residual) * direction))
    assert abs(analytic - numeric) <= 1e-7 * max(1.0, abs(analytic))


def test_trace_rows_are_the_norms_as_printed():
    bank, x0, seed = fx.weight_bank(C), fx.stack_input(C), fx.upstream(C)
    for row in TRACE.depths:
        plain = np.linalg.norm(fx.input_gradient_by_hand(x0, bank[: row.depth], seed, residual=False))
        residual = np.linalg.norm(fx.input_gradient_by_hand(x0, bank[: row.depth], seed, residual=True))
        assert format_sci(row.plain_norm) == format_sci(plain) == format_sci(row.plain_norm_by_hand)
        assert format_real(row.residual_norm) == format_real(residual) == format_real(row.residual_norm_by_hand)
        assert format_real(row.survival) == format_real(residual / 8.0)


def test_config_and_the_lessons_bank():
    c = TRACE.config
    assert (c.seed, c.width, c.batch, c.scale, c.input_seed) == (42, 16, 4, 0.5, 0)
    assert (c.published_bank, c.drawn) == (20, max(DEPTHS))
    assert c.upstream_norm == math.sqrt(c.batch * c.width) == 8.0
    # The depths the lesson publishes are exactly those that its bank of weights serves.
    assert [r.depth for r in TRACE.depths if r.depth <= c.published_bank] == list(PUBLISHED_DEPTHS) == [1, 5, 10, 20]


def test_plain_gradient_vanishes_and_residual_does_not():
    plain = [r.plain_norm for r in TRACE.depths]
    assert plain == sorted(plain, reverse=True) and plain[-1] < 1e-20
    assert min(r.survival for r in TRACE.depths) >= 1.0


def test_a_disagreement_between_engine_and_hand_fails_the_build(monkeypatch):
    real = fx.input_gradient_by_hand
    monkeypatch.setattr(fx, "input_gradient_by_hand", lambda *a, **k: real(*a, **k) * (1 + 1e-5))
    assert "disagree" in str(fixture_error(fx.run, "deep-stack"))


# ------------------------------------------------------------------ gradient check
def test_gradient_check_covers_every_coordinate_below_the_bar():
    g = TRACE.gradcheck
    assert (g.seed, g.width, g.rows, g.step, g.bar) == (42, 8, 3, 1e-6, 1e-4)
    assert g.checks == 3 * 8 + 8 * 8 and g.passed and 0 < g.max_relative_error < g.bar


def test_gradient_check_inputs_follow_the_spec():
    record, errors = fx.gradient_check_fixture(C)
    rng = np.random.default_rng(42)
    x = rng.standard_normal((3, 8))
    w = rng.standard_normal((8, 8)) * (0.5 / math.sqrt(8))
    assert fx.block_objective({"x": x, "w": w}) == float(np.sum(x + np.tanh(x @ w)))
    assert record.max_relative_error == max(errors)  # the trace prints it; nothing is rounded before
    assert fx.relative_error(1.0, 1.0) == 0.0 and fx.relative_error(1.0, -1.0) == pytest.approx(1.0)


def test_a_gradient_check_above_the_bar_fails_the_build():
    failing = dataclasses.replace(C, gradcheck_step=1e-1, gradcheck_bar=1e-12)
    assert "bar" in str(fixture_error(lambda: fx.run(failing), "residual-block-gradient-check"))


# ------------------------------------------------------------------ NaN
@pytest.mark.parametrize(
    "field,fixture",
    [("upstream", "deep-stack"), ("scale", "deep-stack"), ("gradcheck_step", "residual-block-gradient-check")],
)
def test_a_nan_input_stops_the_page_with_one_line(field, fixture):
    nan_stops("deep_stack", **{field: math.nan})


# ------------------------------------------------------------------ page-specific parsing
G = Golden(GOLDEN)
CASES = [
    G.value_case("depth out of order", 3, "depth=1 ", "depth=2 ", "expected depth=1"),
    G.value_case("plain norm in fixed notation", 3, "plain-norm=2.778871e+00", "plain-norm=2.778871", "scientific"),
    G.value_case(
        "residual norm in scientific notation",
        3,
        "residual-norm=8.671100",
        "residual-norm=8.671100e+00",
        "six decimals",
    ),
    G.value_case("scientific negative zero", 15, "bar=1.000000e-04", "bar=-0.000000e+00", "negative zero"),
    G.value_case("non-canonical exponent", 15, "bar=1.000000e-04", "bar=1.000000e-004", "canonical"),
    G.value_case("bool", 15, "passed=true", "passed=1", "true or false"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="deep-stack")


def test_facts_carry_the_published_keys(runs):
    facts = runs["deep_stack"].facts
    assert facts["DEPTH[20].residual-norm"] == TRACE.depth(20).residual_norm
    assert facts["DEPTH[100].plain-norm"] == TRACE.depth(100).plain_norm
    assert facts["DERIVED.weight-scale"] == 0.125 and facts["DERIVED.upstream-entries"] == 64
    assert facts["DERIVED.depth-20.orders"] == pytest.approx(
        math.log10(TRACE.depth(20).residual_norm / TRACE.depth(20).plain_norm)
    )


# ------------------------------------------------------------------ what the chart says to a screen reader
def test_deep_stack_summary_follows_the_norms():
    t = parse(GOLDEN)
    assert "stays at or above the upstream norm" in _gradient_summary(t)
    low = dataclasses.replace(t.depths[0], residual_norm=t.config.upstream_norm / 2)
    dipped = dataclasses.replace(t, depths=(low, *t.depths[1:]))
    assert "drops below the upstream norm" in _gradient_summary(dipped)
    rising = tuple(dataclasses.replace(r, plain_norm=float(r.depth)) for r in t.depths)
    assert "does not fall" in _gradient_summary(dataclasses.replace(t, depths=rising))


# ------------------------------------------------------------------ the gradient check's rounding noise
def test_gradient_check_error_is_set_against_the_rounding_noise_of_a_central_difference():
    derived = fx.run().derived
    scale = np.finfo(np.float64).eps / C.gradcheck_step
    assert derived["DERIVED.gradcheck.rounding-scale"] == scale
    assert derived["DERIVED.gradcheck.noise-low"] < scale < derived["DERIVED.gradcheck.noise-high"]
    assert format_real(derived["DERIVED.gradcheck.rounding-multiple"]) == format_real(
        TRACE.gradcheck.max_relative_error / scale
    )


def test_the_lessons_published_error_is_a_declared_literal():
    (lesson,) = [lit for lit in page("deep_stack").literals if lit.id == "lesson-max-error"]
    assert lesson.value == 5.68e-10 and "lesson" in lesson.reason
