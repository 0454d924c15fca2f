"""Pre-norm against post-norm: where the normalization sits decides where the gradient goes.

Both layouts use the same residual blocks, drawn once per seed: the branch is
``F(h) = ReLU(h W1) W2`` with He's scale. Pre-norm normalizes the branch's input
and leaves the stream alone, ``h + F(LN(h))``, with one more normalization
before the read-out; post-norm normalizes the stream after every merge,
``LN(h + F(h))``, the 2017 layout. At initialization the fixtures measure the
gradient that reaches every block's weights and the stack's input; then they
train both layouts at one learning rate from the first step, with no warm-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter
from site_builder.nn import Adam, layer_norm, residual_add
from site_builder.run import FixtureError, Run, check_constants
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
    EVERY,
    LAYOUTS,
    PROFILE_DEPTHS,
    PROFILE_SEEDS,
    RECORDED,
    SEEDS,
    STEPS,
    TRAIN_DEPTHS,
    Curve,
    Final,
    Input,
    Profile,
    Setup,
    Trace,
    column,
)

FIXTURE = "prenorm"


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    width: int = 16
    learning_rate: float = 3e-3
    eps: float = 1e-5

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "learning_rate", "eps")


def seed_draws(c: Constants, seed: int) -> BlockDraws:
    """One seed's draws, enough blocks for the deepest stack."""
    return block_draws(seed, width=c.width, blocks=max(PROFILE_DEPTHS))


Blocks = list[tuple[Tensor, Tensor]]


# region: layouts
def branch(h: Tensor, first: Tensor, second: Tensor) -> Tensor:
    return (h @ first).relu() @ second


def pre_norm(h: Tensor, blocks: Blocks, norm: Callable[[Tensor], Tensor]) -> Tensor:
    for first, second in blocks:
        h = residual_add(h, branch(norm(h), first, second))  # the stream itself is never normalized
    return norm(h)  # one normalization before the read-out


def post_norm(h: Tensor, blocks: Blocks, norm: Callable[[Tensor], Tensor]) -> Tensor:
    for first, second in blocks:
        h = norm(residual_add(h, branch(h, first, second)))  # every merge is normalized
    return h


# endregion: layouts


STACKS = {"pre": pre_norm, "post": post_norm}


@dataclass
class Models:
    """Every seed's stack of one layout and depth, side by side."""

    ends: Ends
    blocks: Blocks
    layout: str
    eps: float

    def norm(self, h: Tensor) -> Tensor:
        width = h.shape[-1]
        return layer_norm(h, np.ones(width), np.zeros(width), self.eps)  # no learned gain or bias

    def parameters(self) -> list[Tensor]:
        return [*self.ends.parameters(), *(w for pair in self.blocks for w in pair)]

    def losses_from(self, bottom: Tensor, data: Dataset) -> Tensor:
        top = STACKS[self.layout](bottom, self.blocks, self.norm)
        return cross_entropy_per_model(self.ends.logits(top), data.labels)

    def losses(self, data: Dataset) -> Tensor:
        return self.losses_from(self.ends.embed(data.inputs), data)


def build(c: Constants, draws: list[BlockDraws], layout: str, depth: int) -> Models:
    name = f"{layout}.{depth}"
    blocks = [
        (
            parameter(side_by_side([d.first[l] for d in draws]), name=f"{name}.block.{l}.first"),
            parameter(side_by_side([d.second[l] for d in draws]), name=f"{name}.block.{l}.second"),
        )
        for l in range(depth)
    ]
    return Models(Ends([d.ends for d in draws], name=name), blocks, layout, c.eps)


def per_model_norm(g: np.ndarray | None) -> np.ndarray:
    """The norm of each model's slice of the gradient ``g`` (``[M, ...]`` -> ``[M]``).

    ``g`` is a parameter's ``.grad``: None when the backward pass never reached it, which stops the fixture.
    """
    if g is None:
        raise FixtureError("profile", "a weight of the stack received no gradient from the backward pass")
    return np.sqrt(np.sum(g * g, axis=tuple(range(1, g.ndim))))


# region: profile
def gradient_profile(models: Models, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """At initialization: the gradient norm reaching each block's weights ``[depth, M]`` and the stack's input ``[M]``."""
    bottom = parameter(models.ends.embed(data.inputs).data, name="stack.input")
    models.losses_from(bottom, data).sum().backward()
    blocks = np.array([np.sqrt(per_model_norm(a.grad) ** 2 + per_model_norm(b.grad) ** 2) for a, b in models.blocks])
    for p in models.parameters():
        p.zero_grad()
    assert bottom.grad is not None
    return blocks, per_model_norm(bottom.grad)


# endregion: profile


def geometric_mean(values: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.exp(np.mean(np.log(values), axis=axis))


def run(c: Constants = Constants()) -> Run:
    c.check()
    data = c.task.dataset()
    profile_draws = [seed_draws(c, s) for s in PROFILE_SEEDS]
    profiles: list[Profile] = []
    inputs: list[Input] = []
    derived: dict[str, object] = {}  # numbers, and the trained depths
    for depth in PROFILE_DEPTHS:
        measured = {layout: gradient_profile(build(c, profile_draws, layout, depth), data) for layout in LAYOUTS}
        pre, post = (geometric_mean(measured[layout][0]) for layout in LAYOUTS)
        profiles += [Profile(depth, b + 1, float(pre[b]), float(post[b])) for b in range(depth)]
        pre_in, post_in = (float(geometric_mean(measured[layout][1])) for layout in LAYOUTS)
        inputs.append(Input(depth, pre_in, post_in))
        derived[f"DERIVED.depth-{depth}.pre-last-over-first"] = float(pre[-1] / pre[0])
        derived[f"DERIVED.depth-{depth}.post-last-over-first"] = float(post[-1] / post[0])
        derived[f"DERIVED.depth-{depth}.input-pre-over-post"] = pre_in / post_in
    draws = [seed_draws(c, s) for s in SEEDS]
    curves, finals = {}, {}
    for depth in TRAIN_DEPTHS:
        for layout in LAYOUTS:
            models = build(c, draws, layout, depth)
            history = train(
                lambda: models.losses(data),
                Adam(models.parameters(), lr=c.learning_rate),
                steps=STEPS,
                every=EVERY,
                fixture=FIXTURE,
            )
            curves[column(layout, depth)] = history.losses.mean(axis=1)
            finals[column(layout, depth)] = history.final
    trace = Trace(
        task=c.task.record(),
        setup=Setup(c.width, c.learning_rate, c.eps, STEPS, EVERY, len(SEEDS), len(PROFILE_SEEDS)),
        profiles=tuple(profiles),
        inputs=tuple(inputs),
        curves=tuple(Curve(step, **{n: float(curves[n][i]) for n in COLUMNS}) for i, step in enumerate(RECORDED)),
        finals=tuple(Final(seed, **{n: float(finals[n][i]) for n in COLUMNS}) for i, seed in enumerate(SEEDS)),
    )
    derived["DERIVED.points"] = len(data.labels)
    derived["DERIVED.trained-depths"] = TRAIN_DEPTHS
    for depth in TRAIN_DEPTHS:
        derived[f"DERIVED.depth-{depth}.post-over-pre"] = float(
            curves[column("post", depth)][-1] / curves[column("pre", depth)][-1]
        )
    return Run(trace, derived)
