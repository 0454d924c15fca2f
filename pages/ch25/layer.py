"""RMSNorm as a layer: one named gain per feature, a fixed ε, and the checks it makes before it computes.

Composed from engine ops (square, mean, add, log, multiply, exp), so its
backward comes from the engine's reverse mode. The order of the float
operations is the one ``site_builder.nn.rms_norm`` uses, and the fixtures
verify that both give the same bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter

LOG_SCALE = -0.5  # r = exp(LOG_SCALE · log(ms + ε)) is 1 / sqrt(ms + ε)


class RMSNormError(ValueError):
    """The layer refused its settings or its input; the message is the course's wording."""


@dataclass(frozen=True)
class RMSNormForward:
    """Every tensor of one forward pass, each still on the tape."""

    mean_square: Tensor  # mean(x²) over the last axis, that axis kept with length one
    inverse_rms: Tensor  # 1 / sqrt(mean_square + ε)
    normalized: Tensor  # x̂ = x · inverse_rms
    output: Tensor  # y = x̂ · g


# region: rmsnorm-layer
class RMSNorm:
    """y = g ⊙ x / sqrt(mean(x²) + ε) over the last axis of x; g is its only parameter."""

    def __init__(self, gain: object, *, name: str, epsilon: float) -> None:
        if not (math.isfinite(epsilon) and epsilon >= 0.0):
            why = f"RMSNorm epsilon must be finite and nonnegative, got {epsilon!r}"
            raise RMSNormError(why)
        g = np.array(gain, dtype=np.float64)
        if g.ndim != 1 or g.size == 0:
            why = f"RMSNorm gain must be one nonempty axis, got shape {list(g.shape)}"
            raise RMSNormError(why)
        self.gain = parameter(g, name=name)
        self.epsilon = float(epsilon)

    @property
    def feature_width(self) -> int:
        return self.gain.shape[0]

    def forward(self, x: Tensor) -> RMSNormForward:
        if x.data.ndim == 0:
            raise RMSNormError("RMSNorm input must have at least one axis")
        d = self.feature_width
        if x.shape[-1] != d:
            why = f"RMSNorm input feature width must be {d}, got {x.shape[-1]}"
            raise RMSNormError(why)
        mean_square = (x * x).mean(axis=-1, keepdims=True)
        if self.epsilon == 0.0:  # checked before the logarithm, which would give -inf
            rows = np.flatnonzero(mean_square.data == 0.0)  # counted over all leading axes
            if rows.size:
                row = rows[0]
                why = f"RMSNorm epsilon is zero but feature row {row} has zero mean square"
                raise RMSNormError(why)
        inverse_rms = ((mean_square + self.epsilon).log() * LOG_SCALE).exp()
        normalized = x * inverse_rms
        return RMSNormForward(mean_square, inverse_rms, normalized, normalized * self.gain)

    def __call__(self, x: Tensor) -> Tensor:
        return self.forward(x).output


# endregion: rmsnorm-layer


# region: batch-norm
def batch_norm(batch: Tensor, epsilon: float) -> Tensor:
    """BatchNorm's statistics without its learned scale and shift: each feature (a column)
    centred and scaled over the examples of the batch (the rows), biased variance."""
    centred = batch - batch.mean(axis=0, keepdims=True)
    variance = (centred * centred).mean(axis=0, keepdims=True)
    return centred / (variance + epsilon).sqrt()


# endregion: batch-norm
