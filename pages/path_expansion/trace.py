"""Trace format ``path-expansion-v1``: each record declared once. Matrices are written as row-major vectors."""

from __future__ import annotations

from site_builder.trace import Int, Real, Sci, Vector, lines, record, trace_format

BLOCKS = 4  # L
WIDTH = 2


@record("CONFIG")
class Config:
    blocks: Int
    width: Int
    seed: Int  # default_rng seed of the branch matrices, drawn in block order
    scale: Real  # each branch matrix is standard_normal((width, width)) * scale


@record("BRANCH", index="block")
class Branch:
    block: Int  # 1-based
    weight: Vector  # W_l, row-major; the block is x -> x + x @ W_l, Jacobian I + W_l (row-vector convention)


@record("JACOBIAN")
class Jacobian:
    product: Vector  # (I + W_1)(I + W_2)...(I + W_L)
    path_sum: Vector  # sum over all subsets of blocks of the ordered product of their W_l
    autograd: Vector  # one backward pass per output coordinate through the engine
    paths: Int  # terms in the path sum
    max_difference: Sci  # largest |a - b| between any two of the three


@record("LENGTH", index="length")
class Length:
    length: Int  # how many branches a path goes through
    count: Int  # paths of that length, counted while enumerating
    sum: Vector  # the sum of those paths' products
    sum_norm: Real  # its Frobenius norm
    mean_path_norm: Real  # mean Frobenius norm of a single path of that length


@trace_format("path-expansion-v1")
class Trace:
    config: Config
    branches: tuple[Branch, ...] = lines(block=range(1, BLOCKS + 1))
    jacobian: Jacobian
    lengths: tuple[Length, ...] = lines(length=range(BLOCKS + 1))
