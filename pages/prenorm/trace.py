"""Trace format ``prenorm-v1``: pre-norm against post-norm residual stacks, at initialization and trained.

PROFILE lines hold, for one block of one depth, the norm of the gradient that
reaches that block's two weight matrices in each layout; INPUT lines the norm of
the gradient that reaches the stack's input. Both are measured at initialization
and are geometric means over the profile seeds (norms vary by factors, so their
logarithms are averaged). CURVE and FINAL lines hold training losses, one field
per layout and depth trained.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from site_builder.trace import Int, Real, Sci, lines, record, trace_format
from site_builder.training_trace import TaskRecord, loss_records

LAYOUTS = ("pre", "post")
PROFILE_DEPTHS = (6, 24, 96)
TRAIN_DEPTHS = (6, 24)
SEEDS = (1, 2, 3)  # the seeds trained
PROFILE_SEEDS = tuple(range(1, 17))  # the seeds measured at initialization, where a run costs one backward pass
STEPS = 200
EVERY = 20
RECORDED = tuple(range(0, STEPS + 1, EVERY))


def column(layout: str, depth: int) -> str:
    """The field of a CURVE or FINAL record that holds one stack's loss: ``post_24`` (``post-24`` in the text)."""
    return f"{layout}_{depth}"


@record("SETUP")
class Setup:
    width: Int
    learning_rate: Real  # Adam, default betas and eps, no warm-up: the same rate from the first step
    eps: Sci  # added to each normalization's variance
    steps: Int
    every: Int
    seeds: Int  # trained
    profile_seeds: Int  # measured at initialization


@record("PROFILE", index=("depth", "block"))
class Profile:
    depth: Int
    block: Int  # 1 = the block next to the input
    pre: Sci  # sqrt(|dL/dW1|^2 + |dL/dW2|^2), geometric mean over the profile seeds
    post: Sci


@record("INPUT", index="depth")
class Input:
    depth: Int
    pre: Sci  # norm of dL/d(stack input), geometric mean over the profile seeds
    post: Sci


COLUMNS = tuple(column(layout, d) for d in TRAIN_DEPTHS for layout in LAYOUTS)  # pre_6, post_6, pre_24, post_24
if TYPE_CHECKING:  # the loss fields are named at run time: a type checker sees a line's index and its losses
    from site_builder.training_trace import CurveLine as Curve
    from site_builder.training_trace import FinalLine as Final
else:
    Curve, Final = loss_records(COLUMNS, per="layout and depth", module=__name__)


@trace_format("prenorm-v1")
class Trace:
    task: TaskRecord
    setup: Setup
    profiles: tuple[Profile, ...] = lines({"depth": d, "block": b} for d in PROFILE_DEPTHS for b in range(1, d + 1))
    inputs: tuple[Input, ...] = lines(depth=PROFILE_DEPTHS)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    finals: tuple[Final, ...] = lines(seed=SEEDS)
