"""Trace format ``prenorm-v1``: pre-norm against post-norm residual stacks, at initialization and trained.

PROFILE lines hold, for one block of one depth, the norm of the gradient that
reaches that block's two weight matrices in each layout; INPUT lines the norm of
the gradient that reaches the stack's input. Both are measured at initialization
and are geometric means over the profile seeds (norms vary by factors, so their
logarithms are averaged). CURVE and FINAL lines hold training losses, one field
per layout and depth trained.
"""

from __future__ import annotations

from site_builder.task_record import TaskRecord
from site_builder.trace import Int, Real, Sci, lines, record, trace_format

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


@record("CURVE", index="step")
class Curve:
    """The mean training loss over the seeds at one recorded step, one field per layout and depth."""

    step: Int
    pre_6: Sci
    post_6: Sci
    pre_24: Sci
    post_24: Sci


@record("FINAL", index="seed")
class Final:
    """One seed's training loss after the last update, one field per layout and depth."""

    seed: Int
    pre_6: Sci
    post_6: Sci
    pre_24: Sci
    post_24: Sci


COLUMNS = tuple(column(layout, d) for d in TRAIN_DEPTHS for layout in LAYOUTS)
for _record in (Curve, Final):
    _fields = tuple(_record.__annotations__)[1:]
    assert _fields == COLUMNS, f"{_record.__name__} must hold one field per trained stack, in the order of {COLUMNS}"


@trace_format("prenorm-v1")
class Trace:
    task: TaskRecord
    setup: Setup
    profiles: tuple[Profile, ...] = lines({"depth": d, "block": b} for d in PROFILE_DEPTHS for b in range(1, d + 1))
    inputs: tuple[Input, ...] = lines(depth=PROFILE_DEPTHS)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    finals: tuple[Final, ...] = lines(seed=SEEDS)
