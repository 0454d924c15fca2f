"""Trace format ``path-expansion-v1``: typed records, writer and strict parser.

Same text rules as ``residual-connections-v1``; matrices are written as
row-major vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...trace import INT, REAL, SCI, VECTOR, Field, LaidOut, Record, TraceLayout

VERSION = "path-expansion-v1"

BLOCKS = 4  # L
WIDTH = 2

Vector = tuple[float, ...]


@dataclass(frozen=True)
class Config:
    blocks: int
    width: int
    seed: int  # default_rng seed of the branch matrices, drawn in block order
    scale: float  # each branch matrix is standard_normal((width, width)) * scale


@dataclass(frozen=True)
class Branch:
    block: int  # 1-based
    weight: Vector  # W_l, row-major; the block is x -> x + x @ W_l, Jacobian I + W_l (row-vector convention)


@dataclass(frozen=True)
class Jacobian:
    product: Vector  # (I + W_1)(I + W_2)...(I + W_L)
    path_sum: Vector  # sum over all subsets of blocks of the ordered product of their W_l
    autograd: Vector  # one backward pass per output coordinate through the engine
    paths: int  # terms in the path sum
    max_difference: float  # largest |a - b| between any two of the three


@dataclass(frozen=True)
class Length:
    length: int  # how many branches a path goes through
    count: int  # paths of that length, counted while enumerating
    sum: Vector  # the sum of those paths' products
    sum_norm: float  # its Frobenius norm
    mean_path_norm: float  # mean Frobenius norm of a single path of that length


@dataclass(frozen=True)
class Trace(LaidOut):
    config: Config
    branches: tuple[Branch, ...]
    jacobian: Jacobian
    lengths: tuple[Length, ...]


LAYOUT = TraceLayout(
    VERSION,
    Trace,
    (
        Record(
            "CONFIG", Config, "config", (Field("blocks", INT), Field("width", INT), Field("seed", INT), Field("scale", REAL))
        ),
        Record(
            "BRANCH",
            Branch,
            "branches",
            (Field("block", INT), Field("weight", VECTOR)),
            index=("block",),
            lines=tuple({"block": n} for n in range(1, BLOCKS + 1)),
        ),
        Record(
            "JACOBIAN",
            Jacobian,
            "jacobian",
            (
                Field("product", VECTOR), Field("path-sum", VECTOR), Field("autograd", VECTOR), Field("paths", INT),
                Field("max-difference", SCI),
            ),
        ),
        Record(
            "LENGTH",
            Length,
            "lengths",
            (
                Field("length", INT), Field("count", INT), Field("sum", VECTOR), Field("sum-norm", REAL),
                Field("mean-path-norm", REAL),
            ),
            index=("length",),
            lines=tuple({"length": k} for k in range(BLOCKS + 1)),
        ),
    ),
)

render = LAYOUT.render
parse = LAYOUT.parse  # any deviation raises TraceParseError with its line and column
all_keys = LAYOUT.keys  # every fact key of this version, in trace order, known without running anything
