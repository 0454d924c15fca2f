"""Three bias-free projections of one hidden sequence into queries, keys and values.

Each projection is the engine's :class:`~site_builder.nn.Linear` (``x @ W``), so
the backward pass comes from the engine's matmul: the input collects the sum of
the three routes and each weight its own gradient, summed over the batch and
token axes. The layer checks, in the course's order, what ``Linear`` alone
would not: at construction the model widths, then the head widths, then the
names; in the forward pass the rank, then the width. Its messages are the
course's wording.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor
from site_builder.nn import Linear

ROLES = ("query", "key", "value")


class QkvError(ValueError):
    """The layer refused its weights or its input; the message is the course's wording."""


@dataclass(frozen=True)
class Qkv:
    """The three views of one input, each still on the tape."""

    query: Tensor
    key: Tensor
    value: Tensor

    def of(self, role: str) -> Tensor:
        return {"query": self.query, "key": self.key, "value": self.value}[role]


# region: qkv-layer
class QkvProjections:
    """Q = X W_Q, K = X W_K, V = X W_V for X of shape [batch, tokens, d_model]; each W is [d_model, d_head]."""

    def __init__(self, query: Linear, key: Linear, value: Linear) -> None:
        self.query, self.key, self.value = query, key, value

    @classmethod
    def from_weights(cls, weights: Mapping[str, object], names: Mapping[str, str]) -> QkvProjections:
        """The layer from three weights and their names, given by role; refused before anything is built."""
        arrays = {role: np.array(weights[role], dtype=np.float64) for role in ROLES}
        for role, w in arrays.items():
            if w.ndim != 2:
                raise QkvError(f"Q/K/V {role} weight must have rank two [model_width, head_width], got rank {w.ndim}")
        model = {role: w.shape[0] for role, w in arrays.items()}
        if len(set(model.values())) != 1:
            raise QkvError(
                f"Q/K/V model widths must match, got query {model['query']}, key {model['key']}, value {model['value']}"
            )
        head = {role: w.shape[1] for role, w in arrays.items()}
        if len(set(head.values())) != 1:
            raise QkvError(
                f"Q/K/V head widths must match, got query {head['query']}, key {head['key']}, value {head['value']}"
            )
        if 0 in (model["query"], head["query"]):
            raise QkvError(f"Q/K/V widths must be positive, got model {model['query']}, head {head['query']}")
        if len(set(names.values())) != len(ROLES):
            raise QkvError(f"Q/K/V parameter names must be unique, got {', '.join(names[r] for r in ROLES)}")
        return cls(*(Linear(arrays[role], name=names[role]) for role in ROLES))

    @property
    def model_width(self) -> int:
        return self.query.weight.shape[0]

    @property
    def head_width(self) -> int:
        return self.query.weight.shape[1]

    def parameters(self) -> list[Tensor]:
        """The three weights, in the fixed order query, key, value."""
        return [self.query.weight, self.key.weight, self.value.weight]

    def names(self) -> list[str]:
        """The three parameter names, in the same order."""
        return [self.query.name, self.key.name, self.value.name]

    def __call__(self, x: Tensor) -> Qkv:
        if x.data.ndim != 3:
            raise QkvError(f"Q/K/V input must have rank three [batch, tokens, model_width], got rank {x.data.ndim}")
        if x.shape[-1] != self.model_width:
            raise QkvError(f"Q/K/V input final width must equal model width {self.model_width}, got {x.shape[-1]}")
        return Qkv(self.query(x), self.key(x), self.value(x))


# endregion: qkv-layer


# region: seeded-init
class SplitMix64:
    """A 64-bit generator with one word of state: the state advances by a constant, the output is mixed."""

    MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self.state = seed & self.MASK

    def copy(self) -> SplitMix64:
        return SplitMix64(self.state)

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def uniform(self) -> float:
        """A float in [0, 1) from the top 53 bits."""
        return (self.next_u64() >> 11) * 2.0**-53


def xavier_uniform(rng: SplitMix64, fan_in: int, fan_out: int) -> np.ndarray:
    """[fan_in, fan_out] weights uniform in ±sqrt(6 / (fan_in + fan_out)), drawn row by row."""
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return np.array([[(2.0 * rng.uniform() - 1.0) * limit for _ in range(fan_out)] for _ in range(fan_in)])


def seeded(rng: SplitMix64, model_width: int, head_width: int, names: Mapping[str, str]) -> QkvProjections:
    """Q, then K, then V drawn on a trial copy of the generator; the generator advances only if all is valid."""
    if model_width <= 0 or head_width <= 0:
        raise QkvError(f"Q/K/V widths must be positive, got model {model_width}, head {head_width}")
    trial = rng.copy()
    weights = {role: xavier_uniform(trial, model_width, head_width) for role in ROLES}
    layer = QkvProjections.from_weights(weights, names)
    rng.state = trial.state
    return layer


# endregion: seeded-init
