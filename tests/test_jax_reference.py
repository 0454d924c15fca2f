"""The engine held against an independent reference: JAX on the CPU, in float64.

Every op of ``site_builder.autograd``, every layer of ``site_builder.nn`` and
both optimizers are computed twice on the same random inputs, once by the
engine and once by JAX, and the forward values and the gradients must agree.
The finite-difference tests (``test_autograd.py``) check each gradient against
the engine's own forward pass; these check the forward pass itself too, and
every gradient to the last few digits, against a framework that shares no code
with the engine.

Adding an op is one entry in ``OP_CASES`` (an optimizer: one in
``OPTIMIZER_CASES``); ``test_every_op_and_optimizer_has_a_reference`` fails
until the new op has one.

Tolerance. Both sides compute in float64 (machine epsilon 2.2e-16) but not in
the same order: XLA and NumPy sum in different orders, BLAS and XLA block their
matrix products differently, and their exp, log and tanh may differ in the last
unit. The cases here chain at most a few hundred float operations per output
(a sum over 128 points, a matmul over 16 features, a few blocks deep, five
optimizer steps), so each side's rounding error is at most a few hundred units
of the largest magnitude involved; RTOL = 1e-12 (about 4500 units) leaves room
for that and nothing more: a wrong sign, a missing term or a factor off by one
unit in the fourth digit fails by orders of magnitude. An error is measured
against the largest magnitude of the reference array, not element by element,
because a sum's rounding error scales with its terms: an element that is small
because terms cancelled carries an absolute error on the scale of those terms.
"""

from __future__ import annotations

import inspect
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.example_libraries.optimizers as jax_optimizers
import jax.numpy as jnp
import numpy as np
import pytest

from site_builder import autograd, nn
from site_builder.autograd import Tensor, concat, parameter
from site_builder.nn import (
    SGD,
    Adam,
    Linear,
    Optimizer,
    cross_entropy,
    layer_norm,
    log_softmax,
    residual_add,
    rms_norm,
    softmax,
)
from site_builder.tasks import SPIRALS, Ends, EndsDraw, cross_entropy_per_model, draw_ends, he_std

jax.config.update("jax_enable_x64", True)  # float64 throughout, as the engine computes

# JAX runs these op by op, about 27 s of CPU in all: `make test` holds the engine against it, and the quick loop
# keeps the finite-difference tests, which check every gradient against the engine's own forward pass.
pytestmark = pytest.mark.slow
jax.config.update("jax_platforms", "cpu")

RTOL = 1e-12  # of the reference's largest magnitude; see the module docstring for why


def assert_matches(engine: np.ndarray, reference: Any, what: str) -> float:
    """Fail unless ``engine`` equals JAX's ``reference`` within RTOL of its largest magnitude; the error found."""
    expected = np.asarray(reference)
    assert expected.dtype == np.float64, f"{what}: JAX computed in {expected.dtype}, not float64"
    assert engine.shape == expected.shape, f"{what}: the engine's shape {engine.shape} != JAX's {expected.shape}"
    assert np.all(np.isfinite(engine)), f"{what}: the engine computed a value that is not finite"
    scale = float(np.max(np.abs(expected), initial=0.0))
    error = float(np.max(np.abs(engine - expected), initial=0.0)) / max(scale, np.finfo(np.float64).tiny)
    assert error <= RTOL, f"{what}: the engine and JAX differ by {error:.3e} of the largest magnitude {scale:.3e}"
    return error


# --------------------------------------------------------------------------- inputs
Sampler = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def uniform(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-2.0, 2.0, size=shape)


def away_from_zero(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Magnitudes in [0.3, 2] with random signs: no relu kink, no division by a tiny number."""
    return rng.uniform(0.3, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def positive(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.3, 2.0, size=shape)


def wide(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Up to ±40: where a naive sigmoid or softmax would overflow or lose every digit."""
    return rng.uniform(-40.0, 40.0, size=shape)


def with_zeros(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Integers from -2 to 2, so about one entry in five is exactly 0: relu's kink, where a convention decides."""
    return rng.integers(-2, 3, size=shape).astype(np.float64)


POINTS = 2 * SPIRALS.points_per_arm  # the training pages' batch: every point of the spirals
LABELS = SPIRALS.dataset().labels
MODELS, WIDTH = 3, 16  # the training pages' seeds side by side, and their stream's width
ROW_CLASSES = np.random.default_rng(7).integers(0, 5, size=6)  # six rows' classes among five


# --------------------------------------------------------------------------- the op table
@dataclass(frozen=True)
class OpCase:
    """One op on inputs of ``shapes``: the engine's expression and JAX's.

    ``op`` names what is tested, as ``Tensor.<attribute>``, ``autograd.<function>`` or ``nn.<name>``.
    ``engine`` takes one parameter per shape (named ``x0``, ``x1``, …) and returns a Tensor; a layer that makes its
    own parameter names it after the one it is given, so its gradient is found by name. ``reference`` takes the same
    inputs as JAX arrays.
    """

    op: str
    shapes: tuple[tuple[int, ...], ...]
    engine: Callable[..., Tensor]
    reference: Callable[..., Any]
    sample: Sampler = uniform
    label: str = ""

    @property
    def id(self) -> str:
        shapes = "".join("[" + ",".join(map(str, s)) + "]" for s in self.shapes)
        return f"{self.op}{shapes}{'-' + self.label if self.label else ''}"


def jax_layer_norm(x: Any, gain: Any, bias: Any, eps: float = 1e-5) -> Any:
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * gain + bias


def jax_rms_norm(x: Any, gain: Any, eps: float = 1e-5) -> Any:
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * gain


def jax_cross_entropy(logits: Any, targets: np.ndarray) -> Any:
    picked = jnp.take_along_axis(jax.nn.log_softmax(logits, axis=-1), jnp.asarray(targets)[:, None], axis=-1)
    return -jnp.mean(picked)


def jax_cross_entropy_per_model(logits: Any, labels: np.ndarray) -> Any:
    return -jnp.mean(jax.nn.log_softmax(logits, axis=-1)[:, jnp.arange(len(labels)), labels], axis=1)


PAGE = (MODELS, POINTS, WIDTH)  # a stream of the training pages: [models, points, width]
MASK = np.array([[True, False, True], [False, False, True]])

OP_CASES: list[OpCase] = [
    # addition, subtraction, negation, with broadcasting in either operand or both
    OpCase("Tensor.__add__", ((3, 2), (3, 2)), lambda a, b: a + b, lambda a, b: a + b),
    OpCase("Tensor.__add__", ((3, 2), (2,)), lambda a, b: a + b, lambda a, b: a + b),
    OpCase("Tensor.__add__", ((2,), (3, 2)), lambda a, b: a + b, lambda a, b: a + b),
    OpCase("Tensor.__add__", ((1, 2), (3, 1)), lambda a, b: a + b, lambda a, b: a + b),
    OpCase("Tensor.__add__", ((3, 2), ()), lambda a, b: a + b, lambda a, b: a + b),
    OpCase("Tensor.__add__", (PAGE, (MODELS, 1, WIDTH)), lambda a, b: a + b, lambda a, b: a + b, label="bias"),
    OpCase("Tensor.__add__", ((3, 2),), lambda a: a + 1.5, lambda a: a + 1.5, label="number"),
    OpCase("Tensor.__radd__", ((3, 2),), lambda a: 1.5 + a, lambda a: 1.5 + a),
    OpCase("Tensor.__sub__", ((3, 2), (3, 2)), lambda a, b: a - b, lambda a, b: a - b),
    OpCase("Tensor.__sub__", ((3, 1), (1, 2)), lambda a, b: a - b, lambda a, b: a - b),
    OpCase("Tensor.__sub__", ((3, 2),), lambda a: a - 0.75, lambda a: a - 0.75, label="number"),
    OpCase("Tensor.__rsub__", ((3, 2),), lambda a: 3.0 - a, lambda a: 3.0 - a),
    OpCase("Tensor.__rsub__", (PAGE,), lambda a: 1.0 - a, lambda a: 1.0 - a, label="carry"),
    OpCase("Tensor.__neg__", ((3, 2),), lambda a: -a, lambda a: -a),
    OpCase("Tensor.__neg__", ((),), lambda a: -a, lambda a: -a),
    # multiplication and division, by tensors (broadcasting) and by plain numbers
    OpCase("Tensor.__mul__", ((3, 2), (3, 2)), lambda a, b: a * b, lambda a, b: a * b),
    OpCase("Tensor.__mul__", ((3, 2), (2,)), lambda a, b: a * b, lambda a, b: a * b),
    OpCase("Tensor.__mul__", ((1, 2), (3, 1)), lambda a, b: a * b, lambda a, b: a * b),
    OpCase("Tensor.__mul__", ((3, 2), ()), lambda a, b: a * b, lambda a, b: a * b),
    OpCase("Tensor.__mul__", (PAGE, PAGE), lambda a, b: a * b, lambda a, b: a * b, label="gate"),
    OpCase("Tensor.__mul__", ((3, 2),), lambda a: a * 2.5, lambda a: a * 2.5, label="number"),
    OpCase("Tensor.__mul__", ((3, 2),), lambda a: a * np.float64(-0.5), lambda a: a * -0.5, label="0-d"),
    OpCase("Tensor.__rmul__", ((3, 2),), lambda a: 2.5 * a, lambda a: 2.5 * a),
    OpCase("Tensor.scale", ((3, 2),), lambda a: a.scale(-1.5), lambda a: a * -1.5),
    OpCase("Tensor.__truediv__", ((3, 2), (3, 2)), lambda a, b: a / b, lambda a, b: a / b, away_from_zero),
    OpCase("Tensor.__truediv__", ((3, 2), (3, 1)), lambda a, b: a / b, lambda a, b: a / b, away_from_zero),
    OpCase("Tensor.__truediv__", ((3, 2),), lambda a: a / 4.0, lambda a: a / 4.0, label="number"),
    OpCase("Tensor.__rtruediv__", ((3, 2),), lambda a: 1.0 / a, lambda a: 1.0 / a, away_from_zero),
    # powers
    OpCase("Tensor.__pow__", ((3, 2),), lambda a: a**2, lambda a: a**2.0, label="2"),
    OpCase("Tensor.__pow__", ((3, 2),), lambda a: a**3, lambda a: a**3.0, label="3"),
    OpCase("Tensor.__pow__", ((3, 2),), lambda a: a**0.5, lambda a: a**0.5, positive, label="0.5"),
    OpCase("Tensor.__pow__", ((3, 2),), lambda a: a**-1.5, lambda a: a**-1.5, positive, label="-1.5"),
    OpCase("Tensor.square", ((3, 2),), lambda a: a.square(), lambda a: jnp.square(a)),
    # matmul: every rank NumPy accepts, and the shapes the training pages multiply
    OpCase("Tensor.__matmul__", ((4,), (4,)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase("Tensor.__matmul__", ((4,), (4, 3)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase("Tensor.__matmul__", ((3, 4), (4,)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase("Tensor.__matmul__", ((3, 4), (4, 5)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase("Tensor.__matmul__", ((2, 3, 4), (4, 5)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase("Tensor.__matmul__", ((3, 4), (2, 4, 5)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase("Tensor.__matmul__", ((2, 1, 3, 4), (3, 4, 5)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase("Tensor.__matmul__", ((4,), (2, 4, 3)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase("Tensor.__matmul__", ((2, 3, 4), (4,)), lambda a, b: a @ b, lambda a, b: a @ b),
    OpCase(
        "Tensor.__matmul__", ((POINTS, 2), (MODELS, 2, WIDTH)), lambda a, b: a @ b, lambda a, b: a @ b, label="embed"
    ),
    OpCase("Tensor.__matmul__", (PAGE, (MODELS, WIDTH, WIDTH)), lambda a, b: a @ b, lambda a, b: a @ b, label="block"),
    OpCase("Tensor.__matmul__", (PAGE, (MODELS, WIDTH, 2)), lambda a, b: a @ b, lambda a, b: a @ b, label="readout"),
    # reductions
    OpCase("Tensor.sum", ((2, 3, 4),), lambda a: a.sum(), lambda a: jnp.sum(a), label="all"),
    OpCase("Tensor.sum", ((2, 3, 4),), lambda a: a.sum(axis=0), lambda a: jnp.sum(a, axis=0), label="0"),
    OpCase(
        "Tensor.sum",
        ((2, 3, 4),),
        lambda a: a.sum(-1, keepdims=True),
        lambda a: jnp.sum(a, -1, keepdims=True),
        label="-1",
    ),
    OpCase(
        "Tensor.sum",
        ((2, 3, 4),),
        lambda a: a.sum((0, 2), keepdims=True),
        lambda a: jnp.sum(a, (0, 2), keepdims=True),
        label="0,2",
    ),
    OpCase("Tensor.mean", ((2, 3, 4),), lambda a: a.mean(), lambda a: jnp.mean(a)),
    OpCase("Tensor.mean", ((MODELS, POINTS),), lambda a: a.mean(axis=1), lambda a: jnp.mean(a, axis=1)),
    OpCase(
        "Tensor.mean", (PAGE,), lambda a: a.mean((1, 2), keepdims=True), lambda a: jnp.mean(a, (1, 2), keepdims=True)
    ),
    # The engine sends a tied maximum's gradient to its first occurrence and JAX splits it among the ties;
    # random floats never tie, so the two conventions are not compared here.
    OpCase("Tensor.max", ((2, 3, 4),), lambda a: a.max(), lambda a: jnp.max(a), label="all"),
    OpCase(
        "Tensor.max",
        ((MODELS, POINTS, 2),),
        lambda a: a.max(-1, keepdims=True),
        lambda a: jnp.max(a, -1, keepdims=True),
    ),
    OpCase("Tensor.max", ((2, 3, 4),), lambda a: a.max((0, 2)), lambda a: jnp.max(a, (0, 2)), label="0,2"),
    # elementwise maps
    OpCase("Tensor.tanh", ((3, 4),), lambda a: a.tanh(), lambda a: jnp.tanh(a)),
    OpCase("Tensor.tanh", ((3, 4),), lambda a: a.tanh(), lambda a: jnp.tanh(a), wide, label="saturated"),
    OpCase("Tensor.relu", (PAGE,), lambda a: a.relu(), lambda a: jax.nn.relu(a), away_from_zero),
    OpCase("Tensor.relu", ((5, 6),), lambda a: a.relu(), lambda a: jax.nn.relu(a), with_zeros, label="kink"),
    OpCase("Tensor.exp", ((3, 4),), lambda a: a.exp(), lambda a: jnp.exp(a)),
    OpCase("Tensor.log", ((3, 4),), lambda a: a.log(), lambda a: jnp.log(a), positive),
    OpCase("Tensor.sqrt", ((3, 4),), lambda a: a.sqrt(), lambda a: jnp.sqrt(a), positive),
    OpCase("Tensor.sigmoid", (PAGE,), lambda a: a.sigmoid(), lambda a: jax.nn.sigmoid(a)),
    OpCase("Tensor.sigmoid", ((4, 5),), lambda a: a.sigmoid(), lambda a: jax.nn.sigmoid(a), wide, label="wide"),
    # shape and index
    OpCase("Tensor.reshape", ((3, 4),), lambda a: a.reshape(2, 6), lambda a: jnp.reshape(a, (2, 6)), label="2,6"),
    OpCase("Tensor.reshape", ((3, 4),), lambda a: a.reshape((-1,)), lambda a: jnp.reshape(a, (-1,)), label="-1"),
    OpCase("Tensor.transpose", ((3, 4),), lambda a: a.transpose(), lambda a: a.T),
    OpCase("Tensor.transpose", ((2, 3, 4),), lambda a: a.transpose(), lambda a: jnp.swapaxes(a, -1, -2)),
    OpCase("Tensor.T", ((3, 4),), lambda a: a.T, lambda a: a.T),
    OpCase("Tensor.__getitem__", ((3, 4),), lambda a: a[1], lambda a: a[1], label="int"),
    OpCase("Tensor.__getitem__", ((3, 4),), lambda a: a[1:, ::2], lambda a: a[1:, ::2], label="slices"),
    OpCase(
        "Tensor.__getitem__",
        ((3, 4),),
        lambda a: a[np.array([0, 2, 2])],
        lambda a: a[jnp.array([0, 2, 2])],
        label="repeated",
    ),
    OpCase("Tensor.__getitem__", ((2, 3),), lambda a: a[MASK], lambda a: a[MASK], label="mask"),
    OpCase(
        "Tensor.__getitem__",
        ((MODELS, POINTS, 2),),
        lambda a: a[:, np.arange(POINTS), LABELS],
        lambda a: a[:, jnp.arange(POINTS), LABELS],
        label="picked",
    ),
    OpCase("Tensor.detach", ((3, 2),), lambda a: a.detach() * a, lambda a: jax.lax.stop_gradient(a) * a),
    OpCase("autograd.concat", ((3, 2), (3, 4)), lambda a, b: concat([a, b]), lambda a, b: jnp.concatenate([a, b], -1)),
    OpCase(
        "autograd.concat", ((2, 3), (1, 3)), lambda a, b: concat([a, b], axis=0), lambda a, b: jnp.concatenate([a, b])
    ),
    OpCase(
        "autograd.concat", ((3, 2),), lambda a: concat([a, a]), lambda a: jnp.concatenate([a, a], -1), label="twice"
    ),
    OpCase(
        "autograd.concat",
        (PAGE, (MODELS, POINTS, 8)),
        lambda a, b: concat([a, b]),
        lambda a, b: jnp.concatenate([a, b], -1),
    ),
    # layers and losses
    OpCase(
        "nn.Linear", ((POINTS, WIDTH), (WIDTH, WIDTH)), lambda x, w: Linear(w.data, name="x1")(x), lambda x, w: x @ w
    ),
    OpCase("nn.residual_add", (PAGE, PAGE), lambda a, b: residual_add(a, b), lambda a, b: a + b),
    OpCase("nn.softmax", ((4, 5),), lambda a: softmax(a), lambda a: jax.nn.softmax(a, axis=-1)),
    OpCase(
        "nn.softmax", ((4, 5),), lambda a: softmax(a, axis=0), lambda a: jax.nn.softmax(a, axis=0), wide, label="wide"
    ),
    OpCase(
        "nn.log_softmax", ((MODELS, POINTS, 2),), lambda a: log_softmax(a), lambda a: jax.nn.log_softmax(a, axis=-1)
    ),
    OpCase(
        "nn.log_softmax", ((4, 5),), lambda a: log_softmax(a, 0), lambda a: jax.nn.log_softmax(a, 0), wide, label="wide"
    ),
    OpCase(
        "nn.cross_entropy", ((POINTS, 2),), lambda a: cross_entropy(a, LABELS), lambda a: jax_cross_entropy(a, LABELS)
    ),
    OpCase(
        "nn.cross_entropy",
        ((6, 5),),
        lambda a: cross_entropy(a, ROW_CLASSES),
        lambda a: jax_cross_entropy(a, ROW_CLASSES),
    ),
    OpCase(
        "nn.layer_norm",
        (PAGE, (WIDTH,), (WIDTH,)),
        lambda x, g, b: layer_norm(x, g, b),
        lambda x, g, b: jax_layer_norm(x, g, b),
    ),
    OpCase(
        "nn.layer_norm",
        (PAGE,),
        lambda x: layer_norm(x, np.ones(WIDTH), np.zeros(WIDTH)),
        lambda x: jax_layer_norm(x, 1.0, 0.0),
        label="unlearned",
    ),
    OpCase(
        "nn.layer_norm",
        ((4, 6), (6,), (6,)),
        lambda x, g, b: layer_norm(x, g, b, eps=0.0),
        lambda x, g, b: jax_layer_norm(x, g, b, eps=0.0),
        label="eps0",
    ),
    OpCase("nn.rms_norm", (PAGE, (WIDTH,)), lambda x, g: rms_norm(x, g), lambda x, g: jax_rms_norm(x, g)),
    OpCase("nn.rms_norm", ((2,), (2,)), lambda x, g: rms_norm(x, g, 1e-8), lambda x, g: jax_rms_norm(x, g, 1e-8)),
    OpCase(
        "tasks.cross_entropy_per_model",
        ((MODELS, POINTS, 2),),
        lambda a: cross_entropy_per_model(a, LABELS),
        lambda a: jax_cross_entropy_per_model(a, LABELS),
    ),
]


@pytest.mark.parametrize("case", OP_CASES, ids=lambda case: case.id)
def test_op_agrees_with_jax_in_value_and_gradient(case: OpCase) -> None:
    # Each case draws its own inputs from its id, so adding or reordering cases changes no other case's inputs.
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = [case.sample(rng, shape) for shape in case.shapes]
    out = case.engine(*(parameter(x, name=f"x{i}") for i, x in enumerate(inputs)))
    expected, jax_vjp = jax.vjp(case.reference, *(jnp.asarray(x) for x in inputs))
    assert_matches(out.data, expected, "the value")

    # The gradient of <seed, out> for a random seed: every output element weighs in with its own factor.
    seed = rng.standard_normal(out.shape)
    leaves = out.leaves()
    out.backward_with_seed(seed)
    grads = {leaf.name: leaf.grad for leaf in leaves}
    for i, (x, reference) in enumerate(zip(inputs, jax_vjp(jnp.asarray(seed)))):
        engine = grads.get(f"x{i}")
        assert_matches(np.zeros_like(x) if engine is None else engine, reference, f"the gradient of input {i}")


# ------------------------------------------------------------- models as the training pages build them
@dataclass(frozen=True)
class Stack:
    """A training page's stack of blocks on the stream ``h`` ``[models, points, width]``, on the engine and in JAX.

    ``weights(rng, l)`` draws block ``l``'s weights, one model's, by name; both forward functions take the stream
    and the block's weights (Tensors for the engine, JAX arrays for JAX) and return the stream after the block.
    """

    weights: Callable[[np.random.Generator, int], dict[str, np.ndarray]]
    engine: Callable[[Tensor, dict[str, Tensor]], Tensor]
    reference: Callable[[Any, dict[str, Any]], Any]
    top: Callable[[int], int] = lambda depth: WIDTH  # the width the read-out reads, after ``depth`` blocks


GROWTH = 8  # a dense block's new features


def two_layers(rng: np.random.Generator, l: int, *, reads: int = WIDTH, out: int = WIDTH) -> dict[str, np.ndarray]:
    return {
        "first": rng.standard_normal((reads, WIDTH)) * he_std(reads, after_relu=False),
        "second": rng.standard_normal((WIDTH, out)) * he_std(WIDTH, after_relu=True),
    }


def gated(rng: np.random.Generator, l: int) -> dict[str, np.ndarray]:
    gate = rng.standard_normal((WIDTH, WIDTH)) * he_std(WIDTH, after_relu=False)
    return {**two_layers(rng, l), "gate": gate, "gate_bias": rng.uniform(-2.0, 0.0, size=(1, WIDTH))}


def branch(h: Tensor, w: dict[str, Tensor]) -> Tensor:
    return (h @ w["first"]).relu() @ w["second"]


def jax_branch(h: Any, w: dict[str, Any]) -> Any:
    return jax.nn.relu(h @ w["first"]) @ w["second"]


def norm(h: Tensor) -> Tensor:
    return layer_norm(h, np.ones(h.shape[-1]), np.zeros(h.shape[-1]))


def jax_norm(h: Any) -> Any:
    return jax_layer_norm(h, 1.0, 0.0)


def highway(h: Tensor, w: dict[str, Tensor]) -> Tensor:
    t = (h @ w["gate"] + w["gate_bias"]).sigmoid()
    return t * branch(h, w) + (1.0 - t) * h


def jax_highway(h: Any, w: dict[str, Any]) -> Any:
    t = jax.nn.sigmoid(h @ w["gate"] + w["gate_bias"])
    return t * jax_branch(h, w) + (1.0 - t) * h


STACKS: dict[str, Stack] = {
    "plain": Stack(two_layers, branch, jax_branch),
    "residual": Stack(two_layers, lambda h, w: residual_add(h, branch(h, w)), lambda h, w: h + jax_branch(h, w)),
    "pre-norm": Stack(two_layers, lambda h, w: h + branch(norm(h), w), lambda h, w: h + jax_branch(jax_norm(h), w)),
    "post-norm": Stack(two_layers, lambda h, w: norm(h + branch(h, w)), lambda h, w: jax_norm(h + jax_branch(h, w))),
    "highway": Stack(gated, highway, jax_highway),
    "dense": Stack(
        lambda rng, l: two_layers(rng, l, reads=WIDTH + l * GROWTH, out=GROWTH),
        lambda h, w: concat([h, branch(h, w)], axis=-1),
        lambda h, w: jnp.concatenate([h, jax_branch(h, w)], axis=-1),
        top=lambda depth: WIDTH + depth * GROWTH,
    ),
}
DEPTH = 3
SEEDS = (1, 2, 3)


@dataclass(frozen=True)
class PageModel:
    """``MODELS`` seeds of one stack side by side on the spirals, as the training pages train them: the engine's
    ``Ends`` around ``DEPTH`` blocks, and the same weights as a dict for JAX."""

    kind: str
    ends: list[EndsDraw] = field(repr=False)
    blocks: list[dict[str, np.ndarray]] = field(repr=False)  # every block's weights, the models stacked

    @classmethod
    def draw(cls, kind: str) -> PageModel:
        stack = STACKS[kind]
        ends, per_seed = [], []
        for seed in SEEDS:
            rng = np.random.default_rng(seed)
            ends.append(draw_ends(rng, inputs=2, width=WIDTH, classes=2))
            per_seed.append([stack.weights(rng, l) for l in range(DEPTH)])
        top = stack.top(DEPTH)
        if top != WIDTH:  # the read-out reads the widened top (Ends takes its width from the embedding)
            readouts = [
                np.random.default_rng(s).standard_normal((top, 2)) * he_std(top, after_relu=False) for s in SEEDS
            ]
            ends = [EndsDraw(e.embed, r) for e, r in zip(ends, readouts)]
        blocks = [{k: np.stack([w[l][k] for w in per_seed]) for k in per_seed[0][l]} for l in range(DEPTH)]
        return cls(kind, ends, blocks)

    def engine(self) -> tuple[dict[str, Tensor], Callable[[], Tensor]]:
        """The engine's parameters by name, and the forward pass that gives each model's loss ``[MODELS]``."""
        ends = Ends(self.ends, name="model")
        blocks = [{k: parameter(v, name=f"block.{l}.{k}") for k, v in b.items()} for l, b in enumerate(self.blocks)]
        params = {p.name: p for p in [*ends.parameters(), *(w for b in blocks for w in b.values())]}
        data = SPIRALS.dataset()
        block = STACKS[self.kind].engine

        def losses() -> Tensor:
            h = ends.embed(data.inputs)
            for b in blocks:
                h = block(h, b)
            return cross_entropy_per_model(ends.logits(h), data.labels)

        return {str(name): p for name, p in params.items()}, losses

    def initial_values(self) -> dict[str, np.ndarray]:
        """The same parameters as the engine's, by the same names, as arrays."""
        params, _ = self.engine()
        return {name: p.data.copy() for name, p in params.items()}

    def reference(self, values: dict[str, Any]) -> Any:
        """JAX's losses ``[MODELS]`` at the parameters ``values`` (named as the engine's)."""
        data = SPIRALS.dataset()
        block = STACKS[self.kind].reference
        h = jnp.asarray(data.inputs) @ values["model.embed.weight"] + values["model.embed.bias"]
        for l in range(DEPTH):
            h = block(h, {k: values[f"block.{l}.{k}"] for k in self.blocks[l]})
        logits = h @ values["model.readout.weight"] + values["model.readout.bias"]
        return jax_cross_entropy_per_model(logits, data.labels)


@pytest.mark.parametrize("kind", STACKS)
def test_page_model_agrees_with_jax_in_losses_and_every_gradient(kind: str) -> None:
    model = PageModel.draw(kind)
    params, losses = model.engine()
    out = losses()
    expected = model.reference({name: jnp.asarray(p.data) for name, p in params.items()})
    assert_matches(out.data, expected, f"{kind}: each model's loss")

    out.sum().backward()
    reference = jax.grad(lambda v: jnp.sum(model.reference(v)))({n: jnp.asarray(p.data) for n, p in params.items()})
    assert set(reference) == set(params)
    for name, p in params.items():
        assert p.grad is not None, f"{kind}: {name} got no gradient"
        assert_matches(p.grad, reference[name], f"{kind}: the gradient of {name}")


# --------------------------------------------------------------------------- optimizers
def biases(names: list[str]) -> list[str]:
    """The parameters that do not decay: the biases, as the pages' no_decay lists hold their norms' gains."""
    return [n for n in names if n.endswith("bias")]


@dataclass(frozen=True)
class OptimizerCase:
    """An engine optimizer and the same rule from ``jax.example_libraries.optimizers`` (which has no weight decay:
    ``l2`` is added to the gradient, as SGD's decay is; ``decoupled`` takes ``lr * decay * p`` off the parameter
    before the update, as AdamW's is; biases never decay)."""

    label: str
    engine: Callable[[dict[str, Tensor]], Optimizer]
    reference: Callable[[], Any]  # an (init, update, get_params) triple
    lr: float
    l2: float = 0.0
    decoupled: float = 0.0


OPTIMIZER_CASES: list[OptimizerCase] = [
    OptimizerCase("sgd", lambda p: SGD(p, lr=0.1), lambda: jax_optimizers.sgd(0.1), lr=0.1),
    OptimizerCase(
        "sgd-momentum", lambda p: SGD(p, lr=0.05, momentum=0.9), lambda: jax_optimizers.momentum(0.05, 0.9), lr=0.05
    ),
    OptimizerCase(
        "sgd-momentum-decay",
        lambda p: SGD(p, lr=0.05, momentum=0.9, weight_decay=0.01, no_decay=biases(list(p))),
        lambda: jax_optimizers.momentum(0.05, 0.9),
        lr=0.05,
        l2=0.01,
    ),
    OptimizerCase("adam", lambda p: Adam(p, lr=3e-3), lambda: jax_optimizers.adam(3e-3), lr=3e-3),
    OptimizerCase(
        "adam-betas",
        lambda p: Adam(p, lr=1e-2, betas=(0.8, 0.99), eps=1e-6),
        lambda: jax_optimizers.adam(1e-2, b1=0.8, b2=0.99, eps=1e-6),
        lr=1e-2,
    ),
    OptimizerCase(
        "adamw",
        lambda p: Adam(p, lr=1e-2, weight_decay=0.1, no_decay=biases(list(p))),
        lambda: jax_optimizers.adam(1e-2),
        lr=1e-2,
        decoupled=0.1,
    ),
]
STEPS = 5


def decayed(state: Any, lr: float, decay: dict[str, float]) -> Any:
    """JAX's optimizer state with each parameter p replaced by p - lr * decay * p (AdamW's decoupled decay)."""
    marked = jax_optimizers.unpack_optimizer_state(state)
    for name, joint in marked.items():
        p, *moments = joint.subtree
        marked[name] = jax_optimizers.JoinPoint((p - lr * decay[name] * p, *moments))
    return jax_optimizers.pack_optimizer_state(marked)


@pytest.mark.parametrize("case", OPTIMIZER_CASES, ids=lambda case: case.label)
def test_optimizer_agrees_with_jax_step_by_step(case: OptimizerCase) -> None:
    model = PageModel.draw("residual")
    params, losses = model.engine()
    optimizer = case.engine(params)
    init, update, get_params = case.reference()
    state = init({name: jnp.asarray(v) for name, v in model.initial_values().items()})
    loss_and_grad = jax.value_and_grad(lambda v: jnp.sum(model.reference(v)))
    excluded = set(biases(list(params)))
    l2 = {name: 0.0 if name in excluded else case.l2 for name in params}
    decoupled = {name: 0.0 if name in excluded else case.decoupled for name in params}
    for step in range(STEPS):
        out = losses().sum()
        expected, grads = loss_and_grad(get_params(state))
        assert_matches(out.data, expected, f"{case.label}: the loss before step {step + 1}")
        optimizer.zero_grad()
        out.backward()
        optimizer.step()
        values = get_params(state)
        grads = {name: g + l2[name] * values[name] for name, g in grads.items()}
        if case.decoupled:
            state = decayed(state, case.lr, decoupled)
        state = update(step, grads, state)
        for name, p in params.items():
            assert_matches(p.data, get_params(state)[name], f"{case.label}: {name} after step {step + 1}")


# --------------------------------------------------------------------------- coverage
def _engine_ops() -> set[str]:
    """What the engine offers to compute with: ``Tensor``'s ops, the autograd and nn functions and layers that
    return tensors, and the optimizers. What is not an op (construction, inspection, backward) is left out."""
    not_ops = {"__init__", "__repr__", "shape", "is_leaf", "parents", "numpy", "zero_grad", "backward", "gradient"}
    not_ops |= {"backward_with_seed", "leaves"}
    ops = {
        f"Tensor.{name}"
        for name, value in vars(Tensor).items()
        if (inspect.isfunction(value) or isinstance(value, property))
        and name not in not_ops
        and (not name.startswith("_") or (name.startswith("__") and name.endswith("__")))
    }
    for prefix, module in (("autograd", autograd), ("nn", nn)):
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", "").split(".")[1:2] != [prefix]:
                continue
            if inspect.isfunction(value) and inspect.signature(value).return_annotation == "Tensor":
                ops.add(f"{prefix}.{name}")
            elif inspect.isclass(value) and (issubclass(value, Optimizer) and value is not Optimizer):
                ops.add(f"{prefix}.{name}")
            elif inspect.isclass(value) and "__call__" in vars(value):
                ops.add(f"{prefix}.{name}")
    return ops - {"autograd.tensor", "autograd.parameter"}  # constructors: a leaf has no op to compare


def test_every_op_and_optimizer_has_a_reference() -> None:
    ids = [case.id for case in OP_CASES]
    assert len(set(ids)) == len(ids), "two cases share an id (so also their inputs): give one a label"
    covered = {case.op for case in OP_CASES}
    covered |= {f"nn.{type(case.engine({'w': parameter(np.ones(1), name='w')})).__name__}" for case in OPTIMIZER_CASES}
    ops = _engine_ops()
    assert "Tensor.__matmul__" in ops and "nn.layer_norm" in ops and "nn.Adam" in ops  # the survey finds ops at all
    missing = sorted(ops - covered)
    assert not missing, f"no JAX reference for {missing}: add an OpCase (or an OptimizerCase) to {__name__}"
    unknown = sorted(covered - ops - {"tasks.cross_entropy_per_model"})
    assert not unknown, f"reference cases name {unknown}, which the engine does not offer"


def test_the_reference_computes_in_float64() -> None:
    # Without x64, JAX silently computes in float32 and every comparison above would fail by 1e-7, not pass.
    assert jnp.asarray(1.0).dtype == jnp.float64
    assert float(jnp.asarray(1.0) + jnp.asarray(2.0**-52)) != 1.0
    assert math.isclose(float(jnp.exp(jnp.asarray(1.0))), math.e, rel_tol=0.0, abs_tol=4.5e-16)
