"""Degradation, trained: plain and residual ReLU stacks of several depths on two interleaved spirals.

Every stack of a seed starts from the same draws: the residual stack differs
from the plain one only by its identity path and by a smaller second layer in
each block, so that its stream does not double at every block. All stacks
train full-batch with the same optimizer, learning rate and number of steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter
from site_builder.nn import Adam, residual_add
from site_builder.run import Run, check_constants
from site_builder.tasks import (
    SPIRALS,
    BlockDraws,
    Dataset,
    Ends,
    History,
    SpiralTask,
    block_draws,
    cross_entropy_per_model,
    side_by_side,
    train,
)

from .trace import (
    COLUMNS,
    DEPTHS,
    EVERY,
    KINDS,
    RECORDED,
    SEEDS,
    STEPS,
    Curve,
    DepthEffect,
    Final,
    Setup,
    Start,
    Trace,
    column,
)

FIXTURE = "degradation"


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    width: int = 16
    learning_rate: float = 3e-3
    degrade_factor: float = 10.0

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "learning_rate", "degrade_factor")


def seed_draws(c: Constants, seed: int) -> BlockDraws:
    """One seed's draws, enough blocks for the deepest stack."""
    return block_draws(seed, width=c.width, blocks=max(DEPTHS))


def branch_scale(kind: str, depth: int) -> float:
    """The residual stack's second layers are divided by sqrt(2 * depth), as GPT-2 scales its residual layers:
    the stream's mean square then grows by about 1/(2 depth) per block instead of doubling. The plain stack
    keeps He's scale, which keeps its signal's mean square from block to block."""
    return 1.0 / math.sqrt(2.0 * depth) if kind == "residual" else 1.0


# region: stacks
def plain_stack(h: Tensor, blocks: list[tuple[Tensor, Tensor]]) -> Tensor:
    for first, second in blocks:
        h = (h @ first).relu() @ second  # each block replaces the stream
    return h


def residual_stack(h: Tensor, blocks: list[tuple[Tensor, Tensor]]) -> Tensor:
    for first, second in blocks:
        h = residual_add(h, (h @ first).relu() @ second)  # each block adds to the stream
    return h


# endregion: stacks


Stack = Callable[[Tensor, list[tuple[Tensor, Tensor]]], Tensor]  # the stream in, its blocks -> the stream out
STACKS: dict[str, Stack] = {"plain": plain_stack, "residual": residual_stack}


@dataclass
class Models:
    """Every seed's stack of one kind and depth, side by side."""

    ends: Ends
    blocks: list[tuple[Tensor, Tensor]]
    stack: Stack

    def parameters(self) -> list[Tensor]:
        return [*self.ends.parameters(), *(w for pair in self.blocks for w in pair)]

    def stream(self, data: Dataset) -> tuple[Tensor, Tensor]:
        bottom = self.ends.embed(data.inputs)
        return bottom, self.stack(bottom, self.blocks)

    def losses(self, data: Dataset) -> Tensor:
        return cross_entropy_per_model(self.ends.logits(self.stream(data)[1]), data.labels)


def build(draws: list[BlockDraws], kind: str, depth: int) -> Models:
    scale = branch_scale(kind, depth)
    name = f"{kind}.{depth}"
    blocks = [
        (
            parameter(side_by_side([d.first[l] for d in draws]), name=f"{name}.block.{l}.first"),
            parameter(side_by_side([d.second[l] * scale for d in draws]), name=f"{name}.block.{l}.second"),
        )
        for l in range(depth)
    ]
    return Models(Ends([d.ends for d in draws], name=name), blocks, STACKS[kind])


def rms(x: np.ndarray) -> np.ndarray:
    """Root mean square of each model's stream: ``[M, N, C]`` -> ``[M]``."""
    return np.sqrt(np.mean(x * x, axis=(1, 2)))


# region: train-one
def train_stacks(
    c: Constants, data: Dataset, draws: list[BlockDraws], kind: str, depth: int
) -> tuple[np.ndarray, History]:
    """Every seed's stack side by side; the stream's growth at initialization, then the training history."""
    models = build(draws, kind, depth)
    bottom, top = models.stream(data)
    growth = rms(top.data) / rms(bottom.data)
    optimizer = Adam(models.parameters(), lr=c.learning_rate)
    history = train(lambda: models.losses(data), optimizer, steps=STEPS, every=EVERY, fixture=FIXTURE)
    return growth, history


# endregion: train-one


def run(c: Constants = Constants()) -> Run:
    c.check()
    data = c.task.dataset()
    draws = [seed_draws(c, s) for s in SEEDS]
    starts, mean_curves, finals = [], {}, {}
    for depth in DEPTHS:
        for kind in KINDS:
            growth, history = train_stacks(c, data, draws, kind, depth)
            mean = history.losses.mean(axis=1)
            starts.append(Start(depth, kind, branch_scale(kind, depth), float(growth.mean()), float(mean[0])))
            mean_curves[column(kind, depth)] = mean
            finals[column(kind, depth)] = history.final
    curves = tuple(
        Curve(step, **{name: float(mean_curves[name][i]) for name in COLUMNS}) for i, step in enumerate(RECORDED)
    )
    final_rows = tuple(
        Final(seed, **{name: float(finals[name][i]) for name in COLUMNS}) for i, seed in enumerate(SEEDS)
    )
    mean_final = {name: float(mean_curves[name][-1]) for name in COLUMNS}
    effects = []
    for kind in KINDS:
        shallow, deep = mean_final[column(kind, DEPTHS[0])], mean_final[column(kind, DEPTHS[-1])]
        effects.append(DepthEffect(kind, shallow, deep, deep / shallow, deep / shallow > c.degrade_factor))
    trace = Trace(
        task=c.task.record(),
        setup=Setup(c.width, c.learning_rate, STEPS, EVERY, len(SEEDS), c.degrade_factor),
        starts=tuple(starts),
        curves=curves,
        finals=final_rows,
        effects=tuple(effects),
    )
    start_losses = [s.loss for s in starts]
    derived: dict[str, object] = {
        "DERIVED.points": len(data.labels),
        "DERIVED.start-loss-min": min(start_losses),
        "DERIVED.start-loss-max": max(start_losses),
    }
    for depth in DEPTHS:
        plain, residual = mean_final[column("plain", depth)], mean_final[column("residual", depth)]
        derived[f"DERIVED.depth-{depth}.plain-over-residual"] = plain / residual
    return Run(trace, derived)
