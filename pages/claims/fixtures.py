"""Claims fixtures: each claim measured on our autograd engine, then decided by code.

A verdict is never typed: :func:`decide` reads the measured records (at full
precision; a claim about a printed number is compared as the trace prints it)
and returns ``holds``, ``does-not-hold`` or ``holds-narrowly``, so a changed
fixture that flips a verdict changes the page.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from site_builder.autograd import Tensor, parameter, tensor
from site_builder.run import FixtureError, Run, finite
from site_builder.nn import Linear, residual_add
from site_builder.trace import format_real, format_sci
from .trace import (
    FAMILIES,
    LINEAR_LAW_EXPONENT,
    SCALED_DEPTHS,
    SQRT_LAW_EXPONENT,
    STREAM_DEPTHS,
    CancellingBranch,
    Growth,
    QuadraticStep,
    ScalarStack,
    ScaledShortcut,
    Stream,
    StreamConfig,
    VERDICTS,
    Trace,
    Verdict,
    ZeroBranchStack,
)


@dataclass(frozen=True)
class Constants:
    # Claim 1: "(1+α)^50 is eighteen orders of magnitude larger than α^50", α = −0.1.
    alpha: float = -0.1
    layers: int = 50
    claimed_gap: int = 18
    # Claim 2: a branch whose Jacobian cancels the identity; then all-zero branches, deep.
    input: tuple[float, ...] = (2.0, -1.0)
    upstream: tuple[float, ...] = (1.0, 1.0)
    zero_depth: int = 1000
    # Claim 3: shortcut scaled by 0.5, zero branch.
    shortcut_scale: float = 0.5
    # Claim 4: x' = x + 0.1 x² at x = 2, upstream 5, claimed input gradient 7.
    quadratic_x: float = 2.0
    quadratic_coefficient: float = 0.1
    quadratic_upstream: float = 5.0
    quadratic_claimed: float = 7.0
    # Claim 5: stream norm against depth for random branches.
    stream_width: int = 64
    stream_seed: int = 5
    fit_from: int = 16
    exponent_bar: float = 0.1


# ---------------------------------------------------------------------------- claim 1
# region: claim-1
def scalar_stack_gradient(alpha: float, layers: int, *, residual: bool) -> float:
    """d x_L / d x_0 for x = x + alpha*x (residual) or x = alpha*x (plain), through the engine."""
    x = parameter(1.0, name="input")
    h = x
    for _ in range(layers):
        h = h + h.scale(alpha) if residual else h.scale(alpha)
    h.backward()
    assert x.grad is not None
    return float(x.grad)


def claim_1(c: Constants) -> ScalarStack:
    fixture = "claim-1-scalar-stack"
    residual = finite(fixture, "the residual gradient", scalar_stack_gradient(c.alpha, c.layers, residual=True))
    plain = finite(fixture, "the plain gradient", scalar_stack_gradient(c.alpha, c.layers, residual=False))
    residual_closed, plain_closed = (1.0 + c.alpha) ** c.layers, c.alpha**c.layers
    for name, engine, closed in (("residual", residual, residual_closed), ("plain", plain, plain_closed)):
        if format_sci(float(engine)) != format_sci(closed):
            raise FixtureError(fixture, f"{name}: engine {format_sci(float(engine))} != closed form {format_sci(closed)}")
    if plain == 0.0:
        raise FixtureError(fixture, "the plain gradient underflowed to zero: no gap can be measured")
    return ScalarStack(
        alpha=float(c.alpha),
        layers=c.layers,
        residual=float(residual),
        plain=float(plain),
        residual_closed_form=float(residual_closed),
        plain_closed_form=float(plain_closed),
        log10_gap=float(math.log10(abs(float(residual)) / abs(float(plain)))),
        claimed_gap=c.claimed_gap,
    )
# endregion: claim-1


def decide_claim_1(r: ScalarStack) -> str:
    """The stated gap holds when the measured gap rounds to it."""
    return "holds" if round(r.log10_gap) == r.claimed_gap else "does-not-hold"


# ---------------------------------------------------------------------------- claim 2
# region: claim-2
def claim_2_cancel(c: Constants) -> CancellingBranch:
    """F(x) = x @ (−I): the block's Jacobian I + (−I) is zero, yet its weight has a gradient."""
    fixture = "claim-2-cancelling-branch"
    n = len(c.input)
    x = parameter(c.input, name="input")
    branch = Linear(-np.eye(n), name="cancel.branch.weight")
    y = residual_add(x, branch(x))
    y.backward_with_seed(np.array(c.upstream))
    return CancellingBranch(
        input=c.input,
        upstream=c.upstream,
        output=y.data,
        input_gradient=x.grad,
        weight_gradient=branch.weight.grad,
    )


def claim_2_zero_stack(c: Constants) -> ZeroBranchStack:
    """``zero_depth`` blocks whose branch weights are all zero: the gradient passes unchanged."""
    fixture = "claim-2-zero-branch-stack"
    n = len(c.input)
    x = parameter(c.input, name="input")
    h = x
    for block in range(c.zero_depth):
        h = residual_add(h, Linear(np.zeros((n, n)), name=f"zero.{block}.branch.weight")(h))
    seed = np.array(c.upstream)
    h.backward_with_seed(seed)
    gradient = finite(fixture, "the input gradient", x.grad)
    return ZeroBranchStack(
        depth=c.zero_depth,
        upstream=seed,
        input_gradient=gradient,
        exact=bool(np.array_equal(gradient, seed)),
    )
# endregion: claim-2


def decide_claim_2(cancel: CancellingBranch, zero: ZeroBranchStack) -> str:
    """A zero input gradient with a live weight gradient refutes "never"; the zero-branch stack is the narrower truth."""
    counterexample = bool(np.all(np.asarray(cancel.input_gradient) == 0.0) and np.any(np.asarray(cancel.weight_gradient) != 0.0))
    narrower = zero.exact and bool(np.array_equal(zero.input_gradient, zero.upstream))
    if not counterexample:
        return "holds"
    return "holds-narrowly" if narrower else "does-not-hold"


# ---------------------------------------------------------------------------- claim 3
# region: claim-3
def claim_3(c: Constants, depth: int) -> ScaledShortcut:
    """y = s*x + F(x) with a zero branch, ``depth`` times: the input gradient against s^depth."""
    fixture = "claim-3-scaled-shortcut"
    x = parameter([1.0], name="input")
    h = x
    for block in range(depth):
        h = residual_add(h.scale(c.shortcut_scale), Linear(np.zeros((1, 1)), name=f"scaled.{block}.branch.weight")(h))
    h.backward_with_seed(np.ones(1))
    gradient = float(finite(fixture, "the input gradient", x.grad)[0])
    power = float(finite(fixture, "the power", c.shortcut_scale**depth))
    return ScaledShortcut(
        depth=depth,
        scale=float(c.shortcut_scale),
        gradient=float(gradient),
        power=float(power),
        exact=gradient == power,
    )
# endregion: claim-3


def decide_claim_3(rows: tuple[ScaledShortcut, ...]) -> str:
    """Holds when the input gradient prints as scale^depth at every depth measured."""
    return "holds" if all(format_sci(r.gradient) == format_sci(r.power) for r in rows) else "does-not-hold"


# ---------------------------------------------------------------------------- claim 4
# region: claim-4
def claim_4(c: Constants) -> QuadraticStep:
    """x' = x + k*x^2; the engine's input gradient for the given upstream."""
    fixture = "claim-4-quadratic-step"
    x = parameter(c.quadratic_x, name="input")
    y = x + x.square().scale(c.quadratic_coefficient)
    y.backward_with_seed(c.quadratic_upstream)
    closed = c.quadratic_upstream * (1.0 + 2.0 * c.quadratic_coefficient * c.quadratic_x)
    gradient = float(finite(fixture, "the input gradient", x.grad))
    if format_real(gradient) != format_real(float(finite(fixture, "the closed form", closed))):
        raise FixtureError(fixture, f"engine {format_real(gradient)} != closed form {format_real(closed)}")
    return QuadraticStep(
        x=float(c.quadratic_x),
        coefficient=float(c.quadratic_coefficient),
        upstream=float(c.quadratic_upstream),
        gradient=float(gradient),
        closed_form=float(closed),
        claimed=float(c.quadratic_claimed),
    )
# endregion: claim-4


def decide_claim_4(r: QuadraticStep) -> str:
    """Holds when the input gradient prints as the claimed value."""
    return "holds" if format_real(r.gradient) == format_real(r.claimed) else "does-not-hold"


# ---------------------------------------------------------------------------- claim 5
# region: claim-5
def stream_norms(c: Constants) -> dict[str, list[tuple[float, float]]]:
    """(||x_L||, sqrt(mean ||f_l||^2)) for L = 1 .. max depth, per branch family.

    ``independent``: f_l a fixed random vector (ignores the stream);
    ``tanh``: f_l = tanh(x @ W_l); ``linear``: f_l = x @ W_l; W_l ~ N(0, 1/width).
    One generator draws x_0, then every W_l, then every independent f_l.
    """
    rng = np.random.default_rng(c.stream_seed)
    width, depth = c.stream_width, max(STREAM_DEPTHS)
    x0 = rng.standard_normal(width)
    weights = [tensor(rng.standard_normal((width, width)) / math.sqrt(width)) for _ in range(depth)]
    fixed = [tensor(rng.standard_normal(width)) for _ in range(depth)]
    branches = {
        "independent": lambda h, l: fixed[l],
        "tanh": lambda h, l: (h @ weights[l]).tanh(),
        "linear": lambda h, l: h @ weights[l],
    }
    out: dict[str, list[tuple[float, float]]] = {}
    for family in FAMILIES:
        h: Tensor = tensor(x0)
        squares, rows = 0.0, []
        for l in range(depth):
            f = branches[family](h, l)
            squares += float(np.sum(f.data * f.data))
            h = residual_add(h, f)
            rows.append((float(np.linalg.norm(h.data)), math.sqrt(squares / (l + 1))))
        out[family] = rows
    return out


def fit_exponent(depths: list[int], norms: list[float]) -> float:
    """Least-squares slope of log norm against log depth."""
    return float(np.polyfit(np.log(np.array(depths, dtype=np.float64)), np.log(np.array(norms)), 1)[0])


def claim_5(c: Constants) -> tuple[tuple[Stream, ...], tuple[Growth, ...]]:
    fixture = "claim-5-stream-growth"
    measured = stream_norms(c)
    streams, growth = [], []
    for family in FAMILIES:
        rows = []
        for depth in STREAM_DEPTHS:
            norm, rms = measured[family][depth - 1]
            norm, rms = float(norm), float(rms)
            law = float(math.sqrt(depth) * rms)
            rows.append(Stream(family, depth, norm, rms, law, float(norm / law)))
        streams += rows
        fitted = [r for r in rows if r.depth >= c.fit_from]
        exponent = float(fit_exponent([r.depth for r in fitted], [r.norm for r in fitted]))
        bar = float(c.exponent_bar)
        growth.append(
            Growth(
                family,
                c.fit_from,
                exponent,
                bar,
                sqrt_law=law_fits(exponent, SQRT_LAW_EXPONENT, bar),
                linear_law=law_fits(exponent, LINEAR_LAW_EXPONENT, bar),
                within_claim=as_claimed(exponent, bar),
            )
        )
    return tuple(streams), tuple(growth)


def law_fits(exponent: float, law: float, bar: float) -> bool:
    """The fitted slope follows a power law ``L**law`` when it lies within ``bar`` of it."""
    return abs(exponent - law) <= bar


def as_claimed(exponent: float, bar: float) -> bool:
    """"Roughly as sqrt(L)·||f|| (random walk) or even linearly": no slower than the one, no faster than the other."""
    return SQRT_LAW_EXPONENT - bar <= exponent <= LINEAR_LAW_EXPONENT + bar
# endregion: claim-5


def decide_claim_5(growth: tuple[Growth, ...]) -> str:
    """The whole sentence: holds if every family grows at a rate it allows; narrowly if only some do."""
    fits = [g.within_claim and as_claimed(g.exponent, g.bar) for g in growth]
    if all(fits):
        return "holds"
    return "holds-narrowly" if any(fits) else "does-not-hold"


# ---------------------------------------------------------------------------- all
def decide(trace_without_verdicts: Trace) -> tuple[Verdict, ...]:
    t = trace_without_verdicts
    return (
        Verdict(1, decide_claim_1(t.scalar_stack)),
        Verdict(2, decide_claim_2(t.cancelling_branch, t.zero_branch_stack)),
        Verdict(3, decide_claim_3(t.scaled_shortcut)),
        Verdict(4, decide_claim_4(t.quadratic_step)),
        Verdict(5, decide_claim_5(t.growth)),
    )


def run(c: Constants = Constants()) -> Run:
    streams, growth = claim_5(c)
    measured = Trace(
        scalar_stack=claim_1(c),
        cancelling_branch=claim_2_cancel(c),
        zero_branch_stack=claim_2_zero_stack(c),
        scaled_shortcut=tuple(claim_3(c, depth) for depth in SCALED_DEPTHS),
        quadratic_step=claim_4(c),
        stream_config=StreamConfig(width=c.stream_width, seed=c.stream_seed),
        streams=streams,
        growth=growth,
        verdicts=(),
    )
    t = dataclasses.replace(measured, verdicts=decide(measured))
    s, q = t.scalar_stack, t.quadratic_step
    derived: dict[str, object] = {
        "DERIVED.claim-1.one-plus-alpha": 1.0 + s.alpha,
        "DERIVED.claim-1.abs-alpha": abs(s.alpha),
        "DERIVED.claim-1.gap-rounded": round(s.log10_gap),
        "DERIVED.claim-1.gap-miss": round(s.log10_gap) - s.claimed_gap,
        "DERIVED.claim-2.weight-shape": (len(t.cancelling_branch.input), len(t.cancelling_branch.upstream)),
        "DERIVED.claim-4.local-derivative": 1.0 + 2.0 * q.coefficient * q.x,
        "DERIVED.claim-5.target-exponent": SQRT_LAW_EXPONENT,
        "DERIVED.claim-5.linear-exponent": LINEAR_LAW_EXPONENT,
        "DERIVED.claim-5.slowest-allowed": SQRT_LAW_EXPONENT - c.exponent_bar,
        "DERIVED.claim-5.fastest-allowed": LINEAR_LAW_EXPONENT + c.exponent_bar,
    }
    for kind in VERDICTS:
        derived[f"DERIVED.verdicts.{kind}"] = sum(v.verdict == kind for v in t.verdicts)
    # How closely sqrt(L) times the branch norm so far tracks the stream, over the depths the slopes are fitted on.
    fitted = [r.ratio for r in t.streams if r.depth >= c.fit_from]
    derived["DERIVED.claim-5.ratio-low"], derived["DERIVED.claim-5.ratio-high"] = min(fitted), max(fitted)
    for g in t.growth:
        rows = t.stream(g.family)
        # Ratio of the deepest to the shallowest stream norm, in orders of magnitude.
        derived[f"DERIVED.claim-5.{g.family}.orders"] = math.log10(rows[-1].norm / rows[0].norm)
    return Run(t, derived)
