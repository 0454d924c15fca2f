"""Tests for the reverse-mode autograd engine and the gradient checker.

Every op's gradient is compared with a central difference of an independent
raw-NumPy objective (never the engine), so a bug in the engine cannot hide
in both answers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numeric_gradients import numeric_grad

from site_builder.autograd import (
    AutogradError,
    GradCheckResult,
    GraphReleasedError,
    ShapeError,
    Tensor,
    central_difference,
    check_gradients,
    parameter,
    tensor,
    unbroadcast,
)


# --------------------------------------------------------------------------- helpers
def _uniform(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-2.0, 2.0, size=shape)


def _away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Magnitudes in [0.3, 2] with random signs: safe for relu kinks and 1/x."""
    return rng.uniform(0.3, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def _positive(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.3, 2.0, size=shape)


# Each case: (id, input shapes, input sampler, engine op, raw-NumPy op).
OpCase = tuple[str, tuple[tuple[int, ...], ...], Callable, Callable[..., Tensor], Callable[..., np.ndarray]]

OP_CASES: list[OpCase] = [
    # add, including broadcasting in either or both operands
    ("add[3,2]+[3,2]", ((3, 2), (3, 2)), _uniform, lambda a, b: a + b, lambda a, b: a + b),
    ("add[3,2]+[2]", ((3, 2), (2,)), _uniform, lambda a, b: a + b, lambda a, b: a + b),
    ("add[2]+[3,2]", ((2,), (3, 2)), _uniform, lambda a, b: a + b, lambda a, b: a + b),
    ("add[3,2]+[3,1]", ((3, 2), (3, 1)), _uniform, lambda a, b: a + b, lambda a, b: a + b),
    ("add[1,2]+[3,1]", ((1, 2), (3, 1)), _uniform, lambda a, b: a + b, lambda a, b: a + b),
    ("add[3,2]+[]", ((3, 2), ()), _uniform, lambda a, b: a + b, lambda a, b: a + b),
    ("add[2,3,2]+[3,1]", ((2, 3, 2), (3, 1)), _uniform, lambda a, b: a + b, lambda a, b: a + b),
    ("radd-const", ((3, 2),), _uniform, lambda a: 1.5 + a, lambda a: 1.5 + a),
    # sub
    ("sub[3,2]-[3,2]", ((3, 2), (3, 2)), _uniform, lambda a, b: a - b, lambda a, b: a - b),
    ("sub[2,2]-[2]", ((2, 2), (2,)), _uniform, lambda a, b: a - b, lambda a, b: a - b),
    ("sub[2]-[2,2]", ((2,), (2, 2)), _uniform, lambda a, b: a - b, lambda a, b: a - b),
    ("sub[3,1]-[1,2]", ((3, 1), (1, 2)), _uniform, lambda a, b: a - b, lambda a, b: a - b),
    ("rsub-const", ((3, 2),), _uniform, lambda a: 3.0 - a, lambda a: 3.0 - a),
    ("sub-const", ((3, 2),), _uniform, lambda a: a - 0.75, lambda a: a - 0.75),
    # unary minus
    ("neg[3,2]", ((3, 2),), _uniform, lambda a: -a, lambda a: -a),
    ("neg[]", ((),), _uniform, lambda a: -a, lambda a: -a),
    # elementwise mul, including broadcasting
    ("mul[3,2]*[3,2]", ((3, 2), (3, 2)), _uniform, lambda a, b: a * b, lambda a, b: a * b),
    ("mul[3,2]*[3,1]", ((3, 2), (3, 1)), _uniform, lambda a, b: a * b, lambda a, b: a * b),
    ("mul[3,2]*[2]", ((3, 2), (2,)), _uniform, lambda a, b: a * b, lambda a, b: a * b),
    ("mul[2]*[3,2]", ((2,), (3, 2)), _uniform, lambda a, b: a * b, lambda a, b: a * b),
    ("mul[1,2]*[3,1]", ((1, 2), (3, 1)), _uniform, lambda a, b: a * b, lambda a, b: a * b),
    ("mul[3,2]*[]", ((3, 2), ()), _uniform, lambda a, b: a * b, lambda a, b: a * b),
    # scalar multiplication by a plain number
    ("scale-method", ((3, 2),), _uniform, lambda a: a.scale(-1.5), lambda a: a * -1.5),
    ("scale-mul", ((3, 2),), _uniform, lambda a: a * 2.5, lambda a: a * 2.5),
    ("scale-rmul", ((3, 2),), _uniform, lambda a: 2.5 * a, lambda a: 2.5 * a),
    ("scale-np-scalar", ((3, 2),), _uniform, lambda a: np.float64(0.5) * a, lambda a: 0.5 * a),
    # powers
    ("pow2", ((3, 2),), _uniform, lambda a: a**2, lambda a: a**2),
    ("pow3", ((3, 2),), _uniform, lambda a: a**3, lambda a: a**3),
    ("pow0.5", ((3, 2),), _positive, lambda a: a**0.5, lambda a: np.sqrt(a)),
    ("pow-1", ((3, 2),), _away_from_zero, lambda a: a**-1, lambda a: 1.0 / a),
    ("pow1.5", ((4,),), _positive, lambda a: a**1.5, lambda a: a * np.sqrt(a)),
    ("square", ((3, 2),), _uniform, lambda a: a.square(), lambda a: a * a),
    # all four matmul shape combinations
    ("matmul-vec@mat", ((3,), (3, 2)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-mat@mat", ((2, 3), (3, 4)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-mat@vec", ((2, 3), (3,)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-vec.vec", ((3,), (3,)), _uniform, lambda a, b: a @ b, lambda a, b: np.dot(a, b)),
    # sum over all, each axis, a negative axis, and a 3-D middle axis
    ("sum-all", ((3, 2),), _uniform, lambda a: a.sum(), lambda a: np.sum(a)),
    ("sum-axis0", ((3, 2),), _uniform, lambda a: a.sum(axis=0), lambda a: np.sum(a, axis=0)),
    ("sum-axis1", ((3, 2),), _uniform, lambda a: a.sum(axis=1), lambda a: np.sum(a, axis=1)),
    ("sum-axis-1", ((3, 2),), _uniform, lambda a: a.sum(axis=-1), lambda a: np.sum(a, axis=-1)),
    ("sum-axis-2", ((3, 2),), _uniform, lambda a: a.sum(axis=-2), lambda a: np.sum(a, axis=0)),
    ("sum-1d-axis0", ((4,),), _uniform, lambda a: a.sum(axis=0), lambda a: np.sum(a)),
    ("sum-3d-axis1", ((2, 3, 4),), _uniform, lambda a: a.sum(axis=1), lambda a: np.sum(a, axis=1)),
    # nonlinearities
    ("tanh", ((3, 2),), _uniform, lambda a: a.tanh(), lambda a: np.tanh(a)),
    ("relu", ((3, 4),), _away_from_zero, lambda a: a.relu(), lambda a: np.where(a > 0, a, 0.0)),
    # division: both operands tracked, broadcasting either way, and by or into a plain number
    ("div[3,2]/[3,2]", ((3, 2), (3, 2)), _away_from_zero, lambda a, b: a / b, lambda a, b: a / b),
    ("div[3,2]/[2]", ((3, 2), (2,)), _away_from_zero, lambda a, b: a / b, lambda a, b: a / b),
    ("div[2]/[3,2]", ((2,), (3, 2)), _away_from_zero, lambda a, b: a / b, lambda a, b: a / b),
    ("div[3,1]/[1,2]", ((3, 1), (1, 2)), _away_from_zero, lambda a, b: a / b, lambda a, b: a / b),
    ("div-by-const", ((3, 2),), _uniform, lambda a: a / 4.0, lambda a: a / 4.0),
    ("div-by-int", ((3, 2),), _uniform, lambda a: a / 3, lambda a: a / 3),
    ("rdiv-const", ((3, 2),), _away_from_zero, lambda a: 2.0 / a, lambda a: 2.0 / a),
    (
        "rdiv-array",
        ((3, 2),),
        _away_from_zero,
        lambda a: np.array([1.0, -3.0]) / a,
        lambda a: np.array([1.0, -3.0]) / a,
    ),
    # exp, log, sqrt, sigmoid
    ("exp", ((3, 2),), _uniform, lambda a: a.exp(), lambda a: np.exp(a)),
    ("log", ((3, 2),), _positive, lambda a: a.log(), lambda a: np.log(a)),
    ("sqrt", ((3, 2),), _positive, lambda a: a.sqrt(), lambda a: np.sqrt(a)),
    ("sigmoid", ((3, 4),), _uniform, lambda a: a.sigmoid(), lambda a: 1.0 / (1.0 + np.exp(-a))),
    # sums over tuples of axes, with and without keepdims, feeding a broadcast
    ("sum-axes(0,2)", ((2, 3, 4),), _uniform, lambda a: a.sum(axis=(0, 2)), lambda a: np.sum(a, axis=(0, 2))),
    ("sum-axes(-1,0)", ((2, 3, 4),), _uniform, lambda a: a.sum(axis=(-1, 0)), lambda a: np.sum(a, axis=(0, 2))),
    (
        "sum-keepdims",
        ((3, 2),),
        _uniform,
        lambda a: a.sum(axis=1, keepdims=True),
        lambda a: np.sum(a, axis=1, keepdims=True),
    ),
    ("sum-all-keepdims", ((3, 2),), _uniform, lambda a: a.sum(keepdims=True), lambda a: np.sum(a, keepdims=True)),
    (
        "sum-keepdims-broadcast",
        ((2, 3, 4),),
        _positive,
        lambda a: a / a.sum(axis=(0, 2), keepdims=True),
        lambda a: a / np.sum(a, axis=(0, 2), keepdims=True),
    ),
    # means
    ("mean-all", ((3, 2),), _uniform, lambda a: a.mean(), lambda a: np.mean(a)),
    ("mean-axis-1", ((3, 4),), _uniform, lambda a: a.mean(axis=-1), lambda a: np.mean(a, axis=-1)),
    ("mean-axes", ((2, 3, 4),), _uniform, lambda a: a.mean(axis=(0, 1)), lambda a: np.mean(a, axis=(0, 1))),
    (
        "mean-keepdims-centre",
        ((3, 4),),
        _uniform,
        lambda a: a - a.mean(axis=-1, keepdims=True),
        lambda a: a - np.mean(a, axis=-1, keepdims=True),
    ),
    # max (random values: no ties, so the gradient is the derivative)
    ("max-all", ((3, 4),), _uniform, lambda a: a.max(), lambda a: np.max(a)),
    ("max-axis0", ((3, 4),), _uniform, lambda a: a.max(axis=0), lambda a: np.max(a, axis=0)),
    (
        "max-axis-1-keepdims",
        ((3, 4),),
        _uniform,
        lambda a: a.max(axis=-1, keepdims=True),
        lambda a: np.max(a, axis=-1, keepdims=True),
    ),
    ("max-axes(0,2)", ((2, 3, 4),), _uniform, lambda a: a.max(axis=(0, 2)), lambda a: np.max(a, axis=(0, 2))),
    (
        "max-axes-keepdims",
        ((2, 3, 4),),
        _uniform,
        lambda a: a.max(axis=(2, 1), keepdims=True),
        lambda a: np.max(a, axis=(1, 2), keepdims=True),
    ),
    # reshape and transpose
    ("reshape-args", ((2, 3, 4),), _uniform, lambda a: a.reshape(6, 4), lambda a: np.reshape(a, (6, 4))),
    ("reshape-tuple-infer", ((2, 3, 4),), _uniform, lambda a: a.reshape((4, -1)), lambda a: np.reshape(a, (4, 6))),
    ("reshape-to-scalar", ((1, 1),), _uniform, lambda a: a.reshape(()), lambda a: np.reshape(a, ())),
    ("transpose-2d", ((3, 2),), _uniform, lambda a: a.transpose(), lambda a: a.T),
    ("transpose-.T", ((3, 2),), _uniform, lambda a: a.T * np.arange(3.0), lambda a: a.T * np.arange(3.0)),
    ("transpose-3d-last-two", ((2, 3, 4),), _uniform, lambda a: a.T, lambda a: np.swapaxes(a, 1, 2)),
    # indexing: an int, a slice, an index array with repeats, a mask, a pair of index arrays
    ("index-int", ((3, 2),), _uniform, lambda a: a[1], lambda a: a[1]),
    ("index-int-int", ((3, 2),), _uniform, lambda a: a[2, 1], lambda a: a[2, 1]),
    ("index-negative-slice", ((4, 3),), _uniform, lambda a: a[-3:, ::2], lambda a: a[-3:, ::2]),
    (
        "index-array-repeats",
        ((4, 2),),
        _uniform,
        lambda a: a[np.array([0, 3, 0, 0])],
        lambda a: a[np.array([0, 3, 0, 0])],
    ),
    ("index-list", ((4,),), _uniform, lambda a: a[[1, 1, 2]], lambda a: a[[1, 1, 2]]),
    (
        "index-mask",
        ((4,),),
        _uniform,
        lambda a: a[np.array([True, False, True, True])],
        lambda a: a[np.array([True, False, True, True])],
    ),
    (
        "index-pairs",
        ((3, 4),),
        _uniform,
        lambda a: a[np.arange(3), np.array([1, 3, 1])],
        lambda a: a[np.arange(3), np.array([1, 3, 1])],
    ),
    ("index-ellipsis", ((2, 3, 4),), _uniform, lambda a: a[..., 1:3], lambda a: a[..., 1:3]),
    # batched matmul: a shared matrix, a matrix per batch, broadcast batch axes, vectors against stacks
    ("matmul-[B,T,C]@[C,D]", ((2, 3, 4), (4, 5)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-[B,T,C]@[B,C,D]", ((2, 3, 4), (2, 4, 5)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-[1,T,C]@[B,C,D]", ((1, 3, 4), (2, 4, 5)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-[B,1,T,C]@[K,C,D]", ((2, 1, 3, 4), (3, 4, 2)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-[T,C]@[B,C,D]", ((3, 4), (2, 4, 5)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-[C]@[B,C,D]", ((4,), (2, 4, 5)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    ("matmul-[B,T,C]@[C]", ((2, 3, 4), (4,)), _uniform, lambda a, b: a @ b, lambda a, b: a @ b),
    (
        "matmul-[B,T,C]@[C,D]-const",
        ((2, 3, 4),),
        _uniform,
        lambda a: a @ np.arange(8.0).reshape(4, 2),
        lambda a: a @ np.arange(8.0).reshape(4, 2),
    ),
    # a composite: one hidden layer with a bias and a squared loss
    (
        "composite-mlp",
        ((2, 3), (3, 4), (4,)),
        _uniform,
        lambda x, w, b: ((x @ w + b).tanh() - 0.5).square().sum(axis=1),
        lambda x, w, b: np.sum((np.tanh(x @ w + b) - 0.5) ** 2, axis=1),
    ),
]


@pytest.mark.parametrize(
    "shapes, sampler, engine_op, numpy_op",
    [case[1:] for case in OP_CASES],
    ids=[case[0] for case in OP_CASES],
)
def test_op_gradient_matches_central_difference(shapes, sampler, engine_op, numpy_op):
    rng = np.random.default_rng(sum(len(s) * 7 + sum(s) for s in shapes) + 24)
    arrays = [sampler(rng, shape) for shape in shapes]
    expected = numpy_op(*arrays)
    # A non-trivial upstream gradient, so each VJP is tested with a general seed.
    seed = rng.uniform(-1.5, 1.5, size=np.shape(expected))

    leaves = [parameter(a, name=f"p{i}") for i, a in enumerate(arrays)]
    out = engine_op(*leaves)
    assert isinstance(out, Tensor)
    assert out.shape == np.shape(expected)
    np.testing.assert_allclose(out.data, expected, rtol=1e-12, atol=1e-12)

    out.backward_with_seed(seed)

    def objective(*raw: np.ndarray) -> float:
        return float(np.sum(numpy_op(*raw) * seed))

    for i, leaf in enumerate(leaves):
        assert leaf.grad is not None, f"operand {i} got no gradient"
        assert leaf.grad.shape == leaf.shape, f"operand {i} gradient not summed back to its own shape"
        assert leaf.grad.dtype == np.float64
        numeric = numeric_grad(objective, arrays, i)
        np.testing.assert_allclose(leaf.grad, numeric, rtol=1e-6, atol=1e-6, err_msg=f"operand {i}")


def test_broadcast_gradients_are_exact_sums_over_the_broadcast_axes():
    a = parameter(np.arange(6.0).reshape(3, 2), name="a")
    b = parameter([10.0, 20.0], name="b")
    c = parameter([[1.0], [2.0], [3.0]], name="c")
    seed = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ((a + b) * c).backward_with_seed(seed)
    np.testing.assert_array_equal(a.grad, seed * c.data)
    np.testing.assert_array_equal(b.grad, (seed * c.data).sum(axis=0))
    np.testing.assert_array_equal(c.grad, (seed * (a.data + b.data)).sum(axis=1, keepdims=True))


def test_relu_is_zero_for_negative_inputs_including_minus_infinity():
    x = parameter([-np.inf, -1.0, 0.0, 2.0, np.inf], name="x")
    y = x.relu()
    np.testing.assert_array_equal(y.data, [0.0, 0.0, 0.0, 2.0, np.inf])
    assert not np.any(np.signbit(y.data)), "relu must return +0.0, not -0.0"
    y.backward_with_seed(np.ones(5))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0, 1.0, 1.0])


def test_numpy_array_on_the_left_still_builds_a_tracked_tensor():
    x = parameter([1.0, -2.0], name="x")
    for y in (np.array([3.0, 4.0]) + x, np.array([3.0, 4.0]) - x, np.array([3.0, 4.0]) * x):
        assert isinstance(y, Tensor)
        assert y.requires_grad
    x.zero_grad()
    (np.array([3.0, 4.0]) * x).backward_with_seed([1.0, 1.0])
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])
    with pytest.raises(TypeError):
        np.ones((2, 2)) @ x


def test_values_are_float64_even_from_integer_input():
    assert parameter([1, 2], name="i").data.dtype == np.float64
    assert tensor([[1, 2]]).data.dtype == np.float64


def test_pow_rejects_a_tensor_exponent():
    with pytest.raises(TypeError):
        parameter([1.0], name="x") ** parameter([2.0], name="p")


# ---------------------------------------------------------------------- shared edges
def test_x_plus_x_gives_twice_the_upstream_gradient():
    x = parameter([2.0, -1.0, 0.5], name="x")
    seed = np.array([0.25, -3.0, 7.0])
    (x + x).backward_with_seed(seed)
    np.testing.assert_array_equal(x.grad, 2.0 * seed)


def test_x_times_x_gives_two_x_times_upstream():
    x = parameter([2.0, -1.0, 0.5], name="x")
    seed = np.array([0.25, -3.0, 7.0])
    (x * x).backward_with_seed(seed)
    np.testing.assert_array_equal(x.grad, 2.0 * x.data * seed)


def test_diamond_graph_accumulates_both_branches():
    a = parameter([1.0, -2.0], name="a")
    left = a * 2.0
    right = a.scale(3.0)
    (left + right).backward_with_seed([1.0, 1.0])
    np.testing.assert_array_equal(a.grad, [5.0, 5.0])


def test_nonlinear_diamond_with_uneven_depths_matches_central_difference():
    # b is consumed at three different depths; its gradient must be complete
    # before it is propagated to a.
    a0 = np.array([[0.3, -0.7], [1.1, 0.4]])
    a = parameter(a0, name="a")
    b = a.tanh()
    c = b * a
    d = (c + b).square() * b
    out = d.sum()
    out.backward()

    def f(raw: np.ndarray) -> float:
        rb = np.tanh(raw)
        return float(np.sum((rb * raw + rb) ** 2 * rb))

    np.testing.assert_allclose(a.grad, numeric_grad(f, [a0], 0), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("p_first", [True, False], ids=["p*q", "q*p"])
def test_a_node_that_is_both_parent_and_grandparent_is_complete_before_it_propagates(p_first):
    x0 = np.array([0.4, -1.3])
    seed = np.array([1.5, -0.5])
    x = parameter(x0, name="x")
    p = x.tanh()
    q = p.scale(3.0)  # q uses p, and n uses both
    n = p * q if p_first else q * p
    n.backward_with_seed(seed)
    t = np.tanh(x0)
    np.testing.assert_allclose(x.grad, seed * 6.0 * t * (1.0 - t * t), rtol=1e-14, atol=0)


def test_shared_intermediate_used_by_two_consumers():
    x = parameter([0.5, -1.5], name="x")
    h = x * x  # shared node, not a leaf
    y = h + h.tanh()
    y.backward_with_seed([1.0, 1.0])
    expected = (1.0 + (1.0 - np.tanh(x.data**2) ** 2)) * 2.0 * x.data
    np.testing.assert_allclose(x.grad, expected, rtol=1e-14, atol=0)


# -------------------------------------------------------------------- shape errors
def test_backward_on_non_scalar_raises_shape_error_naming_the_shape():
    x = parameter(np.ones((2, 3)), name="x")
    y = x * 2.0
    with pytest.raises(ShapeError, match=r"\[2,3\]"):
        y.backward()
    assert x.grad is None


def test_seed_of_wrong_shape_names_both_shapes_and_leaves_graph_usable():
    x = parameter(np.ones((2, 3)), name="x")
    y = x * 2.0
    with pytest.raises(ShapeError) as info:
        y.backward_with_seed(np.ones(3))
    message = str(info.value)
    assert "[3]" in message and "[2,3]" in message
    assert {info.value.left, info.value.right} == {(3,), (2, 3)}
    assert x.grad is None
    # A rejected seed must not release the graph.
    y.backward_with_seed(np.ones((2, 3)))
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 2.0))


def test_scalar_backward_seeds_with_one():
    x = parameter([1.0, 2.0, 3.0], name="x")
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0, 6.0])


@pytest.mark.parametrize(
    "op, left, right",
    [
        (lambda a, b: a + b, (2, 3), (4,)),
        (lambda a, b: a - b, (2, 3), (4,)),
        (lambda a, b: a * b, (2, 3), (4,)),
        (lambda a, b: a @ b, (2, 3), (4,)),
        (lambda a, b: a @ b, (2, 3), (2, 3)),
        (lambda a, b: a @ b, (4,), (2, 3)),
        (lambda a, b: a @ b, (3,), (4,)),
        (lambda a, b: a @ b, (2, 2, 3), (2, 2)),
        (lambda a, b: a @ b, (2, 3, 4), (3, 4, 5)),
        (lambda a, b: a @ b, (), (2, 2)),
        (lambda a, b: a / b, (2, 3), (4,)),
        (lambda a, b: a.reshape(b.shape), (2, 3), (4, 2)),
    ],
    ids=[
        "add",
        "sub",
        "mul",
        "matmul-mat@vec",
        "matmul-mat@mat",
        "matmul-vec@mat",
        "matmul-dot",
        "matmul-3d-inner",
        "matmul-batch",
        "matmul-0d",
        "div",
        "reshape",
    ],
)
def test_shape_errors_name_both_shapes(op, left, right):
    a = parameter(np.ones(left), name="a")
    b = parameter(np.ones(right), name="b")
    with pytest.raises(ShapeError) as info:
        op(a, b)
    message = str(info.value)
    left_text = "[" + ",".join(map(str, left)) + "]"
    right_text = "[" + ",".join(map(str, right)) + "]"
    assert left_text in message, message
    assert right_text in message, message
    assert info.value.left == left and info.value.right == right
    assert isinstance(info.value, ValueError)


def test_sum_over_a_missing_axis_raises_shape_error_naming_the_shape():
    x = parameter(np.ones((2, 3)), name="x")
    for axis in (2, -3):
        with pytest.raises(ShapeError, match=r"\[2,3\]"):
            x.sum(axis=axis)


@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_reductions_reject_missing_repeated_and_non_integer_axes(op):
    x = parameter(np.ones((2, 3)), name="x")
    reduce = getattr(x, op)
    for axis in (2, -3, (0, 2)):
        with pytest.raises(ShapeError, match=r"\[2,3\]"):
            reduce(axis=axis)
    with pytest.raises(ShapeError, match="repeats"):
        reduce(axis=(1, -1))
    for axis in (1.0, "0", (0, None), True):
        with pytest.raises(TypeError, match="axis"):
            reduce(axis=axis)


@pytest.mark.parametrize("op", ["mean", "max"])
def test_mean_and_max_of_no_elements_raise_shape_error(op):
    x = parameter(np.ones((0, 3)), name="x")
    with pytest.raises(ShapeError, match=r"\[0,3\]"):
        getattr(x, op)(axis=0)
    assert getattr(x, op)(axis=1).shape == (0,)


def test_mean_is_the_same_float_as_numpy_mean():
    a = np.random.default_rng(7).uniform(-1.0, 1.0, size=(5, 7, 3))
    x = parameter(a, name="x")
    for axis in (None, 0, -1, (0, 2)):
        assert x.mean(axis=axis).data.tobytes() == np.mean(a, axis=axis).tobytes()


def test_max_sends_the_whole_gradient_to_the_first_maximum():
    x = parameter([1.0, 3.0, 3.0, 2.0], name="x")
    x.max().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0, 0.0])

    m = parameter([[5.0, 1.0, 5.0], [2.0, 2.0, 0.0]], name="m")
    m.max(axis=1).backward_with_seed([10.0, 20.0])
    np.testing.assert_array_equal(m.grad, [[10.0, 0.0, 0.0], [20.0, 0.0, 0.0]])

    # Over several axes, "first" is row-major order over the reduced axes.
    c = parameter([[[1.0, 4.0], [4.0, 0.0]], [[4.0, 4.0], [2.0, 3.0]]], name="c")
    c.max(axis=(0, 2), keepdims=True).backward_with_seed([[[1.0], [2.0]]])
    expected = np.zeros((2, 2, 2))
    expected[0, 0, 1] = 1.0  # axis-1 row 0: 4 at (0,·,1) comes before (1,·,0) and (1,·,1)
    expected[0, 1, 0] = 2.0  # axis-1 row 1: the only 4
    np.testing.assert_array_equal(c.grad, expected)
    assert not np.any(np.signbit(c.grad)), "the unused elements get +0.0"


def test_sigmoid_of_extreme_inputs_is_finite_without_warnings():
    x = parameter([-1000.0, -40.0, 0.0, 40.0, 1000.0], name="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = x.sigmoid()
        y.backward_with_seed(np.ones(5))
    assert y.data[2] == 0.5 and y.data[4] == 1.0 and y.data[0] == 0.0
    assert y.data[1] == pytest.approx(np.exp(-40.0), rel=1e-12)  # not rounded away to 0
    assert np.all(np.isfinite(x.grad))
    assert x.grad[2] == 0.25


def test_detach_stops_the_gradient_but_keeps_the_values():
    x = parameter([1.0, -2.0, 3.0], name="x")
    held = x.detach()
    assert not held.requires_grad and held.parents == ()
    np.testing.assert_array_equal(held.data, x.data)
    (x * held).backward_with_seed([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(x.grad, x.data)  # not 2x: the detached factor is a constant


def test_a_repeated_index_collects_every_read():
    x = parameter([1.0, 2.0, 3.0], name="x")
    (x[0] + x[0] * 3.0 + x[np.array([2, 2, 0])].sum()).backward()
    np.testing.assert_array_equal(x.grad, [5.0, 0.0, 2.0])


def test_bad_indexes_raise_errors_naming_the_shape():
    x = parameter(np.ones((2, 3)), name="x")
    with pytest.raises(IndexError, match=r"\[2,3\]"):
        x[2]
    with pytest.raises(IndexError, match=r"\[2,3\]"):
        x[np.array([0, 5])]
    with pytest.raises(IndexError, match=r"\[2,3\]"):
        x[0.5]
    with pytest.raises(TypeError, match="not with a Tensor"):
        x[tensor([0.0])]


def test_transpose_needs_two_axes_and_reshape_names_the_element_count():
    with pytest.raises(ShapeError, match=r"\[3\]"):
        _ = parameter([1.0, 2.0, 3.0], name="v").T
    with pytest.raises(ShapeError) as info:
        parameter(np.ones((2, 3)), name="m").reshape(4, -1)
    assert "6 elements" in str(info.value)
    assert info.value.left == (2, 3) and info.value.right == (4, -1)


def test_batched_matmul_matches_a_loop_over_the_batch():
    rng = np.random.default_rng(3)
    a0, b0 = rng.normal(size=(4, 3, 5)), rng.normal(size=(5, 2))
    seed = rng.normal(size=(4, 3, 2))
    a, b = parameter(a0, name="a"), parameter(b0, name="b")
    (a @ b).backward_with_seed(seed)
    np.testing.assert_allclose(b.grad, sum(a0[i].T @ seed[i] for i in range(4)), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(a.grad, np.stack([seed[i] @ b0.T for i in range(4)]), rtol=1e-13, atol=1e-13)


# --------------------------------------------------------------------- retain_graph
def test_retain_graph_allows_a_second_backward_that_accumulates():
    x = parameter([1.0, -2.0, 3.0], name="x")
    y = (x * x).tanh()
    seed = np.array([1.0, 0.5, -1.0])
    y.backward_with_seed(seed, retain_graph=True)
    first = x.grad.copy()
    assert np.all(first != 0.0)
    y.backward_with_seed(seed, retain_graph=True)
    np.testing.assert_array_equal(x.grad, 2.0 * first)
    y.backward_with_seed(seed, retain_graph=False)
    np.testing.assert_array_equal(x.grad, 3.0 * first)


def test_released_graph_raises_on_second_backward_and_names_retain_graph():
    x = parameter([1.0, -2.0], name="x")
    y = x * x + x
    y.backward_with_seed([1.0, 1.0], retain_graph=False)
    after_first = x.grad.copy()
    with pytest.raises(GraphReleasedError, match="retain_graph"):
        y.backward_with_seed([1.0, 1.0])
    np.testing.assert_array_equal(x.grad, after_first)


def test_backward_with_seed_releases_by_default():
    x = parameter([1.0, -2.0], name="x")
    y = x * 3.0
    y.backward_with_seed([1.0, 1.0])
    with pytest.raises(GraphReleasedError, match="retain_graph"):
        y.backward_with_seed([1.0, 1.0], retain_graph=True)


def test_scalar_backward_releases_the_graph():
    x = parameter([1.0, -2.0], name="x")
    y = (x * x).sum()
    y.backward()
    with pytest.raises(GraphReleasedError) as info:
        y.backward()
    assert "retain_graph" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_released_intermediate_cannot_be_reused_in_a_new_graph():
    x = parameter([1.0, -2.0], name="x")
    h = x * x
    h.sum().backward()
    with pytest.raises(GraphReleasedError):
        (h * 2.0).sum().backward()


def test_retained_graph_keeps_its_parents():
    x = parameter([1.0, 2.0], name="x")
    w = parameter([3.0, 4.0], name="w")
    y = x * w
    y.backward_with_seed([1.0, 1.0], retain_graph=False)
    assert y.parents[0] is x and y.parents[1] is w


# ------------------------------------------------------- accumulation and constants
def test_leaf_gradients_accumulate_across_separate_backward_calls():
    x = parameter([1.0, 2.0], name="x")
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0 + 2.0, 3.0 + 4.0])


def test_zero_grad_resets_the_accumulated_gradient():
    x = parameter([1.0, 2.0], name="x")
    (x * 3.0).sum().backward()
    x.zero_grad()
    assert x.grad is None
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])


def test_gradient_is_the_array_backward_left_and_names_a_tensor_it_never_reached():
    x = parameter([1.0, 2.0], name="x")
    with pytest.raises(AutogradError, match="name='x'.*no gradient"):
        _ = x.gradient
    (x * 3.0).sum().backward()
    assert x.gradient is x.grad
    np.testing.assert_array_equal(x.gradient, [3.0, 3.0])
    x.zero_grad()
    with pytest.raises(AutogradError, match="no backward pass has reached it"):
        _ = x.gradient


def test_constants_get_no_gradient():
    x = parameter([1.0, 2.0], name="x")
    c = tensor([5.0, -1.0], name="c")
    assert not c.requires_grad
    (x * c + c).sum().backward()
    assert c.grad is None
    np.testing.assert_array_equal(x.grad, [5.0, -1.0])


def test_result_of_constants_only_is_untracked():
    c = tensor([1.0, 2.0])
    d = tensor([3.0, 4.0])
    y = (c * d + c).sum()
    assert not y.requires_grad
    assert y.parents == ()
    with pytest.raises(AutogradError):
        y.backward()


def test_leaf_gradients_do_not_alias_the_seed_or_each_other():
    x = parameter([1.0, 2.0], name="x")
    z = parameter([3.0, 4.0], name="z")
    seed = np.array([1.0, 1.0])
    (x + z).backward_with_seed(seed)
    seed[:] = 100.0
    x.grad[:] = -7.0
    np.testing.assert_array_equal(z.grad, [1.0, 1.0])


def test_backward_never_writes_into_the_seed_even_when_it_flows_into_a_shared_node():
    # h receives the seed itself (through both edges of h + h), then a fresh
    # buffer from the scale edge: three contributions to one intermediate.
    x = parameter([0.5, -1.0, 2.0], name="x")
    seed = np.array([1.0, -2.0, 0.25])
    kept = seed.copy()
    h = x.tanh()
    ((h + h) + h.scale(3.0)).backward_with_seed(seed)
    np.testing.assert_array_equal(seed, kept)
    np.testing.assert_array_equal(x.grad, (seed + seed + seed * 3.0) * (1.0 - np.tanh(x.data) ** 2))


def test_a_shared_intermediate_with_many_consumers_sums_them_in_consumer_order():
    # Five consumers of h; the engine adds their contributions in a fixed order,
    # so the result equals that left-to-right sum to the last bit, run after run.
    x0 = np.array([0.3, -0.7, 1.1])
    seed = np.array([0.9, -0.4, 0.6])

    def run() -> np.ndarray:
        x = parameter(x0, name="x")
        h = x * 1.5
        (h.tanh() + h.square() + h.scale(-0.25) + h.relu() + (h * h.tanh())).backward_with_seed(seed)
        return x.grad

    first, second = run(), run()
    assert first.tobytes() == second.tobytes()
    h0 = x0 * 1.5
    t = np.tanh(h0)
    expected = seed * ((1.0 - t * t) + 2.0 * h0 - 0.25 + (h0 > 0) + t + h0 * (1.0 - t * t)) * 1.5
    np.testing.assert_allclose(first, expected, rtol=1e-14, atol=0)


def test_a_later_backward_does_not_change_a_gradient_array_read_earlier():
    x = parameter([1.0, -2.0], name="x")
    w = parameter([[0.5, 1.0], [-1.0, 0.25]], name="w")
    y = (x @ w).tanh()
    y.backward_with_seed([1.0, 1.0], retain_graph=True)
    first_x, first_w = x.grad, w.grad
    kept_x, kept_w = first_x.copy(), first_w.copy()
    y.backward_with_seed([1.0, 1.0])
    np.testing.assert_array_equal(first_x, kept_x)
    np.testing.assert_array_equal(first_w, kept_w)
    np.testing.assert_array_equal(x.grad, 2.0 * kept_x)
    np.testing.assert_array_equal(w.grad, 2.0 * kept_w)


def test_a_scalar_parameter_gets_an_ndarray_gradient():
    x = parameter(2.0, name="x")
    (x * x).backward()
    assert isinstance(x.grad, np.ndarray) and x.grad.shape == ()
    assert float(x.grad) == 4.0


def test_backward_on_a_leaf_sets_its_own_gradient():
    x = parameter([1.0, 2.0], name="x")
    x.backward_with_seed([0.5, -0.5])
    np.testing.assert_array_equal(x.grad, [0.5, -0.5])


def test_numpy_returns_a_copy():
    x = parameter([1.0, 2.0], name="x")
    view = x.numpy()
    view[0] = 99.0
    assert x.data[0] == 1.0


# ---------------------------------------------------------------- gradient checking
def _chapter_objective(values) -> float:
    """Raw-NumPy Σ (x + xW)ᵢ² — never touches the engine."""
    x, w = values["x"], values["W"]
    return float(np.sum((x + x @ w) ** 2))


def _chapter_analytic() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    values = {"x": np.array([2.0, -1.0]), "W": np.array([[0.5, -1.0], [2.0, 0.25]])}
    x = parameter(values["x"], name="x")
    w = parameter(values["W"], name="W")
    (x + x @ w).square().sum().backward()
    return values, {"x": x.grad, "W": w.grad}


SAMPLES = {"x": [(0,), (1,)], "W": [(0, 0), (0, 1), (1, 0), (1, 1)]}


def test_check_gradients_passes_on_correct_analytic_gradient():
    values, analytic = _chapter_analytic()
    result = check_gradients(_chapter_objective, values, analytic, SAMPLES, step=1e-6, tolerance=2e-6)
    assert isinstance(result, GradCheckResult)
    assert result.passed
    assert result.count("x") == 2 and result.count("W") == 4
    assert len(result.checks) == 6
    assert result.max_error <= 2e-6
    assert result.step == 1e-6 and result.tolerance == 2e-6
    assert [(c.parameter, c.index) for c in result.checks] == [
        (name, idx) for name, indices in SAMPLES.items() for idx in indices
    ]


@pytest.mark.parametrize("name, index", [("x", (1,)), ("W", (1, 0))])
def test_check_gradients_fails_when_analytic_gradient_is_perturbed(name, index):
    values, analytic = _chapter_analytic()
    broken = {k: v.copy() for k, v in analytic.items()}
    broken[name][index] += 1e-3
    result = check_gradients(_chapter_objective, values, broken, SAMPLES, step=1e-6, tolerance=2e-6)
    assert result.passed is False
    failed = [(c.parameter, c.index) for c in result.checks if not c.passed]
    assert failed == [(name, index)]
    assert result.max_error > 9e-4


def test_check_gradients_fails_on_nan_and_on_no_samples():
    values, analytic = _chapter_analytic()
    broken = {k: v.copy() for k, v in analytic.items()}
    broken["x"][0] = np.nan
    assert not check_gradients(_chapter_objective, values, broken, SAMPLES, step=1e-6, tolerance=2e-6).passed
    empty = check_gradients(_chapter_objective, values, analytic, {}, step=1e-6, tolerance=2e-6)
    assert empty.passed is False


def test_check_gradients_is_deterministic():
    values, analytic = _chapter_analytic()
    first = check_gradients(_chapter_objective, values, analytic, SAMPLES, step=1e-6, tolerance=2e-6)
    second = check_gradients(_chapter_objective, values, analytic, SAMPLES, step=1e-6, tolerance=2e-6)
    assert first == second
    assert [c.numeric for c in first.checks] == [c.numeric for c in second.checks]


def test_central_difference_does_not_mutate_inputs():
    values = {"x": np.array([2.0, -1.0]), "W": np.array([[0.5, -1.0], [2.0, 0.25]])}
    snapshot = {k: v.copy() for k, v in values.items()}
    ids = {k: id(v) for k, v in values.items()}
    seen: list[dict[str, np.ndarray]] = []

    def objective(v):
        seen.append({k: a.copy() for k, a in v.items()})
        return _chapter_objective(v)

    central_difference(objective, values, "W", (1, 0), 1e-6)
    assert set(values) == {"x", "W"}
    for k in values:
        assert id(values[k]) == ids[k]
        np.testing.assert_array_equal(values[k], snapshot[k])
    # Exactly two evaluations, each moving only the requested coordinate.
    assert len(seen) == 2
    for v, sign in zip(seen, (1.0, -1.0)):
        np.testing.assert_array_equal(v["x"], snapshot["x"])
        diff = v["W"] - snapshot["W"]
        assert np.count_nonzero(diff) == 1
        assert diff[1, 0] == pytest.approx(sign * 1e-6, rel=1e-6)


def test_central_difference_matches_a_known_derivative():
    values = {"x": np.array([2.0, 3.0])}
    d = central_difference(lambda v: float(v["x"][0] ** 3 * v["x"][1]), values, "x", (0,), 1e-5)
    assert d == pytest.approx(3 * 4.0 * 3.0, rel=1e-8)


# ---------------------------------------------------------- unbroadcast properties
@st.composite
def grad_and_target(draw):
    grad_shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    drop = draw(st.integers(min_value=0, max_value=len(grad_shape)))
    kept = grad_shape[drop:]
    target = tuple(1 if draw(st.booleans()) else d for d in kept)
    grad = draw(
        hnp.arrays(np.float64, grad_shape, elements=st.floats(-100.0, 100.0, allow_nan=False, allow_infinity=False))
    )
    return grad, target


@settings(max_examples=50, deadline=None)
@given(grad_and_target())
def test_unbroadcast_returns_target_shape_and_preserves_the_sum(case):
    grad, target = case
    out = unbroadcast(grad, target)
    assert out.shape == target
    assert np.isclose(out.sum(), grad.sum(), rtol=1e-9, atol=1e-9 * (1.0 + np.abs(grad).sum()))


@settings(max_examples=50, deadline=None)
@given(grad_and_target(), st.data())
def test_unbroadcast_is_the_adjoint_of_broadcasting(case, data):
    grad, target = case
    v = data.draw(hnp.arrays(np.float64, target, elements=st.floats(-10.0, 10.0, allow_nan=False)))
    lhs = float(np.sum(unbroadcast(grad, target) * v))
    rhs = float(np.sum(grad * np.broadcast_to(v, grad.shape)))
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1.0 + np.abs(grad).sum() * 10.0))


@settings(max_examples=50, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
def test_add_gradient_has_each_operand_shape(shapes):
    left, right = shapes.input_shapes
    a = parameter(np.ones(left), name="a")
    b = parameter(np.ones(right), name="b")
    y = a + b
    assert y.shape == shapes.result_shape
    seed = np.arange(1.0, 1.0 + np.prod(y.shape, dtype=int)).reshape(y.shape)
    y.backward_with_seed(seed)
    assert a.grad.shape == left and b.grad.shape == right
    for leaf, shape in ((a, left), (b, right)):
        assert leaf.grad.sum() == pytest.approx(seed.sum())
        # Adjoint of broadcasting, checked against NumPy's own broadcast_to.
        probe = np.linspace(-1.0, 1.0, num=int(np.prod(shape, dtype=int))).reshape(shape)
        assert float(np.sum(leaf.grad * probe)) == pytest.approx(
            float(np.sum(seed * np.broadcast_to(probe, y.shape))), rel=1e-12, abs=1e-12
        )
