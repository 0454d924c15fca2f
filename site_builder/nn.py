"""Layers: a bias-free named ``Linear`` and the residual merge ``residual_add``."""

from __future__ import annotations

import numpy as np

from .autograd import Tensor, parameter, shape_text


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
