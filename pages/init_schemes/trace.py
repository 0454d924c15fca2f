"""Trace format ``init-schemes-v2``: five ways to initialize a residual MLP stack, at initialization and trained.

START lines hold, for one scheme at one depth, the factors on He's draws of each block's two layers, and how much
the stack scales the stream on the way up and a gradient on the way down (geometric means over the initialization
seeds: a single forward and backward pass, exact to the digits printed). Every trained loss is a measured result
(``Measured``): the median over the seeds, the smallest and the largest seed, and the uncertainties of the seeds
and of the float path, written with only the digits they leave standing. SWEEP lines hold every scheme's loss at
every rate tried; CURVE lines every scheme's loss at its chosen rate at each recorded step; RANK and VERSUS-HE
lines the comparisons the page's sentences are chosen by.
"""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import Bool, Int, Measured, Real, Sci, choice, lines, record, trace_format
from site_builder.training_trace import TaskRecord

SCHEMES = ("he", "zero-last", "rezero", "fixup", "scaled-last")
DEPTHS = (8, 32, 128)
TRAIN_DEPTH = 8
RATES = (3e-3, 1e-2, 3e-2)
SEEDS = tuple(range(1, 9))  # trained, each beside its one-ulp twin
INIT_SEEDS = tuple(range(1, 9))  # measured at initialization
STEPS = 80
BUDGETS = (40, 80)  # the step budgets a comparison is reported at; the last is STEPS
EVERY = 10
RECORDED = tuple(range(0, STEPS + 1, EVERY))
ORDERS = ("lower", "higher", "indistinguishable")
STANDINGS = (
    "lowest",
    "higher",
    "indistinguishable",
)  # a scheme beside the lowest median: it, above it, or not told apart

Scheme = Annotated[str, choice(*SCHEMES)]
Order = Annotated[str, choice(*ORDERS)]
Standing = Annotated[str, choice(*STANDINGS)]


def column(scheme: str) -> str:
    """The attribute of a CURVE record that holds one scheme's loss: ``zero_last`` (``zero-last`` in the text)."""
    return scheme.replace("-", "_")


@record("SETUP")
class Setup:
    width: Int
    branch_layers: Int  # m, the layers of one branch (Fixup's exponent uses it)
    steps: Int
    every: Int
    train_depth: Int
    seeds: Int  # trained, each once as drawn and once with one initial weight nudged by one ulp
    rates: Int  # the learning rates of the sweep, every scheme at every rate
    init_seeds: Int  # measured at initialization


@record("START", index=("scheme", "depth"))
class Start:
    scheme: Scheme
    depth: Int
    first_factor: Real  # on He's draw of each block's first layer
    second_factor: Real  # ... of its second layer
    forward: Sci  # rms of the stream after the last block / after the embedding
    backward: Sci  # norm of the gradient reaching the stack's input / norm of the gradient sent into its top


@record("SWEEP", index=("scheme", "rate"))
class Sweep:
    scheme: Scheme
    rate: Sci  # Adam's learning rate, default betas and eps
    loss: Measured  # after the last step
    chosen: Bool  # the rate whose median final loss is lowest for this scheme
    versus_chosen: Order  # this rate's loss against the chosen rate's, beyond both uncertainties


@record("CURVE", index="step")
class Curve:
    """Every scheme's training loss at its chosen rate at one recorded step."""

    step: Int
    he: Measured
    zero_last: Measured
    rezero: Measured
    fixup: Measured
    scaled_last: Measured


COLUMNS = tuple(column(s) for s in SCHEMES)


@record("RANK", index=("budget", "scheme"))
class Rank:
    """A scheme's loss at one step budget against the scheme with the lowest median there."""

    budget: Int
    scheme: Scheme
    standing: Standing  # lowest: the lowest median at this budget; else its loss against the lowest one's


@record("VERSUS-HE", index=("budget", "scheme"))
class VersusHe:
    """A scheme's loss at one step budget against He initialization's, with nothing else changed."""

    budget: Int
    scheme: Scheme
    order: Order


@trace_format("init-schemes-v2")
class Trace:
    task: TaskRecord
    setup: Setup
    starts: tuple[Start, ...] = lines({"scheme": s, "depth": d} for s in SCHEMES for d in DEPTHS)
    sweeps: tuple[Sweep, ...] = lines({"scheme": s, "rate": r} for s in SCHEMES for r in RATES)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    ranks: tuple[Rank, ...] = lines({"budget": b, "scheme": s} for b in BUDGETS for s in SCHEMES)
    versus_he: tuple[VersusHe, ...] = lines({"budget": b, "scheme": s} for b in BUDGETS for s in SCHEMES if s != "he")
