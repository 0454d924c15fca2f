"""Deep-stack fixtures: how much gradient reaches the input of a plain and of a residual tanh stack.

Every depth runs twice — through our autograd engine and through a backward
pass written out by hand — and the two norms must print identically, or the
build stops. A float64 gradient check of one residual block closes the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import central_difference, parameter, tensor
from site_builder.run import FixtureError, Run
from site_builder.trace import format_real, format_sci

from .trace import DEPTHS, PUBLISHED_DEPTHS, Config, DepthRow, GradCheck, Trace


@dataclass(frozen=True)
class Constants:
    """The experiment as the spec defines it, plus the extension past its bank."""

    seed: int = 42
    width: int = 16
    batch: int = 4
    scale: float = 0.5
    published_bank: int = 20
    drawn: int = max(DEPTHS)
    input_seed: int = 0
    upstream: float = 1.0
    gradcheck_seed: int = 42
    gradcheck_width: int = 8
    gradcheck_rows: int = 3
    gradcheck_step: float = 1e-6
    gradcheck_bar: float = 1e-4
    # A central difference at step h carries rounding noise of about eps/h (eps: float64's rounding unit);
    # an error within this many orders of magnitude of it is called rounding noise on the page.
    noise_orders: int = 1


def weight_bank(c: Constants) -> list[np.ndarray]:
    """``np.random.seed(seed)`` then ``randn(C, C) * (scale / sqrt(C))`` in order.

    The first ``published_bank`` matrices are the spec's bank; the rest are the
    next draws from the same stream. A private ``RandomState`` gives the same
    numbers as the global generator without disturbing it.
    """
    stream = np.random.RandomState(c.seed)
    return [stream.randn(c.width, c.width) * (c.scale / math.sqrt(c.width)) for _ in range(c.drawn)]


def stack_input(c: Constants) -> np.ndarray:
    return np.random.RandomState(c.input_seed).randn(c.batch, c.width)


def upstream(c: Constants) -> np.ndarray:
    return np.full((c.batch, c.width), c.upstream, dtype=np.float64)


# region: autograd-stack
def input_gradient_autograd(x0: np.ndarray, bank: list[np.ndarray], seed: np.ndarray, *, residual: bool) -> np.ndarray:
    """Plain: x = tanh(x @ W); residual: x = x + tanh(x @ W); backward from ``seed``."""
    x = parameter(x0, name="input")
    h = x
    for w in bank:
        f = (h @ tensor(w)).tanh()
        h = h + f if residual else f
    h.backward_with_seed(seed)
    assert x.grad is not None
    return x.grad


# endregion: autograd-stack


# region: hand-written-backward
def input_gradient_by_hand(x0: np.ndarray, bank: list[np.ndarray], seed: np.ndarray, *, residual: bool) -> np.ndarray:
    """The same stack with its backward written out: dz = dout*(1 - tanh(z)^2), dx = dz @ W.T."""
    h, pre = x0, []
    for w in bank:
        z = h @ w
        pre.append(z)
        f = np.tanh(z)
        h = h + f if residual else f
    dout = seed
    for w, z in zip(reversed(bank), reversed(pre)):
        dz = dout * (1.0 - np.tanh(z) ** 2)
        dx = dz @ w.T
        dout = dout + dx if residual else dx  # the identity edge adds dout unchanged
    return dout


# endregion: hand-written-backward


def _norm(fixture: str, what: str, gradient: np.ndarray) -> float:
    norm = float(np.linalg.norm(gradient))
    if not math.isfinite(norm):
        raise FixtureError(fixture, f"{what} is not finite")
    return norm


def depth_fixture(c: Constants, depth: int, bank: list[np.ndarray]) -> DepthRow:
    fixture = "deep-stack"
    x0, seed = stack_input(c), upstream(c)
    norms: dict[str, float] = {}
    for residual in (False, True):
        kind = "residual" if residual else "plain"
        writer = format_real if residual else format_sci
        engine = _norm(
            fixture, f"DEPTH[{depth}].{kind}-norm", input_gradient_autograd(x0, bank[:depth], seed, residual=residual)
        )
        hand = _norm(
            fixture,
            f"DEPTH[{depth}].{kind}-norm-by-hand",
            input_gradient_by_hand(x0, bank[:depth], seed, residual=residual),
        )
        if writer(engine) != writer(hand):
            raise FixtureError(
                fixture,
                f"{kind} stack at depth {depth}: autograd norm {writer(engine)} and hand-written norm "
                f"{writer(hand)} disagree in the printed digits",
            )
        norms[kind], norms[f"{kind}-by-hand"] = engine, hand
    upstream_norm = _norm(fixture, "the upstream norm", seed)
    return DepthRow(
        depth=depth,
        plain_norm=norms["plain"],
        plain_norm_by_hand=norms["plain-by-hand"],
        residual_norm=norms["residual"],
        residual_norm_by_hand=norms["residual-by-hand"],
        survival=norms["residual"] / upstream_norm,
    )


# region: gradient-check
def block_objective(values: dict[str, np.ndarray]) -> float:
    """sum(x + tanh(x @ W)) in plain NumPy: the numeric side never touches the engine."""
    x, w = values["x"], values["w"]
    return float(np.sum(x + np.tanh(x @ w)))


def relative_error(analytic: float, numeric: float) -> float:
    return abs(analytic - numeric) / (abs(analytic) + abs(numeric) + 1e-12)


def gradient_check_fixture(c: Constants) -> tuple[GradCheck, list[float]]:
    fixture = "residual-block-gradient-check"
    rng = np.random.default_rng(c.gradcheck_seed)
    x0 = rng.standard_normal((c.gradcheck_rows, c.gradcheck_width))
    w0 = rng.standard_normal((c.gradcheck_width, c.gradcheck_width)) * (c.scale / math.sqrt(c.gradcheck_width))
    x, w = parameter(x0, name="input"), parameter(w0, name="block.weight")
    (x + (x @ w).tanh()).sum().backward()
    assert x.grad is not None and w.grad is not None
    values, analytic = {"x": x0, "w": w0}, {"x": x.grad, "w": w.grad}
    errors: list[float] = []
    for name in ("x", "w"):
        for index in np.ndindex(values[name].shape):
            a = float(analytic[name][index])
            n = central_difference(block_objective, values, name, index, c.gradcheck_step)
            error = relative_error(a, n)
            if not math.isfinite(error):
                raise FixtureError(fixture, f"produced NaN or an infinity at {name}{list(index)}")
            errors.append(error)
    worst = max(errors)
    passed = worst < c.gradcheck_bar
    if not passed:
        raise FixtureError(
            fixture, f"max relative error {format_sci(worst)} is not below the bar {format_sci(c.gradcheck_bar)}"
        )
    record = GradCheck(
        seed=c.gradcheck_seed,
        width=c.gradcheck_width,
        rows=c.gradcheck_rows,
        step=c.gradcheck_step,
        checks=len(errors),
        max_relative_error=worst,
        bar=c.gradcheck_bar,
        passed=passed,
    )
    return record, errors


# endregion: gradient-check


def run(c: Constants = Constants()) -> Run:
    if c.drawn < max(DEPTHS) or c.published_bank > c.drawn:
        raise FixtureError("deep-stack", f"a bank of {c.drawn} matrices cannot serve depths up to {max(DEPTHS)}")
    bank = weight_bank(c)
    rows = tuple(depth_fixture(c, depth, bank) for depth in DEPTHS)
    gradcheck, _ = gradient_check_fixture(c)
    upstream_norm = float(np.linalg.norm(upstream(c)))
    config = Config(
        seed=c.seed,
        width=c.width,
        batch=c.batch,
        scale=c.scale,
        published_bank=c.published_bank,
        drawn=c.drawn,
        input_seed=c.input_seed,
        upstream=c.upstream,
        upstream_norm=upstream_norm,
    )
    derived: dict[str, object] = {
        "DERIVED.sqrt-width": math.sqrt(c.width),
        "DERIVED.weight-scale": c.scale / math.sqrt(c.width),
        "DERIVED.upstream-entries": c.batch * c.width,
        "DERIVED.extra-draws": c.drawn - c.published_bank,
        "DERIVED.deepest": max(DEPTHS),
        "DERIVED.deepest-published": max(PUBLISHED_DEPTHS),
    }
    rounding = float(np.finfo(np.float64).eps) / c.gradcheck_step
    derived["DERIVED.gradcheck.rounding-scale"] = rounding
    derived["DERIVED.gradcheck.noise-low"] = rounding / 10.0**c.noise_orders
    derived["DERIVED.gradcheck.noise-high"] = rounding * 10.0**c.noise_orders
    derived["DERIVED.gradcheck.rounding-multiple"] = gradcheck.max_relative_error / rounding
    for row in rows:
        orders = math.log10(row.residual_norm / row.plain_norm)
        derived[f"DERIVED.depth-{row.depth}.orders"] = orders
        derived[f"DERIVED.depth-{row.depth}.plain-survival"] = row.plain_norm / upstream_norm
        # What a sentence needs of these numbers (the table keeps every digit): the plain norm's power of ten,
        # the residual norm and its survival ratio to the unit, the gap in orders of magnitude to a tenth.
        derived[f"DERIVED.depth-{row.depth}.plain-norm-about"] = float(f"1e{round(math.log10(row.plain_norm))}")
        derived[f"DERIVED.depth-{row.depth}.residual-norm-about"] = round(row.residual_norm)
        derived[f"DERIVED.depth-{row.depth}.survival-about"] = round(row.survival)
        derived[f"DERIVED.depth-{row.depth}.orders-about"] = round(orders, 1)
    first, last = rows[0], rows[-1]
    # Geometric-mean factor by which each extra plain layer shrinks the input-gradient norm.
    factor = (last.plain_norm / first.plain_norm) ** (1.0 / (last.depth - first.depth))
    derived["DERIVED.plain-factor-per-layer"] = factor
    derived["DERIVED.plain-factor-per-layer-about"] = round(factor, 2)
    derived["DERIVED.gradcheck.rounding-multiple-about"] = round(gradcheck.max_relative_error / rounding, 1)
    return Run(Trace(config=config, depths=rows, gradcheck=gradcheck), derived)
