"""Degradation, trained: plain and residual ReLU stacks of two depths on two interleaved spirals.

Four arms, every one from the same draws of a seed:

- ``plain``: each block replaces the stream, ``h <- F(h)``, with He's scale;
- ``normalized-plain``: the same, with the block's output normalized, ``h <- LN(F(h))`` (no learned gain), so that
  its signal keeps its size at any depth, as He et al.'s plain networks kept theirs with batch normalization;
- ``residual``: each block adds to the stream, ``h <- h + F(h)``, with He's scale: the identity path alone;
- ``scaled-residual``: the same with every block's second layer divided by ``sqrt(2 L)``, as GPT-2 scales its
  residual layers: the identity path and the branch scale.

Each arm at each depth trains at every learning rate of a small sweep, all side by side with every seed and
every seed's twin (one initial weight one ulp larger, ``tasks.with_twins``); the page reports each arm at the
rate whose median final loss is lowest, and every rate in a table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter
from site_builder.measure import compare
from site_builder.nn import Adam, layer_norm, residual_add
from site_builder.run import Run, check_constants
from site_builder.tasks import (
    SPIRALS,
    BlockDraws,
    Dataset,
    Ends,
    SpiralTask,
    block_draws,
    cross_entropy_per_model,
    measured,
    rates_side_by_side,
    side_by_side,
    train,
    with_twins,
)
from site_builder.trace.numbers import Measurement

from .trace import (
    ARMS,
    BUDGETS,
    COLUMNS,
    DEPTHS,
    EVERY,
    RATES,
    RECORDED,
    SEEDS,
    STEPS,
    Curve,
    DepthEffect,
    Setup,
    Start,
    Sweep,
    Trace,
    Versus,
    column,
)

FIXTURE = "degradation"


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    width: int = 16
    eps: float = 1e-5  # added to the variance of normalized-plain's normalization

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "eps")


def seed_draws(c: Constants, seed: int) -> BlockDraws:
    """One seed's draws, enough blocks for the deepest stack."""
    return block_draws(seed, width=c.width, blocks=max(DEPTHS))


def branch_scale(arm: str, depth: int) -> float:
    """``scaled-residual`` divides its second layers by sqrt(2 * depth), as GPT-2 scales its residual layers: the
    stream's mean square then grows by about 1/(2 depth) per block instead of doubling. The other arms keep He's
    scale, which keeps a plain block's signal's mean square on average over the draws."""
    return 1.0 / math.sqrt(2.0 * depth) if arm == "scaled-residual" else 1.0


Blocks = list[tuple[Tensor, Tensor]]


# region: stacks
def branch(h: Tensor, first: Tensor, second: Tensor) -> Tensor:
    return (h @ first).relu() @ second


def plain_stack(h: Tensor, blocks: Blocks, norm: Callable[[Tensor], Tensor]) -> Tensor:
    for first, second in blocks:
        h = branch(h, first, second)  # each block replaces the stream
    return h


def normalized_plain_stack(h: Tensor, blocks: Blocks, norm: Callable[[Tensor], Tensor]) -> Tensor:
    for first, second in blocks:
        h = norm(branch(h, first, second))  # ... and its output is normalized
    return h


def residual_stack(h: Tensor, blocks: Blocks, norm: Callable[[Tensor], Tensor]) -> Tensor:
    for first, second in blocks:
        h = residual_add(h, branch(h, first, second))  # each block adds to the stream
    return h


# endregion: stacks


Stack = Callable[[Tensor, Blocks, Callable[[Tensor], Tensor]], Tensor]
STACKS: dict[str, Stack] = {
    "plain": plain_stack,
    "normalized-plain": normalized_plain_stack,
    "residual": residual_stack,
    "scaled-residual": residual_stack,
}


@dataclass
class Models:
    """Every model of one arm and depth side by side: every rate, and at each rate every seed, then its twin."""

    ends: Ends
    blocks: Blocks
    stack: Stack
    eps: float

    def norm(self, h: Tensor) -> Tensor:
        width = h.shape[-1]
        return layer_norm(h, np.ones(width), np.zeros(width), self.eps)

    def parameters(self) -> list[Tensor]:
        return [*self.ends.parameters(), *(w for pair in self.blocks for w in pair)]

    def stream(self, data: Dataset) -> tuple[Tensor, Tensor]:
        bottom = self.ends.embed(data.inputs)
        return bottom, self.stack(bottom, self.blocks, self.norm)

    def losses(self, data: Dataset) -> Tensor:
        return cross_entropy_per_model(self.ends.logits(self.stream(data)[1]), data.labels)


def build(c: Constants, draws: list[BlockDraws], arm: str, depth: int) -> Models:
    scale = branch_scale(arm, depth)
    name = f"{arm}.{depth}"
    blocks = [
        (
            parameter(side_by_side([d.first[l] for d in draws]), name=f"{name}.block.{l}.first"),
            parameter(side_by_side([d.second[l] * scale for d in draws]), name=f"{name}.block.{l}.second"),
        )
        for l in range(depth)
    ]
    return Models(Ends([d.ends for d in draws], name=name), blocks, STACKS[arm], c.eps)


def parameter_count(models: Models) -> int:
    """The weights and biases of one model (the size of every parameter without its leading models axis)."""
    return sum(int(np.prod(p.shape[1:])) for p in models.parameters())


def rms(x: np.ndarray) -> np.ndarray:
    """Root mean square of each model's stream: ``[M, N, C]`` -> ``[M]``."""
    return np.sqrt(np.mean(x * x, axis=(1, 2)))


@dataclass(frozen=True)
class ArmResult:
    """One arm at one depth: the stream's growth and the loss at initialization, and the losses of every rate at
    every recorded step, ``[rates, steps]`` of measured results."""

    parameters: int
    growth: Measurement
    start: Measurement
    losses: tuple[tuple[Measurement, ...], ...]

    @property
    def chosen(self) -> int:
        """The rate whose median final loss is lowest."""
        return min(range(len(RATES)), key=lambda r: self.losses[r][-1].median)


# region: train-one
def train_arm(c: Constants, data: Dataset, draws: list[BlockDraws], arm: str, depth: int) -> ArmResult:
    """Every rate of the sweep, every seed and every twin of one arm and depth, side by side in one run."""
    per_rate = len(draws)
    models = build(c, draws * len(RATES), arm, depth)
    bottom, top = models.stream(data)
    growth = rms(top.data) / rms(bottom.data)
    optimizer = Adam(models.parameters(), lr=rates_side_by_side(RATES, per_rate))
    history = train(lambda: models.losses(data), optimizer, steps=STEPS, every=EVERY, fixture=FIXTURE)
    what = f"{arm} at {depth} blocks"
    losses = tuple(
        tuple(measured(row[r * per_rate : (r + 1) * per_rate], what=what) for row in history.losses)
        for r in range(len(RATES))
    )
    return ArmResult(parameter_count(models), measured(growth[:per_rate], what=what), losses[0][0], losses)


# endregion: train-one


def run(c: Constants = Constants()) -> Run:
    c.check()
    data = c.task.dataset()
    draws = with_twins([seed_draws(c, s) for s in SEEDS])
    results = {(arm, depth): train_arm(c, data, draws, arm, depth) for depth in DEPTHS for arm in ARMS}
    starts = tuple(
        Start(depth, arm, branch_scale(arm, depth), r.parameters, r.growth, r.start)
        for (arm, depth), r in results.items()
    )
    sweeps = tuple(
        Sweep(depth, arm, rate, r.losses[i][-1], i == r.chosen, compare(r.losses[i][-1], r.losses[r.chosen][-1]))
        for (arm, depth), r in results.items()
        for i, rate in enumerate(RATES)
    )

    def at(arm: str, depth: int, step: int) -> Measurement:
        r = results[(arm, depth)]
        return r.losses[r.chosen][RECORDED.index(step)]

    curves = tuple(
        Curve(step, **{column(arm, depth): at(arm, depth, step) for arm in ARMS for depth in DEPTHS})
        for step in RECORDED
    )
    assert set(COLUMNS) == {column(a, d) for a in ARMS for d in DEPTHS}
    shallow, deep = DEPTHS[0], DEPTHS[-1]
    effects = tuple(
        DepthEffect(arm, budget, compare(at(arm, deep, budget), at(arm, shallow, budget)))
        for arm in ARMS
        for budget in BUDGETS
    )
    versus = tuple(
        Versus(depth, arm, budget, compare(at(arm, depth, budget), at("plain", depth, budget)))
        for depth in DEPTHS
        for arm in ARMS
        if arm != "plain"
        for budget in BUDGETS
    )
    trace = Trace(
        task=c.task.record(),
        setup=Setup(c.width, STEPS, EVERY, len(SEEDS), len(RATES)),
        starts=starts,
        sweeps=sweeps,
        curves=curves,
        effects=effects,
        versus=versus,
    )
    at_edge = sum(r.chosen in (0, len(RATES) - 1) for r in results.values())
    derived: dict[str, object] = {
        "DERIVED.points": len(data.labels),
        "DERIVED.budgets": BUDGETS,
        "DERIVED.sweep.stacks": len(results),
        "DERIVED.sweep.at-edge": at_edge,
    }
    return Run(trace, derived)
