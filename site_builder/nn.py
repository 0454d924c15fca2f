"""Layers and training on the engine.

``Linear`` (bias-free, named) and the residual merge ``residual_add``; the
softmax family and ``cross_entropy``; ``layer_norm`` and ``rms_norm`` over the
last axis; and the optimizers ``SGD`` and ``Adam`` over named parameters.
Everything here is composed from engine ops, so every backward comes from the
engine's own VJPs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .autograd import ShapeError, Tensor, parameter, shape_text


class ResidualShapeError(ValueError):
    """``residual_add`` was given an identity and a branch whose shapes differ."""

    def __init__(self, identity: tuple[int, ...], branch: tuple[int, ...]):
        self.identity = tuple(identity)
        self.branch = tuple(branch)
        super().__init__(
            f"residual_add needs the branch output to have exactly the identity's shape: "
            f"identity {shape_text(self.identity)} != branch {shape_text(self.branch)} "
            "(a residual merge never broadcasts)"
        )


class Linear:
    """``F(x) = x @ W`` with ``W`` of shape ``[in, out]`` and no bias."""

    def __init__(self, weight: object, *, name: str) -> None:
        w = np.array(weight, dtype=np.float64)
        if w.ndim != 2:
            raise ValueError(f"Linear {name!r} needs a 2-D weight [in, out], got shape {shape_text(w.shape)}")
        self.weight = parameter(w, name=name)

    @property
    def name(self) -> str:
        assert self.weight.name is not None
        return self.weight.name

    def parameters(self) -> list[Tensor]:
        return [self.weight]

    def __call__(self, x: Tensor) -> Tensor:
        return x @ self.weight


# region: residual_add
def residual_add(identity: Tensor, branch: Tensor) -> Tensor:
    """y = x + F(x), with exact shape equality and no parameters of its own.

    Generic addition would broadcast ``[2,2] + [2]``; a residual merge must
    not, because the stream's shape is the contract every later layer relies on.
    Both operands stay on the tape, so reverse mode adds the identity's
    gradient and the branch's vector-Jacobian product.
    """
    if identity.shape != branch.shape:
        raise ResidualShapeError(identity.shape, branch.shape)
    return identity + branch


# endregion: residual_add


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis``, computed as exp(x - max) so no exponential overflows.

    The max is a detached constant: shifting every logit of a row by the same
    number leaves the softmax unchanged, so the shift must add nothing to the
    gradient either.
    """
    shifted = x - x.detach().max(axis=axis, keepdims=True)
    e = shifted.exp()
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """log softmax(x) along ``axis``: (x - max) - log sum exp(x - max), with the max detached."""
    shifted = x - x.detach().max(axis=axis, keepdims=True)
    return shifted - shifted.exp().sum(axis=axis, keepdims=True).log()


def cross_entropy(logits: Tensor, targets: object) -> Tensor:
    """Mean over the rows of -log softmax(logits)[n, targets[n]].

    ``logits`` has shape [N, K]; ``targets`` holds N integer classes in 0..K-1
    (a list or an integer array, not a Tensor: a class index has no gradient).
    """
    if isinstance(targets, Tensor):
        raise TypeError("cross_entropy targets are integer class indices (a list or an int array), not a Tensor")
    classes = np.asarray(targets)
    if logits.data.ndim != 2:
        raise ShapeError(
            f"cross_entropy needs logits of shape [N,K], got {shape_text(logits.shape)} "
            f"(targets {shape_text(classes.shape)})",
            logits.shape,
            classes.shape,
        )
    rows, width = logits.shape
    if classes.shape != (rows,):
        raise ShapeError(
            f"cross_entropy needs one target per row of logits {shape_text(logits.shape)}, "
            f"that is targets of shape [{rows}], got {shape_text(classes.shape)}",
            logits.shape,
            classes.shape,
        )
    if rows == 0:
        raise ShapeError(
            "cross_entropy needs at least one row: the mean of no losses is undefined", logits.shape, classes.shape
        )
    if classes.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy targets must be integers (class indices), got dtype {classes.dtype}")
    outside = np.flatnonzero((classes < 0) | (classes >= width))
    if outside.size:
        row = int(outside[0])
        raise ShapeError(
            f"cross_entropy target {int(classes[row])} at row {row} is not a class of logits "
            f"{shape_text(logits.shape)}: classes run 0..{width - 1} (targets {shape_text(classes.shape)})",
            logits.shape,
            classes.shape,
        )
    picked = log_softmax(logits, axis=-1)[np.arange(rows), classes]
    return -picked.mean()


class NormalizationError(ValueError):
    """A normalization was asked to divide by zero (eps == 0 and a row with no spread) or given eps < 0."""


def _check_norm(name: str, x: Tensor, eps: float, **params: object) -> int:
    """The width of x's last axis, after checking x has one and every parameter is [width]."""
    shapes = {
        key: value.shape if isinstance(value, Tensor) else np.shape(cast(Any, value)) for key, value in params.items()
    }
    if x.data.ndim == 0:
        first = next(iter(shapes.values()))
        raise ShapeError(
            f"{name} normalizes over the last axis, but x has shape [] (no axes); "
            f"{next(iter(shapes))} has shape {shape_text(first)}",
            x.shape,
            first,
        )
    width = x.shape[-1]
    for key, shape in shapes.items():
        if shape != (width,):
            raise ShapeError(
                f"{name} {key} must have shape [{width}] to match the last axis of x {shape_text(x.shape)}, "
                f"got {shape_text(shape)}",
                x.shape,
                shape,
            )
    if not eps >= 0.0:
        raise NormalizationError(f"{name} eps must be a number >= 0, got {eps!r}")
    return width


def _first_zero_row(spread: Tensor) -> str | None:
    """Where the first row whose ``spread`` (a keepdims statistic over the last axis) is 0 sits, in words."""
    zeros = np.argwhere(spread.data[..., 0] == 0.0)
    if not len(zeros):
        return None
    index = [int(i) for i in zeros[0]]
    return "its only row" if not index else f"row {index[0]}" if len(index) == 1 else f"row {tuple(index)}"


def layer_norm(x: Tensor, gain: Tensor | np.ndarray, bias: Tensor | np.ndarray, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * gain + bias over the last axis (var: the mean square deviation)."""
    _check_norm("layer_norm", x, eps, gain=gain, bias=bias)
    centred = x - x.mean(axis=-1, keepdims=True)
    var = (centred * centred).mean(axis=-1, keepdims=True)
    row = _first_zero_row(var) if eps == 0.0 else None
    if row is not None:
        raise NormalizationError(
            f"layer_norm with eps=0 cannot scale {row} of x {shape_text(x.shape)}: "
            "its entries are all equal, so its variance is 0; pass eps > 0"
        )
    return centred / (var + eps).sqrt() * gain + bias


def rms_norm(x: Tensor, gain: Tensor | np.ndarray, eps: float = 1e-5) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * gain over the last axis, in one fixed order of float operations.

    ms = sum(x*x) / d (a sum, then a division by the width d), inv =
    exp(-0.5 * log(ms + eps)), x_hat = x * inv, y = x_hat * gain. Another
    implementation that follows the same order gets the same bits.
    """
    d = _check_norm("rms_norm", x, eps, gain=gain)
    ms = (x * x).sum(axis=-1, keepdims=True) / d
    row = _first_zero_row(ms) if eps == 0.0 else None
    if row is not None:
        raise NormalizationError(
            f"rms_norm with eps=0 cannot scale {row} of x {shape_text(x.shape)}: "
            "every entry is 0, so its mean square is 0 and its log is -inf; pass eps > 0"
        )
    inv = (-0.5 * (ms + eps).log()).exp()
    x_hat = x * inv
    return x_hat * gain


class ParameterError(ValueError):
    """An optimizer was given parameters it cannot track, or a bad setting."""


def named_parameters(params: Mapping[str, Tensor] | Iterable[Tensor]) -> dict[str, Tensor]:
    """``name -> tensor`` from a mapping, or from tensors that carry their own names.

    Every tensor must be a leaf that collects a gradient, named once and listed once.
    """
    if isinstance(params, Mapping):
        items = list(params.items())
    else:
        items = []
        for p in params:
            if not isinstance(p, Tensor):
                raise ParameterError(f"an optimizer takes Tensors, got {type(p).__name__}")
            if not p.name:
                raise ParameterError(
                    f"{p!r} has no name: pass a dict name -> tensor, or name it with parameter(..., name=)"
                )
            items.append((p.name, p))
    named: dict[str, Tensor] = {}
    seen: dict[int, str] = {}
    for name, p in items:
        if not isinstance(p, Tensor):
            raise ParameterError(f"parameter {name!r} is a {type(p).__name__}, not a Tensor")
        if not (p.requires_grad and p.is_leaf):
            raise ParameterError(f"{name!r} is not a parameter: {p!r} is not a leaf that collects a gradient")
        if name in named:
            raise ParameterError(f"two parameters are named {name!r}: names must be unique")
        if id(p) in seen:
            raise ParameterError(f"the same tensor is listed as {seen[id(p)]!r} and as {name!r}")
        named[name] = p
        seen[id(p)] = name
    if not named:
        raise ParameterError("an optimizer needs at least one parameter")
    return named


class Optimizer:
    """What SGD and Adam share: named parameters, which of them decay, and zero_grad."""

    def __init__(
        self,
        params: Mapping[str, Tensor] | Iterable[Tensor],
        *,
        lr: float | np.ndarray,
        weight_decay: float,
        no_decay: Iterable[str],
    ) -> None:
        self.params = named_parameters(params)
        if isinstance(no_decay, str):
            raise ParameterError(f"no_decay takes a collection of names, got the single string {no_decay!r}")
        excluded = frozenset(no_decay)
        unknown = sorted(excluded - set(self.params))
        if unknown:
            raise ParameterError(f"no_decay names {unknown}, which are not among the parameters {sorted(self.params)}")
        rates = np.asarray(lr, dtype=np.float64)
        if not (np.all(np.isfinite(rates)) and np.all(rates > 0.0)) or rates.size == 0:
            raise ParameterError(f"lr must be a finite number > 0 (or an array of them), got {lr!r}")
        if not (math.isfinite(weight_decay) and weight_decay >= 0.0):
            raise ParameterError(f"weight_decay must be a finite number >= 0, got {weight_decay!r}")
        # A float, or an array that broadcasts against every parameter: models side by side, each at its own
        # rate (``[M, 1, 1]`` for parameters ``[M, ...]`` of rank three).
        self.lr: float | np.ndarray = float(lr) if rates.ndim == 0 else rates
        self.weight_decay = float(weight_decay)
        self.no_decay = excluded

    def decay(self, name: str) -> float:
        """The weight decay that applies to parameter ``name`` (0 for a name in ``no_decay``)."""
        return 0.0 if name in self.no_decay else self.weight_decay

    def zero_grad(self) -> None:
        for p in self.params.values():
            p.zero_grad()

    def step(self) -> None:
        """One update of every parameter from its gradient (each optimizer's own rule)."""
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum and (L2, added to the gradient) weight decay.

    For each parameter with a gradient: g = grad + decay * p; with momentum,
    v = g on the first step and v = momentum * v + g after, and g = v; then
    p = p - lr * g. A parameter whose gradient is None is left alone.
    """

    def __init__(
        self,
        params: Mapping[str, Tensor] | Iterable[Tensor],
        *,
        lr: float | np.ndarray,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
        no_decay: Iterable[str] = (),
    ) -> None:
        super().__init__(params, lr=lr, weight_decay=weight_decay, no_decay=no_decay)
        if not 0.0 <= momentum < 1.0:
            raise ParameterError(f"momentum must be in [0, 1), got {momentum!r}")
        self.momentum = float(momentum)
        self.velocity: dict[str, np.ndarray] = {}

    def step(self) -> None:
        for name, p in self.params.items():
            if p.grad is None:
                continue
            g = p.grad
            decay = self.decay(name)
            if decay:
                g = g + decay * p.data
            if self.momentum:
                v = self.velocity.get(name)
                g = np.array(g) if v is None else self.momentum * v + g
                self.velocity[name] = g
            # A new array, not an update in place: a graph built before this step keeps the values it used.
            p.data = p.data - self.lr * g


@dataclass(frozen=True)
class AdamState:
    """One parameter's Adam moments after ``step`` updates."""

    step: int
    m: np.ndarray  # running mean of the gradient
    v: np.ndarray  # running mean of its square


class Adam(Optimizer):
    """Adam, with optional decoupled weight decay (AdamW).

    For each parameter with a gradient, at its step t: p = p - lr * decay * p
    (when it decays); m = b1 * m + (1 - b1) * g; v = b2 * v + (1 - b2) * g * g;
    p = p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps). A parameter
    whose gradient is None is left alone and its step count does not advance.
    """

    def __init__(
        self,
        params: Mapping[str, Tensor] | Iterable[Tensor],
        *,
        lr: float | np.ndarray,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        no_decay: Iterable[str] = (),
    ) -> None:
        super().__init__(params, lr=lr, weight_decay=weight_decay, no_decay=no_decay)
        b1, b2 = betas
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ParameterError(f"betas must both be in [0, 1), got {betas!r}")
        if not (math.isfinite(eps) and eps > 0.0):
            raise ParameterError(f"eps must be a finite number > 0, got {eps!r}")
        self.betas = (float(b1), float(b2))
        self.eps = float(eps)
        self.state: dict[str, AdamState] = {}

    def step(self) -> None:
        b1, b2 = self.betas
        for name, p in self.params.items():
            g = p.grad
            if g is None:
                continue
            before = self.state.get(name) or AdamState(step=0, m=np.zeros_like(p.data), v=np.zeros_like(p.data))
            t = before.step + 1
            m = b1 * before.m + (1.0 - b1) * g
            v = b2 * before.v + (1.0 - b2) * (g * g)
            self.state[name] = AdamState(step=t, m=m, v=v)
            data = p.data
            decay = self.decay(name)
            if decay:
                data = data - self.lr * decay * data
            m_hat = m / (1.0 - b1**t)
            v_hat = v / (1.0 - b2**t)
            # A new array, not an update in place: a graph built before this step keeps the values it used.
            p.data = data - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
