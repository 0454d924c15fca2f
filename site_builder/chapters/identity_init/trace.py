"""Trace format ``identity-init-v1``: typed records, writer and strict parser.

Same text rules as ``residual-connections-v1``; deviations of the He-initialized
stack span many orders of magnitude, so they are written in ``%.6e``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...trace import BOOL, INT, REAL, SCI, Field, LaidOut, Record, TraceLayout

VERSION = "identity-init-v1"

DEPTHS = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class Config:
    width: int  # of the residual stream
    hidden: int  # of each block's inner layer
    rows: int  # input rows
    seed: int  # default_rng seed: input first, then each block's two weights in order
    he_gain: float  # He: std = sqrt(gain / fan_in)
    he_std: float
    input_norm: float
    upstream: float  # every entry of the upstream gradient


@dataclass(frozen=True)
class DepthRow:
    depth: int
    zero_init_deviation: float  # ||h_depth - x|| with every block's second layer zero
    zero_init_exact: bool  # h_depth == x bit for bit
    he_deviation: float  # ||h_depth - x|| with both layers He-initialized
    he_relative: float  # he_deviation / ||x||


@dataclass(frozen=True)
class ZeroInitGradient:
    depth: int
    input_gradient_exact: bool  # the input gradient is the upstream, bit for bit
    second_layer_gradient_norm: float  # all blocks' zero-initialized layers together
    first_layer_gradient_norm: float  # all blocks' first layers together


@dataclass(frozen=True)
class ReZero:
    alpha: float
    deviation: float  # ||y - x||
    identity_exact: bool
    branch_output_norm: float  # ||F(x)||
    alpha_gradient: float  # dL/dalpha from the engine
    alpha_gradient_by_hand: float  # upstream . F(x) in NumPy
    branch_gradient_norm: float  # the branch weights' gradient at alpha = 0


@dataclass(frozen=True)
class Trace(LaidOut):
    config: Config
    depths: tuple[DepthRow, ...]
    zero_init_gradient: ZeroInitGradient
    rezero: ReZero


LAYOUT = TraceLayout(
    VERSION,
    Trace,
    (
        Record(
            "CONFIG",
            Config,
            "config",
            (
                Field("width", INT), Field("hidden", INT), Field("rows", INT), Field("seed", INT),
                Field("he-gain", REAL), Field("he-std", REAL), Field("input-norm", REAL), Field("upstream", REAL),
            ),
        ),
        Record(
            "DEPTH",
            DepthRow,
            "depths",
            (
                Field("depth", INT), Field("zero-init-deviation", REAL), Field("zero-init-exact", BOOL),
                Field("he-deviation", SCI), Field("he-relative", SCI),
            ),
            index=("depth",),
            lines=tuple({"depth": d} for d in DEPTHS),
        ),
        Record(
            "ZERO-INIT-GRADIENT",
            ZeroInitGradient,
            "zero_init_gradient",
            (
                Field("depth", INT), Field("input-gradient-exact", BOOL),
                Field("second-layer-gradient-norm", REAL), Field("first-layer-gradient-norm", REAL),
            ),
            lines=({"depth": max(DEPTHS)},),
        ),
        Record(
            "REZERO",
            ReZero,
            "rezero",
            (
                Field("alpha", REAL), Field("deviation", REAL), Field("identity-exact", BOOL),
                Field("branch-output-norm", REAL), Field("alpha-gradient", REAL), Field("alpha-gradient-by-hand", REAL),
                Field("branch-gradient-norm", REAL),
            ),
        ),
    ),
)

render = LAYOUT.render
parse = LAYOUT.parse  # any deviation raises TraceParseError with its line and column
all_keys = LAYOUT.keys  # every fact key of this version, in trace order, known without running anything
