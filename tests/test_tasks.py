"""The training task and loop: spirals from a seed, the per-model loss, models side by side, the recorded history."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numeric_gradients import numeric_grad

from site_builder.autograd import parameter, tensor
from site_builder.nn import SGD, Adam, cross_entropy
from site_builder.run import FixtureError
from site_builder.tasks import (
    Ends,
    cross_entropy_per_model,
    draw_ends,
    he_std,
    side_by_side,
    train,
    two_spirals,
)


# ---------------------------------------------------------------------------- data
def test_spirals_are_two_balanced_arms_drawn_from_the_seed():
    d = two_spirals(32, turns=1.5, noise=0.05, seed=3)
    assert d.inputs.shape == (64, 2) and d.inputs.dtype == np.float64
    assert d.labels.tolist() == [0] * 32 + [1] * 32 and d.classes == 2
    again = two_spirals(32, turns=1.5, noise=0.05, seed=3)
    assert d.inputs.tobytes() == again.inputs.tobytes()
    assert not np.array_equal(d.inputs, two_spirals(32, turns=1.5, noise=0.05, seed=4).inputs)


def test_without_noise_arm_one_is_arm_zero_turned_half_a_circle():
    d = two_spirals(16, turns=1.25, noise=0.0, seed=0)
    np.testing.assert_allclose(d.inputs[16:], -d.inputs[:16], atol=1e-15)
    radius = np.linalg.norm(d.inputs[:16], axis=1)
    t = (np.arange(16) + 0.5) / 16
    np.testing.assert_allclose(radius, 0.15 + 0.85 * t, rtol=1e-14)
    angle = np.arctan2(d.inputs[0, 1], d.inputs[0, 0])
    assert angle == pytest.approx(2 * math.pi * 1.25 * t[0])


def test_spiral_noise_is_the_generators_normals_arm_zero_first():
    clean, noisy = two_spirals(8, turns=1.0, noise=0.0, seed=5), two_spirals(8, turns=1.0, noise=0.1, seed=5)
    rng = np.random.default_rng(5)
    expected = np.concatenate([rng.standard_normal((8, 2)), rng.standard_normal((8, 2))]) * 0.1
    np.testing.assert_allclose(noisy.inputs - clean.inputs, expected, atol=1e-15)


def test_he_std_doubles_the_variance_after_a_relu():
    assert he_std(16, after_relu=True) == math.sqrt(2 / 16)
    assert he_std(16, after_relu=False) == 0.25


def test_he_std_keeps_the_mean_square_through_relu_then_a_linear_layer():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4000, 64))
    w = rng.standard_normal((64, 64)) * he_std(64, after_relu=True)
    out = np.maximum(x, 0.0) @ w
    assert np.mean(out**2) == pytest.approx(np.mean(x**2), rel=0.1)


# ---------------------------------------------------------------------------- ends and loss
def test_ends_embed_and_read_out_each_model_with_its_own_weights():
    rng = np.random.default_rng(1)
    draws = [draw_ends(rng, inputs=2, width=4, classes=3) for _ in range(2)]
    ends = Ends(draws, name="m")
    x = np.random.default_rng(2).standard_normal((5, 2))
    h = ends.embed(x)
    assert h.shape == (2, 5, 4)
    for m, d in enumerate(draws):
        np.testing.assert_array_equal(h.data[m], x @ d.embed)
        np.testing.assert_array_equal(ends.logits(h).data[m], (x @ d.embed) @ d.readout)
    assert [p.name for p in ends.parameters()] == [
        "m.embed.weight",
        "m.embed.bias",
        "m.readout.weight",
        "m.readout.bias",
    ]
    assert all(not p.data.any() for p in (ends.embed_bias, ends.readout_bias))


def test_per_model_loss_is_each_models_cross_entropy():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((3, 6, 2))
    labels = np.array([0, 1, 1, 0, 1, 0])
    per_model = cross_entropy_per_model(tensor(logits), labels).data
    for m in range(3):
        assert per_model[m] == pytest.approx(cross_entropy(tensor(logits[m]), labels).data, rel=1e-15)


def test_per_model_loss_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    logits0 = rng.standard_normal((2, 5, 3))
    labels = np.array([2, 0, 1, 1, 0])
    weights = np.array([1.0, -0.5])

    def objective(z: np.ndarray) -> float:
        shifted = z - z.max(axis=-1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
        return float(np.sum(weights * -logp[:, np.arange(5), labels].mean(axis=1)))

    z = parameter(logits0, name="logits")
    (cross_entropy_per_model(z, labels) * weights).sum().backward()
    np.testing.assert_allclose(z.grad, numeric_grad(objective, [logits0], 0), rtol=1e-6, atol=1e-9)


def test_per_model_loss_names_the_shape_it_needs():
    with pytest.raises(ValueError, match=r"logits must be \[models, 3, classes\]"):
        cross_entropy_per_model(tensor(np.zeros((3, 2))), np.array([0, 1, 0]))


# ---------------------------------------------------------------------------- training
def tiny_models(seeds: list[int]):
    """A one-hidden-layer ReLU classifier per seed, side by side, on a small spiral."""
    data = two_spirals(12, turns=0.75, noise=0.05, seed=0)
    ends_draws, hidden = [], []
    for s in seeds:
        rng = np.random.default_rng(s)
        ends_draws.append(draw_ends(rng, inputs=2, width=8, classes=2))
        hidden.append(rng.standard_normal((8, 8)) * he_std(8, after_relu=False))
    ends = Ends(ends_draws, name="tiny")
    w = parameter(side_by_side(hidden), name="tiny.hidden")

    def losses():
        return cross_entropy_per_model(ends.logits((ends.embed(data.inputs) @ w).relu()), data.labels)

    return losses, [*ends.parameters(), w]


@pytest.mark.parametrize("make", [lambda p: Adam(p, lr=0.02), lambda p: SGD(p, lr=0.1, momentum=0.9)])
def test_models_side_by_side_train_as_each_would_alone(make):
    losses, params = tiny_models([7, 8, 9])
    together = train(losses, make(params), steps=20, every=5, fixture="t")
    for m, seed in enumerate([7, 8, 9]):
        alone_losses, alone_params = tiny_models([seed])
        alone = train(alone_losses, make(alone_params), steps=20, every=5, fixture="t")
        np.testing.assert_allclose(together.losses[:, m], alone.losses[:, 0], rtol=1e-12, atol=0)


def test_history_records_every_k_steps_and_the_loss_after_the_last_update():
    losses, params = tiny_models([1, 2])
    h = train(losses, Adam(params, lr=0.02), steps=12, every=4, fixture="t")
    assert h.steps == (0, 4, 8, 12) and h.losses.shape == (4, 2)
    np.testing.assert_array_equal(h.final, losses().data)  # the parameters now are those after step 12
    np.testing.assert_array_equal(h.initial, tiny_models([1, 2])[0]().data)
    assert np.all(h.final < h.initial)


def test_training_twice_gives_the_same_bits():
    runs = []
    for _ in range(2):
        losses, params = tiny_models([3, 4])
        runs.append(train(losses, Adam(params, lr=0.02), steps=10, every=2, fixture="t").losses.tobytes())
    assert runs[0] == runs[1]


def test_a_non_finite_loss_stops_the_fixture_naming_model_and_step():
    losses, params = tiny_models([1, 2])

    def poisoned():
        out = losses()
        return out * np.array([1.0, math.inf])

    with pytest.raises(FixtureError, match=r"fixture 'spin': model 1 has a loss of inf at step 0"):
        train(poisoned, Adam(params, lr=0.02), steps=4, every=2, fixture="spin")


@pytest.mark.parametrize("steps,every", [(0, 1), (10, 0), (10, 3)])
def test_steps_must_be_a_multiple_of_every(steps, every):
    losses, params = tiny_models([1])
    with pytest.raises(ValueError, match="multiple"):
        train(losses, Adam(params, lr=0.01), steps=steps, every=every, fixture="t")


# ---------------------------------------------------------------------------- the shared task
def test_the_shared_task_is_the_spirals_its_record_describes():
    from site_builder.tasks import SPIRALS

    data, record = SPIRALS.dataset(), SPIRALS.record()
    again = two_spirals(
        record.points_per_arm, turns=record.turns, noise=record.noise, seed=record.seed, inner=record.inner_radius
    )
    assert data.inputs.tobytes() == again.inputs.tobytes()
    assert record.chance_loss == math.log(2.0)


def test_a_nan_in_the_shared_task_is_refused_naming_it():
    import dataclasses

    from site_builder.tasks import SPIRALS

    with pytest.raises(FixtureError, match="fixture 'page': the spirals' noise is nan"):
        dataclasses.replace(SPIRALS, noise=math.nan).check("page")
