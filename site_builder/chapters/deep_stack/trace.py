"""Trace format ``deep-stack-v1``: typed records, writer and strict parser.

Same text rules as ``residual-connections-v1``; plain-stack gradient norms
span dozens of orders of magnitude, so they are written in ``%.6e``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...trace import BOOL, INT, REAL, SCI, Field, LaidOut, Record, TraceLayout, choice

VERSION = "deep-stack-v1"

# The depths the spec publishes, then the extension past the 20-matrix bank.
PUBLISHED_DEPTHS = (1, 5, 10, 20)
EXTENDED_DEPTHS = (30, 40, 50, 60, 70, 80, 90, 100)
DEPTHS = PUBLISHED_DEPTHS + EXTENDED_DEPTHS


@dataclass(frozen=True)
class Config:
    seed: int  # np.random.seed for the weight bank
    width: int  # C
    batch: int  # B
    scale: float  # numerator of the weight scale: randn(C, C) * (scale / sqrt(C))
    published_bank: int  # matrices in the spec's bank
    drawn: int  # matrices drawn in all (the bank first, then more from the same stream)
    input_seed: int  # RandomState seed of the input
    upstream: float  # every entry of the upstream gradient
    upstream_norm: float


@dataclass(frozen=True)
class DepthRow:
    depth: int
    part: str  # "published" (within the spec's bank) or "extended"
    plain_norm: float
    plain_norm_by_hand: float
    residual_norm: float
    residual_norm_by_hand: float
    survival: float  # residual norm / upstream norm


@dataclass(frozen=True)
class GradCheck:
    seed: int
    width: int
    rows: int
    step: float
    checks: int
    max_relative_error: float
    bar: float
    passed: bool


@dataclass(frozen=True)
class Trace(LaidOut):
    config: Config
    depths: tuple[DepthRow, ...]
    gradcheck: GradCheck

    def depth(self, depth: int) -> DepthRow:
        for row in self.depths:
            if row.depth == depth:
                return row
        raise KeyError(f"no DEPTH record for depth {depth}")


LAYOUT = TraceLayout(
    VERSION,
    Trace,
    (
        Record(
            "CONFIG",
            Config,
            "config",
            (
                Field("seed", INT), Field("width", INT), Field("batch", INT), Field("scale", REAL),
                Field("published-bank", INT), Field("drawn", INT), Field("input-seed", INT),
                Field("upstream", REAL), Field("upstream-norm", REAL),
            ),
        ),
        Record(
            "DEPTH",
            DepthRow,
            "depths",
            (
                Field("depth", INT), Field("part", choice("published", "extended")),
                Field("plain-norm", SCI), Field("plain-norm-by-hand", SCI),
                Field("residual-norm", REAL), Field("residual-norm-by-hand", REAL), Field("survival", REAL),
            ),
            index=("depth",),
            lines=tuple({"depth": d, "part": "published" if d in PUBLISHED_DEPTHS else "extended"} for d in DEPTHS),
        ),
        Record(
            "GRADCHECK",
            GradCheck,
            "gradcheck",
            (
                Field("seed", INT), Field("width", INT), Field("rows", INT), Field("step", SCI), Field("checks", INT),
                Field("max-relative-error", SCI), Field("bar", SCI), Field("passed", BOOL),
            ),
        ),
    ),
)

render = LAYOUT.render
parse = LAYOUT.parse  # any deviation raises TraceParseError with its line and column
all_keys = LAYOUT.keys  # every fact key of this version, in trace order, known without running anything
