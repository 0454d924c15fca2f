"""Path expansion: the product of (I + W_l), the sum over all paths, the engine, and independent twins."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import Golden, assert_rejects, fixture_error, rejections

from helpers import golden, page
from pages.path_expansion import fixtures as fx
from pages.path_expansion.figures import _single_path_summary
from pages.path_expansion.trace import BLOCKS, WIDTH, Trace
from site_builder.trace import format_real, layout_of

parse, render = layout_of(Trace).parse, layout_of(Trace).render
C = fx.Constants()
GOLDEN = golden("path_expansion")
TRACE = parse(GOLDEN)
W = fx.branch_weights(C)


def forward(x: np.ndarray) -> np.ndarray:
    for w in W:
        x = x + x @ w
    return x


def test_branches_are_the_seeded_draws():
    rng = np.random.default_rng(0)
    for n, w in enumerate(W, start=1):
        expected = rng.standard_normal((2, 2)) * 0.5
        assert np.array_equal(w, expected)
        assert TRACE.branches[n - 1].weight == tuple(float(format_real(v)) for v in expected.reshape(-1))


def test_three_jacobians_agree_with_a_finite_difference_twin():
    eps = 1e-6
    x0 = np.array(C.input)
    numeric = np.stack(
        [(forward(x0 + eps * e) - forward(x0 - eps * e)) / (2 * eps) for e in np.eye(WIDTH)]
    )  # row i: d y / d x_i, so this is J^T (J's rows are outputs)
    j = TRACE.jacobian
    for values in (j.product, j.path_sum, j.autograd):
        np.testing.assert_allclose(np.array(values).reshape(WIDTH, WIDTH), numeric, atol=1e-6)
    assert j.paths == 2**BLOCKS and j.agree and 0 < j.rounding_bound < 1e-12


def test_the_recorded_matrix_is_the_transpose_of_the_chapter_convention_jacobian():
    """J = J_L ... J_1 with J_l = I + W_l^T (rows are outputs); the trace holds J^T."""
    j = np.eye(WIDTH)
    for w in W:
        j = (np.eye(WIDTH) + w.T) @ j
    np.testing.assert_allclose(j.T, fx.product_jacobian(W), atol=1e-15)
    eps, x0 = 1e-6, np.array(C.input)
    columns = [(forward(x0 + eps * e) - forward(x0 - eps * e)) / (2 * eps) for e in np.eye(WIDTH)]
    np.testing.assert_allclose(np.stack(columns, axis=1), j, atol=1e-6)  # column i: d y / d x_i


def test_path_sum_twin_by_bitmask():
    total = np.zeros((WIDTH, WIDTH))
    by_length = {k: np.zeros((WIDTH, WIDTH)) for k in range(BLOCKS + 1)}
    for mask in range(2**BLOCKS):
        term = np.eye(WIDTH)
        for block in range(BLOCKS):
            if mask >> block & 1:
                term = term @ W[block]
        total += term
        by_length[bin(mask).count("1")] += term
    np.testing.assert_allclose(total, fx.product_jacobian(W), atol=1e-14)
    for row in TRACE.lengths:
        assert row.sum == tuple(float(format_real(v)) for v in by_length[row.length].reshape(-1))
        assert format_real(row.sum_norm) == format_real(np.linalg.norm(by_length[row.length]))


def test_counts_are_binomial_and_cover_every_path():
    assert [r.count for r in TRACE.lengths] == [math.comb(BLOCKS, k) for k in range(BLOCKS + 1)] == [1, 4, 6, 4, 1]
    assert sum(r.count for r in TRACE.lengths) == TRACE.jacobian.paths


def test_lengths_add_up_to_the_jacobian():
    total = np.sum([np.array(r.sum) for r in TRACE.lengths], axis=0)
    np.testing.assert_allclose(total, np.array(TRACE.jacobian.product), atol=5e-6 * (BLOCKS + 1))
    assert TRACE.lengths[0].sum == (1.0, 0.0, 0.0, 1.0)  # the path through no branch is the identity


def test_mean_path_norm_twin():
    for row in TRACE.lengths:
        norms = [np.linalg.norm(term) for chosen, term in fx.paths(W) if len(chosen) == row.length]
        assert format_real(row.mean_path_norm) == format_real(np.mean(norms))


def test_paths_multiply_in_block_order():
    chosen, term = next((c, t) for c, t in fx.paths(W) if c == (0, 1))
    assert np.array_equal(term, W[0] @ W[1]) and not np.allclose(term, W[1] @ W[0])


def test_disagreeing_jacobians_fail_the_build(monkeypatch):
    real = fx.product_jacobian
    monkeypatch.setattr(fx, "product_jacobian", lambda w: real(w) + 1e-9)
    assert "differ" in str(fixture_error(fx.run, "path-expansion"))


def test_a_miscounted_length_fails_the_build(monkeypatch):
    real = fx.paths
    monkeypatch.setattr(fx, "paths", lambda w: real(w) + [((0, 1), np.zeros((WIDTH, WIDTH)))])
    assert "paths of length 2" in str(fixture_error(fx.run, "path-expansion"))


@pytest.mark.parametrize("field,value", [("scale", math.nan), ("input", (math.nan, 1.0)), ("scale", math.inf)])
def test_non_finite_input_fails_naming_the_fixture(field, value):
    error = fixture_error(lambda: fx.run(dataclasses.replace(C, **{field: value})), "path-expansion")
    assert "NaN" in str(error) or "infinity" in str(error)


def test_the_page_cites_the_ensemble_view():
    citation = page("path_expansion").citation("veit2016")
    assert citation.arxiv == "1605.06431" and "Veit" in citation.authors and citation.year == 2016


G = Golden(GOLDEN)
CASES = [
    G.value_case("block out of order", 4, "block=2", "block=3", "expected block=2"),
    G.value_case("length out of order", 8, "length=0", "length=1", "expected length=0"),
    G.value_case("rounding bound in fixed notation", 7, "rounding-bound=", "rounding-bound=0.000000 x=", "scientific"),
    G.value_case("five decimals short", 2, "scale=0.500000", "scale=0.5", "six decimals"),
    G.value_case("leading zero count", 8, "count=1", "count=01", "integer"),
]


@rejections(CASES)
def test_page_specific_rejections(text, line, column, words):
    assert_rejects(parse, text, line, column, words, source="path-expansion")


# ------------------------------------------------------------------ what the chart says to a screen reader
def test_path_expansion_description_follows_the_mean_path_norms():
    t = parse(GOLDEN)
    assert "weaker with every extra branch" in _single_path_summary(t)
    same = tuple(dataclasses.replace(k, mean_path_norm=1.0) for k in t.lengths)
    assert "not always weaker" in _single_path_summary(dataclasses.replace(t, lengths=same))
