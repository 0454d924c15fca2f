"""Degradation: the two stacks, their shared draws, the trace's internal arithmetic, and bit-identical training."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, rejections

from helpers import (
    assert_curve_ends_are_seed_means,
    golden,
    nan_spirals_stop,
    nan_stops,
)
from pages.degradation import fixtures as fx
from pages.degradation.figures import _curves_description, _depth_description
from pages.degradation.trace import COLUMNS, DEPTHS, KINDS, RECORDED, SEEDS, Trace, column
from site_builder.autograd import parameter, tensor
from site_builder.trace import format_sci, layout_of

parse = layout_of(Trace).parse
C = fx.Constants()
GOLDEN = golden("degradation")
TRACE = parse(GOLDEN)


# ------------------------------------------------------------------ the stacks
def numpy_block(h: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    return np.maximum(h @ w1, 0.0) @ w2


def test_the_stacks_compute_what_the_page_says():
    rng = np.random.default_rng(0)
    h0 = rng.standard_normal((2, 5, 4))
    weights = [(rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 4, 4))) for _ in range(3)]
    blocks = [(tensor(a), tensor(b)) for a, b in weights]
    plain, residual = h0, h0
    for a, b in weights:
        plain = numpy_block(plain, a, b)
        residual = residual + numpy_block(residual, a, b)
    np.testing.assert_allclose(fx.plain_stack(tensor(h0), blocks).data, plain, rtol=1e-13)
    np.testing.assert_allclose(fx.residual_stack(tensor(h0), blocks).data, residual, rtol=1e-13)


def test_the_residual_stacks_input_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    h0 = rng.standard_normal((1, 3, 4))
    weights = [(rng.standard_normal((1, 4, 4)) * 0.5, rng.standard_normal((1, 4, 4)) * 0.5) for _ in range(2)]
    h = parameter(h0, name="h")
    fx.residual_stack(h, [(tensor(a), tensor(b)) for a, b in weights]).sum().backward()

    def objective(x: np.ndarray) -> float:
        for a, b in weights:
            x = x + numpy_block(x, a, b)
        return float(x.sum())

    direction = rng.standard_normal(h0.shape)
    eps = 1e-6
    numeric = (objective(h0 + eps * direction) - objective(h0 - eps * direction)) / (2 * eps)
    assert float(np.sum(h.grad * direction)) == pytest.approx(numeric, rel=1e-7)


def test_plain_and_residual_stacks_of_a_seed_start_from_the_same_draws():
    draws = [fx.seed_draws(C, s) for s in SEEDS]
    plain, residual = fx.build(draws, "plain", 8), fx.build(draws, "residual", 8)
    scale = 1 / math.sqrt(2 * 8)
    assert fx.branch_scale("residual", 8) == scale and fx.branch_scale("plain", 8) == 1.0
    for (p1, p2), (r1, r2) in zip(plain.blocks, residual.blocks):
        assert p1.shape == (len(SEEDS), C.width, C.width)
        np.testing.assert_array_equal(p1.data, r1.data)
        np.testing.assert_array_equal(p2.data * scale, r2.data)
    np.testing.assert_array_equal(plain.ends.embed_weight.data, residual.ends.embed_weight.data)
    # A stack of depth L uses the first L blocks of its seed's bank: the shallower stack is a prefix.
    shallow = fx.build(draws, "plain", 2)
    np.testing.assert_array_equal(shallow.blocks[1][0].data, plain.blocks[1][0].data)


def test_the_seeds_draws_follow_he_and_differ_by_seed():
    a, b = fx.seed_draws(C, 1), fx.seed_draws(C, 2)
    assert len(a.first) == max(DEPTHS) and not np.array_equal(a.first[0], b.first[0])
    first, second = np.concatenate(a.first), np.concatenate(a.second)
    assert np.std(first) == pytest.approx(math.sqrt(1 / C.width), rel=0.05)
    assert np.std(second) == pytest.approx(math.sqrt(2 / C.width), rel=0.05)


# ------------------------------------------------------------------ the trace
def test_the_trace_covers_every_stack_step_and_seed():
    assert [c.step for c in TRACE.curves] == list(RECORDED) and RECORDED[-1] == TRACE.setup.steps
    assert [f.seed for f in TRACE.finals] == list(SEEDS) == [1, 2, 3]
    assert [(s.depth, s.kind) for s in TRACE.starts] == [(d, k) for d in DEPTHS for k in KINDS]
    assert COLUMNS == ("plain_2", "residual_2", "plain_8", "residual_8", "plain_32", "residual_32")


def test_curve_ends_are_the_mean_of_the_seeds_final_losses():
    assert_curve_ends_are_seed_means(TRACE, COLUMNS)


def test_start_losses_are_the_first_curve_point():
    for s in TRACE.starts:
        assert s.loss == getattr(TRACE.curves[0], column(s.kind, s.depth))


def test_depth_effects_follow_the_curves_and_the_factor():
    for e in TRACE.effects:
        assert e.shallow == getattr(TRACE.curves[-1], column(e.kind, DEPTHS[0]))
        assert e.deep == getattr(TRACE.curves[-1], column(e.kind, DEPTHS[-1]))
        assert format_sci(e.ratio) == format_sci(e.deep / e.shallow) or e.ratio == pytest.approx(
            e.deep / e.shallow, rel=1e-5
        )
        assert e.degrades == (e.ratio > TRACE.setup.degrade_factor)


def test_what_was_measured_plain_degrades_and_residual_does_not():
    """Not a law: what this set-up measured. If a change flips it, the page's words flip with it, and this test
    says so loudly."""
    effects = {e.kind: e for e in TRACE.effects}
    assert effects["plain"].degrades and not effects["residual"].degrades
    assert all(s.loss < 2 * TRACE.task.chance_loss for s in TRACE.starts)


@pytest.mark.parametrize("field", ["learning_rate", "degrade_factor"])
def test_a_nan_constant_stops_the_page_before_training(field):
    assert field in nan_stops("degradation", **{field: math.nan})


@pytest.mark.parametrize("field", ["turns", "noise", "inner_radius"])
def test_a_nan_in_the_spirals_stops_the_page_before_training(field):
    assert field in nan_spirals_stop("degradation", field)


# ------------------------------------------------------------------ what the charts say to a screen reader
def test_chart_descriptions_follow_the_numbers():
    assert "the residual stack has the lower mean loss" in _curves_description(TRACE, 32)
    assert "plain stacks' final loss rises" in _depth_description(TRACE)
    assert "residual stacks' final loss falls" in _depth_description(TRACE)
    swapped = dataclasses.replace(TRACE.curves[-1], plain_32=1e-9)
    flipped = dataclasses.replace(TRACE, curves=(*TRACE.curves[:-1], swapped))
    assert "the plain stack has the lower mean loss" in _curves_description(flipped, 32)


# ------------------------------------------------------------------ parsing
G = Golden(GOLDEN)
CURVE = G.number("CURVE step=0 ")
CASES = [
    G.value_case("a loss in fixed notation", CURVE, "plain-2=7.037369e-01", "plain-2=0.703737", "scientific"),
    G.value_case("steps out of order", CURVE, "step=0 ", "step=25 ", "expected step=0"),
    G.value_case("unknown kind", G.number("START"), "kind=plain", "kind=highway", "one of plain, residual"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="degradation")


# ------------------------------------------------------------------ determinism
@pytest.mark.slow
def test_two_fresh_processes_train_to_the_same_bits_with_one_or_two_blas_threads(blas_thread_digests):
    one, two = blas_thread_digests.of("degradation")
    assert one == two
