"""Trace format ``degradation-v1``: plain and residual stacks of several depths, trained on two spirals.

Losses span many orders of magnitude, so they are written in ``%.6e``. A CURVE
line holds the mean loss over the seeds of every stack at one step, a FINAL line
one seed's final loss of every stack; START values are means over the seeds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from site_builder.trace import Bool, Int, Real, Sci, choice, lines, record, trace_format
from site_builder.training_trace import TaskRecord, loss_records

DEPTHS = (2, 8, 32)
KINDS = ("plain", "residual")
SEEDS = (1, 2, 3)
STEPS = 300
EVERY = 25
RECORDED = tuple(range(0, STEPS + 1, EVERY))

Kind = Annotated[str, choice(*KINDS)]


@record("SETUP")
class Setup:
    width: Int
    learning_rate: Real  # Adam, default betas and eps
    steps: Int
    every: Int
    seeds: Int
    degrade_factor: Real  # a stack degrades when its deepest mean final loss exceeds its shallowest's this many times


@record("START", index=("depth", "kind"))
class Start:
    """At initialization, mean over the seeds."""

    depth: Int
    kind: Kind
    branch_scale: Real  # the factor on every block's second layer on top of He's
    stream_ratio: Real  # rms of the stream after the last block / rms after the embedding
    loss: Sci


def column(kind: str, depth: int) -> str:
    """The field of a CURVE or FINAL record that holds one stack's loss: ``plain_32`` (``plain-32`` in the text)."""
    return f"{kind}_{depth}"


COLUMNS = tuple(column(k, d) for d in DEPTHS for k in KINDS)  # plain_2, residual_2, ..., residual_32
if TYPE_CHECKING:  # the loss fields are named at run time: a type checker sees a line's index and its losses
    from site_builder.training_trace import CurveLine as Curve
    from site_builder.training_trace import FinalLine as Final
else:
    Curve, Final = loss_records(COLUMNS, per="stack", module=__name__)


@record("DEPTH-EFFECT", index="kind")
class DepthEffect:
    kind: Kind
    shallow: Sci  # mean final loss at the shallowest depth
    deep: Sci  # ... at the deepest
    ratio: Sci  # deep / shallow
    degrades: Bool  # ratio > SETUP.degrade-factor


@trace_format("degradation-v1")
class Trace:
    task: TaskRecord
    setup: Setup
    starts: tuple[Start, ...] = lines({"depth": d, "kind": k} for d in DEPTHS for k in KINDS)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    finals: tuple[Final, ...] = lines(seed=SEEDS)
    effects: tuple[DepthEffect, ...] = lines(kind=KINDS)
