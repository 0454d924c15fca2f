"""Trace format ``notation-v1``: the examples of the site's notation, computed on the autograd engine.

A layer ``y = xW`` with a weight of shape ``[in, out]``, its backward pass and its Jacobian; a residual block
``y = x + xV``, the Jacobians of its branch and of the whole block.
"""

from __future__ import annotations

from site_builder.trace import Bool, Shape, Vector, record, trace_format


@record("LAYER")
class Layer:
    input: Vector  # x, a row
    weight: Vector  # W, row-major
    weight_shape: Shape  # [in, out]
    output: Vector  # y = xW
    upstream: Vector  # ȳ, the gradient that arrives at y
    input_gradient: Vector  # x̄ = ȳWᵀ, from the engine's backward pass
    weight_gradient: Vector  # W̄ = xᵀȳ, from the engine's backward pass, row-major
    jacobian: Vector  # J_F, row j from a backward pass seeded with the unit row e_j, row-major
    jacobian_shape: Shape  # [out, in]
    jacobian_is_weight_transposed: Bool  # J_F equals Wᵀ entry for entry


@record("BLOCK")
class Block:
    input: Vector  # x
    weight: Vector  # V of the branch F(x) = xV, row-major
    weight_shape: Shape  # [width, width]
    output: Vector  # y = x + xV
    upstream: Vector  # ȳ
    input_gradient: Vector  # x̄ = ȳ + ȳ J_F, from the engine's backward pass
    branch_jacobian: Vector  # J_F, row-major
    block_jacobian: Vector  # J_B, row-major
    block_is_identity_plus_branch: Bool  # J_B equals I + J_F entry for entry


@trace_format("notation-v1")
class Trace:
    layer: Layer
    block: Block
