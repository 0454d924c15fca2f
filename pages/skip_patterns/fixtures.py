"""Other skip patterns: residual, projection, highway and dense (concatenating) stacks built from one branch.

All of them use the same branch, ``F(h) = ReLU(h W1) W2``. The residual stack adds it to the stream; the
projection stack adds it to a learned linear map of the stream instead of the stream itself; the highway stack
mixes it with the stream through a learned gate; the dense stack appends it to everything computed before, so
its features grow wider with every block, and the narrow dense stack does the same with fewer new features per
block, as few as keep its weights close to the residual stack's. The fixtures count each stack's weights and the
width its read-out receives, measure how much it multiplies a gradient on the way down at initialization, and
train every stack at one depth, at every learning rate of a small sweep, every seed beside its twin (one initial
weight one ulp larger, ``tasks.measured``), reporting each at the rate whose median final loss is lowest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, concat, parameter
from site_builder.measure import compare, nudge
from site_builder.nn import Adam, residual_add
from site_builder.run import Run, check_constants
from site_builder.tasks import (
    SPIRALS,
    Dataset,
    Ends,
    EndsDraw,
    SpiralTask,
    cross_entropy_per_model,
    he_std,
    measured,
    rates_side_by_side,
    side_by_side,
    train,
)
from site_builder.trace.numbers import Measurement

from .trace import (
    BUDGETS,
    DEPTHS,
    EVERY,
    PATTERNS,
    RATES,
    RECORDED,
    RIVALS,
    SEEDS,
    STEPS,
    TRAIN_DEPTH,
    Arm,
    Curve,
    Setup,
    Shape,
    Sweep,
    Trace,
    Versus,
    column,
)

FIXTURE = "skip-patterns"


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    width: int = 16
    growth: int = 8
    gate_bias: float = -2.0
    upstream_seed: int = 0

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "gate_bias")


@dataclass
class Block:
    """One block's weights, ``[M, ...]`` for the models side by side; ``shortcut`` only in a projection stack,
    ``gate`` and ``gate_bias`` only in a highway."""

    first: Tensor
    second: Tensor
    shortcut: Tensor | None = None
    gate: Tensor | None = None
    gate_bias: Tensor | None = None

    def parameters(self) -> list[Tensor]:
        return [w for w in (self.first, self.second, self.shortcut, self.gate, self.gate_bias) if w is not None]


# region: patterns
def branch(h: Tensor, b: Block) -> Tensor:
    return (h @ b.first).relu() @ b.second


def residual_stack(h: Tensor, blocks: list[Block]) -> Tensor:
    for b in blocks:
        h = residual_add(h, branch(h, b))  # add the branch to the stream
    return h


def projection_stack(h: Tensor, blocks: list[Block]) -> Tensor:
    for b in blocks:
        assert b.shortcut is not None
        h = h @ b.shortcut + branch(h, b)  # add the branch to a learned map of the stream
    return h


def highway_stack(h: Tensor, blocks: list[Block]) -> Tensor:
    for b in blocks:
        assert b.gate is not None and b.gate_bias is not None
        t = (h @ b.gate + b.gate_bias).sigmoid()  # how much of the branch to let through, per feature
        h = t * branch(h, b) + (1.0 - t) * h  # the rest of the stream is carried
    return h


def dense_stack(h: Tensor, blocks: list[Block]) -> Tensor:
    for b in blocks:
        h = concat([h, branch(h, b)], axis=-1)  # keep everything, append the branch's features
    return h


# endregion: patterns


STACKS = {
    "residual": residual_stack,
    "projection": projection_stack,
    "highway": highway_stack,
    "dense": dense_stack,
    "narrow-dense": dense_stack,
}
DENSE = ("dense", "narrow-dense")


def block_count(c: Constants, pattern: str, depth: int, growth: int) -> int:
    """Weights and biases in the blocks of one model."""
    if pattern in DENSE:
        return sum((c.width + l * growth) * c.width + c.width * growth for l in range(depth))
    per_block = {"residual": 2, "projection": 3, "highway": 3}[pattern] * c.width * c.width
    return depth * (per_block + (c.width if pattern == "highway" else 0))


def top_width(c: Constants, pattern: str, depth: int, growth: int) -> int:
    return c.width + depth * growth if pattern in DENSE else c.width


def model_count(c: Constants, pattern: str, depth: int, growth: int) -> int:
    """Every weight and bias of one model: embedding (two inputs) and read-out (two classes) with biases, and the blocks."""
    top = top_width(c, pattern, depth, growth)
    return 2 * c.width + c.width + block_count(c, pattern, depth, growth) + top * 2 + 2


def narrow_growth(c: Constants) -> int:
    """The growth of the narrow dense stack: the one whose model, at the trained depth, holds the number of weights
    closest to the residual stack's (the smaller growth on a tie)."""
    target = model_count(c, "residual", TRAIN_DEPTH, 0)
    return min(range(1, c.growth + 1), key=lambda k: (abs(model_count(c, "dense", TRAIN_DEPTH, k) - target), k))


def growth_of(c: Constants, pattern: str) -> int:
    return {"dense": c.growth, "narrow-dense": narrow_growth(c)}.get(pattern, 0)


@dataclass
class Models:
    """Every model of one pattern and depth, side by side."""

    ends: Ends
    blocks: list[Block]
    pattern: str

    def parameters(self) -> list[Tensor]:
        return [*self.ends.parameters(), *(w for b in self.blocks for w in b.parameters())]

    def block_parameters(self) -> int:
        """Weights and biases in the blocks of one model."""
        return sum(int(np.prod(w.shape[1:])) for b in self.blocks for w in b.parameters())

    def model_parameters(self) -> int:
        """Every weight and bias of one model."""
        return sum(int(np.prod(w.shape[1:])) for w in self.parameters())

    def losses(self, data: Dataset) -> Tensor:
        return cross_entropy_per_model(
            self.ends.logits(STACKS[self.pattern](self.ends.embed(data.inputs), self.blocks)), data.labels
        )


Draw = tuple[EndsDraw, list[dict[str, np.ndarray]]]


def draw(c: Constants, seed: int, pattern: str, depth: int) -> Draw:
    """One seed's weights for one pattern and depth, drawn in order: embedding, every block, read-out.

    Every weight is standard normal times He's standard deviation for what it reads (a ReLU's output or not).
    The residual and projection branches' last layer is further multiplied by 1/sqrt(2 depth), as on the
    degradation page; the highway gate's bias starts at ``gate_bias`` for every feature.
    """
    rng = np.random.default_rng(seed)
    growth = growth_of(c, pattern)
    embed = rng.standard_normal((2, c.width)) * he_std(2, after_relu=False)
    blocks = []
    for l in range(depth):
        reads = c.width + l * growth if pattern in DENSE else c.width
        out = growth if pattern in DENSE else c.width
        block = {
            "first": rng.standard_normal((reads, c.width)) * he_std(reads, after_relu=False),
            "second": rng.standard_normal((c.width, out)) * he_std(c.width, after_relu=True),
        }
        if pattern in ("residual", "projection"):
            block["second"] = block["second"] / math.sqrt(2.0 * depth)
        if pattern == "projection":
            block["shortcut"] = rng.standard_normal((c.width, c.width)) * he_std(c.width, after_relu=False)
        if pattern == "highway":
            block["gate"] = rng.standard_normal((c.width, c.width)) * he_std(c.width, after_relu=False)
            block["gate_bias"] = np.full((1, c.width), c.gate_bias)
        blocks.append(block)
    width = top_width(c, pattern, depth, growth)
    readout = rng.standard_normal((width, 2)) * he_std(width, after_relu=False)
    return EndsDraw(embed, readout), blocks


def with_twins(draws: list[Draw]) -> list[Draw]:
    """Every seed's draw, then the same draw with the embedding's first weight one ulp larger."""
    return [*draws, *((EndsDraw(nudge(e.embed), e.readout), blocks) for e, blocks in draws)]


def build(draws: list[Draw], pattern: str, depth: int) -> Models:
    name = f"{pattern}.{depth}"
    blocks = []
    for l in range(depth):
        weights = {
            k: parameter(side_by_side([d[1][l][k] for d in draws]), name=f"{name}.block.{l}.{k}")
            for k in draws[0][1][l]
        }
        blocks.append(Block(**weights))
    return Models(Ends([d[0] for d in draws], name=name), blocks, pattern)


def seeded(c: Constants, pattern: str, depth: int, copies: int = 1) -> Models:
    """Every seed and its twin of one pattern and depth, ``copies`` times over (once per learning rate)."""
    return build(with_twins([draw(c, s, pattern, depth) for s in SEEDS]) * copies, pattern, depth)


def per_model_norm(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(x * x, axis=(1, 2)))


# region: at-init
def gradient_growth(c: Constants, models: Models, data: Dataset) -> np.ndarray:
    """Per model: |gradient reaching the stack's input| / |gradient sent into its top|, for one fixed random
    gradient at the top (as wide as the top, whatever the pattern), the same for every model."""
    bottom = parameter(models.ends.embed(data.inputs).data, name="stack.input")
    top = STACKS[models.pattern](bottom, models.blocks)
    one = np.random.default_rng(c.upstream_seed).standard_normal(top.shape[1:])
    upstream = np.broadcast_to(one, top.shape).copy()
    top.backward_with_seed(upstream)
    assert bottom.grad is not None
    return per_model_norm(bottom.grad) / per_model_norm(upstream)


# endregion: at-init


@dataclass(frozen=True)
class Trained:
    """One pattern at the trained depth: the losses of every rate at every recorded step, ``[rates, steps]``, and
    the highest loss each rate's models recorded after the start."""

    parameters: int
    losses: tuple[tuple[Measurement, ...], ...]
    peaks: tuple[Measurement, ...]

    @property
    def chosen(self) -> int:
        """The rate whose median final loss is lowest."""
        return min(range(len(RATES)), key=lambda r: self.losses[r][-1].median)


# region: train-one
def train_pattern(c: Constants, data: Dataset, pattern: str) -> Trained:
    """Every rate of the sweep, every seed and every twin of one pattern, side by side in one run."""
    per_rate = 2 * len(SEEDS)
    models = seeded(c, pattern, TRAIN_DEPTH, copies=len(RATES))
    optimizer = Adam(models.parameters(), lr=rates_side_by_side(RATES, per_rate))
    history = train(lambda: models.losses(data), optimizer, steps=STEPS, every=EVERY, fixture=FIXTURE)
    what = f"{pattern} at {TRAIN_DEPTH} blocks"
    rates = [slice(r * per_rate, (r + 1) * per_rate) for r in range(len(RATES))]
    losses = tuple(tuple(measured(row[s], what=what) for row in history.losses) for s in rates)
    peaks = tuple(measured(history.losses[1:, s].max(axis=0), what=what) for s in rates)
    return Trained(models.model_parameters(), losses, peaks)


# endregion: train-one


def run(c: Constants = Constants()) -> Run:
    c.check()
    data = c.task.dataset()
    shapes = []
    for pattern in PATTERNS:
        for depth in DEPTHS:
            models = seeded(c, pattern, depth)
            growth = gradient_growth(c, models, data)
            shapes.append(
                Shape(
                    pattern,
                    depth,
                    top_width(c, pattern, depth, growth_of(c, pattern)),
                    models.block_parameters(),
                    measured(growth, what=f"{pattern} at {depth} blocks"),
                )
            )
    results = {p: train_pattern(c, data, p) for p in PATTERNS}
    sweeps = tuple(
        Sweep(p, rate, r.losses[i][-1], i == r.chosen, compare(r.losses[i][-1], r.losses[r.chosen][-1]))
        for p, r in results.items()
        for i, rate in enumerate(RATES)
    )

    def at(pattern: str, step: int) -> Measurement:
        r = results[pattern]
        return r.losses[r.chosen][RECORDED.index(step)]

    arms = tuple(
        Arm(p, r.parameters, RATES[r.chosen], r.losses[r.chosen][-1], r.peaks[r.chosen]) for p, r in results.items()
    )
    curves = tuple(Curve(step, **{column(p): at(p, step) for p in PATTERNS}) for step in RECORDED)
    versus = tuple(Versus(p, b, compare(at(p, b), at("residual", b))) for p in RIVALS for b in BUDGETS)
    trace = Trace(
        task=c.task.record(),
        setup=Setup(
            c.width, c.growth, narrow_growth(c), c.gate_bias, STEPS, EVERY, TRAIN_DEPTH, len(SEEDS), len(RATES)
        ),
        shapes=tuple(shapes),
        sweeps=sweeps,
        arms=arms,
        curves=curves,
        versus=versus,
    )
    carry = 1.0 - 1.0 / (1.0 + math.exp(-c.gate_bias))  # 1 - sigmoid(gate bias): the carry gate at initialization
    derived: dict[str, object] = {
        "DERIVED.points": len(data.labels),
        "DERIVED.highway-carry": carry,
        "DERIVED.chart.depths": DEPTHS,
        "DERIVED.budgets": BUDGETS,
        "DERIVED.sweep.at-edge": sum(r.chosen in (0, len(RATES) - 1) for r in results.values()),
        "DERIVED.sweep.stacks": len(results),
    }
    for depth in DEPTHS:
        derived[f"DERIVED.depth-{depth}.carry-power"] = carry**depth
    deep = {s.pattern: s.parameters for s in shapes if s.depth == DEPTHS[-1]}
    backward = {s.pattern: s.backward for s in shapes if s.depth == DEPTHS[-1]}
    # The highway stack passes less than a tenth of what the residual stack passes at the deepest depth, beyond
    # both uncertainties.
    derived["DERIVED.highway-weakens"] = (
        backward["highway"].median + backward["highway"].uncertainty
        < (backward["residual"].median - backward["residual"].uncertainty) / 10
    )
    projection = {s.depth: s.backward for s in shapes if s.pattern == "projection"}
    spans = [projection[d].high / projection[d].low for d in DEPTHS]
    derived["DERIVED.projection-widens"] = all(a < b for a, b in zip(spans, spans[1:]))
    derived["DERIVED.deep.dense-over-residual"] = deep["dense"] / deep["residual"]
    # The stacks one seed of which, at the chosen rate, rose above the loss of a model that has learned nothing
    # after the start, by more than the float path can move it.
    chance = math.log(2.0)
    derived["DERIVED.spiked"] = tuple(a.pattern for a in arms if a.peak.high - a.peak.float_path > chance)
    return Run(trace, derived)
