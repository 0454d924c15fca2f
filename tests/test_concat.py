"""concat: joining tensors along an axis, and the gradient split back into one slice per operand.

Gradients are compared with a central difference of a raw-NumPy objective (never the engine).
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric_gradients import numeric_grad

from site_builder.autograd import ShapeError, concat, parameter, tensor


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_concat_forward_is_numpys(axis):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    np.testing.assert_array_equal(concat([tensor(a), tensor(b)], axis=axis).data, np.concatenate([a, b], axis=axis))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_gradient_matches_finite_differences(axis):
    rng = np.random.default_rng(1)
    shapes = {0: ((1, 3, 2), (2, 3, 2)), 1: ((2, 1, 2), (2, 3, 2)), -1: ((2, 3, 1), (2, 3, 4))}[axis]
    a0, b0 = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    out_shape = np.concatenate([a0, b0], axis=axis).shape
    w = rng.standard_normal(out_shape)

    def objective(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.sum(np.tanh(np.concatenate([a, b], axis=axis)) * w))

    a, b = parameter(a0, name="a"), parameter(b0, name="b")
    (concat([a, b], axis=axis).tanh() * w).sum().backward()
    np.testing.assert_allclose(a.grad, numeric_grad(objective, [a0, b0], 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b.grad, numeric_grad(objective, [a0, b0], 1), rtol=1e-6, atol=1e-9)


def test_a_tensor_listed_twice_collects_both_slices():
    x = parameter([1.0, 2.0], name="x")
    concat([x, tensor([5.0]), x]).backward_with_seed(np.array([1.0, 10.0, 100.0, 1000.0, 10000.0]))
    np.testing.assert_array_equal(x.grad, [1.0 + 1000.0, 10.0 + 10000.0])


def test_concat_of_constants_is_a_constant_and_a_mixed_one_tracks_only_the_parameter():
    c = concat([tensor([1.0]), tensor([2.0])])
    assert not c.requires_grad
    p = parameter([3.0], name="p")
    concat([tensor([1.0]), p]).backward_with_seed(np.array([7.0, 8.0]))
    np.testing.assert_array_equal(p.grad, [8.0])


def test_the_gradient_never_writes_into_the_seed():
    x = parameter(np.ones((2, 2)), name="x")
    seed = np.arange(8.0).reshape(2, 4)
    before = seed.copy()
    concat([x, x]).backward_with_seed(seed)
    np.testing.assert_array_equal(seed, before)
    np.testing.assert_array_equal(x.grad, seed[:, :2] + seed[:, 2:])


@pytest.mark.parametrize(
    "shapes,axis,words",
    [
        (((2, 3), (3, 3)), -1, "every other axis must agree"),
        (((2, 3), (2, 3, 1)), 0, "the same number of axes"),
        (((2, 3), (2, 3)), 2, "along axis 2: it has 2 axes"),
        (((), ()), 0, "at least one"),
    ],
)
def test_shapes_that_do_not_join_name_both(shapes, axis, words):
    with pytest.raises(ShapeError, match=words):
        concat([tensor(np.zeros(s)) for s in shapes], axis=axis)


def test_nothing_to_join_is_refused():
    with pytest.raises(ShapeError, match="at least one tensor"):
        concat([])
