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

The last two parts train nothing: they measure untrained stacks of ``INIT_DEPTHS`` blocks, every seed and twin
side by side, on the same points. In the first every branch ends in a normalization with a learned gain per
channel, started at zero or at one; in the second each block is either the original residual unit,
``relu(h + N(relu(N(h W1)) W2))``, or the pre-activation unit, ``h + relu(N(relu(N(h)) W1)) W2``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter, tensor
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
    INIT_DEPTHS,
    INIT_WIDTH,
    KINDS,
    LESION_DEPTH,
    LESION_WIDTH,
    RATES,
    SEEDS,
    SHAPES,
    STACKS,
    STEPS,
    UNITS,
    Averaged,
    Gain,
    Lesion,
    Setup,
    Shape,
    Survival,
    Sweep,
    Trace,
    Trained,
    Unit,
    Units,
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


@dataclass(frozen=True)
class Untrained:
    """One untrained stack of the deepest depth, every seed and twin side by side: its weights, ends and input."""

    ends: Ends
    first: list[Tensor]
    second: list[Tensor]
    stream: np.ndarray  # the embedded points, the stack's input ``x``: [M, N, width]


def untrained(data: Dataset) -> Untrained:
    draws = with_twins([block_draws(seed, width=INIT_WIDTH, blocks=max(INIT_DEPTHS)) for seed in SEEDS])
    ends = Ends([d.ends for d in draws], name="untrained")
    first = [tensor(side_by_side([d.first[l] for d in draws])) for l in range(max(INIT_DEPTHS))]
    second = [tensor(side_by_side([d.second[l] for d in draws])) for l in range(max(INIT_DEPTHS))]
    return Untrained(ends, first, second, ends.embed(data.inputs).data)


def norms(values: np.ndarray) -> np.ndarray:
    """Each model's Euclidean norm over the points and the channels: ``[M, N, C]`` -> ``[M]``."""
    return np.sqrt(np.sum(values * values, axis=(1, 2)))


def top_gradient(u: Untrained, data: Dataset, top: Tensor) -> np.ndarray:
    """The gradient of the loss (summed over the models, so each model gets its own) on the stack's output."""
    leaf = parameter(top.data, name="untrained.top")
    cross_entropy_per_model(u.ends.logits(leaf), data.labels).sum().backward()
    assert leaf.grad is not None
    return leaf.grad


# region: zero-gain
def gained_branch(h: Tensor, first: Tensor, second: Tensor, gain: Tensor, eps: float) -> Tensor:
    """The block's branch, ending in a normalization whose learned gain (one per channel) scales what it adds."""
    inner = (rms_norm(h, np.ones(h.shape[-1]), eps) @ first).relu() @ second
    return rms_norm(inner, np.ones(h.shape[-1]), eps) * gain


def gain_stacks(c: Constants, data: Dataset, u: Untrained) -> tuple[Gain, ...]:
    """Every depth is the first blocks of the deepest stack, so one forward pass gives all of them."""
    measures: dict[float, dict[int, tuple[np.ndarray, ...]]] = {}
    for start in (0.0, 1.0):
        shape = (len(u.stream), 1, INIT_WIDTH)  # one gain per channel, per model
        gains = [parameter(np.full(shape, start), name=f"gain.{l}") for l in range(max(INIT_DEPTHS))]
        h = x = tensor(u.stream)
        tops = {}
        for l in range(max(INIT_DEPTHS)):
            h = residual_add(h, gained_branch(h, u.first[l], u.second[l], gains[l], c.eps))
            if l + 1 in INIT_DEPTHS:
                tops[l + 1] = h
        measures[start] = {}
        for depth, top in tops.items():
            moved, growth = norms(top.data - x.data), norms(top.data) / norms(x.data)
            if start == 0.0:  # the gains' gradients: only where they start at zero
                for gain in gains:
                    gain.grad = None
                top.backward_with_seed(top_gradient(u, data, top), retain_graph=True)
                smallest = np.min([norms(g.grad) for g in gains[:depth] if g.grad is not None], axis=0)
                measures[start][depth] = (moved, smallest)
            else:
                measures[start][depth] = (growth,)
    growth = {d: measured(measures[1.0][d][0], what=f"the growth of {d} blocks, every gain one") for d in INIT_DEPTHS}
    return tuple(
        Gain(
            depth,
            float(np.max(measures[0.0][depth][0])),
            measured(measures[0.0][depth][1], what=f"the smallest gain gradient of {depth} blocks"),
            growth[depth],
            compare(growth[depth], growth[min(INIT_DEPTHS)]),
        )
        for depth in INIT_DEPTHS
    )


# endregion: zero-gain


# region: units
def unit(kind: str, h: Tensor, first: Tensor, second: Tensor, eps: float) -> tuple[Tensor, np.ndarray]:
    """One residual unit and, for the original unit, which entries its ReLU after the addition let through."""
    ones = np.ones(h.shape[-1])
    if kind == "original":  # normalize after each weight, a ReLU inside and one after the addition
        added = residual_add(h, rms_norm((rms_norm(h @ first, ones, eps)).relu() @ second, ones, eps))
        return added.relu(), added.data > 0
    # pre-activation: the normalizations and the ReLUs move into the branch; nothing follows the addition
    branch = rms_norm((rms_norm(h, ones, eps)).relu() @ first, ones, eps).relu() @ second
    return residual_add(h, branch), np.ones(h.shape, dtype=bool)


def unit_stacks(c: Constants, data: Dataset, u: Untrained) -> tuple[tuple[Unit, ...], tuple[Units, ...]]:
    rows: dict[tuple[str, int], Unit] = {}
    for kind in UNITS:
        x = parameter(u.stream, name=f"{kind}.input")
        h: Tensor = x
        passed = np.ones(u.stream.shape, dtype=bool)  # through every ReLU after an addition so far
        tops = {}
        for l in range(max(INIT_DEPTHS)):
            h, through = unit(kind, h, u.first[l], u.second[l], c.eps)
            passed = passed & through
            if l + 1 in INIT_DEPTHS:
                tops[l + 1] = (h, passed)
        for depth, (top, through_all) in tops.items():
            x.grad = None
            above = top_gradient(u, data, top)
            top.backward_with_seed(above, retain_graph=True)
            assert x.grad is not None
            what = f"the {kind} unit at {depth} blocks"
            ratio = measured(norms(x.grad) / norms(above), what=what)
            rows[(kind, depth)] = Unit(kind, depth, ratio, measured(np.mean(through_all, axis=(1, 2)), what=what))
    fewest = min(INIT_DEPTHS)
    verdicts = tuple(
        Units(
            depth,
            compare(rows[("pre-activation", depth)].gradient_ratio, rows[("original", depth)].gradient_ratio),
            compare(rows[("original", depth)].passed, rows[("original", fewest)].passed),
        )
        for depth in INIT_DEPTHS
    )
    return tuple(rows[(kind, depth)] for kind in UNITS for depth in INIT_DEPTHS), verdicts


# endregion: units


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
    at_start = untrained(data)
    gains = gain_stacks(c, data, at_start)
    units, unit_verdicts = unit_stacks(c, data, at_start)
    trace = Trace(
        task=c.task.record(),
        setup=Setup(STEPS, len(SEEDS), len(RATES), LESION_DEPTH, LESION_WIDTH),
        sweeps=sweeps,
        trained=trained,
        lesions=lesions,
        survival=survival,
        averaged=Averaged(compare(lesioned["residual"].lesioned, lesioned["plain"].lesioned)),
        shapes=shapes,
        gains=gains,
        units=units,
        unit_verdicts=unit_verdicts,
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
        "DERIVED.init.width": INIT_WIDTH,
        "DERIVED.gain.moved": sum(g.moved != 0.0 for g in gains),  # stacks whose output differs from the input
        "DERIVED.gain.still": sum(g.gain_gradient.low == 0.0 for g in gains),  # a seed with a gain gradient of 0
        "DERIVED.units.shrank": sum(u.gradient_ratio.low < 1.0 for u in units),  # a seed whose gradient shrank
    }
    return Run(trace, derived)
