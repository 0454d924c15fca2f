"""The notation page's examples: each rule it states holds for the engine's numbers, on these inputs and others."""

from __future__ import annotations

import numpy as np
import pytest

from pages.notation.fixtures import BLOCK_UPSTREAM, BRANCH, INPUT, UPSTREAM, WEIGHT, block, jacobian, layer
from site_builder.autograd import parameter
from site_builder.nn import Linear


def test_the_layer_backward_pass_is_the_row_times_the_transposed_weight():
    got = layer()
    w, x, u = np.array(WEIGHT), np.array(INPUT), np.array(UPSTREAM)
    np.testing.assert_allclose(got.output, x @ w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got.input_gradient, u @ w.T, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got.weight_gradient, np.outer(x, u), rtol=0, atol=1e-15)
    assert got.jacobian.shape == got.jacobian_shape == (w.shape[1], w.shape[0])  # [out, in]
    assert got.jacobian_is_weight_transposed
    # x̄ = ȳ J_F: the vector-Jacobian product the page states
    np.testing.assert_allclose(u @ got.jacobian, got.input_gradient, rtol=0, atol=1e-15)


def test_the_block_jacobian_is_the_identity_plus_the_branch_jacobian():
    got = block()
    v, u = np.array(BRANCH), np.array(BLOCK_UPSTREAM)
    np.testing.assert_array_equal(got.branch_jacobian, v.T)
    assert got.block_is_identity_plus_branch
    np.testing.assert_allclose(got.input_gradient, u + u @ v.T, rtol=0, atol=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_jacobian_has_one_row_per_output_for_any_layer(seed):
    rng = np.random.default_rng(seed)
    x = parameter(rng.normal(size=3), name="x")
    f = Linear(rng.normal(size=(3, 5)), name="W")
    y = f(x).tanh()
    j = jacobian(x, y)
    slopes = 1.0 - y.data**2
    np.testing.assert_allclose(j, slopes[:, None] * f.weight.data.T, rtol=1e-12, atol=1e-15)
    assert x.grad is None and f.weight.grad is None  # the probes leave no gradient behind
