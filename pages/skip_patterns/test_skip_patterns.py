"""Skip patterns: the three stacks, their sizes, the gradient they pass down, the trace, and bit-identical training."""

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
from pages.skip_patterns import fixtures as fx
from pages.skip_patterns.figures import _growth_description, _loss_description, _parameters_description
from pages.skip_patterns.trace import DEPTHS, PATTERNS, RECORDED, SEEDS, Trace
from site_builder.autograd import parameter, tensor
from site_builder.trace import layout_of

parse = layout_of(Trace).parse
C = fx.Constants()
GOLDEN = golden("skip_patterns")
TRACE = parse(GOLDEN)


def numpy_branch(h, b):
    return np.maximum(h @ b["first"], 0.0) @ b["second"]


def numpy_stack(pattern: str, h: np.ndarray, blocks: list[dict]) -> np.ndarray:
    for b in blocks:
        if pattern == "residual":
            h = h + numpy_branch(h, b)
        elif pattern == "highway":
            t = 1.0 / (1.0 + np.exp(-(h @ b["gate"] + b["gate_bias"])))
            h = t * numpy_branch(h, b) + (1.0 - t) * h
        else:
            h = np.concatenate([h, numpy_branch(h, b)], axis=-1)
    return h


def case(pattern: str, depth: int = 3, seed: int = 0):
    small = dataclasses.replace(C, width=4, growth=2)
    models = fx.build(small, (seed, seed + 1), pattern, depth)
    arrays = [
        {k: getattr(b, k).data for k in ("first", "second", "gate", "gate_bias") if getattr(b, k) is not None}
        for b in models.blocks
    ]
    h0 = np.random.default_rng(9).standard_normal((2, 5, 4))
    return models, arrays, h0


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_stacks_compute_what_the_page_says(pattern):
    models, arrays, h0 = case(pattern)
    np.testing.assert_allclose(
        fx.STACKS[pattern](tensor(h0), models.blocks).data, numpy_stack(pattern, h0, arrays), rtol=1e-12
    )


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_stacks_input_gradient_matches_finite_differences(pattern):
    models, arrays, h0 = case(pattern, seed=3)
    h = parameter(h0, name="h")
    top = fx.STACKS[pattern](h, models.blocks)
    probe = np.random.default_rng(4).standard_normal(top.shape)
    (top * probe).sum().backward()
    direction = np.random.default_rng(5).standard_normal(h0.shape)
    eps = 1e-6

    def objective(x):
        return float(np.sum(numpy_stack(pattern, x, arrays) * probe))

    numeric = (objective(h0 + eps * direction) - objective(h0 - eps * direction)) / (2 * eps)
    assert float(np.sum(h.grad * direction)) == pytest.approx(numeric, rel=1e-6)


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_counts_follow_the_formulas(depth):
    rows = {s.pattern: s for s in TRACE.shapes if s.depth == depth}
    c, k = C.width, C.growth
    assert rows["residual"].parameters == 2 * c * c * depth
    assert rows["highway"].parameters == (3 * c * c + c) * depth
    assert rows["dense"].parameters == sum((c + l * k) * c + c * k for l in range(depth))
    assert (rows["residual"].width, rows["highway"].width, rows["dense"].width) == (c, c, c + k * depth)


def test_the_highway_gate_starts_mostly_closed():
    models, _, _ = case("highway")
    assert np.all(models.blocks[0].gate_bias.data == C.gate_bias)
    assert 1 - 1 / (1 + math.exp(2.0)) == pytest.approx(0.880797, abs=1e-6)


def test_the_highway_gradient_follows_its_carry_to_the_power_of_the_depth():
    rows = {s.depth: s.backward for s in TRACE.shapes if s.pattern == "highway"}
    carry = 1 - 1 / (1 + math.exp(-TRACE.setup.gate_bias))
    for depth, measured in rows.items():
        assert measured == pytest.approx(carry**depth, rel=0.35)


# ------------------------------------------------------------------ the trace
def test_the_trace_covers_every_pattern_depth_step_and_seed():
    assert [(s.pattern, s.depth) for s in TRACE.shapes] == [(p, d) for p in PATTERNS for d in DEPTHS]
    assert [c.step for c in TRACE.curves] == list(RECORDED)
    assert [f.seed for f in TRACE.finals] == list(SEEDS)


def test_curve_ends_are_the_mean_of_the_seeds_final_losses():
    assert_curve_ends_are_seed_means(TRACE, PATTERNS)


def test_what_was_measured():
    """Not a law: what this set-up measured; a change that flips it flips the page's words, and this test says so."""
    rows = {(s.pattern, s.depth): s.backward for s in TRACE.shapes}
    assert rows["highway", 32] < 0.05 and rows["residual", 32] > 1 and 0.5 < rows["dense", 32] < 2
    last = TRACE.curves[-1]
    assert max(last.residual, last.dense) < 0.01 < last.highway


def test_chart_descriptions_follow_the_numbers():
    assert "the dense stack's count grows the most" in _parameters_description(TRACE)
    assert "The highway stack's factor falls with depth" in _growth_description(TRACE)
    assert "the dense stack has the lowest loss" in _loss_description(TRACE)


def test_a_nan_constant_stops_the_page_before_training():
    assert "gate_bias" in nan_stops("skip_patterns", gate_bias=math.nan)
    assert "turns" in nan_spirals_stop("skip_patterns", "turns")


G = Golden(GOLDEN)
CASES = [
    G.value_case(
        "unknown pattern", G.number("SHAPE"), "pattern=residual", "pattern=plain", "one of residual, highway, dense"
    ),
    G.value_case("a count with a decimal point", G.number("SHAPE"), "parameters=2048", "parameters=2048.0", "integer"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="skip-patterns")


@pytest.mark.slow
def test_two_fresh_processes_train_to_the_same_bits_with_one_or_two_blas_threads(blas_thread_digests):
    one, two = blas_thread_digests.of("skip_patterns")
    assert one == two
