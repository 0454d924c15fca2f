"""Tests for the bias-free ``Linear`` layer and the residual merge ``residual_add``.

Fixture values are the chapter's (float64, ``F(x) = x @ W``, ``W`` of shape
``[in, out]``). Every expected number below is a dyadic rational, so exact
float equality is the right comparison.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from numeric_gradients import numeric_grad

from site_builder.autograd import Tensor, check_gradients, parameter, tensor
from site_builder.nn import Linear, ResidualShapeError, residual_add

X = [2.0, -1.0]
W = [[0.5, -1.0], [2.0, 0.25]]
YBAR = np.array([1.0, 1.0])
STACK_W = [[-0.25, 0.0], [0.0, -0.25]]


def leaves_reachable(root: Tensor) -> list[Tensor]:
    found: list[Tensor] = []
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if not node.parents:
            found.append(node)
        stack.extend(node.parents)
    return found


def run_primary():
    x = parameter(X, name="residual.input")
    linear = Linear(W, name="residual.branch.weight")
    y = residual_add(x, linear(x))
    y.backward_with_seed(YBAR, retain_graph=True)
    return x, linear, y


# ---------------------------------------------------------------------------- Linear
def test_linear_owns_one_named_weight_and_computes_x_at_w():
    linear = Linear(W, name="residual.branch.weight")
    assert linear.name == "residual.branch.weight"
    assert linear.weight.name == "residual.branch.weight"
    assert linear.parameters() == [linear.weight]
    assert linear.weight.requires_grad and linear.weight.is_leaf
    assert linear.weight.shape == (2, 2)
    out = linear(parameter(X, name="x"))
    np.testing.assert_array_equal(out.data, [-1.0, -2.25])


def test_linear_uses_in_out_convention_for_non_square_weights():
    linear = Linear(np.arange(6.0).reshape(2, 3), name="wide")
    out = linear(tensor([1.0, 1.0]))
    assert out.shape == (3,)
    np.testing.assert_array_equal(out.data, [3.0, 5.0, 7.0])


def test_linear_copies_its_initial_weight():
    w = np.array(W)
    linear = Linear(w, name="copy")
    w[0, 0] = 100.0
    assert linear.weight.data[0, 0] == 0.5


def test_linear_rejects_a_weight_that_is_not_two_dimensional():
    with pytest.raises(ValueError, match=r"\[4\]"):
        Linear([1.0, 2.0, 3.0, 4.0], name="bad")


@pytest.mark.parametrize("x_shape", [(3,), (4, 3)], ids=["vector", "batch"])
def test_linear_gradients_match_central_difference(x_shape):
    rng = np.random.default_rng(25)
    x0 = rng.uniform(-1.0, 1.0, size=x_shape)
    w0 = rng.uniform(-1.0, 1.0, size=(3, 2))
    seed = rng.uniform(-1.0, 1.0, size=x_shape[:-1] + (2,))
    x = parameter(x0, name="x")
    linear = Linear(w0, name="lin")
    linear(x).backward_with_seed(seed)

    def f(xr, wr):
        return float(np.sum((xr @ wr) * seed))

    np.testing.assert_allclose(x.grad, numeric_grad(f, [x0, w0], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(linear.weight.grad, numeric_grad(f, [x0, w0], 1), rtol=1e-6, atol=1e-7)


# --------------------------------------------------------------- the primary fixture
def test_primary_fixture_values():
    x, linear, y = run_primary()
    np.testing.assert_array_equal(y.data, [1.0, -3.25])
    np.testing.assert_array_equal(x.grad, [0.5, 3.25])
    np.testing.assert_array_equal(linear.weight.grad, [[2.0, 2.0], [-1.0, -1.0]])


def test_primary_input_gradient_is_identity_plus_branch_vjp():
    x, _, _ = run_primary()
    probe_x = parameter(X, name="residual.input")
    probe = Linear(W, name="residual.branch_probe.weight")
    probe(probe_x).backward_with_seed(YBAR)
    branch_part = probe_x.grad
    np.testing.assert_array_equal(branch_part, [-0.5, 2.25])
    np.testing.assert_array_equal(x.grad, YBAR + branch_part)


def test_primary_fixture_keeps_the_graph_for_a_second_pass():
    x, linear, y = run_primary()
    y.backward_with_seed(YBAR)
    np.testing.assert_array_equal(x.grad, [1.0, 6.5])
    np.testing.assert_array_equal(linear.weight.grad, [[4.0, 4.0], [-2.0, -2.0]])


def test_primary_fixture_replays_bit_identically():
    first = run_primary()
    second = run_primary()
    for a, b in (
        (first[2].data, second[2].data),
        (first[0].grad, second[0].grad),
        (first[1].weight.grad, second[1].weight.grad),
    ):
        assert a.dtype == b.dtype == np.float64
        assert a.tobytes() == b.tobytes()


def test_residual_gradient_matches_central_difference_with_a_nonlinear_branch():
    rng = np.random.default_rng(24)
    x0 = rng.uniform(-1.0, 1.0, size=(3, 2))
    w0 = rng.uniform(-1.0, 1.0, size=(2, 2))
    seed = rng.uniform(-1.0, 1.0, size=(3, 2))
    x = parameter(x0, name="x")
    linear = Linear(w0, name="lin")
    residual_add(x, linear(x).tanh()).backward_with_seed(seed)

    def f(xr, wr):
        return float(np.sum((xr + np.tanh(xr @ wr)) * seed))

    np.testing.assert_allclose(x.grad, numeric_grad(f, [x0, w0], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(linear.weight.grad, numeric_grad(f, [x0, w0], 1), rtol=1e-6, atol=1e-7)


def test_chapter_gradient_check_passes_against_raw_numpy_objective():
    x = parameter(X, name="x")
    linear = Linear(W, name="residual.branch.weight")
    residual_add(x, linear(x)).square().sum().backward()

    def objective(v):
        return float(np.sum((v["x"] + v["x"] @ v["W"]) ** 2))

    result = check_gradients(
        objective,
        {"x": np.array(X), "W": np.array(W)},
        {"x": x.grad, "W": linear.weight.grad},
        {"x": [(0,), (1,)], "W": [(0, 0), (0, 1), (1, 0), (1, 1)]},
        step=1e-6,
        tolerance=2e-6,
    )
    assert result.passed
    assert result.count("x") == 2 and result.count("W") == 4


# ------------------------------------------------------------------ the zero branch
@pytest.mark.parametrize("x_values", [X, [0.75, 3.0], [-1.5, -0.125]])
def test_zero_branch_follows_the_identity_but_its_weight_still_learns(x_values):
    x = parameter(x_values, name="residual.input")
    linear = Linear(np.zeros((2, 2)), name="residual.zero.weight")
    branch = linear(x)
    np.testing.assert_array_equal(branch.data, [0.0, 0.0])
    y = residual_add(x, branch)
    y.backward_with_seed(YBAR, retain_graph=True)
    np.testing.assert_array_equal(y.data, x.data)
    np.testing.assert_array_equal(x.grad, YBAR)
    w_grad = linear.weight.grad
    assert np.all(np.isfinite(w_grad))
    assert np.any(w_grad != 0.0)
    np.testing.assert_array_equal(w_grad, np.outer(x.data, YBAR))


def test_branch_output_zero_at_one_point_does_not_mean_zero_jacobian():
    x = parameter([0.0, 0.0], name="x")
    linear = Linear(W, name="w")
    y = residual_add(x, linear(x))
    np.testing.assert_array_equal(y.data, [0.0, 0.0])
    y.backward_with_seed(YBAR)
    np.testing.assert_array_equal(x.grad, [0.5, 3.25])  # not YBAR


# --------------------------------------------------------------- the exact-shape rule
def test_generic_addition_broadcasts_but_residual_add_rejects_2x2_and_2():
    identity = parameter(np.ones((2, 2)), name="identity")
    branch = parameter([1.0, 2.0], name="branch")
    accepted = identity + branch
    assert accepted.shape == (2, 2)
    with pytest.raises(ResidualShapeError) as info:
        residual_add(identity, branch)
    err = info.value
    assert err.identity == (2, 2)
    assert err.branch == (2,)
    assert "[2,2]" in str(err) and "[2]" in str(err)
    assert isinstance(err, ValueError)


@pytest.mark.parametrize(
    "identity_shape, branch_shape, texts",
    [
        ((2,), (3,), ("[2]", "[3]")),
        ((2,), (2, 2), ("[2]", "[2,2]")),
        ((3, 2), (1, 2), ("[3,2]", "[1,2]")),
        ((2,), (), ("[2]", "[]")),
    ],
)
def test_residual_add_rejects_any_shape_mismatch(identity_shape, branch_shape, texts):
    identity = parameter(np.ones(identity_shape), name="identity")
    branch = parameter(np.ones(branch_shape), name="branch")
    with pytest.raises(ResidualShapeError) as info:
        residual_add(identity, branch)
    assert info.value.identity == identity_shape
    assert info.value.branch == branch_shape
    for text in texts:
        assert text in str(info.value)
    assert identity.grad is None and branch.grad is None


def test_residual_add_owns_no_parameters_and_keeps_both_edges():
    assert inspect.isfunction(residual_add)
    assert not hasattr(residual_add, "parameters")
    x = parameter(X, name="x")
    linear = Linear(W, name="residual.branch.weight")
    branch = linear(x)
    y = residual_add(x, branch)
    assert isinstance(y, Tensor)
    assert len(y.parents) == 2
    assert y.parents[0] is x and y.parents[1] is branch
    assert y.requires_grad
    leaves = leaves_reachable(y)
    assert len(leaves) == 2
    assert {id(leaf) for leaf in leaves} == {id(x), id(linear.weight)}


def test_residual_add_keeps_the_identity_edge_when_only_the_identity_is_tracked():
    x = parameter(X, name="x")
    branch = tensor([1.0, 1.0])
    y = residual_add(x, branch)
    assert y.parents[0] is x and y.parents[1] is branch
    y.backward_with_seed(YBAR)
    np.testing.assert_array_equal(x.grad, YBAR)
    assert branch.grad is None


def test_same_tensor_on_both_sides_doubles_the_gradient():
    x = parameter(X, name="x")
    y = residual_add(x, x)
    assert y.parents[0] is x and y.parents[1] is x
    np.testing.assert_array_equal(y.data, [4.0, -2.0])
    seed = np.array([1.0, -0.5])
    y.backward_with_seed(seed)
    np.testing.assert_array_equal(x.grad, 2.0 * seed)


# ---------------------------------------------------------------------- the stack
def run_stack(kind: str):
    x = parameter(X, name=f"{kind}.stack.input")
    layers = [Linear(STACK_W, name=f"{kind}.stack.{n}.branch.weight") for n in range(4)]
    values = [x.data.copy()]
    h = x
    for layer in layers:
        h = layer(h) if kind == "plain" else residual_add(h, layer(h))
        values.append(h.data.copy())
    h.backward_with_seed(YBAR)
    return x, layers, values


def test_plain_stack_shrinks_the_gradient_to_minus_quarter_to_the_fourth():
    x, _, values = run_stack("plain")
    for depth, value in enumerate(values):
        np.testing.assert_array_equal(value, (-0.25) ** depth * np.array(X))
    assert (-0.25) ** 4 == 0.00390625
    np.testing.assert_array_equal(x.grad, [0.00390625, 0.00390625])


def test_residual_stack_keeps_three_quarters_to_the_fourth():
    x, _, values = run_stack("residual")
    for depth, value in enumerate(values):
        np.testing.assert_array_equal(value, 0.75**depth * np.array(X))
    assert 0.75**4 == 0.31640625
    np.testing.assert_array_equal(x.grad, [0.31640625, 0.31640625])


@pytest.mark.parametrize("kind", ["plain", "residual"])
def test_every_stack_parameter_gets_a_finite_nonzero_gradient(kind):
    _, layers, _ = run_stack(kind)
    names = [layer.name for layer in layers]
    assert names == [f"{kind}.stack.{n}.branch.weight" for n in range(4)]
    assert len({id(layer.weight) for layer in layers}) == 4
    for layer in layers:
        g = layer.weight.grad
        assert g is not None and g.shape == (2, 2)
        assert np.all(np.isfinite(g))
        assert np.any(g != 0.0)


def test_a_residual_graph_has_exactly_the_input_and_the_branch_weight_as_leaves():
    x = parameter([2.0, -1.0], name="input")
    linear = Linear([[0.5, -1.0], [2.0, 0.25]], name="residual.branch.weight")
    y = residual_add(x, linear(x))
    assert sorted(leaf.name for leaf in y.leaves()) == ["input", "residual.branch.weight"]
    assert tensor([1.0]).leaves() == []
