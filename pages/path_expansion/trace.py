"""Trace format ``path-expansion-v1``: each record declared once. Matrices are written as row-major vectors.

Jacobians follow the chapter (rows are outputs, vectors are rows): block l's
branch F_l(x) = x W_l has the Jacobian J_F_l = W_l^T, the block has I + J_F_l,
and the stack has J = (I + J_F_L) ... (I + J_F_1). The JACOBIAN and LENGTH
matrices are transposes, J^T = (I + W_1)...(I + W_L), the blocks in the order a
row vector meets them.
"""

from __future__ import annotations

from site_builder.trace import Bool, Int, Real, Sci, Vector, lines, record, trace_format

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
    weight: Vector  # W_l, row-major; the block is x -> x + x @ W_l, its Jacobian I + J_F_l with J_F_l = W_l^T


@record("JACOBIAN")
class Jacobian:
    product: Vector  # J^T = (I + W_1)(I + W_2)...(I + W_L)
    path_sum: Vector  # J^T again: the sum over all subsets of blocks of the product of their W_l in block order
    autograd: Vector  # J^T again: one backward pass per output coordinate through the engine, each a column
    paths: Int  # terms in the path sum
    rounding_bound: Sci  # the most float64 rounding can move an entry: the three agree within it (else no trace)
    agree: Bool  # every entry of the three within rounding_bound of one another


@record("LENGTH", index="length")
class Length:
    length: Int  # how many branches a path goes through
    count: Int  # paths of that length, counted while enumerating
    sum: Vector  # the sum of those paths' terms of J^T
    sum_norm: Real  # its Frobenius norm
    mean_path_norm: Real  # mean Frobenius norm of a single path of that length


@trace_format("path-expansion-v1")
class Trace:
    config: Config
    branches: tuple[Branch, ...] = lines(block=range(1, BLOCKS + 1))
    jacobian: Jacobian
    lengths: tuple[Length, ...] = lines(length=range(BLOCKS + 1))
