"""Trace format ``skip-patterns-v2``: residual, projection, highway and dense (concatenating) stacks.

SHAPE lines hold, for one pattern at one depth, the width of the features the read-out receives, the number of
weights in the blocks, and how much the stack multiplies a gradient on its way down at initialization (a measured
result over the seeds). The trained stacks, all of one depth, are each trained at every rate of a small sweep
(SWEEP lines) and reported at the rate whose median final loss is lowest: ARM lines hold their size and result,
CURVE lines their loss at each recorded step, VERSUS lines each one's loss against the residual stack's at two
step budgets. Every loss is a measured result: the median over the seeds, the smallest and the largest seed, and
the uncertainties of the seeds and of the float path.
"""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import Bool, Int, Measured, Real, Sci, choice, lines, record, trace_format
from site_builder.training_trace import TaskRecord

PATTERNS = ("residual", "projection", "highway", "dense", "narrow-dense")
RIVALS = PATTERNS[1:]  # compared with the residual stack
DEPTHS = (4, 8, 16, 32)  # measured at initialization
TRAIN_DEPTH = 6
RATES = (3e-3, 1e-2, 3e-2)
SEEDS = tuple(range(1, 9))  # each trained once as drawn and once with one initial weight nudged by one ulp
STEPS = 100
BUDGETS = (50, 100)  # the step budgets a comparison is reported at; the last is STEPS
EVERY = 10
RECORDED = tuple(range(0, STEPS + 1, EVERY))
ORDERS = ("lower", "higher", "indistinguishable")

Pattern = Annotated[str, choice(*PATTERNS)]
Order = Annotated[str, choice(*ORDERS)]


@record("SETUP")
class Setup:
    width: Int  # C: the stream of the residual, projection and highway stacks, the embedding of all five
    growth: Int  # k: the features each dense block appends
    narrow_growth: Int  # k of the narrow dense stack: its weights closest to the residual stack's at TRAIN_DEPTH
    gate_bias: Real  # the highway gate's bias at initialization
    steps: Int
    every: Int
    train_depth: Int
    seeds: Int
    rates: Int  # the learning rates of the sweep


@record("SHAPE", index=("pattern", "depth"))
class Shape:
    pattern: Pattern
    depth: Int
    width: Int  # features the read-out receives
    parameters: Int  # weights and biases in the blocks (one model)
    backward: Measured  # |gradient reaching the stack's input| / |gradient sent into its top|, at initialization


@record("SWEEP", index=("pattern", "rate"))
class Sweep:
    pattern: Pattern
    rate: Sci  # Adam's learning rate, default betas and eps
    loss: Measured  # after the last step
    chosen: Bool  # the rate whose median final loss is lowest for this pattern
    versus_chosen: Order  # this rate's loss against the chosen rate's, beyond both uncertainties


@record("ARM", index="pattern")
class Arm:
    """One trained stack at its chosen rate."""

    pattern: Pattern
    parameters: Int  # every weight and bias of one model: embedding, blocks and read-out
    rate: Sci  # the chosen rate
    loss: Measured  # after the last step
    peak: Measured  # the highest loss recorded after the start


@record("CURVE", index="step")
class Curve:
    """Every trained stack's loss at its chosen rate at one recorded step."""

    step: Int
    residual: Measured
    projection: Measured
    highway: Measured
    dense: Measured
    narrow_dense: Measured


@record("VERSUS", index=("pattern", "budget"))
class Versus:
    """A stack's loss against the residual stack's after one step budget, beyond both uncertainties."""

    pattern: Pattern
    budget: Int
    order: Order


def column(pattern: str) -> str:
    """The attribute of a CURVE record that holds one pattern's loss: ``narrow_dense`` (``narrow-dense`` in the text)."""
    return pattern.replace("-", "_")


@trace_format("skip-patterns-v2")
class Trace:
    task: TaskRecord
    setup: Setup
    shapes: tuple[Shape, ...] = lines({"pattern": p, "depth": d} for p in PATTERNS for d in DEPTHS)
    sweeps: tuple[Sweep, ...] = lines({"pattern": p, "rate": r} for p in PATTERNS for r in RATES)
    arms: tuple[Arm, ...] = lines(pattern=PATTERNS)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    versus: tuple[Versus, ...] = lines({"pattern": p, "budget": b} for p in RIVALS for b in BUDGETS)
