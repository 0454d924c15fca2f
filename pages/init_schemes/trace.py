"""Trace format ``init-schemes-v1``: five ways to initialize a residual MLP stack, at initialization and trained.

START lines hold, for one scheme at one depth, the factors on He's draws of each
block's two layers, and how much the stack scales the stream on the way up and a
gradient on the way down (geometric means over the initialization seeds). CURVE
and FINAL lines hold training losses at the trained depth, one field per scheme.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from site_builder.trace import Int, Real, Sci, choice, lines, record, trace_format
from site_builder.training_trace import TaskRecord, loss_records

SCHEMES = ("he", "zero-last", "rezero", "fixup", "scaled-last")
DEPTHS = (8, 32, 128)
TRAIN_DEPTH = 32
SEEDS = (1, 2, 3)  # trained
INIT_SEEDS = tuple(range(1, 9))  # measured at initialization
STEPS = 200
EVERY = 20
RECORDED = tuple(range(0, STEPS + 1, EVERY))

Scheme = Annotated[str, choice(*SCHEMES)]


def column(scheme: str) -> str:
    """The field of a CURVE or FINAL record that holds one scheme's loss: ``zero_last`` (``zero-last`` in the text)."""
    return scheme.replace("-", "_")


@record("SETUP")
class Setup:
    width: Int
    branch_layers: Int  # m, the layers of one branch (Fixup's exponent uses it)
    learning_rate: Real
    steps: Int
    every: Int
    train_depth: Int
    seeds: Int  # trained
    init_seeds: Int  # measured at initialization


@record("START", index=("scheme", "depth"))
class Start:
    scheme: Scheme
    depth: Int
    first_factor: Real  # on He's draw of each block's first layer
    second_factor: Real  # ... of its second layer
    forward: Sci  # rms of the stream after the last block / after the embedding
    backward: Sci  # norm of the gradient reaching the stack's input / norm of the gradient sent into its top


COLUMNS = tuple(column(s) for s in SCHEMES)  # he, zero_last, rezero, fixup, scaled_last
if TYPE_CHECKING:  # the loss fields are named at run time: a type checker sees a line's index and its losses
    from site_builder.training_trace import CurveLine as Curve
    from site_builder.training_trace import FinalLine as Final
else:
    Curve, Final = loss_records(COLUMNS, per="scheme", module=__name__)


@trace_format("init-schemes-v1")
class Trace:
    task: TaskRecord
    setup: Setup
    starts: tuple[Start, ...] = lines({"scheme": s, "depth": d} for s in SCHEMES for d in DEPTHS)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    finals: tuple[Final, ...] = lines(seed=SEEDS)
