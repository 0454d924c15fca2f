"""Initializations that start at the identity: five schemes for one residual MLP stack.

Every scheme starts from the same He draws of a seed and multiplies each block's first and second layer by its
own factors; ReZero also multiplies each branch by a learned gate that starts at zero. At initialization the
fixtures measure how much the stack scales the stream on the way up and a gradient on the way down, at several
depths. Then they train every scheme at one depth at every learning rate of a small sweep, every seed beside its
twin (one initial weight one ulp larger, ``tasks.with_twins``), each scheme's rates and seeds side by side in
one run; the page reports each scheme at the rate whose median final loss is lowest, and every rate in a table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter
from site_builder.measure import compare
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
    measured,
    rates_side_by_side,
    side_by_side,
    train,
    with_twins,
)
from site_builder.trace.numbers import Measurement

from .trace import (
    BUDGETS,
    DEPTHS,
    EVERY,
    INIT_SEEDS,
    RATES,
    RECORDED,
    SCHEMES,
    SEEDS,
    STEPS,
    TRAIN_DEPTH,
    Curve,
    Rank,
    Setup,
    Start,
    Sweep,
    Trace,
    VersusHe,
    column,
)

FIXTURE = "init-schemes"
BRANCH_LAYERS = 2  # F(h) = ReLU(h W1) W2


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    width: int = 16
    upstream_seed: int = 0  # the generator of the gradient sent into the top of the stack at initialization

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "width", "upstream_seed")


def seed_draws(c: Constants, seed: int) -> BlockDraws:
    """One seed's draws, enough blocks for the deepest stack."""
    return block_draws(seed, width=c.width, blocks=max(DEPTHS))


# region: schemes
def factors(scheme: str, depth: int) -> tuple[float, float]:
    """The factors on He's draws of each block's first and second layer, for a stack of ``depth`` blocks."""
    if scheme in ("he", "rezero"):
        return 1.0, 1.0  # He's draws as they are (ReZero gates the branch instead)
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
    """Every draw's stack of one scheme and depth, side by side."""

    ends: Ends
    blocks: list[tuple[Tensor, Tensor]]
    gates: list[Tensor] | None

    def parameters(self) -> list[Tensor]:
        return [*self.ends.parameters(), *(w for pair in self.blocks for w in pair), *(self.gates or [])]

    def losses(self, data: Dataset) -> Tensor:
        return cross_entropy_per_model(
            self.ends.logits(stack(self.ends.embed(data.inputs), self.blocks, self.gates)), data.labels
        )


def build(draws: Sequence[BlockDraws], scheme: str, depth: int) -> Models:
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


# region: train-one
def train_scheme(data: Dataset, draws: list[BlockDraws], scheme: str) -> list[list[Measurement]]:
    """Every rate of the sweep, every seed and every twin of one scheme side by side in one run; per rate, the
    measured loss at every recorded step."""
    per_rate = len(draws)  # the seeds, then their twins
    models = build(draws * len(RATES), scheme, TRAIN_DEPTH)
    optimizer = Adam(models.parameters(), lr=rates_side_by_side(RATES, per_rate))
    history = train(lambda: models.losses(data), optimizer, steps=STEPS, every=EVERY, fixture=FIXTURE)
    return [
        [measured(row[r * per_rate : (r + 1) * per_rate], what=f"{scheme} at rate {rate:g}") for row in history.losses]
        for r, rate in enumerate(RATES)
    ]


# endregion: train-one


def chosen_rate(losses: list[list[Measurement]]) -> int:
    """The rate whose median final loss is lowest."""
    return min(range(len(RATES)), key=lambda r: losses[r][-1].median)


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
    draws = with_twins([block_draws(s, width=c.width, blocks=TRAIN_DEPTH) for s in SEEDS])
    trained = {s: train_scheme(data, draws, s) for s in SCHEMES}
    chosen = {s: chosen_rate(trained[s]) for s in SCHEMES}

    def at(scheme: str, step: int) -> Measurement:
        return trained[scheme][chosen[scheme]][RECORDED.index(step)]

    sweeps = tuple(
        Sweep(s, rate, trained[s][r][-1], r == chosen[s], compare(trained[s][r][-1], trained[s][chosen[s]][-1]))
        for s in SCHEMES
        for r, rate in enumerate(RATES)
    )
    curves = tuple(Curve(step, **{column(s): at(s, step) for s in SCHEMES}) for step in RECORDED)
    ranks: list[Rank] = []
    for budget in BUDGETS:
        best = min(SCHEMES, key=lambda s: at(s, budget).median)
        ranks.extend(
            Rank(budget, s, "lowest" if s == best else compare(at(s, budget), at(best, budget))) for s in SCHEMES
        )
    versus = tuple(
        VersusHe(budget, s, compare(at(s, budget), at("he", budget)))
        for budget in BUDGETS
        for s in SCHEMES
        if s != "he"
    )
    trace = Trace(
        task=c.task.record(),
        setup=Setup(c.width, BRANCH_LAYERS, STEPS, EVERY, TRAIN_DEPTH, len(SEEDS), len(RATES), len(INIT_SEEDS)),
        starts=tuple(starts),
        sweeps=sweeps,
        curves=curves,
        ranks=tuple(ranks),
        versus_he=versus,
    )
    he_deep = next(s for s in starts if s.scheme == "he" and s.depth == max(DEPTHS))
    he_train = next(s for s in starts if s.scheme == "he" and s.depth == TRAIN_DEPTH)
    derived.update(
        {
            "DERIVED.points": len(data.labels),
            "DERIVED.schemes": SCHEMES,
            "DERIVED.budgets": BUDGETS,
            "DERIVED.sweep.at-edge": sum(r in (0, len(RATES) - 1) for r in chosen.values()),
            "DERIVED.fixup-exponent": -1.0 / (2 * BRANCH_LAYERS - 2),
            "DERIVED.sqrt-two": round(math.sqrt(2.0), 2),
            "DERIVED.scaled-last-limit": round(math.exp(0.25), 2),  # (1 + 1/(2L))^(L/2) as L grows
            # What the prose says in round numbers; the table keeps every digit.
            "DERIVED.he.per-block": round(he_deep.forward ** (1.0 / he_deep.depth), 2),
            "DERIVED.he.deep-forward-decade": 10.0 ** round(math.log10(he_deep.forward)),
            "DERIVED.he.deep-backward-decade": 10.0 ** round(math.log10(he_deep.backward)),
            "DERIVED.he.train-forward": round(he_train.forward),
        }
    )
    return Run(trace, derived)
