"""Tests for softmax, log_softmax, cross_entropy, layer_norm and rms_norm.

Values are compared with raw-NumPy formulas and gradients with central
differences of those formulas (never the engine), with a general upstream
seed so every VJP on the way is exercised.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numeric_gradients import numeric_grad

from site_builder.autograd import ShapeError, Tensor, parameter, tensor
from site_builder.nn import NormalizationError, cross_entropy, layer_norm, log_softmax, rms_norm, softmax


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


def np_rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """The published order of operations, in plain NumPy."""
    d = x.shape[-1]
    ms = np.sum(x * x, axis=-1, keepdims=True) / d
    inv = np.exp(-0.5 * np.log(ms + eps))
    x_hat = x * inv
    return x_hat * gain


def check_gradients_of(engine_fn, numpy_fn, arrays: list[np.ndarray], seed_rng: int, tol: float = 1e-6) -> None:
    rng = np.random.default_rng(seed_rng)
    expected = numpy_fn(*arrays)
    seed = rng.uniform(-1.5, 1.5, size=np.shape(expected))
    leaves = [parameter(a, name=f"p{i}") for i, a in enumerate(arrays)]
    out = engine_fn(*leaves)
    np.testing.assert_allclose(out.data, expected, rtol=1e-12, atol=1e-12)
    out.backward_with_seed(seed)

    def objective(*raw: np.ndarray) -> float:
        return float(np.sum(numpy_fn(*raw) * seed))

    for i, leaf in enumerate(leaves):
        assert leaf.grad is not None and leaf.grad.shape == leaf.shape
        np.testing.assert_allclose(
            leaf.grad, numeric_grad(objective, arrays, i), rtol=tol, atol=tol, err_msg=f"operand {i}"
        )


# ------------------------------------------------------------------------- softmax
@pytest.mark.parametrize(
    "shape, axis",
    [((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((5,), -1)],
    ids=["rows", "columns", "3d-middle", "vector"],
)
def test_softmax_and_log_softmax_gradients_match_central_difference(shape, axis):
    x0 = np.random.default_rng(11).uniform(-3.0, 3.0, size=shape)
    check_gradients_of(lambda x: softmax(x, axis=axis), lambda x: np_softmax(x, axis), [x0], 1)
    check_gradients_of(lambda x: log_softmax(x, axis=axis), lambda x: np.log(np_softmax(x, axis)), [x0], 2)


def test_softmax_of_huge_logits_is_finite_and_exact():
    x = parameter([[1000.0, 1001.0], [-1000.0, -1001.0]], name="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = softmax(x)
        s.backward_with_seed(np.array([[1.0, 0.0], [0.0, 1.0]]))
    e = np.exp(-1.0)
    np.testing.assert_allclose(s.data, [[e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]], rtol=1e-15)
    assert np.all(np.isfinite(x.grad))


def test_softmax_gradient_is_the_softmax_jacobian_product_even_with_a_tied_max():
    # s * (g - sum(g * s)): the subtracted max, a constant shift, contributes nothing.
    x0 = np.array([[2.0, 2.0, -1.0, 0.5], [0.0, 3.0, 3.0, 3.0]])
    g = np.array([[0.3, -1.2, 0.8, 2.0], [1.0, 0.0, -0.5, 0.25]])
    x = parameter(x0, name="x")
    s = softmax(x)
    s.backward_with_seed(g)
    expected = s.data * (g - np.sum(g * s.data, axis=-1, keepdims=True))
    np.testing.assert_allclose(x.grad, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(x.grad.sum(axis=-1), [0.0, 0.0], atol=1e-15)


def test_tied_logits_with_equal_upstream_get_exactly_equal_gradients():
    # The subtracted max is a constant: no extra term lands on the first of the tied maxima.
    x0 = np.array([[3.0, 3.0, 1.0, 0.3], [0.1, 2.5, -1.0, 2.5], [1.7, 0.2, 1.7, -3.0]])
    g = np.array([[0.7, 0.7, -0.2, 1.3], [0.4, -0.9, 0.35, -0.9], [2.2, 0.5, 2.2, 0.1]])
    for fn in (softmax, log_softmax):
        x = parameter(x0, name="x")
        fn(x).backward_with_seed(g)
        assert x.grad[0, 0] == x.grad[0, 1]
        assert x.grad[1, 1] == x.grad[1, 3]
        assert x.grad[2, 0] == x.grad[2, 2]


# ------------------------------------------------------------------- cross_entropy
def test_cross_entropy_value_and_gradient():
    rng = np.random.default_rng(5)
    z0 = rng.uniform(-2.0, 2.0, size=(4, 3))
    targets = np.array([2, 0, 0, 1])

    def np_loss(z: np.ndarray) -> float:
        logp = np.log(np_softmax(z))
        return float(-np.mean(logp[np.arange(4), targets]))

    z = parameter(z0, name="logits")
    loss = cross_entropy(z, targets)
    assert loss.shape == ()
    assert loss.data == pytest.approx(np_loss(z0), rel=1e-14)
    loss.backward()
    onehot = np.eye(3)[targets]
    np.testing.assert_allclose(z.grad, (np_softmax(z0) - onehot) / 4, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(z.grad, numeric_grad(np_loss, [z0], 0), rtol=1e-6, atol=1e-7)


def test_cross_entropy_takes_a_list_and_a_repeated_class():
    z = parameter([[0.0, 0.0], [0.0, 0.0]], name="logits")
    loss = cross_entropy(z, [1, 1])
    assert loss.data == pytest.approx(np.log(2.0), rel=1e-15)


@pytest.mark.parametrize(
    "logits_shape, targets, fragment",
    [
        ((3, 4), [0, 1], "targets of shape [3], got [2]"),
        ((3, 4), [[0, 1, 2]], "targets of shape [3], got [1,3]"),
        ((3, 4), [0, 4, 1], "target 4 at row 1"),
        ((3, 4), [0, 1, -1], "target -1 at row 2"),
        ((4,), [0], "logits of shape [N,K], got [4]"),
        ((2, 3, 4), [0, 1], "logits of shape [N,K], got [2,3,4]"),
    ],
    ids=["short", "2d-targets", "too-large", "negative", "1d-logits", "3d-logits"],
)
def test_cross_entropy_rejects_bad_targets_naming_both_shapes(logits_shape, targets, fragment):
    z = parameter(np.zeros(logits_shape), name="logits")
    with pytest.raises(ShapeError) as info:
        cross_entropy(z, targets)
    message = str(info.value)
    assert fragment in message
    assert "[" + ",".join(map(str, logits_shape)) + "]" in message
    assert info.value.left == logits_shape and info.value.right == np.shape(targets)


def test_cross_entropy_rejects_non_integer_targets():
    z = parameter(np.zeros((2, 3)), name="logits")
    with pytest.raises(TypeError, match="float64"):
        cross_entropy(z, [0.0, 1.0])
    with pytest.raises(TypeError, match="not a Tensor"):
        cross_entropy(z, tensor([0.0, 1.0]))


# ---------------------------------------------------------------------- layer_norm
@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4), (6,)], ids=["rows", "3d", "vector"])
def test_layer_norm_gradients_match_central_difference(shape):
    rng = np.random.default_rng(17)
    arrays = [
        rng.uniform(-2.0, 2.0, size=shape),
        rng.uniform(0.5, 1.5, size=shape[-1:]),
        rng.uniform(-1.0, 1.0, size=shape[-1:]),
    ]
    check_gradients_of(
        lambda x, g, b: layer_norm(x, g, b, eps=1e-5), lambda x, g, b: np_layer_norm(x, g, b, 1e-5), arrays, 3
    )


def test_layer_norm_output_rows_have_zero_mean_and_unit_variance_before_gain():
    x = parameter(np.random.default_rng(2).normal(3.0, 5.0, size=(4, 64)), name="x")
    y = layer_norm(x, np.ones(64), np.zeros(64), eps=0.0)
    np.testing.assert_allclose(y.data.mean(axis=-1), 0.0, atol=1e-14)
    np.testing.assert_allclose(y.data.var(axis=-1), 1.0, rtol=1e-13)


@pytest.mark.parametrize(
    "gain_shape, bias_shape, bad", [((3,), (4,), "gain"), ((4,), (1, 4), "bias"), ((4, 1), (4,), "gain")]
)
def test_layer_norm_rejects_parameters_of_the_wrong_width(gain_shape, bias_shape, bad):
    x = parameter(np.ones((2, 4)), name="x")
    with pytest.raises(ShapeError) as info:
        layer_norm(x, parameter(np.ones(gain_shape), name="g"), parameter(np.ones(bias_shape), name="b"))
    shape = gain_shape if bad == "gain" else bias_shape
    assert f"layer_norm {bad} must have shape [4]" in str(info.value)
    assert "[2,4]" in str(info.value) and "[" + ",".join(map(str, shape)) + "]" in str(info.value)
    assert info.value.left == (2, 4) and info.value.right == shape


def test_layer_norm_with_eps_zero_rejects_a_row_with_no_spread():
    x = parameter([[1.0, 2.0, 4.0], [0.5, 0.5, 0.5]], name="x")
    with pytest.raises(NormalizationError, match=r"row 1 of x \[2,3\]"):
        layer_norm(x, np.ones(3), np.zeros(3), eps=0.0)


# ------------------------------------------------------------------------ rms_norm
def test_rms_norm_is_bit_identical_to_the_published_order_of_operations():
    rng = np.random.default_rng(23)
    x0 = rng.normal(size=(2, 5, 7)) * np.array([1e-3, 1.0, 30.0, 1.0, 7.0]).reshape(1, 5, 1)
    g0 = rng.uniform(0.5, 1.5, size=7)
    for eps in (1e-5, 1e-6, 0.0):
        y = rms_norm(parameter(x0, name="x"), parameter(g0, name="gain"), eps=eps)
        assert y.data.tobytes() == np_rms_norm(x0, g0, eps).tobytes(), f"eps={eps}"


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4), (6,)], ids=["rows", "3d", "vector"])
def test_rms_norm_gradients_match_central_difference(shape):
    rng = np.random.default_rng(29)
    arrays = [rng.uniform(-2.0, 2.0, size=shape), rng.uniform(0.5, 1.5, size=shape[-1:])]
    check_gradients_of(lambda x, g: rms_norm(x, g, eps=1e-5), lambda x, g: np_rms_norm(x, g, 1e-5), arrays, 4)


def test_rms_norm_with_eps_zero_rejects_an_all_zero_row_before_taking_a_log():
    x = parameter([[1.0, -2.0], [0.0, 0.0], [3.0, 0.0]], name="x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a log of zero would warn "divide by zero" first
        with pytest.raises(NormalizationError) as info:
            rms_norm(x, np.ones(2), eps=0.0)
    assert isinstance(info.value, ValueError)
    assert "row 1 of x [3,2]" in str(info.value) and "eps > 0" in str(info.value)
    # The same rows with eps > 0 are fine, and a zero row maps to zero.
    y = rms_norm(x, np.ones(2), eps=1e-6)
    np.testing.assert_array_equal(y.data[1], [0.0, 0.0])


def test_rms_norm_with_eps_zero_names_where_the_zero_row_is():
    with pytest.raises(NormalizationError, match=r"row \(1, 0\) of x \[2,2,3\]"):
        rms_norm(
            parameter([[[1.0, 2.0, 3.0], [1.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]], name="x"),
            np.ones(3),
            eps=0.0,
        )
    with pytest.raises(NormalizationError, match=r"its only row of x \[3\]"):
        rms_norm(parameter(np.zeros(3), name="v"), np.ones(3), eps=0.0)


def test_rms_norm_with_eps_zero_accepts_rows_that_are_not_all_zero():
    x = parameter([[3.0, 4.0]], name="x")
    y = rms_norm(x, np.ones(2), eps=0.0)
    np.testing.assert_allclose(y.data, [[3.0 / np.sqrt(12.5), 4.0 / np.sqrt(12.5)]], rtol=1e-15)


def test_rms_norm_rejects_a_scalar_input_and_a_gain_of_the_wrong_width():
    with pytest.raises(ShapeError) as info:
        rms_norm(parameter(2.0, name="x"), parameter([1.0], name="g"))
    assert "shape [] (no axes)" in str(info.value) and "[1]" in str(info.value)
    with pytest.raises(ShapeError) as info:
        rms_norm(parameter(np.ones((2, 3)), name="x"), parameter(np.ones(4), name="g"))
    assert "rms_norm gain must have shape [3]" in str(info.value)
    assert "[2,3]" in str(info.value) and "[4]" in str(info.value)
    assert info.value.left == (2, 3) and info.value.right == (4,)


@pytest.mark.parametrize("eps", [-1e-5, float("nan")])
def test_norms_reject_a_negative_or_nan_eps(eps):
    x = parameter(np.ones((2, 3)), name="x")
    with pytest.raises(NormalizationError, match="eps"):
        rms_norm(x, np.ones(3), eps=eps)
    with pytest.raises(NormalizationError, match="eps"):
        layer_norm(x, np.ones(3), np.zeros(3), eps=eps)


def test_norms_are_composed_from_engine_ops_so_gain_gets_a_gradient():
    x = parameter(np.arange(1.0, 7.0).reshape(2, 3), name="x")
    gain = parameter(np.ones(3), name="norm.gain")
    out = rms_norm(x, gain)
    assert isinstance(out, Tensor)
    assert sorted(leaf.name for leaf in out.leaves()) == ["norm.gain", "x"]
