"""The examples of the notation page: a layer and a residual block, forward, backward and their Jacobians, each
computed by the autograd engine."""

from __future__ import annotations

import numpy as np

from site_builder.autograd import Tensor, parameter
from site_builder.nn import Linear, residual_add
from site_builder.run import Run

from .trace import Block, Layer, Trace

INPUT = (1.0, 2.0)  # x: a row of two entries
WEIGHT = ((0.5, -1.0, 2.0), (1.5, 0.25, -0.5))  # W: [in, out] = [2, 3]
UPSTREAM = (1.0, -1.0, 0.5)  # ȳ: one entry per output
BRANCH = ((0.5, -1.0), (0.25, 0.5))  # V of the block's branch F(x) = xV: [2, 2]
BLOCK_UPSTREAM = (1.0, -1.0)


# region: jacobian
def jacobian(x: Tensor, y: Tensor) -> np.ndarray:
    """The Jacobian of y with respect to x, one row per entry of y: row j is what a backward pass seeded with
    the unit row e_j leaves in x, the vector-Jacobian product e_j J."""
    rows = []
    for e_j in np.eye(y.shape[-1]):
        y.backward_with_seed(e_j, retain_graph=True)
        rows.append(x.gradient)
        for leaf in y.leaves():  # each pass starts from no gradient
            leaf.zero_grad()
    return np.stack(rows)


# endregion: jacobian


# region: layer
def layer() -> Layer:
    x = parameter(INPUT, name="x")
    f = Linear(WEIGHT, name="W")
    y = f(x)  # y = xW
    j_f = jacobian(x, y)  # [out, in]
    y.backward_with_seed(np.array(UPSTREAM))  # ȳ
    w = f.weight
    return Layer(
        input=x.data,
        weight=w.data,
        weight_shape=w.shape,
        output=y.data,
        upstream=np.array(UPSTREAM),
        input_gradient=x.gradient,  # x̄ = ȳWᵀ
        weight_gradient=w.gradient,  # W̄ = xᵀȳ
        jacobian=j_f,
        jacobian_shape=j_f.shape,
        jacobian_is_weight_transposed=bool(np.array_equal(j_f, w.data.T)),
    )


# endregion: layer


# region: block
def block() -> Block:
    x = parameter(INPUT, name="x")
    f = Linear(BRANCH, name="V")
    branch = f(x)  # F(x) = xV
    y = residual_add(x, branch)  # y = x + F(x)
    j_f = jacobian(x, branch)  # the branch's Jacobian
    j_b = jacobian(x, y)  # the whole block's
    y.backward_with_seed(np.array(BLOCK_UPSTREAM))
    return Block(
        input=x.data,
        weight=f.weight.data,
        weight_shape=f.weight.shape,
        output=y.data,
        upstream=np.array(BLOCK_UPSTREAM),
        input_gradient=x.gradient,  # x̄ = ȳ + ȳ J_F
        branch_jacobian=j_f,
        block_jacobian=j_b,
        block_is_identity_plus_branch=bool(np.array_equal(j_b, np.eye(len(INPUT)) + j_f)),
    )


# endregion: block


def run() -> Run:
    return Run(Trace(layer=layer(), block=block()))
