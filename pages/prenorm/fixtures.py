"""Pre-norm against post-norm: where the normalization sits decides where the gradient goes.

Both layouts use the same residual blocks, drawn once per seed: the branch is
``F(h) = ReLU(h W1) W2`` with He's scale. Pre-norm normalizes the branch's input
and leaves the stream alone, ``h + F(LN(h))``, with one more normalization
before the read-out; post-norm normalizes the stream after every merge,
``LN(h + F(h))``, the 2017 layout. At initialization the fixtures measure the
gradient that reaches every block's weights and the stack's input, seed by seed;
then they train three arms, pre-norm, post-norm, and post-norm with a linear
learning-rate warm-up, each at every rate of a small sweep, every seed beside
its one-ulp twin (``tasks.with_twins``), and report each arm at its own best rate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter
from site_builder.measure import compare
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
    EVERY,
    PAIRS,
    PROFILE_DEPTHS,
    PROFILE_SEEDS,
    RATES,
    RECORDED,
    SEEDS,
    STEPS,
    TRAIN_DEPTH,
    WARMUP,
    ArmLine,
    Curve,
    Profile,
    Setup,
    Start,
    Sweep,
    Trace,
    Versus,
)

FIXTURE = "prenorm"


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    width: int = 16
    eps: float = 1e-5
    fit_divisor: float = 10.0  # a stack fits the points below the chance loss divided by this

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "eps", "fit_divisor")


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
LAYOUT_OF = {"pre-norm": "pre", "post-norm": "post", "post-norm-warm-up": "post"}  # the layout each trained arm stacks
WARMUP_OF = {"pre-norm": 0, "post-norm": 0, "post-norm-warm-up": WARMUP}


@dataclass
class Models:
    """Every model of one layout and depth side by side."""

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


def parameter_count(models: Models) -> int:
    """The weights and biases of one model (the size of every parameter without its leading models axis)."""
    return sum(int(np.prod(p.shape[1:])) for p in models.parameters())


def per_model_norm(g: np.ndarray | None) -> np.ndarray:
    """The norm of each model's slice of the gradient ``g`` (``[M, ...]`` -> ``[M]``).

    ``g`` is a parameter's ``.grad``: None when the backward pass never reached it, which stops the fixture.
    """
    if g is None:
        raise FixtureError(FIXTURE, "a weight of the stack received no gradient from the backward pass")
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


@dataclass(frozen=True)
class ArmResult:
    """One trained arm: its losses at every rate and recorded step, ``[rates, steps]`` of measured results."""

    losses: tuple[tuple[Measurement, ...], ...]

    @property
    def chosen(self) -> int:
        """The rate whose median final loss is lowest."""
        return min(range(len(RATES)), key=lambda r: self.losses[r][-1].median)

    def at(self, step: int) -> Measurement:
        return self.losses[self.chosen][RECORDED.index(step)]


# region: train-arm
def train_arm(c: Constants, data: Dataset, draws: list[BlockDraws], arm: str) -> ArmResult:
    """Every rate of the sweep, every seed and every twin of one arm, side by side in one run."""
    per_rate = len(draws)
    models = build(c, draws * len(RATES), LAYOUT_OF[arm], TRAIN_DEPTH)
    optimizer = Adam(models.parameters(), lr=rates_side_by_side(RATES, per_rate))
    history = train(
        lambda: models.losses(data), optimizer, steps=STEPS, every=EVERY, fixture=FIXTURE, warmup=WARMUP_OF[arm]
    )
    return ArmResult(
        tuple(
            tuple(measured(row[r * per_rate : (r + 1) * per_rate], what=arm) for row in history.losses)
            for r in range(len(RATES))
        )
    )


# endregion: train-arm


def profile_depth(c: Constants, data: Dataset, draws: list[BlockDraws], depth: int) -> tuple[list[Profile], Start]:
    """Both layouts at one depth at initialization, every profile seed beside its twin."""
    blocks, inputs = {}, {}
    for layout in STACKS:
        blocks[layout], inputs[layout] = gradient_profile(build(c, draws, layout, depth), data)
    what = f"the profile at {depth} blocks"
    one = Measurement(1.0, 1.0, 1.0, 0.0, 0.0)  # a ratio of one, exact
    profiles = [
        Profile(depth, b + 1, measured(blocks["pre"][b], what=what), measured(blocks["post"][b], what=what))
        for b in range(depth)
    ]
    ratio = measured(inputs["pre"] / inputs["post"], what=what)
    pre_growth = measured(blocks["pre"][-1] / blocks["pre"][0], what=what)
    post_growth = measured(blocks["post"][-1] / blocks["post"][0], what=what)
    start = Start(
        depth,
        measured(inputs["pre"], what=what),
        measured(inputs["post"], what=what),
        ratio,
        pre_growth,
        post_growth,
        compare(ratio, one) != "indistinguishable",
        compare(pre_growth, one) != "indistinguishable",
        compare(post_growth, one) != "indistinguishable",
    )
    return profiles, start


def run(c: Constants = Constants()) -> Run:
    c.check()
    data = c.task.dataset()
    profile_draws = with_twins([seed_draws(c, s) for s in PROFILE_SEEDS])
    profiles: list[Profile] = []
    starts: list[Start] = []
    for depth in PROFILE_DEPTHS:
        rows, start = profile_depth(c, data, profile_draws, depth)
        profiles += rows
        starts.append(start)
    draws = with_twins([seed_draws(c, s) for s in SEEDS])
    results = {arm: train_arm(c, data, draws, arm) for arm in ARMS}
    sweeps = tuple(
        Sweep(arm, rate, r.losses[i][-1], i == r.chosen, compare(r.losses[i][-1], r.losses[r.chosen][-1]) == "higher")
        for arm, r in results.items()
        for i, rate in enumerate(RATES)
    )
    curves = tuple(Curve(step, *(results[arm].at(step) for arm in ARMS)) for step in RECORDED)
    bar = c.task.record().chance_loss / c.fit_divisor
    line = Measurement(bar, bar, bar, 0.0, 0.0)  # the bar itself, exact
    versus = tuple(
        Versus(arm, other, b, compare(results[arm].at(b), results[other].at(b)) != "indistinguishable")
        for arm, other in PAIRS
        for b in BUDGETS
    )
    arms = tuple(
        ArmLine(
            arm,
            RATES[r.chosen],
            compare(r.at(BUDGETS[0]), line) == "lower",
            compare(r.at(BUDGETS[-1]), line) == "lower",
            compare(r.at(BUDGETS[-1]), r.at(BUDGETS[0])) == "lower",
        )
        for arm, r in results.items()
    )
    count = parameter_count(build(c, draws[:1], "pre", TRAIN_DEPTH))
    trace = Trace(
        task=c.task.record(),
        setup=Setup(
            c.width,
            c.eps,
            count,
            TRAIN_DEPTH,
            STEPS,
            BUDGETS[0],
            EVERY,
            WARMUP,
            len(SEEDS),
            len(PROFILE_SEEDS),
            len(RATES),
            bar,
        ),
        profiles=tuple(profiles),
        starts=tuple(starts),
        sweeps=sweeps,
        curves=curves,
        versus=versus,
        arms=arms,
    )
    at_edge = sum(r.chosen in (0, len(RATES) - 1) for r in results.values())
    derived: dict[str, object] = {
        "DERIVED.points": len(data.labels),
        "DERIVED.budgets": BUDGETS,
        "DERIVED.sweep.at-edge": at_edge,
        "DERIVED.sweep.arms": len(results),
    }
    return Run(trace, derived)
