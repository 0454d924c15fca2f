"""Other skip patterns: a residual stack, a highway stack and a dense (concatenating) stack of the same depth.

All three use the same branch, ``F(h) = ReLU(h W1) W2``. The residual stack adds
it to the stream; the highway stack mixes it with the stream through a learned
gate; the dense stack appends it to everything computed before, so its features
grow wider with every block. The fixtures count each stack's weights and the
width its read-out receives, measure how much it multiplies a gradient on the
way down at initialization, and train all three at one depth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, concat, parameter
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
    side_by_side,
    train,
)

from .trace import (
    DEPTHS,
    EVERY,
    INIT_SEEDS,
    PATTERNS,
    RECORDED,
    SEEDS,
    STEPS,
    TRAIN_DEPTH,
    Curve,
    Final,
    Setup,
    Shape,
    Trace,
)

FIXTURE = "skip-patterns"


@dataclass(frozen=True)
class Constants:
    task: SpiralTask = SPIRALS
    width: int = 16
    growth: int = 8
    gate_bias: float = -2.0
    learning_rate: float = 3e-3
    upstream_seed: int = 0

    def check(self) -> None:
        self.task.check(FIXTURE)
        check_constants(FIXTURE, self, "gate_bias", "learning_rate")


@dataclass
class Block:
    """One block's weights, ``[M, ...]`` for the models side by side; ``gate`` and ``gate_bias`` only in a highway."""

    first: Tensor
    second: Tensor
    gate: Tensor | None = None
    gate_bias: Tensor | None = None

    def parameters(self) -> list[Tensor]:
        return [w for w in (self.first, self.second, self.gate, self.gate_bias) if w is not None]


# region: patterns
def branch(h: Tensor, b: Block) -> Tensor:
    return (h @ b.first).relu() @ b.second


def residual_stack(h: Tensor, blocks: list[Block]) -> Tensor:
    for b in blocks:
        h = residual_add(h, branch(h, b))  # add the branch to the stream
    return h


def highway_stack(h: Tensor, blocks: list[Block]) -> Tensor:
    for b in blocks:
        t = (h @ b.gate + b.gate_bias).sigmoid()  # how much of the branch to let through, per feature
        h = t * branch(h, b) + (1.0 - t) * h  # the rest of the stream is carried
    return h


def dense_stack(h: Tensor, blocks: list[Block]) -> Tensor:
    for b in blocks:
        h = concat([h, branch(h, b)], axis=-1)  # keep everything, append the branch's features
    return h


# endregion: patterns


STACKS = {"residual": residual_stack, "highway": highway_stack, "dense": dense_stack}


def top_width(c: Constants, pattern: str, depth: int) -> int:
    return c.width + depth * c.growth if pattern == "dense" else c.width


@dataclass
class Models:
    """Every seed's stack of one pattern and depth, side by side."""

    ends: Ends
    blocks: list[Block]
    pattern: str

    def parameters(self) -> list[Tensor]:
        return [*self.ends.parameters(), *(w for b in self.blocks for w in b.parameters())]

    def block_parameters(self) -> int:
        """Weights and biases in the blocks of one model."""
        return sum(int(np.prod(w.shape[1:])) for b in self.blocks for w in b.parameters())

    def losses(self, data: Dataset) -> Tensor:
        return cross_entropy_per_model(
            self.ends.logits(STACKS[self.pattern](self.ends.embed(data.inputs), self.blocks)), data.labels
        )


def draw(c: Constants, seed: int, pattern: str, depth: int) -> tuple[EndsDraw, list[dict[str, np.ndarray]]]:
    """One seed's weights for one pattern and depth, drawn in order: embedding, every block, read-out.

    Every weight is standard normal times He's standard deviation for what it reads (a ReLU's output or not).
    The residual branch's last layer is further multiplied by 1/sqrt(2 depth), as on the degradation page;
    the highway gate's bias starts at ``gate_bias`` for every feature.
    """
    rng = np.random.default_rng(seed)
    embed = rng.standard_normal((2, c.width)) * he_std(2, after_relu=False)
    blocks = []
    for l in range(depth):
        reads = c.width + l * c.growth if pattern == "dense" else c.width
        out = c.growth if pattern == "dense" else c.width
        block = {
            "first": rng.standard_normal((reads, c.width)) * he_std(reads, after_relu=False),
            "second": rng.standard_normal((c.width, out)) * he_std(c.width, after_relu=True),
        }
        if pattern == "residual":
            block["second"] = block["second"] / math.sqrt(2.0 * depth)
        if pattern == "highway":
            block["gate"] = rng.standard_normal((c.width, c.width)) * he_std(c.width, after_relu=False)
            block["gate_bias"] = np.full((1, c.width), c.gate_bias)
        blocks.append(block)
    width = top_width(c, pattern, depth)
    readout = rng.standard_normal((width, 2)) * he_std(width, after_relu=False)
    return EndsDraw(embed, readout), blocks


def build(c: Constants, seeds: tuple[int, ...], pattern: str, depth: int) -> Models:
    draws = [draw(c, s, pattern, depth) for s in seeds]
    name = f"{pattern}.{depth}"
    blocks = []
    for l in range(depth):
        weights = {
            k: parameter(side_by_side([d[1][l][k] for d in draws]), name=f"{name}.block.{l}.{k}")
            for k in draws[0][1][l]
        }
        blocks.append(Block(**weights))
    return Models(Ends([d[0] for d in draws], name=name), blocks, pattern)


def per_model_norm(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(x * x, axis=(1, 2)))


# region: at-init
def gradient_growth(c: Constants, models: Models, data: Dataset) -> np.ndarray:
    """Per model: |gradient reaching the stack's input| / |gradient sent into its top|, for a fixed random
    gradient at the top (as wide as the top, whatever the pattern)."""
    bottom = parameter(models.ends.embed(data.inputs).data, name="stack.input")
    top = STACKS[models.pattern](bottom, models.blocks)
    upstream = np.random.default_rng(c.upstream_seed).standard_normal(top.shape)
    top.backward_with_seed(upstream)
    assert bottom.grad is not None
    return per_model_norm(bottom.grad) / per_model_norm(upstream)


# endregion: at-init


def run(c: Constants = Constants()) -> Run:
    c.check()
    data = c.task.dataset()
    shapes = []
    for pattern in PATTERNS:
        for depth in DEPTHS:
            models = build(c, INIT_SEEDS, pattern, depth)
            growth = gradient_growth(c, models, data)
            shapes.append(
                Shape(
                    pattern,
                    depth,
                    top_width(c, pattern, depth),
                    models.block_parameters(),
                    float(np.exp(np.mean(np.log(growth)))),
                )
            )
    curves, finals = {}, {}
    for pattern in PATTERNS:
        models = build(c, SEEDS, pattern, TRAIN_DEPTH)
        history = train(
            lambda: models.losses(data),
            Adam(models.parameters(), lr=c.learning_rate),
            steps=STEPS,
            every=EVERY,
            fixture=FIXTURE,
        )
        curves[pattern], finals[pattern] = history.losses.mean(axis=1), history.final
    trace = Trace(
        task=c.task.record(),
        setup=Setup(
            c.width, c.growth, c.gate_bias, c.learning_rate, STEPS, EVERY, TRAIN_DEPTH, len(SEEDS), len(INIT_SEEDS)
        ),
        shapes=tuple(shapes),
        curves=tuple(Curve(step, **{p: float(curves[p][i]) for p in PATTERNS}) for i, step in enumerate(RECORDED)),
        finals=tuple(Final(seed, **{p: float(finals[p][i]) for p in PATTERNS}) for i, seed in enumerate(SEEDS)),
    )
    carry = 1.0 - 1.0 / (1.0 + math.exp(-c.gate_bias))  # 1 - sigmoid(gate bias): the carry gate at initialization
    derived: dict[str, object] = {
        "DERIVED.points": len(data.labels),
        "DERIVED.highway-carry": carry,
        "DERIVED.chart.depths": DEPTHS,
    }
    for depth in DEPTHS:
        derived[f"DERIVED.depth-{depth}.carry-power"] = carry**depth
        rows = {s.pattern: s for s in shapes if s.depth == depth}
        derived[f"DERIVED.depth-{depth}.dense-over-residual"] = rows["dense"].parameters / rows["residual"].parameters
    ranked = sorted(PATTERNS, key=lambda p: curves[p][-1])
    derived["DERIVED.ranked"] = tuple(ranked)
    return Run(trace, derived)
