"""Trace format ``degradation-v3``: plain and residual stacks of two depths, trained on two spirals, each arm at
its own best learning rate.

Every loss is a measured result (``Measured``): the median over the seeds, the smallest and the largest seed,
and the uncertainties of the seeds and of the float path, written with only the digits they leave standing.
SWEEP lines hold every arm's loss at every rate tried; CURVE lines the loss of every arm at its chosen rate at
each recorded step; ORDER lines the comparisons the page's sentences are chosen by.
"""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import Bool, Int, Measured, Real, Sci, choice, lines, record, trace_format
from site_builder.training_trace import TaskRecord

DEPTHS = (2, 8)
ARMS = ("plain", "normalized-plain", "residual", "scaled-residual")
RATES = (1e-3, 3e-3, 1e-2)
SEEDS = tuple(range(1, 9))
STEPS = 120
BUDGETS = (60, 120)  # the step budgets a result is reported at; the last is STEPS
EVERY = 20
RECORDED = tuple(range(0, STEPS + 1, EVERY))
ORDERS = ("lower", "higher", "indistinguishable")

Arm = Annotated[str, choice(*ARMS)]
Order = Annotated[str, choice(*ORDERS)]


@record("SETUP")
class Setup:
    width: Int
    steps: Int
    every: Int
    seeds: Int  # each trained once as drawn and once with one initial weight nudged by one ulp
    rates: Int  # the learning rates of the sweep, every arm at every depth


@record("START", index=("depth", "arm"))
class Start:
    """At initialization."""

    depth: Int
    arm: Arm
    branch_scale: Real  # the factor on every block's second layer on top of He's
    parameters: Int  # weights and biases of one model
    stream_ratio: Measured  # rms of the stream after the last block / rms after the embedding
    loss: Measured


@record("SWEEP", index=("depth", "arm", "rate"))
class Sweep:
    depth: Int
    arm: Arm
    rate: Sci  # Adam's learning rate, default betas and eps
    loss: Measured  # after the last step
    chosen: Bool  # the rate whose median final loss is lowest for this arm and depth
    versus_chosen: Order  # this rate's loss against the chosen rate's, beyond both uncertainties


@record("CURVE", index="step")
class Curve:
    """Every arm's training loss at its chosen rate at one recorded step; fields named ``ARM-DEPTH``."""

    step: Int
    plain_2: Measured
    normalized_plain_2: Measured
    residual_2: Measured
    scaled_residual_2: Measured
    plain_8: Measured
    normalized_plain_8: Measured
    residual_8: Measured
    scaled_residual_8: Measured


def column(arm: str, depth: int) -> str:
    """The attribute of a CURVE record that holds one arm's loss: ``normalized_plain_8`` (``normalized-plain-8`` in the text)."""
    return f"{arm.replace('-', '_')}_{depth}"


COLUMNS = tuple(column(a, d) for d in DEPTHS for a in ARMS)


@record("DEPTH-EFFECT", index=("arm", "budget"))
class DepthEffect:
    """The deeper stack's loss against the shallower one's, at one step budget."""

    arm: Arm
    budget: Int
    deep: Order  # lower / higher / indistinguishable than the shallow stack's, beyond both uncertainties


@record("VERSUS", index=("depth", "arm", "budget"))
class Versus:
    """An arm's loss against the unnormalized plain stack's at the same depth and step budget."""

    depth: Int
    arm: Arm
    budget: Int
    order: Order


@trace_format("degradation-v3")
class Trace:
    task: TaskRecord
    setup: Setup
    starts: tuple[Start, ...] = lines({"depth": d, "arm": a} for d in DEPTHS for a in ARMS)
    sweeps: tuple[Sweep, ...] = lines({"depth": d, "arm": a, "rate": r} for d in DEPTHS for a in ARMS for r in RATES)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    effects: tuple[DepthEffect, ...] = lines({"arm": a, "budget": b} for a in ARMS for b in BUDGETS)
    versus: tuple[Versus, ...] = lines(
        {"depth": d, "arm": a, "budget": b} for d in DEPTHS for a in ARMS if a != "plain" for b in BUDGETS
    )
