"""Layers and training on the engine.

``Linear`` (bias-free, named) and the residual merge ``residual_add``; the
softmax family and ``cross_entropy``; and ``layer_norm`` and ``rms_norm`` over
the last axis.
Everything here is composed from engine ops, so every backward comes from the
engine's own VJPs.
"""

from __future__ import annotations


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
        raise ShapeError("cross_entropy needs at least one row: the mean of no losses is undefined", logits.shape, classes.shape)
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
    shapes = {key: value.shape if isinstance(value, Tensor) else np.shape(value) for key, value in params.items()}
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


def _first_zero_row(spread: Tensor) -> tuple[int, ...] | None:
    zeros = np.argwhere(spread.data[..., 0] == 0.0)
    return tuple(int(i) for i in zeros[0]) if len(zeros) else None


def layer_norm(x: Tensor, gain: Tensor, bias: Tensor, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * gain + bias over the last axis (var: the mean square deviation)."""
    _check_norm("layer_norm", x, eps, gain=gain, bias=bias)
    centred = x - x.mean(axis=-1, keepdims=True)
    var = (centred * centred).mean(axis=-1, keepdims=True)
    row = _first_zero_row(var) if eps == 0.0 else None
    if row is not None:
        raise NormalizationError(
            f"layer_norm with eps=0 cannot scale row {row} of x {shape_text(x.shape)}: "
            "its entries are all equal, so its variance is 0; pass eps > 0"
        )
    return centred / (var + eps).sqrt() * gain + bias


def rms_norm(x: Tensor, gain: Tensor, eps: float = 1e-5) -> Tensor:
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
            f"rms_norm with eps=0 cannot scale row {row} of x {shape_text(x.shape)}: "
            "every entry is 0, so its mean square is 0 and its log is -inf; pass eps > 0"
        )
    inv = (-0.5 * (ms + eps).log()).exp()
    x_hat = x * inv
    return x_hat * gain
