"""Initializations that start at the identity: five schemes for one residual MLP stack.

Every scheme starts from the same He draws of a seed and multiplies each
block's first and second layer by its own factors; ReZero also multiplies each
branch by a learned gate that starts at zero. At initialization the fixtures
measure how much the stack scales the stream on the way up and a gradient on the
way down, at several depths; then they train every scheme at one depth with the
same optimizer, learning rate and number of steps.
"""

from __future__ import annotations

import math
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
    INIT_SEEDS,
    RECORDED,
    SCHEMES,
    SEEDS,
    STEPS,
    TRAIN_DEPTH,
    Curve,
    Final,
    Setup,
    Start,
    Trace,
    column,
)

FIXTURE = "init-schemes"
BRANCH_LAYERS = 2  # F(h) = ReLU(h W1) W2


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    width: int = 16
    learning_rate: float = 3e-3
    upstream_seed: int = 0  # the generator of the gradient sent into the top of the stack at initialization

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "learning_rate")


def seed_draws(c: Constants, seed: int) -> BlockDraws:
    """One seed's draws, enough blocks for the deepest stack."""
    return block_draws(seed, width=c.width, blocks=max(DEPTHS))


# region: schemes
def factors(scheme: str, depth: int) -> tuple[float, float]:
    """The factors on He's draws of each block's first and second layer, for a stack of ``depth`` blocks."""
    if scheme in ("he", "rezero"):
        return 1.0, 1.0  # He's scale on both layers (ReZero gates the branch instead)
    if scheme == "zero-last":
        return 1.0, 0.0  # the branch's last layer starts at zero
    if scheme == "fixup":
        return depth ** (-1.0 / (2 * BRANCH_LAYERS - 2)), 0.0  # inner layer times L^(-1/(2m-2)), last layer zero
    if scheme == "scaled-last":
        return 1.0, 1.0 / math.sqrt(2.0 * depth)  # the output layer times 1/sqrt(2L)
    raise ValueError(f"unknown scheme {scheme!r}; schemes: {', '.join(SCHEMES)}")


def stack(h: Tensor, blocks: list[tuple[Tensor, Tensor]], gates: list[Tensor] | None) -> Tensor:
    """h = h + F(h) in every block; with ReZero's gates, h = h + alpha * F(h), each alpha starting at zero."""
    for l, (first, second) in enumerate(blocks):
        f = (h @ first).relu() @ second
        h = residual_add(h, f if gates is None else f * gates[l])
    return h


# endregion: schemes


@dataclass
class Models:
    """Every seed's stack of one scheme and depth, side by side."""

    ends: Ends
    blocks: list[tuple[Tensor, Tensor]]
    gates: list[Tensor] | None

    def parameters(self) -> list[Tensor]:
        return [*self.ends.parameters(), *(w for pair in self.blocks for w in pair), *(self.gates or [])]

    def losses(self, data: Dataset) -> Tensor:
        return cross_entropy_per_model(
            self.ends.logits(stack(self.ends.embed(data.inputs), self.blocks, self.gates)), data.labels
        )


def build(draws: list[BlockDraws], scheme: str, depth: int) -> Models:
    a, b = factors(scheme, depth)
    name = f"{scheme}.{depth}"
    blocks = [
        (
            parameter(side_by_side([d.first[l] * a for d in draws]), name=f"{name}.block.{l}.first"),
            parameter(side_by_side([d.second[l] * b for d in draws]), name=f"{name}.block.{l}.second"),
        )
        for l in range(depth)
    ]
    gates = (
        [parameter(np.zeros((len(draws), 1, 1)), name=f"{name}.block.{l}.alpha") for l in range(depth)]
        if scheme == "rezero"
        else None
    )
    return Models(Ends([d.ends for d in draws], name=name), blocks, gates)


def per_model_rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(x * x, axis=(1, 2)))


def per_model_norm(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(x * x, axis=(1, 2)))


def geometric_mean(values: np.ndarray) -> float:
    return float(np.exp(np.mean(np.log(values))))


# region: at-init
def growth_at_init(c: Constants, models: Models, data: Dataset) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per model: rms(stream at the top) / rms(stream at the bottom), and |gradient at the bottom| / |gradient
    sent into the top| for a fixed random upstream gradient; and whether the top equals the bottom bit for bit."""
    bottom = parameter(models.ends.embed(data.inputs).data, name="stack.input")
    top = stack(bottom, models.blocks, models.gates)
    upstream = np.random.default_rng(c.upstream_seed).standard_normal(top.shape)
    top.backward_with_seed(upstream)
    assert bottom.grad is not None
    forward = per_model_rms(top.data) / per_model_rms(bottom.data)
    backward = per_model_norm(bottom.grad) / per_model_norm(upstream)
    return forward, backward, bool(np.array_equal(top.data, bottom.data))


# endregion: at-init


def run(c: Constants = Constants()) -> Run:
    c.check()
    data = c.task.dataset()
    init_draws = [seed_draws(c, s) for s in INIT_SEEDS]
    starts: list[Start] = []
    derived: dict[str, object] = {}  # numbers, booleans and tuples of names
    for scheme in SCHEMES:
        exact = True
        for depth in DEPTHS:
            forward, backward, identity = growth_at_init(c, build(init_draws, scheme, depth), data)
            exact = exact and identity
            a, b = factors(scheme, depth)
            starts.append(Start(scheme, depth, a, b, geometric_mean(forward), geometric_mean(backward)))
        derived[f"DERIVED.{scheme}.identity-at-init"] = exact
    draws = [seed_draws(c, s) for s in SEEDS]
    curves, finals = {}, {}
    for scheme in SCHEMES:
        models = build(draws, scheme, TRAIN_DEPTH)
        history = train(
            lambda: models.losses(data),
            Adam(models.parameters(), lr=c.learning_rate),
            steps=STEPS,
            every=EVERY,
            fixture=FIXTURE,
        )
        curves[column(scheme)] = history.losses.mean(axis=1)
        finals[column(scheme)] = history.final
    trace = Trace(
        task=c.task.record(),
        setup=Setup(c.width, BRANCH_LAYERS, c.learning_rate, STEPS, EVERY, TRAIN_DEPTH, len(SEEDS), len(INIT_SEEDS)),
        starts=tuple(starts),
        curves=tuple(Curve(step, **{n: float(curves[n][i]) for n in COLUMNS}) for i, step in enumerate(RECORDED)),
        finals=tuple(Final(seed, **{n: float(finals[n][i]) for n in COLUMNS}) for i, seed in enumerate(SEEDS)),
    )
    ranked = sorted(SCHEMES, key=lambda s: curves[column(s)][-1])
    derived.update(
        {
            "DERIVED.points": len(data.labels),
            "DERIVED.schemes": SCHEMES,
            "DERIVED.ranked": tuple(ranked),  # by mean final loss, lowest first
            "DERIVED.fixup-exponent": -1.0 / (2 * BRANCH_LAYERS - 2),
            "DERIVED.sqrt-two": math.sqrt(2.0),
            "DERIVED.scaled-last-limit": math.exp(0.25),  # (1 + 1/(2L))^(L/2) as L grows
        }
    )
    he_deep = next(s for s in starts if s.scheme == "he" and s.depth == max(DEPTHS))
    derived["DERIVED.he.per-block"] = he_deep.forward ** (1.0 / he_deep.depth)
    return Run(trace, derived)
