"""The blocks page: its stacks and deleted blocks, their shared draws, the trace's internal arithmetic, and
bit-identical training."""

from __future__ import annotations

import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, rejections

from helpers import golden, nan_spirals_stop, nan_stops
from pages.blocks import fixtures as fx
from pages.blocks.figures import description
from pages.blocks.trace import (
    INIT_DEPTHS,
    KINDS,
    LESION_DEPTH,
    LESION_WIDTH,
    RATES,
    SEEDS,
    SHAPES,
    STACKS,
    UNITS,
    Trace,
)
from site_builder.autograd import parameter, tensor
from site_builder.measure import MIN_SEEDS, compare
from site_builder.trace import layout_of

parse = layout_of(Trace).parse
C = fx.Constants()
TRACE = parse(golden("blocks"))


def trained(kind: str, depth: int, width: int):
    return next(t for t in TRACE.trained if (t.kind, t.depth, t.width) == (kind, depth, width))


def lesion(kind: str, block: int):
    return next(l for l in TRACE.lesions if (l.kind, l.block) == (kind, block))


# ------------------------------------------------------------------ the stacks
def numpy_branch(h: np.ndarray, w1: np.ndarray, w2: np.ndarray, eps: float) -> np.ndarray:
    normalized = h / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + eps)
    return np.maximum(normalized @ w1, 0.0) @ w2


def numpy_stack(kind: str, h: np.ndarray, weights, eps: float, deleted: int | None = None) -> np.ndarray:
    for index, (a, b) in enumerate(weights):
        if index == deleted:
            continue
        h = h + numpy_branch(h, a, b, eps) if kind == "residual" else numpy_branch(h, a, b, eps)
    return h


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("deleted", [None, 0, 1, 2])
def test_the_stacks_and_their_deleted_blocks_compute_what_the_page_says(kind, deleted):
    rng = np.random.default_rng(0)
    h0 = rng.standard_normal((2, 5, 4))
    weights = [(rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 4, 4))) for _ in range(3)]
    blocks = [(tensor(a), tensor(b)) for a, b in weights]
    got = fx.stack(kind, tensor(h0), blocks, C.eps, deleted).data
    np.testing.assert_allclose(got, numpy_stack(kind, h0, weights, C.eps, deleted), rtol=1e-12)


def test_a_deleted_block_is_the_stack_without_it():
    rng = np.random.default_rng(1)
    h0 = rng.standard_normal((1, 3, 4))
    blocks = [(tensor(rng.standard_normal((1, 4, 4))), tensor(rng.standard_normal((1, 4, 4)))) for _ in range(3)]
    for kind in KINDS:
        without = fx.stack(kind, tensor(h0), [blocks[0], blocks[2]], C.eps).data
        np.testing.assert_array_equal(fx.stack(kind, tensor(h0), blocks, C.eps, deleted=1).data, without)


def test_the_residual_stacks_input_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    h0 = rng.standard_normal((1, 3, 4))
    weights = [(rng.standard_normal((1, 4, 4)) * 0.5, rng.standard_normal((1, 4, 4)) * 0.5) for _ in range(2)]
    h = parameter(h0, name="h")
    fx.stack("residual", h, [(tensor(a), tensor(b)) for a, b in weights], C.eps).sum().backward()
    direction = rng.standard_normal(h0.shape)
    step = 1e-6

    def objective(x: np.ndarray) -> float:
        return float(numpy_stack("residual", x, weights, C.eps).sum())

    numeric = (objective(h0 + step * direction) - objective(h0 - step * direction)) / (2 * step)
    assert float(np.sum(h.grad * direction)) == pytest.approx(numeric, rel=1e-6)


def test_both_lesioned_stacks_start_from_the_same_draws_and_differ_only_in_the_identity_path():
    plain = fx.build(C, "plain", LESION_DEPTH, LESION_WIDTH, 1)
    residual = fx.build(C, "residual", LESION_DEPTH, LESION_WIDTH, 1)
    assert plain.kind == "plain" and residual.kind == "residual"
    for (p1, p2), (r1, r2) in zip(plain.blocks, residual.blocks):
        assert p1.shape == (2 * len(SEEDS), LESION_WIDTH, LESION_WIDTH)
        np.testing.assert_array_equal(p1.data, r1.data)
        np.testing.assert_array_equal(p2.data, r2.data)
    np.testing.assert_array_equal(plain.ends.embed_weight.data, residual.ends.embed_weight.data)
    # every seed, then its twin: the twin differs in the embedding's first weight alone, by one ulp
    seed, twin = plain.ends.embed_weight.data[0], plain.ends.embed_weight.data[len(SEEDS)]
    assert twin.reshape(-1)[0] == np.nextafter(seed.reshape(-1)[0], np.inf)
    np.testing.assert_array_equal(seed.reshape(-1)[1:], twin.reshape(-1)[1:])


def test_the_shapes_weight_counts_follow_the_formula_and_stay_close():
    for depth, width in SHAPES:
        count = fx.parameter_count(fx.build(C, "residual", depth, width, 1))
        assert count == (2 + 1) * width + depth * 2 * width**2 + width * 2 + 2  # embedding, blocks, read-out
        assert trained("residual", depth, width).parameters == count
    counts = [trained("residual", d, w).parameters for d, w in SHAPES]
    assert (max(counts) - min(counts)) / min(counts) < 0.15
    assert (LESION_DEPTH, LESION_WIDTH) in SHAPES  # the lesioned residual stack is one of the shapes


def test_accuracy_is_the_fraction_of_points_whose_larger_score_is_the_right_class():
    models = fx.build(C, "residual", 1, 4, 1)
    data = C.task.dataset()
    logits = models.logits(data).data
    expected = [(np.argmax(logits[m], axis=-1) == data.labels).mean() for m in range(logits.shape[0])]
    np.testing.assert_array_equal(models.accuracies(data), expected)


# ------------------------------------------------------------------ the trace
def test_the_trace_covers_every_stack_rate_and_block_over_at_least_eight_seeds():
    assert TRACE.setup.seeds == len(SEEDS) >= MIN_SEEDS and TRACE.setup.rates == len(RATES)
    assert [(s.kind, s.depth, s.width, s.rate) for s in TRACE.sweeps] == [(*s, r) for s in STACKS for r in RATES]
    assert [(t.kind, t.depth, t.width) for t in TRACE.trained] == list(STACKS)
    assert [(l.kind, l.block) for l in TRACE.lesions] == [(k, b) for k in KINDS for b in range(1, LESION_DEPTH + 1)]


def test_each_stack_is_reported_at_the_rate_no_other_rate_beats():
    for kind, depth, width in STACKS:
        rows = [s for s in TRACE.sweeps if (s.kind, s.depth, s.width) == (kind, depth, width)]
        assert sum(s.chosen for s in rows) == 1
        chosen = next(s for s in rows if s.chosen)
        assert all(s.versus_chosen != "lower" for s in rows)
        row = trained(kind, depth, width)
        assert row.rate == chosen.rate and row.loss == chosen.loss
        assert [s.versus_chosen for s in rows] == [compare(s.loss, chosen.loss) for s in rows]


def test_the_verdicts_are_the_comparisons_of_the_measured_results():
    for l in TRACE.lesions:
        assert l.versus_intact == compare(l.accuracy, trained(l.kind, LESION_DEPTH, LESION_WIDTH).accuracy)
    for s in TRACE.survival:
        residual, plain = lesion("residual", s.block), lesion("plain", s.block)
        assert s.residual == compare(residual.accuracy, plain.accuracy)
    assert TRACE.averaged.residual == compare(
        trained("residual", LESION_DEPTH, LESION_WIDTH).lesioned, trained("plain", LESION_DEPTH, LESION_WIDTH).lesioned
    )
    deepest = trained("residual", *SHAPES[-1]).lesioned
    for s in TRACE.shapes:
        assert s.lesioned_versus_deepest == compare(trained("residual", s.depth, s.width).lesioned, deepest)
    losses = {(d, w): trained("residual", d, w).loss for d, w in SHAPES}
    best = min(losses.values(), key=lambda m: m.median)
    for s in TRACE.shapes:
        assert s.versus_best == compare(losses[(s.depth, s.width)], best)


def test_what_was_measured_a_deleted_block_costs_the_residual_stack_less_than_the_plain_one_but_costs_it():
    """Not a law: what this set-up measured. If a change flips it, the page's words flip with it, and this test
    says so loudly."""
    assert trained("residual", LESION_DEPTH, LESION_WIDTH).accuracy.median > 0.9
    assert any(l.versus_intact == "lower" for l in TRACE.lesions if l.kind == "residual")
    assert {s.residual for s in TRACE.survival} <= {"higher", "indistinguishable"}  # never behind the plain stack
    assert {s.versus_best for s in TRACE.shapes} == {"indistinguishable"}
    assert TRACE.averaged.residual == "higher"  # averaged over which block, the residual stack kept more
    assert {s.lesioned_versus_deepest for s in TRACE.shapes} <= {"lower", "indistinguishable"}


@pytest.mark.parametrize("field", ["eps"])
def test_a_nan_constant_stops_the_page_before_training(field):
    assert field in nan_stops("blocks", **{field: math.nan})


@pytest.mark.parametrize("field", ["turns", "noise", "inner_radius"])
def test_a_nan_in_the_spirals_stops_the_page_before_training(field):
    assert field in nan_spirals_stop("blocks", field)


# ------------------------------------------------------------------ what the chart says to a screen reader
def test_the_chart_description_names_both_stacks_in_each_language():
    assert "Plain: diamonds" in description(TRACE) and "Residual: circles" in description(TRACE)
    assert "Обычный: ромбы" in description(TRACE, "ru") and "Остаточный: кружки" in description(TRACE, "ru")


# ------------------------------------------------------------------ parsing
G = Golden(golden("blocks"))
SWEEP = G.number("SWEEP kind=plain ")
CASES = [
    G.value_case("a rate in six decimals", SWEEP, "rate=3.000000e-03", "rate=0.003000", "scientific"),
    G.value_case("unknown kind", SWEEP, "kind=plain", "kind=highway", "one of plain, residual"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="blocks")


def test_the_averaged_accuracy_with_a_block_deleted_is_each_seeds_mean_over_the_blocks():
    """The fixture averages each model's accuracy over the deleted blocks before it measures over the seeds."""
    data = C.task.dataset()
    models = fx.build(C, "residual", 2, 4, 1)
    per_block = [models.accuracies(data, deleted) for deleted in range(2)]
    np.testing.assert_array_equal(np.mean(per_block, axis=0), (per_block[0] + per_block[1]) / 2)
    losses, accuracies = models.scores(data)
    np.testing.assert_array_equal(losses, models.losses(data).data)
    np.testing.assert_array_equal(accuracies, models.accuracies(data))


# ------------------------------------------------------------------ at initialization
def numpy_norm(h: np.ndarray, eps: float) -> np.ndarray:
    return h / np.sqrt(np.mean(h * h, axis=-1, keepdims=True) + eps)


def test_a_branch_whose_gain_is_zero_adds_exactly_nothing_yet_its_gain_gets_the_gradient_the_page_writes():
    rng = np.random.default_rng(3)
    h0, w1, w2 = rng.standard_normal((1, 5, 4)), rng.standard_normal((1, 4, 4)), rng.standard_normal((1, 4, 4))
    upstream = rng.standard_normal(h0.shape)
    gain = parameter(np.zeros((1, 1, 4)), name="gain")
    out = fx.gained_branch(tensor(h0), tensor(w1), tensor(w2), gain, C.eps)
    np.testing.assert_array_equal(out.data, np.zeros_like(h0))
    out.backward_with_seed(upstream)
    branch = numpy_norm(np.maximum(numpy_norm(h0, C.eps) @ w1, 0.0) @ w2, C.eps)
    # the gradient on the gain: the branch's normalized output times the gradient arriving, summed over the points
    np.testing.assert_allclose(gain.grad, np.sum(upstream * branch, axis=1, keepdims=True), rtol=1e-12)
    assert np.all(gain.grad != 0.0)


@pytest.mark.parametrize("kind", UNITS)
def test_each_unit_computes_what_the_page_writes_and_reports_the_entries_its_relu_lets_through(kind):
    rng = np.random.default_rng(4)
    h0, w1, w2 = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 4, 4))
    out, through = fx.unit(kind, tensor(h0), tensor(w1), tensor(w2), C.eps)
    if kind == "original":
        added = h0 + numpy_norm(np.maximum(numpy_norm(h0 @ w1, C.eps), 0.0) @ w2, C.eps)
        np.testing.assert_allclose(out.data, np.maximum(added, 0.0), rtol=1e-12)
        np.testing.assert_array_equal(through, added > 0)
        assert 0 < through.mean() < 1
    else:
        branch = np.maximum(numpy_norm(np.maximum(numpy_norm(h0, C.eps), 0.0) @ w1, C.eps), 0.0) @ w2
        np.testing.assert_allclose(out.data, h0 + branch, rtol=1e-12)
        assert through.all()  # nothing follows the addition


def test_the_untrained_stacks_cover_every_depth_and_unit_and_their_verdicts_are_their_comparisons():
    assert [g.depth for g in TRACE.gains] == list(INIT_DEPTHS)
    assert [(u.unit, u.depth) for u in TRACE.units] == [(k, d) for k in UNITS for d in INIT_DEPTHS]
    units = {(u.unit, u.depth): u for u in TRACE.units}
    fewest = min(INIT_DEPTHS)
    for g in TRACE.gains:
        assert g.growth_versus_fewest == compare(g.growth, TRACE.gains[0].growth)
    for v in TRACE.unit_verdicts:
        pre, original = units[("pre-activation", v.depth)], units[("original", v.depth)]
        assert v.pre_activation == compare(pre.gradient_ratio, original.gradient_ratio)
        assert v.passed_versus_fewest == compare(original.passed, units[("original", fewest)].passed)


def test_what_was_measured_at_initialization():
    """Not a law: what these untrained stacks measured, and what the page's sentences say of them."""
    assert all(g.moved == 0.0 for g in TRACE.gains)  # a zero gain: the stack is the identity, bit for bit
    assert all(g.gain_gradient.low > 0.0 for g in TRACE.gains)  # and every block's gain still gets a gradient
    assert TRACE.gains[-1].growth_versus_fewest == "higher"  # a gain of one: the stream grew with depth
    assert all(u.gradient_ratio.low > 1.0 for u in TRACE.units)  # the gradient vanished in neither unit
    assert all(u.passed.low == 1.0 for u in TRACE.units if u.unit == "pre-activation")
    passed = [u.passed.median for u in TRACE.units if u.unit == "original"]
    assert passed == sorted(passed, reverse=True) and TRACE.unit_verdicts[-1].passed_versus_fewest == "lower"
