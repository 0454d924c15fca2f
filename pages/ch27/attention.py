"""One unmasked scaled dot-product self-attention head, composed from engine ops.

``S = Q Kᵀ / sqrt(d_k)``, ``A = softmax(S)`` along the key axis, ``O = A V``.
The scores are multiplied by ``1 / sqrt(d_k)``, the softmax is the engine's
(shifted by each row's maximum, so nothing overflows), and every gradient comes
from the engine's reverse mode. The head checks its inputs in the course's
order before it computes, and says what it refused with the numbers it was
refused for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from site_builder.autograd import Tensor
from site_builder.nn import softmax

OPERANDS = ("query", "key", "value")


class AttentionError(ValueError):
    """The head refused its inputs: ``kind`` names the cause, ``operand`` the input at fault if one is,
    ``numbers`` what it was refused for."""

    def __init__(self, kind: str, numbers: Mapping[str, int], operand: str | None = None) -> None:
        self.kind = kind
        self.operand = operand
        self.numbers = dict(numbers)
        at = f" ({operand})" if operand else ""
        super().__init__(
            f"attention refused its inputs: {kind}{at} " + " ".join(f"{k}={v}" for k, v in numbers.items())
        )


@dataclass(frozen=True)
class Attention:
    """Every tensor of one forward pass, each still on the tape."""

    dot_products: Tensor  # Q Kᵀ, [B, T, T]
    scores: Tensor  # S = Q Kᵀ / sqrt(d_k)
    probabilities: Tensor  # A = softmax(S) over the key axis
    output: Tensor  # O = A V, [B, T, d_v]


# region: checks
def check_inputs(q: Tensor, k: Tensor, v: Tensor) -> None:
    """Ranks (Q, K, V); batch sizes; token counts; zero tokens; zero Q, K width; Q/K width; zero V width."""
    for operand, t in zip(OPERANDS, (q, k, v), strict=True):
        if t.data.ndim != 3:
            raise AttentionError("input-rank", {"rank": t.data.ndim}, operand)
    sizes = dict(zip(OPERANDS, (q.shape[0], k.shape[0], v.shape[0]), strict=True))
    if len(set(sizes.values())) != 1:
        raise AttentionError("batch-mismatch", sizes)
    tokens = dict(zip(OPERANDS, (q.shape[1], k.shape[1], v.shape[1]), strict=True))
    if len(set(tokens.values())) != 1:
        raise AttentionError("token-mismatch", tokens)
    if tokens["query"] == 0:
        raise AttentionError("empty-token-axis", {"tokens": tokens["query"]})
    if q.shape[2] == 0 or k.shape[2] == 0:
        raise AttentionError("empty-query-key-width", {"query": q.shape[2], "key": k.shape[2]})
    if q.shape[2] != k.shape[2]:
        raise AttentionError("query-key-width-mismatch", {"query": q.shape[2], "key": k.shape[2]})
    if v.shape[2] == 0:
        raise AttentionError("empty-value-width", {"value": v.shape[2]})


# endregion: checks


# region: attention-head
def scale_of(key_width: int) -> float:
    """1 / sqrt(d_k), the factor every score is multiplied by."""
    return 1.0 / math.sqrt(key_width)


def self_attention(q: Tensor, k: Tensor, v: Tensor) -> Attention:
    """S = Q Kᵀ / sqrt(d_k); A = softmax(S) along the keys; O = A V. No mask: every query reads every key."""
    check_inputs(q, k, v)
    dot = q @ k.transpose()
    scores = dot.scale(scale_of(q.shape[2]))
    probabilities = softmax(scores, axis=-1)
    return Attention(dot, scores, probabilities, probabilities @ v)


# endregion: attention-head
