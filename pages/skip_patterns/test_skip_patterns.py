"""Skip patterns: the three stacks, their sizes, the gradient they pass down, the trace, and bit-identical training."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, rejections

from helpers import golden, nan_spirals_stop, nan_stops
from pages.skip_patterns import fixtures as fx
from pages.skip_patterns.figures import (
    ADDING,
    JOINING,
    STYLE,
    _growth_description,
    _loss_description,
    _parameters_description,
)
from pages.skip_patterns.trace import BUDGETS, DEPTHS, PATTERNS, RATES, RECORDED, RIVALS, TRAIN_DEPTH, Trace, column
from site_builder.autograd import parameter, tensor
from site_builder.measure import MIN_SEEDS, compare
from site_builder.trace import layout_of

parse = layout_of(Trace).parse
C = fx.Constants()
GOLDEN = golden("skip_patterns")
TRACE = parse(GOLDEN)
ARMS = {a.pattern: a for a in TRACE.arms}


def numpy_branch(h, b):
    return np.maximum(h @ b["first"], 0.0) @ b["second"]


def numpy_stack(pattern: str, h: np.ndarray, blocks: list[dict]) -> np.ndarray:
    for b in blocks:
        if pattern == "residual":
            h = h + numpy_branch(h, b)
        elif pattern == "projection":
            h = h @ b["shortcut"] + numpy_branch(h, b)
        elif pattern == "highway":
            t = 1.0 / (1.0 + np.exp(-(h @ b["gate"] + b["gate_bias"])))
            h = t * numpy_branch(h, b) + (1.0 - t) * h
        else:
            h = np.concatenate([h, numpy_branch(h, b)], axis=-1)
    return h


def case(pattern: str, depth: int = 3, seed: int = 0):
    small = dataclasses.replace(C, width=4, growth=2)
    models = fx.build([fx.draw(small, s, pattern, depth) for s in (seed, seed + 1)], pattern, depth)
    arrays = [
        {
            k: getattr(b, k).data
            for k in ("first", "second", "shortcut", "gate", "gate_bias")
            if getattr(b, k) is not None
        }
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
    c, k, n = C.width, C.growth, TRACE.setup.narrow_growth
    assert rows["residual"].parameters == 2 * c * c * depth
    assert rows["projection"].parameters == 3 * c * c * depth
    assert rows["highway"].parameters == (3 * c * c + c) * depth
    assert rows["dense"].parameters == sum((c + l * k) * c + c * k for l in range(depth))
    assert rows["narrow-dense"].parameters == sum((c + l * n) * c + c * n for l in range(depth))
    assert (rows["residual"].width, rows["dense"].width, rows["narrow-dense"].width) == (
        c,
        c + k * depth,
        c + n * depth,
    )


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_counted_weights_are_the_built_ones(pattern):
    for depth in (DEPTHS[0], TRAIN_DEPTH):
        models = fx.build([fx.draw(C, 1, pattern, depth)], pattern, depth)
        growth = fx.growth_of(C, pattern)
        assert models.block_parameters() == fx.block_count(C, pattern, depth, growth)
        assert models.model_parameters() == fx.model_count(C, pattern, depth, growth)
    assert ARMS[pattern].parameters == fx.model_count(C, pattern, TRAIN_DEPTH, fx.growth_of(C, pattern))


def test_the_narrow_dense_stack_is_the_one_closest_in_size_to_the_residual_stack():
    target = ARMS["residual"].parameters
    gap = abs(ARMS["narrow-dense"].parameters - target)
    for k in range(1, C.growth + 1):
        assert gap <= abs(fx.model_count(C, "dense", TRAIN_DEPTH, k) - target)
    assert ARMS["dense"].parameters > ARMS["narrow-dense"].parameters


def test_the_highway_gate_starts_mostly_closed():
    models, _, _ = case("highway")
    assert np.all(models.blocks[0].gate_bias.data == C.gate_bias)
    assert 1 - 1 / (1 + math.exp(2.0)) == pytest.approx(0.880797, abs=1e-6)


def test_the_highway_gradient_follows_its_carry_to_the_power_of_the_depth():
    rows = {s.depth: s.backward for s in TRACE.shapes if s.pattern == "highway"}
    carry = 1 - 1 / (1 + math.exp(-TRACE.setup.gate_bias))
    for depth, measured in rows.items():
        assert measured.median == pytest.approx(carry**depth, rel=0.35)


def test_every_seed_has_a_twin_whose_first_embedding_weight_is_one_ulp_larger():
    draws = fx.with_twins([fx.draw(C, s, "residual", 2) for s in (1, 2)])
    assert len(draws) == 4
    for (ends, blocks), (twin, twin_blocks) in zip(draws[:2], draws[2:]):
        assert twin.embed.flat[0] == np.nextafter(ends.embed.flat[0], np.inf)
        np.testing.assert_array_equal(twin.embed.flat[1:], ends.embed.flat[1:])
        np.testing.assert_array_equal(twin.readout, ends.readout)
        assert all(np.array_equal(a[k], b[k]) for a, b in zip(blocks, twin_blocks) for k in a)


def test_the_gradient_probe_is_the_same_for_every_model():
    models = fx.seeded(C, "dense", 2)
    data = C.task.dataset()
    growth = fx.gradient_growth(C, models, data)
    half = len(growth) // 2
    np.testing.assert_allclose(growth[:half], growth[half:], rtol=1e-9)  # a twin differs by one ulp, not a probe


# ------------------------------------------------------------------ the trace
def test_the_trace_covers_every_pattern_depth_rate_step_and_budget():
    assert [(s.pattern, s.depth) for s in TRACE.shapes] == [(p, d) for p in PATTERNS for d in DEPTHS]
    assert [(s.pattern, s.rate) for s in TRACE.sweeps] == [(p, r) for p in PATTERNS for r in RATES]
    assert [c.step for c in TRACE.curves] == list(RECORDED)
    assert [(v.pattern, v.budget) for v in TRACE.versus] == [(p, b) for p in RIVALS for b in BUDGETS]
    assert TRACE.setup.seeds >= MIN_SEEDS


def test_each_arm_is_reported_at_the_rate_whose_median_final_loss_is_lowest():
    for arm in TRACE.arms:
        sweeps = [s for s in TRACE.sweeps if s.pattern == arm.pattern]
        chosen = [s for s in sweeps if s.chosen]
        assert len(chosen) == 1 and chosen[0].rate == arm.rate
        assert chosen[0].loss == arm.loss == getattr(TRACE.curves[-1], column(arm.pattern))
        # the choice is made on the full-precision medians, which the trace writes rounded to their standing digits
        assert all(s.versus_chosen != "lower" for s in sweeps)


def test_the_verdicts_follow_from_the_measured_losses():
    for v in TRACE.versus:
        row = next(r for r in TRACE.curves if r.step == v.budget)
        assert v.order == compare(getattr(row, column(v.pattern)), row.residual)


def test_one_style_per_pattern_across_the_charts():
    assert len(set(STYLE.values())) == len(PATTERNS)
    assert set(ADDING) | set(JOINING) == set(PATTERNS)


def test_chart_descriptions_follow_the_numbers():
    assert "the dense stack's count grows the most" in _parameters_description(TRACE)
    assert "The median factor of the highway stack falls" in _growth_description(TRACE)
    assert "lowest median belongs to" in _loss_description(TRACE, ADDING)
    assert "стек «плотный»" in _parameters_description(TRACE, "ru")


def test_a_nan_constant_stops_the_page_before_training():
    assert "gate_bias" in nan_stops("skip_patterns", gate_bias=math.nan)
    assert "turns" in nan_spirals_stop("skip_patterns", "turns")


G = Golden(GOLDEN)
CASES = [
    G.value_case(
        "unknown pattern", G.number("SHAPE"), "pattern=residual", "pattern=plain", "one of residual, projection"
    ),
    G.value_case("a count with a decimal point", G.number("SHAPE"), "parameters=2048", "parameters=2048.0", "integer"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="skip-patterns")
