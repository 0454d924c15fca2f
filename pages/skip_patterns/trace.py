"""Trace format ``skip-patterns-v1``: residual, highway and dense (concatenating) stacks of the same depth.

SHAPE lines hold, for one pattern at one depth, the width of the features the
read-out receives, the number of weights in the blocks, and how much the stack
multiplies a gradient on its way down at initialization (a geometric mean over
the initialization seeds). CURVE and FINAL lines hold training losses at the
trained depth, one field per pattern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from site_builder.trace import Int, Real, Sci, choice, lines, record, trace_format
from site_builder.training_trace import TaskRecord, loss_records

PATTERNS = ("residual", "highway", "dense")
DEPTHS = (4, 8, 16, 32)
TRAIN_DEPTH = 16
SEEDS = (1, 2, 3)  # trained
INIT_SEEDS = tuple(range(1, 9))  # measured at initialization
STEPS = 200
EVERY = 20
RECORDED = tuple(range(0, STEPS + 1, EVERY))

Pattern = Annotated[str, choice(*PATTERNS)]


@record("SETUP")
class Setup:
    width: Int  # C: the stream of the residual and highway stacks, the embedding of all three
    growth: Int  # k: the features each dense block appends
    gate_bias: Real  # the highway gate's bias at initialization
    learning_rate: Real
    steps: Int
    every: Int
    train_depth: Int
    seeds: Int  # trained
    init_seeds: Int  # measured at initialization


@record("SHAPE", index=("pattern", "depth"))
class Shape:
    pattern: Pattern
    depth: Int
    width: Int  # features the read-out receives
    parameters: Int  # weights and biases in the blocks (one model)
    backward: Sci  # |gradient reaching the stack's input| / |gradient sent into its top|, at initialization


if TYPE_CHECKING:  # the loss fields are named at run time: a type checker sees a line's index and its losses
    from site_builder.training_trace import CurveLine as Curve
    from site_builder.training_trace import FinalLine as Final
else:
    Curve, Final = loss_records(PATTERNS, per="pattern", module=__name__)


@trace_format("skip-patterns-v1")
class Trace:
    task: TaskRecord
    setup: Setup
    shapes: tuple[Shape, ...] = lines({"pattern": p, "depth": d} for p in PATTERNS for d in DEPTHS)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    finals: tuple[Final, ...] = lines(seed=SEEDS)
