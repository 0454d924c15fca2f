"""Trace format ``deep-stack-v2``: each record declared once.

Plain-stack gradient norms span dozens of orders of magnitude, so they are
written in ``%.6e``.
"""

from __future__ import annotations

from site_builder.trace import Bool, Int, Real, Sci, lines, record, trace_format

# The depths the spec publishes, then the extension past the 20-matrix bank.
PUBLISHED_DEPTHS = (1, 5, 10, 20)
EXTENDED_DEPTHS = (30, 40, 50, 60, 70, 80, 90, 100)
DEPTHS = PUBLISHED_DEPTHS + EXTENDED_DEPTHS


@record("CONFIG")
class Config:
    seed: Int  # np.random.seed for the weight bank
    width: Int  # C
    batch: Int  # B
    scale: Real  # numerator of the weight scale: randn(C, C) * (scale / sqrt(C))
    published_bank: Int  # matrices in the spec's bank
    drawn: Int  # matrices drawn in all (the bank first, then more from the same stream)
    input_seed: Int  # RandomState seed of the input
    upstream: Real  # every entry of the upstream gradient
    upstream_norm: Real


@record("DEPTH", index="depth")
class DepthRow:
    depth: Int  # a depth up to CONFIG.published-bank uses only the lesson's bank of weights
    plain_norm: Sci
    plain_norm_by_hand: Sci
    residual_norm: Real
    residual_norm_by_hand: Real
    survival: Real  # residual norm / upstream norm


@record("GRADCHECK")
class GradCheck:
    seed: Int
    width: Int
    rows: Int
    step: Sci
    checks: Int
    max_relative_error: Sci
    bar: Sci
    passed: Bool


@trace_format("deep-stack-v2")
class Trace:
    config: Config
    depths: tuple[DepthRow, ...] = lines(depth=DEPTHS)
    gradcheck: GradCheck

    def depth(self, depth: int) -> DepthRow:
        for row in self.depths:
            if row.depth == depth:
                return row
        raise KeyError(f"no DEPTH record for depth {depth}")
