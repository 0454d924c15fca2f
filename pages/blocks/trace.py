"""Trace format ``blocks-v2``: what one block of a trained stack does, by deleting it, and depth against width;
then, at initialization, a branch whose last gain starts at zero and where the unit puts its nonlinearity.

Every trained result is a measured result (``Measured``): the median over the seeds, the smallest and the largest
seed, and the uncertainties of the seeds and of the float path, written with only the digits they leave standing.
SWEEP lines hold every stack's loss at every rate tried; TRAINED lines each stack at its chosen rate; LESION lines
the lesioned stacks with one block deleted at a time; SHAPE lines the residual stacks of nearly equal weight counts.
GAIN lines (untrained stacks whose branches end in a normalization with a learned gain) and UNIT lines (untrained
stacks of the original and the pre-activation unit) are measured at initialization, with no training step.
"""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import Bool, Int, Measured, Sci, choice, lines, record, trace_format
from site_builder.training_trace import TaskRecord

KINDS = ("plain", "residual")
LESION_DEPTH = 4
LESION_WIDTH = 16
# (depth, width) of the residual stacks compared at nearly equal weight counts; one is the lesioned residual stack
SHAPES = ((1, 32), (2, 23), (4, 16), (8, 11))
# every stack trained: the lesioned pair, then the residual shapes (the lesioned residual stack is one of them)
STACKS = (("plain", LESION_DEPTH, LESION_WIDTH), *(("residual", d, w) for d, w in SHAPES))
RATES = (3e-3, 1e-2, 3e-2)
SEEDS = tuple(range(1, 9))
STEPS = 80
ORDERS = ("lower", "higher", "indistinguishable")
# the untrained stacks: their depths and width, and where each residual unit puts its nonlinearity
INIT_DEPTHS = (8, 32, 128)
INIT_WIDTH = 16
UNITS = ("original", "pre-activation")

Kind = Annotated[str, choice(*KINDS)]
Order = Annotated[str, choice(*ORDERS)]
UnitKind = Annotated[str, choice(*UNITS)]


@record("SETUP")
class Setup:
    steps: Int
    seeds: Int  # each trained once as drawn and once with one initial weight nudged by one ulp
    rates: Int  # the learning rates of the sweep, every stack at every rate
    lesion_depth: Int
    lesion_width: Int


@record("SWEEP", index=("kind", "depth", "width", "rate"))
class Sweep:
    kind: Kind
    depth: Int
    width: Int
    rate: Sci  # Adam's learning rate, default betas and eps
    loss: Measured  # after the last step
    chosen: Bool  # the rate whose median final loss is lowest for this stack
    versus_chosen: Order  # this rate's loss against the chosen rate's, beyond both uncertainties


@record("TRAINED", index=("kind", "depth", "width"))
class Trained:
    """One stack at its chosen rate, after the last step, every block in place."""

    kind: Kind
    depth: Int
    width: Int
    parameters: Int  # weights and biases of one model
    rate: Sci
    loss: Measured
    accuracy: Measured  # the fraction of the points classified right
    lesioned: Measured  # the accuracy with one block deleted, each seed's averaged over which block


@record("LESION", index=("kind", "block"))
class Lesion:
    """The lesioned stack of one kind with one block deleted (blocks counted from the input, from 1)."""

    kind: Kind
    block: Int
    loss: Measured
    accuracy: Measured
    versus_intact: Order  # this accuracy against the intact stack's


@record("SURVIVAL", index="block")
class Survival:
    """With one block deleted, the residual stack's accuracy against the plain stack's."""

    block: Int
    residual: Order


@record("AVERAGED")
class Averaged:
    """With one block deleted, each seed's accuracy averaged over which block: the residual stack's against the
    plain stack's."""

    residual: Order


@record("SHAPE", index=("depth", "width"))
class Shape:
    """A residual stack's loss against the lowest of the shapes' losses, and its accuracy with one block deleted
    against the deepest stack's."""

    depth: Int
    width: Int
    versus_best: Order
    lesioned_versus_deepest: Order


@record("GAIN", index="depth")
class Gain:
    """An untrained residual stack whose every branch ends in a normalization with a learned gain per channel."""

    depth: Int
    moved: Sci  # every gain 0: the largest distance |h_L - x| between the stack's output and its input, every model
    gain_gradient: Measured  # every gain 0: the loss's gradient on one block's gain, its norm, the smallest block's
    growth: Measured  # every gain 1: |h_L| / |x|, how much the stack's output outgrew its input
    growth_versus_fewest: Order  # this growth against the growth at the fewest blocks


@record("UNIT", index=("unit", "depth"))
class Unit:
    """An untrained stack of the original unit, relu(x + F(x)), or the pre-activation unit, x + F(x)."""

    unit: UnitKind
    depth: Int
    gradient_ratio: Measured  # |the loss's gradient on the stack's input| / |its gradient on the stack's output|
    passed: Measured  # the fraction of the stream's entries that every ReLU after an addition lets through


@record("UNITS", index="depth")
class Units:
    """The pre-activation unit's gradient ratio against the original unit's, and the original unit's passed
    fraction against its own at the fewest blocks."""

    depth: Int
    pre_activation: Order
    passed_versus_fewest: Order


@trace_format("blocks-v2")
class Trace:
    task: TaskRecord
    setup: Setup
    sweeps: tuple[Sweep, ...] = lines(
        {"kind": k, "depth": d, "width": w, "rate": r} for k, d, w in STACKS for r in RATES
    )
    trained: tuple[Trained, ...] = lines({"kind": k, "depth": d, "width": w} for k, d, w in STACKS)
    lesions: tuple[Lesion, ...] = lines({"kind": k, "block": b} for k in KINDS for b in range(1, LESION_DEPTH + 1))
    survival: tuple[Survival, ...] = lines(block=range(1, LESION_DEPTH + 1))
    averaged: Averaged
    shapes: tuple[Shape, ...] = lines({"depth": d, "width": w} for d, w in SHAPES)
    gains: tuple[Gain, ...] = lines(depth=INIT_DEPTHS)
    units: tuple[Unit, ...] = lines({"unit": u, "depth": d} for u in UNITS for d in INIT_DEPTHS)
    unit_verdicts: tuple[Units, ...] = lines(depth=INIT_DEPTHS)
