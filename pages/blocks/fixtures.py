"""What one block of a trained stack does: delete it and measure; and depth against width at equal weight counts.

Every stack is built from the same block, ``F(h) = ReLU(N(h) W1) W2``, where ``N`` is RMSNorm without a learned
gain (chapter 25's normalization): the *residual* stack adds it to the stream, ``h <- h + F(h)``; the *plain* stack
replaces the stream with it, ``h <- F(h)``, so its signal is normalized at the entry of every block and it trains.
Both stacks of the lesion start from the same draws of a seed and have the same weights: the identity path is
their only difference.

Each stack trains at every learning rate of a small sweep, all side by side with every seed and every seed's twin
(one initial weight one ulp larger, ``tasks.with_twins``), and is reported at the rate whose median final loss is
lowest. Then, with no further training, each block of every stack is deleted in turn (the stream goes past it
unchanged: ``h <- h``), and the loss and the accuracy are measured again. The residual stacks of the second
part have nearly equal weight counts: fewer, wider blocks or more, narrower ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter
from site_builder.measure import compare
from site_builder.nn import Adam, residual_add, rms_norm
from site_builder.run import Run, check_constants
from site_builder.tasks import (
    SPIRALS,
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
    KINDS,
    LESION_DEPTH,
    LESION_WIDTH,
    RATES,
    SEEDS,
    SHAPES,
    STACKS,
    STEPS,
    Averaged,
    Lesion,
    Setup,
    Shape,
    Survival,
    Sweep,
    Trace,
    Trained,
)

FIXTURE = "blocks"


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    eps: float = 1e-5  # added to the mean square in every normalization

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "eps")


Blocks = list[tuple[Tensor, Tensor]]


# region: stacks
def branch(h: Tensor, first: Tensor, second: Tensor, eps: float) -> Tensor:
    normalized = rms_norm(h, np.ones(h.shape[-1]), eps)  # every block reads its input normalized
    return (normalized @ first).relu() @ second


def stack(kind: str, h: Tensor, blocks: Blocks, eps: float, deleted: int | None = None) -> Tensor:
    for index, (first, second) in enumerate(blocks):
        if index == deleted:
            continue  # a deleted block: the stream goes past it unchanged
        if kind == "residual":
            h = residual_add(h, branch(h, first, second, eps))  # the block adds to the stream
        else:
            h = branch(h, first, second, eps)  # the block replaces the stream
    return h


# endregion: stacks


@dataclass
class Models:
    """Every model of one stack side by side: every rate, and at each rate every seed, then its twin."""

    kind: str
    ends: Ends
    blocks: Blocks
    eps: float

    def parameters(self) -> list[Tensor]:
        return [*self.ends.parameters(), *(w for pair in self.blocks for w in pair)]

    def logits(self, data: Dataset, deleted: int | None = None) -> Tensor:
        return self.ends.logits(stack(self.kind, self.ends.embed(data.inputs), self.blocks, self.eps, deleted))

    def losses(self, data: Dataset, deleted: int | None = None) -> Tensor:
        return cross_entropy_per_model(self.logits(data, deleted), data.labels)

    def scores(self, data: Dataset, deleted: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Each model's loss and accuracy (the fraction of the points it classifies right), ``[M]`` each."""
        logits = self.logits(data, deleted)
        right = np.argmax(logits.data, axis=-1) == data.labels
        return cross_entropy_per_model(logits, data.labels).data, np.mean(right, axis=-1)

    def accuracies(self, data: Dataset, deleted: int | None = None) -> np.ndarray:
        return self.scores(data, deleted)[1]


def build(c: Constants, kind: str, depth: int, width: int, models: int) -> Models:
    """``models`` copies of the draws of every seed and its twin, in that order (one copy per rate)."""
    draws = with_twins([block_draws(seed, width=width, blocks=depth) for seed in SEEDS]) * models
    name = f"{kind}.{depth}x{width}"
    blocks = [
        (
            parameter(side_by_side([d.first[l] for d in draws]), name=f"{name}.block.{l}.first"),
            parameter(side_by_side([d.second[l] for d in draws]), name=f"{name}.block.{l}.second"),
        )
        for l in range(depth)
    ]
    return Models(kind, Ends([d.ends for d in draws], name=name), blocks, c.eps)


def parameter_count(models: Models) -> int:
    """The weights and biases of one model (the size of every parameter without its leading models axis)."""
    return sum(int(np.prod(p.shape[1:])) for p in models.parameters())


@dataclass(frozen=True)
class StackResult:
    """One stack trained at every rate: each rate's final loss, the chosen rate, and what it measured there."""

    kind: str
    depth: int
    width: int
    parameters: int
    finals: tuple[Measurement, ...]
    chosen: int
    loss: Measurement
    accuracy: Measurement
    lesions: tuple[tuple[Measurement, Measurement], ...]  # (loss, accuracy) with each block deleted in turn
    lesioned: Measurement  # each model's accuracy with one block deleted, averaged over which block


# region: train-and-lesion
def train_stack(c: Constants, data: Dataset, kind: str, depth: int, width: int) -> StackResult:
    """Every rate of the sweep, every seed and every twin of one stack, side by side in one run; then, at the
    chosen rate, every block deleted in turn, with no further training."""
    per_rate = 2 * len(SEEDS)
    models = build(c, kind, depth, width, len(RATES))
    optimizer = Adam(models.parameters(), lr=rates_side_by_side(RATES, per_rate))
    history = train(lambda: models.losses(data), optimizer, steps=STEPS, every=STEPS, fixture=FIXTURE)
    what = f"{kind} stack of {depth} blocks of width {width}"
    finals = tuple(measured(history.final[r * per_rate : (r + 1) * per_rate], what=what) for r in range(len(RATES)))
    chosen = min(range(len(RATES)), key=lambda r: finals[r].median)
    rows = slice(chosen * per_rate, (chosen + 1) * per_rate)

    scores = [models.scores(data, deleted) for deleted in (None, *range(depth))]  # intact, then each block deleted
    (loss, accuracy), *lesions = [(measured(l[rows], what=what), measured(a[rows], what=what)) for l, a in scores]
    lesioned = measured(np.mean([a[rows] for _, a in scores[1:]], axis=0), what=what)
    return StackResult(
        kind, depth, width, parameter_count(models), finals, chosen, loss, accuracy, tuple(lesions), lesioned
    )


# endregion: train-and-lesion


def run(c: Constants = Constants()) -> Run:
    c.check()
    data = c.task.dataset()
    results = {(kind, depth, width): train_stack(c, data, kind, depth, width) for kind, depth, width in STACKS}
    sweeps = tuple(
        Sweep(kind, depth, width, rate, r.finals[i], i == r.chosen, compare(r.finals[i], r.finals[r.chosen]))
        for (kind, depth, width), r in results.items()
        for i, rate in enumerate(RATES)
    )
    trained = tuple(
        Trained(kind, depth, width, r.parameters, RATES[r.chosen], r.loss, r.accuracy, r.lesioned)
        for (kind, depth, width), r in results.items()
    )
    lesioned = {kind: results[(kind, LESION_DEPTH, LESION_WIDTH)] for kind in KINDS}
    lesions = tuple(
        Lesion(kind, block + 1, loss, accuracy, compare(accuracy, lesioned[kind].accuracy))
        for kind in KINDS
        for block, (loss, accuracy) in enumerate(lesioned[kind].lesions)
    )
    survival = tuple(
        Survival(block + 1, compare(lesioned["residual"].lesions[block][1], lesioned["plain"].lesions[block][1]))
        for block in range(LESION_DEPTH)
    )
    shaped = [results[("residual", depth, width)] for depth, width in SHAPES]
    best = min(shaped, key=lambda r: r.loss.median)
    deepest = shaped[-1]
    shapes = tuple(
        Shape(r.depth, r.width, compare(r.loss, best.loss), compare(r.lesioned, deepest.lesioned)) for r in shaped
    )
    trace = Trace(
        task=c.task.record(),
        setup=Setup(STEPS, len(SEEDS), len(RATES), LESION_DEPTH, LESION_WIDTH),
        sweeps=sweeps,
        trained=trained,
        lesions=lesions,
        survival=survival,
        averaged=Averaged(compare(lesioned["residual"].lesioned, lesioned["plain"].lesioned)),
        shapes=shapes,
    )
    counts = [r.parameters for r in shaped]

    def block_where(kind: str, lowest: bool) -> int:
        """The block whose deletion left the stack of ``kind`` its lowest (or highest) median accuracy."""
        ranked = sorted((l for l in lesions if l.kind == kind), key=lambda l: l.accuracy.median)
        return ranked[0 if lowest else -1].block

    at_edge = sum(r.chosen in (0, len(RATES) - 1) for r in results.values())
    derived: dict[str, object] = {
        "DERIVED.points": len(data.labels),
        "DERIVED.chance-accuracy": 1.0 / data.classes,
        "DERIVED.shapes.count": len(SHAPES),
        "DERIVED.shapes.fewest": min(counts),
        "DERIVED.shapes.most": max(counts),
        "DERIVED.shapes.spread-percent": (max(counts) - min(counts)) / min(counts),
        "DERIVED.best-shape.depth": best.depth,
        "DERIVED.best-shape.width": best.width,
        "DERIVED.lesion.residual-hurt": sum(l.versus_intact == "lower" for l in lesions if l.kind == "residual"),
        "DERIVED.lesion.residual-ahead": sum(s.residual == "higher" for s in survival),
        "DERIVED.lesion.residual-worst": block_where("residual", lowest=True),
        "DERIVED.lesion.residual-best": block_where("residual", lowest=False),
        "DERIVED.lesion.plain-worst": block_where("plain", lowest=True),
        "DERIVED.lesion.plain-best": block_where("plain", lowest=False),
        "DERIVED.sweep.stacks": len(results),
        "DERIVED.sweep.at-edge": at_edge,
    }
    return Run(trace, derived)
