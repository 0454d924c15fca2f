"""Path-expansion fixtures: one linear residual stack's Jacobian, three ways.

The chapter's convention: a Jacobian's rows are outputs and vectors are rows.
Block ``l`` maps ``x -> x + x @ W_l``: its branch's Jacobian is ``J_F_l = W_l.T``,
the block's is ``I + J_F_l`` and the stack's is ``J = (I + J_F_L) ... (I + J_F_1)``,
last block first. Every matrix here is
its transpose, ``J.T = (I + W_1)(I + W_2)...(I + W_L)``, the blocks in the
order a row vector meets them: ``y = x @ J.T``. Multiplying it out gives one
term per subset of blocks, the ordered product of the chosen ``W_l``, that is
one term per path that goes through the chosen branches and skips the rest.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import parameter
from site_builder.nn import Linear, residual_add
from site_builder.run import FixtureError, Run, finite
from site_builder.trace import format_sci

from .trace import BLOCKS, WIDTH, Branch, Config, Jacobian, Length, Trace


@dataclass(frozen=True)
class Constants:
    seed: int = 0
    scale: float = 0.5
    input: tuple[float, ...] = (1.0, -1.0)  # the point the engine differentiates at (the map is linear)


def branch_weights(c: Constants) -> list[np.ndarray]:
    rng = np.random.default_rng(c.seed)
    return [rng.standard_normal((WIDTH, WIDTH)) * c.scale for _ in range(BLOCKS)]


# region: product
def product_jacobian(weights: list[np.ndarray]) -> np.ndarray:
    """J.T = (I + W_1)(I + W_2)...(I + W_L), in block order: the transpose of J = J_L ... J_1."""
    out = np.eye(WIDTH)
    for w in weights:
        out = out @ (np.eye(WIDTH) + w)
    return out


# endregion: product


# region: path-sum
def paths(weights: list[np.ndarray]) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """Every subset of blocks (a path through those branches), with its term of J.T: the product of its W_l in block order."""
    out = []
    for length in range(len(weights) + 1):
        for chosen in itertools.combinations(range(len(weights)), length):
            term = np.eye(WIDTH)
            for block in chosen:
                term = term @ weights[block]
            out.append((chosen, term))
    return out


# endregion: path-sum


# region: engine-jacobian
def autograd_jacobian(weights: list[np.ndarray], x0: tuple[float, ...]) -> np.ndarray:
    """J.T, one backward pass per output coordinate: the input gradient for the upstream e_j is row j of J,
    the vector-Jacobian product e_j J, and it is stored as column j."""
    x = parameter(x0, name="input")
    h = x
    for n, w in enumerate(weights, start=1):
        h = residual_add(h, Linear(w, name=f"block.{n}.branch.weight")(h))
    columns = []
    for j in range(WIDTH):
        x.zero_grad()
        h.backward_with_seed(np.eye(WIDTH)[j], retain_graph=True)
        assert x.grad is not None
        columns.append(x.grad.copy())
    return np.stack(columns, axis=1)


# endregion: engine-jacobian


def rounding_units(blocks: int) -> int:
    """Roundings an entry of the path sum can take: 2^L terms added, each a product of at most L matrices of width n."""
    return 2**blocks + blocks * WIDTH


def largest_absolute_entry(weights: list[np.ndarray]) -> float:
    """The largest entry the path sum reaches with every factor made positive: what one rounding unit scales."""
    absolute = sum((term for _, term in paths([np.abs(w) for w in weights])), np.zeros((WIDTH, WIDTH)))
    return float(np.max(np.abs(absolute)))


def rounding_bound(weights: list[np.ndarray]) -> float:
    """How far float64 rounding can move an entry of any of the three Jacobians: (2^L + L n) units of rounding
    times the largest entry of the path sum taken in absolute values (every term, every factor made positive).

    Each entry is a sum of 2^L path terms, each a product of at most L matrices of width n, so it takes at most
    2^L + L n roundings, each by a relative error of at most one unit of rounding of the largest partial sum; the
    difference itself is rounding noise that another machine changes, the bound is not.
    """
    return float(rounding_units(len(weights)) * np.finfo(np.float64).eps * largest_absolute_entry(weights))


def run(c: Constants = Constants()) -> Run:
    fixture = "path-expansion"
    weights = [finite(fixture, f"BRANCH[{n}].weight", w) for n, w in enumerate(branch_weights(c), start=1)]
    finite(fixture, "the input", np.array(c.input))
    product = finite(fixture, "the product Jacobian", product_jacobian(weights))
    expansion = paths(weights)
    path_sum = finite(fixture, "the path sum", sum((term for _, term in expansion), np.zeros((WIDTH, WIDTH))))
    engine = finite(fixture, "the engine Jacobian", autograd_jacobian(weights, c.input))
    difference = max(
        float(np.max(np.abs(a - b))) for a, b in ((product, path_sum), (product, engine), (path_sum, engine))
    )
    bound = rounding_bound(weights)
    if not difference <= bound:
        raise FixtureError(
            fixture,
            f"the three Jacobians differ by {format_sci(difference)}, more than rounding allows ({format_sci(bound)})",
        )

    lengths = []
    for length in range(BLOCKS + 1):
        terms = [term for chosen, term in expansion if len(chosen) == length]
        if len(terms) != math.comb(BLOCKS, length):
            raise FixtureError(fixture, f"{len(terms)} paths of length {length}, not C({BLOCKS},{length})")
        total = sum(terms, np.zeros((WIDTH, WIDTH)))
        lengths.append(
            Length(
                length=length,
                count=len(terms),
                sum=total,
                sum_norm=float(np.linalg.norm(total)),
                mean_path_norm=float(np.mean([np.linalg.norm(t) for t in terms])),
            )
        )
    trace = Trace(
        config=Config(blocks=BLOCKS, width=WIDTH, seed=c.seed, scale=c.scale),
        branches=tuple(Branch(n, w) for n, w in enumerate(weights, start=1)),
        jacobian=Jacobian(
            product=product,
            path_sum=path_sum,
            autograd=engine,
            paths=len(expansion),
            rounding_bound=bound,
            agree=True,
        ),
        lengths=tuple(lengths),
    )
    derived = {
        "DERIVED.two-to-the-blocks": 2**BLOCKS,
        "DERIVED.matrix-shape": (WIDTH, WIDTH),
        # The rounding bound's parts, so the page says what it is made of; the differences themselves are
        # rounding noise, another on every machine, and the page says only that they are within it.
        "DERIVED.rounding-units": rounding_units(BLOCKS),
        "DERIVED.machine-epsilon": float(np.finfo(np.float64).eps),
        "DERIVED.largest-absolute-entry": largest_absolute_entry(weights),
        "DERIVED.largest-absolute-entry-about": round(largest_absolute_entry(weights), 2),
        "DERIVED.path-count-total": sum(k.count for k in lengths),
        "DERIVED.most-common-length": max(lengths, key=lambda k: k.count).length,
        "DERIVED.largest-contribution-length": max(lengths, key=lambda k: k.sum_norm).length,
    }
    for k in lengths:  # what a sentence needs of the sizes (the table keeps every digit)
        derived[f"DERIVED.length-{k.length}.mean-path-norm-about"] = round(k.mean_path_norm, 2)
        derived[f"DERIVED.length-{k.length}.sum-norm-about"] = round(k.sum_norm, 2)
    return Run(trace, derived)
