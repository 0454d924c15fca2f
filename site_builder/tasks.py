"""A small task for the pages that train, and the full-batch loop that trains on it, on our engine.

The task is two interleaved spirals: points in the plane, one spiral arm per
class, generated from a seed. A model embeds a point into a stream of width
``C``, runs it through a page's stack of blocks, and reads two class scores
out; the loss is the cross-entropy of those scores.

Models side by side. A page usually trains several models that differ only in
their random draws (several seeds), so their weights are stacked along a
leading axis: a weight of one model is ``[in, out]``, of ``M`` models
``[M, in, out]``, and the engine's batched ``@`` keeps the models apart. Each
model's loss depends only on its own weights, so the gradient of the summed
loss with respect to them is that model's own gradient, and the optimizers
update every entry on its own: each model trains as it would alone, at the cost
of one computation instead of ``M``.

Everything is float64 and deterministic: data and weights come from seeded
generators and a run is the same sequence of NumPy operations every time, so
the same seed gives the same loss bits in any process.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .autograd import Tensor, parameter, tensor
from .measure import measure, nudge
from .nn import Optimizer, log_softmax
from .run import FixtureError
from .trace.numbers import Measurement
from .training_trace import TaskRecord


@dataclass(frozen=True)
class Dataset:
    """Points ``inputs`` ``[N, 2]`` and their classes ``labels`` ``[N]`` (integers ``0 .. classes - 1``)."""

    inputs: np.ndarray
    labels: np.ndarray
    classes: int


# region: two-spirals
def two_spirals(points_per_arm: int, *, turns: float, noise: float, seed: int, inner: float = 0.15) -> Dataset:
    """Two interleaved spiral arms, class 0 and class 1, ``points_per_arm`` points each.

    Point ``i`` of arm ``k`` sits at ``t = (i + 1/2) / points_per_arm``: radius
    ``inner + (1 - inner) t``, angle ``2π turns t + kπ`` (arm 1 is arm 0 turned
    half a circle), plus Gaussian noise of standard deviation ``noise`` drawn by
    ``np.random.default_rng(seed)``, arm 0 first.
    """
    if points_per_arm < 1:
        raise ValueError(f"two_spirals needs at least one point per arm, got {points_per_arm}")
    rng = np.random.default_rng(seed)
    t = (np.arange(points_per_arm, dtype=np.float64) + 0.5) / points_per_arm
    radius = inner + (1.0 - inner) * t
    arms = []
    for k in (0, 1):
        angle = 2.0 * math.pi * turns * t + k * math.pi
        clean = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
        arms.append(clean + noise * rng.standard_normal((points_per_arm, 2)))
    labels = np.repeat(np.arange(2), points_per_arm)
    return Dataset(np.concatenate(arms), labels, 2)


# endregion: two-spirals


@dataclass(frozen=True)
class SpiralTask:
    """The constants of the spirals every training page uses (one place, so the pages train on the same points)."""

    points_per_arm: int = 64
    turns: float = 1.5
    noise: float = 0.05
    inner_radius: float = 0.15
    seed: int = 0

    def check(self, fixture: str) -> None:
        for name in ("turns", "noise", "inner_radius"):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise FixtureError(fixture, f"the spirals' {name} is {value!r}, not a finite number")

    def dataset(self) -> Dataset:
        return two_spirals(
            self.points_per_arm, turns=self.turns, noise=self.noise, seed=self.seed, inner=self.inner_radius
        )

    def record(self) -> TaskRecord:
        return TaskRecord(self.points_per_arm, self.turns, self.noise, self.inner_radius, self.seed, math.log(2.0))


SPIRALS = SpiralTask()


def he_std(fan_in: int, *, after_relu: bool) -> float:
    """He et al.'s standard deviation: sqrt(2 / fan_in) for a layer that reads a ReLU's output, sqrt(1 / fan_in) otherwise.

    Either way a signal keeps its mean square through the layer at initialization
    (a ReLU zeroes half of a symmetric input, which the factor 2 makes up for).
    """
    return math.sqrt((2.0 if after_relu else 1.0) / fan_in)


@dataclass(frozen=True)
class EndsDraw:
    """One model's embedding ``[inputs, width]`` and read-out ``[width, classes]`` weights."""

    embed: np.ndarray
    readout: np.ndarray


def draw_ends(rng: np.random.Generator, *, inputs: int, width: int, classes: int) -> EndsDraw:
    """Embedding, then read-out, each standard normal times ``he_std(fan_in, after_relu=False)``."""
    embed = rng.standard_normal((inputs, width)) * he_std(inputs, after_relu=False)
    readout = rng.standard_normal((width, classes)) * he_std(width, after_relu=False)
    return EndsDraw(embed, readout)


@dataclass(frozen=True)
class BlockDraws:
    """One seed's embedding and read-out, then both weights of every block ``F(h) = ReLU(h W1) W2``, drawn in that order."""

    ends: EndsDraw
    first: tuple[np.ndarray, ...]  # [width, width], reads the stream: He without the ReLU factor
    second: tuple[np.ndarray, ...]  # [width, width], reads a ReLU's output: He with it


def block_draws(seed: int, *, width: int, blocks: int) -> BlockDraws:
    """The draws of ``np.random.default_rng(seed)`` for a stack of ``blocks`` blocks on a stream of ``width``
    (two inputs, two classes); a stack of fewer blocks uses the first ones, so every depth starts alike."""
    rng = np.random.default_rng(seed)
    ends = draw_ends(rng, inputs=2, width=width, classes=2)
    first, second = [], []
    for _ in range(blocks):
        first.append(rng.standard_normal((width, width)) * he_std(width, after_relu=False))
        second.append(rng.standard_normal((width, width)) * he_std(width, after_relu=True))
    return BlockDraws(ends, tuple(first), tuple(second))


def with_twins(draws: Sequence[BlockDraws]) -> list[BlockDraws]:
    """Every seed's draws, then the same draws again with the embedding's first weight one ulp larger: trained
    side by side, each seed's twin shows how far its result moves when its float path changes."""
    twins = [dataclasses.replace(d, ends=dataclasses.replace(d.ends, embed=nudge(d.ends.embed))) for d in draws]
    return [*draws, *twins]


def measured(values: np.ndarray, *, what: str) -> Measurement:
    """One arm's result from its models side by side as :func:`with_twins` ordered them: seeds, then twins."""
    runs = np.asarray(values, dtype=np.float64)
    half = len(runs) // 2
    return measure(runs[:half], runs[half:], what=what)


def rates_side_by_side(rates: Sequence[float], models: int) -> np.ndarray:
    """A learning rate per model for ``len(rates) * models`` models side by side, rate by rate: ``[R*M, 1, 1]``."""
    return np.repeat(np.asarray(rates, dtype=np.float64), models)[:, None, None]


def side_by_side(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """One array per model stacked along a new leading axis: ``[M, ...]``."""
    return np.stack([np.asarray(a, dtype=np.float64) for a in arrays])


class Ends:
    """The embedding (with a bias) and the read-out (with a bias) of ``M`` models side by side; biases start at zero."""

    def __init__(self, draws: Sequence[EndsDraw], *, name: str) -> None:
        models = len(draws)
        width = draws[0].embed.shape[1]  # the stream's width; the read-out may read a wider top (concatenation)
        classes = draws[0].readout.shape[1]
        self.embed_weight = parameter(side_by_side([d.embed for d in draws]), name=f"{name}.embed.weight")
        self.embed_bias = parameter(np.zeros((models, 1, width)), name=f"{name}.embed.bias")
        self.readout_weight = parameter(side_by_side([d.readout for d in draws]), name=f"{name}.readout.weight")
        self.readout_bias = parameter(np.zeros((models, 1, classes)), name=f"{name}.readout.bias")

    def parameters(self) -> list[Tensor]:
        return [self.embed_weight, self.embed_bias, self.readout_weight, self.readout_bias]

    def embed(self, inputs: np.ndarray) -> Tensor:
        """Points ``[N, inputs]`` into every model's stream: ``[M, N, width]``."""
        return tensor(inputs) @ self.embed_weight + self.embed_bias

    def logits(self, stream: Tensor) -> Tensor:
        """Class scores ``[M, N, classes]`` read out of the stream ``[M, N, width]``."""
        return stream @ self.readout_weight + self.readout_bias


# region: per-model-loss
def cross_entropy_per_model(logits: Tensor, labels: np.ndarray) -> Tensor:
    """Each model's mean cross-entropy over the points: logits ``[M, N, K]``, labels ``[N]`` -> ``[M]``."""
    if logits.data.ndim != 3 or logits.shape[1] != len(labels):
        raise ValueError(f"logits must be [models, {len(labels)}, classes], got {list(logits.shape)}")
    picked = log_softmax(logits, axis=-1)[:, np.arange(len(labels)), labels]
    return -picked.mean(axis=1)


# endregion: per-model-loss


@dataclass(frozen=True)
class History:
    """The loss of every model, recorded before the update of each step in ``steps`` (step 0: at initialization).

    ``losses`` is ``[len(steps), M]``; its last row is the loss after the final update.
    """

    steps: tuple[int, ...]
    losses: np.ndarray

    @property
    def initial(self) -> np.ndarray:
        return self.losses[0]

    @property
    def final(self) -> np.ndarray:
        return self.losses[-1]


# region: train
def train(
    model_losses: Callable[[], Tensor],
    optimizer: Optimizer,
    *,
    steps: int,
    every: int,
    fixture: str,
    warmup: int = 0,
) -> History:
    """Full-batch training: ``steps`` updates of ``optimizer`` on the summed losses of the models side by side.

    ``model_losses()`` runs the forward pass and returns each model's loss
    (``[M]``). The loss of step ``s`` is recorded from the forward pass that
    also gives that step's gradient, every ``every`` steps and after the last
    update, so recording costs one extra forward pass in all. With ``warmup``,
    update ``s`` (from 0) uses the rate times ``min(1, (s + 1) / warmup)``: a
    linear warm-up to the optimizer's rate.
    """
    if steps < 1 or every < 1 or steps % every:
        raise ValueError(f"steps ({steps}) must be a positive multiple of every ({every})")
    if warmup < 0:
        raise ValueError(f"warmup ({warmup}) is a number of steps, at least 0")
    rate = optimizer.lr
    recorded: list[int] = []
    rows: list[np.ndarray] = []
    for step in range(steps + 1):
        losses = model_losses()
        values = losses.data
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise FixtureError(fixture, f"model {int(bad[0])} has a loss of {float(values[bad[0]])!r} at step {step}")
        if step % every == 0:
            recorded.append(step)
            rows.append(values.copy())
        if step == steps:
            break
        optimizer.zero_grad()
        losses.sum().backward()
        if warmup:
            optimizer.lr = rate * min(1.0, (step + 1) / warmup)
        optimizer.step()
    optimizer.lr = rate
    return History(tuple(recorded), np.array(rows))


# endregion: train
