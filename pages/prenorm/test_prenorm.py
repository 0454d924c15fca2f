"""Pre-norm against post-norm: the layouts, the gradient profile, the trace's arithmetic and bit-identical training."""

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
from pages.prenorm import fixtures as fx
from pages.prenorm.figures import _loss_description, _profile_description
from pages.prenorm.trace import COLUMNS, PROFILE_DEPTHS, PROFILE_SEEDS, RECORDED, SEEDS, TRAIN_DEPTHS, Trace
from site_builder.autograd import parameter, tensor
from site_builder.trace import layout_of

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


def test_the_geometric_mean_averages_logarithms():
    assert fx.geometric_mean(np.array([1e-4, 1e-2])) == pytest.approx(1e-3)


# ------------------------------------------------------------------ the trace
def test_the_trace_covers_every_block_depth_step_and_seed():
    assert [(p.depth, p.block) for p in TRACE.profiles] == [(d, b) for d in PROFILE_DEPTHS for b in range(1, d + 1)]
    assert [i.depth for i in TRACE.inputs] == list(PROFILE_DEPTHS)
    assert [c.step for c in TRACE.curves] == list(RECORDED)
    assert [f.seed for f in TRACE.finals] == list(SEEDS)
    assert set(TRAIN_DEPTHS) <= set(PROFILE_DEPTHS) and set(SEEDS) <= set(PROFILE_SEEDS)
    assert COLUMNS == ("pre_6", "post_6", "pre_24", "post_24")
    s = TRACE.setup
    assert (s.seeds, s.profile_seeds, s.steps, s.every) == (len(SEEDS), len(PROFILE_SEEDS), 200, 20)


def test_curve_ends_are_the_mean_of_the_seeds_final_losses():
    assert_curve_ends_are_seed_means(TRACE, COLUMNS)


def test_what_was_measured_post_norm_grows_toward_the_output_and_trains_far_worse_deep():
    """Not a law: what this set-up measured. A change that flips it flips the page's words, and this test says so."""
    deep = [p for p in TRACE.profiles if p.depth == max(PROFILE_DEPTHS)]
    assert deep[-1].post > deep[0].post and deep[-1].pre < deep[0].pre
    last = TRACE.curves[-1]
    assert last.pre_24 < 0.01 and last.post_24 > 0.1 > 10 * last.pre_24


@pytest.mark.parametrize("field", ["learning_rate", "eps"])
def test_a_nan_constant_stops_the_page_before_training(field):
    assert field in nan_stops("prenorm", **{field: math.nan})


def test_a_nan_in_the_spirals_stops_the_page():
    assert "turns" in nan_spirals_stop("prenorm", "turns")


def test_chart_descriptions_follow_the_numbers():
    assert "post-norm stack the last block's gradient is larger" in _profile_description(TRACE, 96)
    assert "pre-norm stack the last block's gradient is smaller" in _profile_description(TRACE, 96)
    assert "the pre-norm stack has the lower loss" in _loss_description(TRACE, 24)
    swapped = dataclasses.replace(TRACE.curves[-1], post_24=1e-9)
    assert "the post-norm stack has the lower loss" in _loss_description(
        dataclasses.replace(TRACE, curves=(*TRACE.curves[:-1], swapped)), 24
    )


G = Golden(GOLDEN)
CASES = [
    G.value_case(
        "block out of order", G.number("PROFILE depth=6 block=1 "), "block=1 ", "block=2 ", "expected block=1"
    ),
    G.value_case("a depth that is not profiled", G.number("INPUT depth=6"), "depth=6", "depth=7", "expected depth=6"),
    G.value_case(
        "a loss in fixed notation", G.number("CURVE step=0 "), "pre-6=9.121976e-01", "pre-6=0.912198", "scientific"
    ),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="prenorm")


@pytest.mark.slow
def test_two_fresh_processes_train_to_the_same_bits_with_one_or_two_blas_threads(blas_thread_digests):
    one, two = blas_thread_digests.of("prenorm")
    assert one == two
