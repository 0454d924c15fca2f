"""Tests for the SGD and Adam optimizers over named parameters.

Each optimizer's steps are compared with the update rule written out in raw
NumPy, on gradients the engine computes from a small least-squares loss.
"""

from __future__ import annotations

import numpy as np
import pytest

from site_builder.autograd import Tensor, parameter, tensor
from site_builder.nn import SGD, Adam, AdamState, Linear, ParameterError, named_parameters

X = np.array([[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]])
Y = np.array([[0.5], [-1.0], [2.0]])
W0 = np.array([[0.3], [-0.7]])
G0 = np.array([1.25])


def make_params() -> dict[str, object]:
    return {"w": parameter(W0, name="w"), "norm.gain": parameter(G0, name="norm.gain")}


def loss_gradients(w: np.ndarray, gain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Raw-NumPy gradients of sum((X @ w * gain - Y)^2)."""
    r = X @ w * gain - Y
    return X.T @ (2.0 * r * gain), np.array([np.sum(2.0 * r * (X @ w))])


def engine_step(params, optimizer) -> None:
    optimizer.zero_grad()
    (((tensor(X) @ params["w"]) * params["norm.gain"] - tensor(Y)).square()).sum().backward()
    optimizer.step()


# ----------------------------------------------------------------------- SGD
def test_sgd_without_momentum_takes_plain_gradient_steps():
    params = make_params()
    optimizer = SGD(params, lr=0.01)
    w, gain = W0.copy(), G0.copy()
    for _ in range(3):
        engine_step(params, optimizer)
        gw, gg = loss_gradients(w, gain)
        w, gain = w - 0.01 * gw, gain - 0.01 * gg
    np.testing.assert_allclose(params["w"].data, w, rtol=1e-14)
    np.testing.assert_allclose(params["norm.gain"].data, gain, rtol=1e-14)


def test_sgd_with_momentum_and_weight_decay_excluding_the_norm_gain():
    params = make_params()
    optimizer = SGD(params, lr=0.02, momentum=0.9, weight_decay=0.1, no_decay=["norm.gain"])
    w, gain = W0.copy(), G0.copy()
    vw = vg = None
    for _ in range(4):
        engine_step(params, optimizer)
        gw, gg = loss_gradients(w, gain)
        gw = gw + 0.1 * w  # only w decays
        vw = gw if vw is None else 0.9 * vw + gw
        vg = gg if vg is None else 0.9 * vg + gg
        w, gain = w - 0.02 * vw, gain - 0.02 * vg
    np.testing.assert_allclose(params["w"].data, w, rtol=1e-13)
    np.testing.assert_allclose(params["norm.gain"].data, gain, rtol=1e-13)


# ---------------------------------------------------------------------- Adam
def reference_adam(steps: int, lr: float, betas: tuple[float, float], eps: float, decay: dict[str, float]):
    values = {"w": W0.copy(), "norm.gain": G0.copy()}
    m = {k: np.zeros_like(v) for k, v in values.items()}
    v = {k: np.zeros_like(val) for k, val in values.items()}
    for t in range(1, steps + 1):
        grads = dict(zip(("w", "norm.gain"), loss_gradients(values["w"], values["norm.gain"])))
        for k in values:
            values[k] = values[k] * (1.0 - lr * decay[k])
            m[k] = betas[0] * m[k] + (1.0 - betas[0]) * grads[k]
            v[k] = betas[1] * v[k] + (1.0 - betas[1]) * grads[k] ** 2
            m_hat = m[k] / (1.0 - betas[0] ** t)
            v_hat = v[k] / (1.0 - betas[1] ** t)
            values[k] = values[k] - lr * m_hat / (np.sqrt(v_hat) + eps)
    return values


def test_adam_matches_the_written_out_rule_with_decoupled_decay_and_an_exclusion():
    params = make_params()
    optimizer = Adam(params, lr=0.05, betas=(0.8, 0.99), eps=1e-8, weight_decay=0.2, no_decay={"norm.gain"})
    for _ in range(5):
        engine_step(params, optimizer)
    expected = reference_adam(5, 0.05, (0.8, 0.99), 1e-8, {"w": 0.2, "norm.gain": 0.0})
    np.testing.assert_allclose(params["w"].data, expected["w"], rtol=1e-13)
    np.testing.assert_allclose(params["norm.gain"].data, expected["norm.gain"], rtol=1e-13)
    assert isinstance(optimizer.state["w"], AdamState) and optimizer.state["w"].step == 5


def test_adam_first_step_moves_every_coordinate_by_about_lr():
    params = make_params()
    optimizer = Adam(params, lr=0.01)
    engine_step(params, optimizer)
    np.testing.assert_allclose(np.abs(params["w"].data - W0), 0.01, rtol=1e-6)
    np.testing.assert_allclose(np.abs(params["norm.gain"].data - G0), 0.01, rtol=1e-6)


def test_adam_fits_a_linear_layer_given_as_a_list_of_named_parameters():
    layer = Linear(np.zeros((2, 1)), name="fit.weight")
    target = np.array([[2.0], [-3.0]])
    optimizer = Adam(layer.parameters(), lr=0.1)
    x = tensor(X)
    for _ in range(300):
        optimizer.zero_grad()
        (layer(x) - tensor(X @ target)).square().mean().backward()
        optimizer.step()
    np.testing.assert_allclose(layer.weight.data, target, atol=1e-3)


# ------------------------------------------------------------------ shared rules
@pytest.mark.parametrize(
    "make", [lambda p: SGD(p, lr=0.1, momentum=0.5), lambda p: Adam(p, lr=0.1)], ids=["sgd", "adam"]
)
def test_a_parameter_without_a_gradient_is_left_alone(make):
    params = make_params()
    optimizer = make(params)
    (tensor(X) @ params["w"]).sum().backward()  # the gain takes no part
    optimizer.step()
    np.testing.assert_array_equal(params["norm.gain"].data, G0)
    assert not np.array_equal(params["w"].data, W0)
    optimizer.zero_grad()
    assert all(p.grad is None for p in params.values())


def test_a_step_replaces_the_values_so_a_graph_built_earlier_keeps_its_own():
    w = parameter([[1.0], [2.0]], name="w")
    x = parameter([[3.0, 4.0]], name="x")
    y = x @ w  # built with w = [[1], [2]]
    w.sum().backward()  # w.grad = ones
    SGD({"w": w}, lr=0.5).step()
    np.testing.assert_array_equal(w.data, [[0.5], [1.5]])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [[1.0, 2.0]])  # the values y was computed with


def test_named_parameters_accepts_a_dict_or_named_tensors():
    a, b = parameter([1.0], name="a"), parameter([2.0], name="b")
    assert named_parameters([a, b]) == {"a": a, "b": b}
    assert named_parameters({"first": a, "second": b}) == {"first": a, "second": b}


@pytest.mark.parametrize(
    "params, fragment",
    [
        (lambda: [parameter([1.0], name="a"), parameter([2.0], name="a")], "two parameters are named 'a'"),
        (lambda: {"c": tensor([1.0])}, "'c' is not a parameter"),
        (lambda: {"h": parameter([1.0], name="p") * 2.0}, "'h' is not a parameter"),
        (lambda: [], "at least one parameter"),
        (lambda: [np.ones(2)], "takes Tensors"),
    ],
    ids=["duplicate-name", "constant", "computed", "empty", "array"],
)
def test_bad_parameter_lists_are_rejected(params, fragment):
    with pytest.raises(ParameterError, match=fragment):
        SGD(params(), lr=0.1)


def test_the_same_tensor_under_two_names_is_rejected():
    a = parameter([1.0], name="a")
    with pytest.raises(ParameterError, match="listed as 'x' and as 'y'"):
        Adam({"x": a, "y": a}, lr=0.1)


def test_an_unnamed_tracked_tensor_is_rejected():
    with pytest.raises(ParameterError, match="has no name"):
        SGD([Tensor([1.0], requires_grad=True)], lr=0.1)


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda p: SGD(p, lr=0.1, weight_decay=0.1, no_decay=["norm.gian"]), r"no_decay names \['norm.gian'\]"),
        (lambda p: SGD(p, lr=0.1, no_decay="norm.gain"), "single string"),
        (lambda p: SGD(p, lr=0.0), "lr must be"),
        (lambda p: SGD(p, lr=float("nan")), "lr must be"),
        (lambda p: SGD(p, lr=0.1, momentum=1.0), "momentum must be"),
        (lambda p: SGD(p, lr=0.1, weight_decay=-0.1), "weight_decay must be"),
        (lambda p: Adam(p, lr=0.1, betas=(0.9, 1.0)), "betas must"),
        (lambda p: Adam(p, lr=0.1, eps=0.0), "eps must be"),
    ],
    ids=[
        "typo-in-no-decay",
        "string-no-decay",
        "zero-lr",
        "nan-lr",
        "momentum-1",
        "negative-decay",
        "beta-1",
        "zero-eps",
    ],
)
def test_bad_settings_are_rejected_with_the_setting_named(make, fragment):
    with pytest.raises(ParameterError, match=fragment):
        make(make_params())
