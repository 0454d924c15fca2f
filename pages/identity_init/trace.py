"""Trace format ``identity-init-v2``: each record declared once.

Deviations of the stack with He's ReLU scale on both layers span many orders of
magnitude, so they are written in ``%.6e``, and so is the norm of one such
branch, the same number as the one-block deviation.
"""

from __future__ import annotations

from site_builder.trace import Bool, Int, Real, Sci, lines, record, trace_format

DEPTHS = (1, 2, 4, 8, 16, 32)


@record("CONFIG")
class Config:
    width: Int  # of the residual stream
    hidden: Int  # of each block's inner layer
    rows: Int  # input rows
    seed: Int  # default_rng seed: input first, then each block's two weights in order
    he_gain: Real  # He: std = sqrt(he_gain / fan_in), the factor under the root (PyTorch's gain is its square root)
    he_std: Real
    input_norm: Real
    upstream: Real  # every entry of the upstream gradient


@record("DEPTH", index="depth")
class DepthRow:
    depth: Int
    zero_init_deviation: Real  # ||h_depth - x|| with every block's second layer zero (the fixture requires h == x)
    he_deviation: Sci  # ||h_depth - x|| with He's ReLU scale on both layers
    he_relative: Sci  # he_deviation / ||x||


@record("ZERO-INIT-GRADIENT")
class ZeroInitGradient:
    depth: Int
    input_gradient_exact: Bool  # the input gradient is the upstream, bit for bit
    second_layer_gradient_norm: Real  # all blocks' zero-initialized layers together
    first_layer_gradient_norm: Real  # all blocks' first layers together


@record("REZERO")
class ReZero:
    alpha: Real
    deviation: Real  # ||y - x||
    identity_exact: Bool
    branch_output_norm: Sci  # ||F(x)||, written as the one-block deviation it equals
    alpha_gradient: Real  # dL/dalpha from the engine
    alpha_gradient_by_hand: Real  # upstream . F(x) in NumPy
    branch_gradient_norm: Real  # the branch weights' gradient at alpha = 0


@trace_format("identity-init-v2")
class Trace:
    config: Config
    depths: tuple[DepthRow, ...] = lines(depth=DEPTHS)
    zero_init_gradient: ZeroInitGradient = lines({"depth": max(DEPTHS)})
    rezero: ReZero
