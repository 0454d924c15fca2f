"""Identity at initialization: zero-initialized blocks, He-initialized blocks, ReZero's gate."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, fixture_error, rejections

from helpers import golden, nan_stops
from pages.identity_init import fixtures as fx
from pages.identity_init.figures import _deviation_description
from pages.identity_init.trace import DEPTHS, Trace
from site_builder.trace import format_real, format_sci, layout_of

parse, render = layout_of(Trace).parse, layout_of(Trace).render
C = fx.Constants()
GOLDEN = golden("identity_init")
TRACE = parse(GOLDEN)
D = fx.draws(C)


def relu(a):
    return np.maximum(a, 0.0)


def numpy_stack(x, first, second):
    """The twin: h = h + relu(h @ W1) @ W2, stream after each block."""
    out = []
    for w1, w2 in zip(first, second):
        x = x + relu(x @ w1) @ w2
        out.append(x)
    return out


def test_draws_follow_the_seed_in_order():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 128))
    w1 = rng.standard_normal((128, 128)) * math.sqrt(2.0 / 128)
    w2 = rng.standard_normal((128, 128)) * math.sqrt(2.0 / 128)
    assert np.array_equal(D.x, x) and np.array_equal(D.first[0], w1) and np.array_equal(D.second[0], w2)
    assert len(D.first) == len(D.second) == max(DEPTHS)
    assert TRACE.config.he_std == 0.125 == math.sqrt(2.0 / 128)


def test_zero_initialized_stack_is_the_identity_bit_for_bit():
    zero = [np.zeros_like(w) for w in D.second]
    for out in numpy_stack(D.x, D.first, zero):
        assert np.array_equal(out, D.x)
    assert all(r.zero_init_deviation == 0.0 for r in TRACE.depths)


def test_he_deviation_matches_the_numpy_twin_and_grows():
    twin = numpy_stack(D.x, D.first, D.second)
    x_norm = np.linalg.norm(D.x)
    for row in TRACE.depths:
        deviation = np.linalg.norm(twin[row.depth - 1] - D.x)
        assert format_sci(row.he_deviation) == format_sci(deviation)
        assert format_sci(row.he_relative) == format_sci(deviation / x_norm)
    growth = [r.he_deviation for r in TRACE.depths]
    assert growth == sorted(growth) and growth[0] > 0


def test_zero_init_gradient_reaches_the_zero_layers_only():
    g = TRACE.zero_init_gradient
    assert g.depth == max(DEPTHS) and g.input_gradient_exact and g.first_layer_gradient_norm == 0.0
    # Twin: the stream stays x, so each second layer's gradient is relu(x @ W1)^T ybar.
    ybar = np.full((1, 128), C.upstream)
    second = math.sqrt(sum(float(np.sum((relu(D.x @ w1).T @ ybar) ** 2)) for w1 in D.first))
    assert format_real(g.second_layer_gradient_norm) == format_real(second) and second > 0


def test_rezero_gate_is_identity_with_a_live_alpha_gradient():
    r = TRACE.rezero
    f = relu(D.x @ D.first[0]) @ D.second[0]
    assert r.alpha == 0.0 and r.deviation == 0.0 and r.identity_exact
    assert format_sci(r.branch_output_norm) == format_sci(np.linalg.norm(f))
    assert format_real(r.alpha_gradient) == format_real(np.sum(np.full((1, 128), C.upstream) * f))
    assert r.alpha_gradient == r.alpha_gradient_by_hand != 0.0
    assert r.branch_gradient_norm == 0.0


def test_a_nonzero_gate_changes_the_trace():
    moved = fx.run(dataclasses.replace(C, alpha=0.5)).trace.rezero
    assert not moved.identity_exact and moved.deviation > 0 and moved.branch_gradient_norm > 0


def test_a_disagreeing_alpha_gradient_fails_the_build(monkeypatch):
    real = np.sum
    monkeypatch.setattr(fx.np, "sum", lambda a, *k, **kw: real(a, *k, **kw) + 1.0)
    fixture_error(lambda: fx.rezero_fixture(C, D), "rezero")


@pytest.mark.parametrize(
    "field,fixture", [("alpha", "rezero"), ("he_gain", "he-init"), ("upstream", "zero-init-gradient")]
)
def test_a_nan_input_stops_the_page_with_one_line(field, fixture):
    nan_stops("identity_init", **{field: math.nan})


def test_nan_weights_fail_in_the_stack_fixtures():
    bad = dataclasses.replace(D, first=(np.full((128, 128), math.nan),) + D.first[1:])
    fixture_error(lambda: fx.depth_rows(C, bad), "zero-init")


G = Golden(GOLDEN)
HE_DEVIATION = G.lines[2].split(" ")[3]  # he-deviation=... on the first DEPTH line
CASES = [
    G.value_case("depth out of order", 4, "depth=2 ", "depth=3 ", "expected depth=2"),
    G.value_case("gradient depth", 9, "depth=32 ", "depth=16 ", "expected depth=32"),
    G.value_case("he deviation in fixed notation", 3, HE_DEVIATION, "he-deviation=15.467214", "scientific"),
    G.value_case("bool", 10, "identity-exact=true", "identity-exact=True", "true or false"),
    G.value_case("negative zero", 2, "he-std=0.125000", "he-std=-0.000000", "negative zero"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="identity-init")


# ------------------------------------------------------------------ what the chart says to a screen reader
def test_identity_init_description_follows_the_deviations():
    t = parse(GOLDEN)
    text = _deviation_description(t)
    assert "growing with depth" in text and "exactly zero at every depth" in text
    inexact = tuple(dataclasses.replace(r, zero_init_deviation=1.0) for r in t.depths)
    assert "not zero at every depth" in _deviation_description(dataclasses.replace(t, depths=inexact))
    flat = tuple(dataclasses.replace(r, he_deviation=1.0) for r in t.depths)
    assert "not growing" in _deviation_description(dataclasses.replace(t, depths=flat))


# ------------------------------------------------------------------ what He's variance rule predicts
def test_the_page_compares_the_branch_and_the_stream_with_he_s_prediction():
    derived = fx.run().derived
    assert derived["DERIVED.he-branch-prediction"] == math.sqrt(C.he_gain)
    assert derived["DERIVED.he-stream-factor"] == math.sqrt(1.0 + C.he_gain)
    # One block's output against its input: the first He deviation is ||F(x)||.
    assert format_sci(TRACE.rezero.branch_output_norm) == format_sci(TRACE.depths[0].he_deviation)
    assert derived["DERIVED.he-branch-as-predicted"] and derived["DERIVED.he-growth-as-predicted"]
    assert fx.close_to(1.45, math.sqrt(2.0), 0.1) and not fx.close_to(1.6, math.sqrt(2.0), 0.1)
