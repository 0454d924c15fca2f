"""Identity-at-initialization fixtures, on our autograd engine in float64.

A residual stack of blocks ``h = h + Linear2(ReLU(Linear1(h)))``: with every
block's second layer zero the output is the input bit for bit at any depth;
with He's ReLU scale on both layers it drifts away as depth grows. ReZero ``y = x + α·F(x)``
with α = 0 is the identity too, yet ``∂L/∂α = ȳ·F(x)`` is not zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter, tensor
from site_builder.nn import Linear, residual_add
from site_builder.run import FixtureError, Run, finite
from site_builder.trace import format_real

from .trace import DEPTHS, Config, DepthRow, ReZero, Trace, ZeroInitGradient


@dataclass(frozen=True)
class Constants:
    width: int = 128
    rows: int = 1
    seed: int = 0
    he_gain: float = 2.0  # the factor under the root: std = sqrt(he_gain / fan_in) (PyTorch's gain is its root)
    upstream: float = 1.0
    alpha: float = 0.0  # ReZero's initial gate
    predicted_within: float = 0.1  # a measured ratio "is close to" He's prediction within this relative distance

    @property
    def he_std(self) -> float:
        """The He weights' standard deviation, sqrt(gain / fan_in); fan_in = width for both layers."""
        return math.sqrt(self.he_gain / self.width)


@dataclass(frozen=True)
class Draws:
    """The input and every block's weights at He's ReLU scale, drawn in that order from one generator."""

    x: np.ndarray
    first: tuple[np.ndarray, ...]
    second: tuple[np.ndarray, ...]


def draws(c: Constants) -> Draws:
    rng = np.random.default_rng(c.seed)
    std = c.he_std
    x = rng.standard_normal((c.rows, c.width))
    first, second = [], []
    for _ in range(max(DEPTHS)):
        first.append(rng.standard_normal((c.width, c.width)) * std)
        second.append(rng.standard_normal((c.width, c.width)) * std)
    return Draws(x, tuple(first), tuple(second))


class Block:
    """``F(h) = Linear2(ReLU(Linear1(h)))``; the stack adds it to the stream with ``residual_add``."""

    def __init__(self, first: np.ndarray, second: np.ndarray, name: str) -> None:
        self.first = Linear(first, name=f"{name}.first.weight")
        self.second = Linear(second, name=f"{name}.second.weight")

    def __call__(self, h: Tensor) -> Tensor:
        return self.second(self.first(h).relu())


# region: stack-fixture
def stack_outputs(d: Draws, *, zero_second: bool) -> list[np.ndarray]:
    """Stream values after each block, depth 1 .. max(DEPTHS); one stack, read at every depth."""
    h = tensor(d.x)
    values = []
    for n, (w1, w2) in enumerate(zip(d.first, d.second)):
        block = Block(w1, np.zeros_like(w2) if zero_second else w2, name=f"block.{n}")
        h = residual_add(h, block(h))
        values.append(h.data)
    return values


# endregion: stack-fixture


def depth_rows(c: Constants, d: Draws) -> tuple[DepthRow, ...]:
    zero = stack_outputs(d, zero_second=True)
    he = stack_outputs(d, zero_second=False)
    x_norm = float(np.linalg.norm(d.x))
    rows = []
    for depth in DEPTHS:
        z = finite("zero-init", f"the depth-{depth} output", zero[depth - 1])
        h = finite("he-init", f"the depth-{depth} output", he[depth - 1])
        exact = bool(np.array_equal(z, d.x))
        if not exact:
            raise FixtureError("zero-init", f"a stack of {depth} zero-initialized blocks changed its input")
        deviation = float(np.linalg.norm(h - d.x))
        rows.append(
            DepthRow(
                depth=depth,
                zero_init_deviation=float(np.linalg.norm(z - d.x)),
                he_deviation=float(deviation),
                he_relative=float(deviation / x_norm),
            )
        )
    return tuple(rows)


# region: zero-init-gradient
def zero_init_gradient(c: Constants, d: Draws) -> ZeroInitGradient:
    """Backward through the deepest zero-initialized stack: which weights get a gradient?"""
    fixture = "zero-init-gradient"
    x = parameter(d.x, name="input")
    blocks = [Block(w1, np.zeros_like(w2), name=f"block.{n}") for n, (w1, w2) in enumerate(zip(d.first, d.second))]
    h = x
    for block in blocks:
        h = residual_add(h, block(h))
    seed = np.full(h.shape, c.upstream)
    h.backward_with_seed(seed)
    assert x.grad is not None
    exact = bool(np.array_equal(finite(fixture, "the input gradient", x.grad), seed))
    if not exact:
        raise FixtureError(fixture, "the input gradient of a zero-initialized stack is not the upstream gradient")
    second = [finite(fixture, f"{b.second.name} gradient", b.second.weight.grad) for b in blocks]
    first = [finite(fixture, f"{b.first.name} gradient", b.first.weight.grad) for b in blocks]
    return ZeroInitGradient(
        depth=len(blocks),
        input_gradient_exact=exact,
        second_layer_gradient_norm=float(math.sqrt(sum(float(np.sum(g * g)) for g in second))),
        first_layer_gradient_norm=float(math.sqrt(sum(float(np.sum(g * g)) for g in first))),
    )


# endregion: zero-init-gradient


# region: rezero-fixture
def rezero_fixture(c: Constants, d: Draws) -> ReZero:
    """y = x + α·F(x) with α a parameter at ``c.alpha`` and F the first block with He's ReLU scale on both layers."""
    fixture = "rezero"
    x = tensor(d.x)
    alpha = parameter(c.alpha, name="rezero.alpha")
    block = Block(d.first[0], d.second[0], name="rezero.block")
    branch = block(x)
    y = residual_add(x, branch * alpha)
    upstream = np.full(y.shape, c.upstream)
    y.backward_with_seed(upstream)
    out = finite(fixture, "the output", y.data)
    f = finite(fixture, "F(x)", branch.data)
    by_hand = float(np.sum(upstream * f))  # ȳ · F(x)
    engine = float(finite(fixture, "the alpha gradient", alpha.grad))
    if format_real(engine) != format_real(by_hand):
        raise FixtureError(fixture, f"engine dL/dalpha {format_real(engine)} != upstream . F(x) {format_real(by_hand)}")
    weights = [finite(fixture, f"{layer.name} gradient", layer.weight.grad) for layer in (block.first, block.second)]
    exact = bool(np.array_equal(out, d.x))
    return ReZero(
        alpha=float(c.alpha),
        deviation=float(np.linalg.norm(out - d.x)),
        identity_exact=exact,
        branch_output_norm=float(np.linalg.norm(f)),
        alpha_gradient=float(engine),
        alpha_gradient_by_hand=float(by_hand),
        branch_gradient_norm=float(math.sqrt(sum(float(np.sum(g * g)) for g in weights))),
    )


# endregion: rezero-fixture


def close_to(measured: float, predicted: float, within: float) -> bool:
    """The page calls a measured ratio close to a predicted one when they differ by less than ``within`` of it."""
    return abs(measured / predicted - 1.0) < within


def run(c: Constants = Constants()) -> Run:
    d = draws(c)
    config = Config(
        width=c.width,
        hidden=c.width,
        rows=c.rows,
        seed=c.seed,
        he_gain=c.he_gain,
        he_std=c.he_std,
        input_norm=float(np.linalg.norm(d.x)),
        upstream=c.upstream,
    )
    rows = depth_rows(c, d)
    first, last = rows[0], rows[-1]
    derived: dict[str, float | int | bool] = {
        "DERIVED.deepest": max(DEPTHS),
        "DERIVED.he-variance": c.he_std**2,
        # Average factor by which the He deviation grows per extra block, first to last depth.
        "DERIVED.he-growth-per-block": (last.he_deviation / first.he_deviation) ** (1.0 / (last.depth - first.depth)),
        "DERIVED.he-deviation-orders": math.log10(last.he_deviation / first.he_deviation),
        # What He's variance rule predicts: a ReLU layer keeps the squared norm, the linear layer after it
        # multiplies it by the gain, so ||F(x)|| ~ sqrt(gain) ||x||; added at right angles to the stream, the
        # update multiplies the stream's squared norm by 1 + gain each block.
        "DERIVED.he-branch-prediction": math.sqrt(c.he_gain),
        "DERIVED.he-stream-factor": math.sqrt(1.0 + c.he_gain),
    }
    # What a sentence needs of these numbers (the table keeps every digit).
    derived["DERIVED.one-block.deviation-about"] = round(first.he_deviation)
    derived["DERIVED.one-block.relative-about"] = round(first.he_relative, 2)
    derived["DERIVED.deepest.deviation-order"] = float(f"1e{round(math.log10(last.he_deviation))}")
    derived["DERIVED.deepest.relative-order"] = float(f"1e{round(math.log10(last.he_relative))}")
    for name in ("he-growth-per-block", "he-branch-prediction", "he-stream-factor"):
        derived[f"DERIVED.{name}-about"] = round(derived[f"DERIVED.{name}"], 2)
    derived["DERIVED.he-deviation-orders-about"] = round(derived["DERIVED.he-deviation-orders"], 1)
    derived["DERIVED.he-branch-as-predicted"] = close_to(
        first.he_relative, derived["DERIVED.he-branch-prediction"], c.predicted_within
    )
    derived["DERIVED.he-growth-as-predicted"] = close_to(
        derived["DERIVED.he-growth-per-block"], derived["DERIVED.he-stream-factor"], c.predicted_within
    )
    return Run(Trace(config, rows, zero_init_gradient(c, d), rezero_fixture(c, d)), derived)
