"""Trace format ``claims-v4``: one group of records per claim, then one ``VERDICT`` per claim.

Each verdict is decided by code from the measured records before it.
"""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import Bool, Int, Measured, Real, Sci, Vector, choice, lines, record, trace_format

VERDICTS = ("holds", "does-not-hold", "holds-narrowly")
CLAIMS = (1, 2, 3, 4, 5, 6, 7, 8)
SLICE_POINTS = 41  # claim 6: points along the loss slice, the trained weights in the middle
PLAIN_DEPTHS = (4,)  # claim 7: a plain stack deeper than the claimed limit
ISOMETRY_STACKS = ("plain-orthogonal", "plain-gaussian", "residual")  # claim 8, measured at initialization
TRAINED_STACKS = ("plain-orthogonal", "residual")  # claim 8, trained
SEEDS = tuple(range(1, 9))  # claims 6 to 8: every seed trained as drawn and with one weight one ulp away
PLAIN_RATES = (3e-3, 1e-2)  # claim 7: the learning rates every depth is trained at
ISOMETRY_RATES = (1e-3, 3e-3)  # claim 8: the learning rates every stack is trained at
ISOMETRY_BUDGETS = (0, 15, 30)  # claim 8: the steps the losses are reported at; the last is the run's length
ORDERS = ("lower", "higher", "indistinguishable")
FITS = ("fits", "does-not-fit", "undecided")
SCALED_DEPTHS = (1, 10, 50)
FAMILIES = ("independent", "tanh", "linear")
STREAM_DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# Slopes of log ||x_L|| against log L: a sqrt(L) law and a linear law, the two rates claim 5 names.
# GROWTH.bar is how far a fitted slope may sit from one of them and still count as following it.
SQRT_LAW_EXPONENT = 0.5
LINEAR_LAW_EXPONENT = 1.0

Family = Annotated[str, choice(*FAMILIES)]
Order = Annotated[str, choice(*ORDERS)]
Fit = Annotated[str, choice(*FITS)]


@record("SCALAR-STACK")
class ScalarStack:
    """Claim 1: scalar stack f(x) = alpha*x; the input gradient of the residual and of the plain stack."""

    alpha: Real
    layers: Int
    residual: Sci  # engine: d x_L / d x_0 with x = x + alpha*x
    plain: Sci  # engine: with x = alpha*x
    residual_closed_form: Sci  # (1 + alpha)^L
    plain_closed_form: Sci  # alpha^L
    log10_gap: Real  # log10(|residual| / |plain|)
    claimed_gap: Int  # orders of magnitude the claim states


@record("CANCELLING-BRANCH")
class CancellingBranch:
    """Claim 2: a branch F(x) = x @ W with W = -I cancels the identity."""

    input: Vector
    upstream: Vector
    output: Vector
    input_gradient: Vector
    weight_gradient: Vector  # row-major


@record("ZERO-BRANCH-STACK")
class ZeroBranchStack:
    """Claim 2, the narrower statement: all-zero branch weights at a large depth."""

    depth: Int
    upstream: Vector
    input_gradient: Vector
    exact: Bool  # the input gradient equals the upstream bit for bit


@record("SCALED-SHORTCUT", index="depth")
class ScaledShortcut:
    """Claim 3: y = scale*x + F(x) with F = 0, stacked ``depth`` times."""

    depth: Int
    scale: Real
    gradient: Sci  # engine
    power: Sci  # scale^depth
    exact: Bool  # equal bit for bit, not only as printed


@record("QUADRATIC-STEP")
class QuadraticStep:
    """Claim 4: x' = x + coefficient*x^2, upstream gradient given."""

    x: Real
    coefficient: Real
    upstream: Real
    gradient: Real  # engine
    closed_form: Real  # upstream * (1 + 2*coefficient*x)
    claimed: Real


@record("STREAM-CONFIG")
class StreamConfig:
    """Claim 5: the streams' width and the seed of every random draw."""

    width: Int
    seed: Int


@record("STREAM", index=("family", "depth"))
class Stream:
    """Claim 5: the stream norm after ``depth`` residual blocks of one branch family."""

    family: Family
    depth: Int
    norm: Sci  # ||x_depth||
    branch_rms: Sci  # sqrt(mean over the blocks so far of ||f_l||^2)
    sqrt_law: Sci  # sqrt(depth) * branch_rms
    ratio: Real  # norm / sqrt_law


@record("GROWTH", index="family")
class Growth:
    """Claim 5: least-squares slope of log ||x_L|| against log L, from ``fit_from`` on, against the claim's rates."""

    family: Family
    fit_from: Int
    exponent: Real
    bar: Real  # how far the slope may sit from a law's slope and still follow that law
    sqrt_law: Bool  # |exponent - SQRT_LAW_EXPONENT| <= bar
    linear_law: Bool  # |exponent - LINEAR_LAW_EXPONENT| <= bar
    within_claim: Bool  # SQRT_LAW_EXPONENT - bar <= exponent <= LINEAR_LAW_EXPONENT + bar: "sqrt(L) or even linearly"


@record("LANDSCAPE")
class Landscape:
    """Claim 6: trained residual stacks, every seed and its twin, and the loss along one filter-normalized
    direction through each one's weights."""

    depth: Int
    learning_rate: Real
    steps: Int
    seeds: Int
    trained_loss: Measured  # at the trained weights, the middle of the slice
    direction_seed: Int
    span: Real  # the slice runs from -span to +span times the direction
    min_second_difference: Measured  # L(a - h) - 2 L(a) + L(a + h), the smallest along each slice
    bar: Sci  # a second difference below -bar is negative beyond rounding
    nearest_bend: Measured  # the smallest |a| where a slice bends down beyond the bar (span when it never does)
    bending_seeds: Int  # seeds whose slice bends down beyond the bar, as drawn and with their twin
    seeds_with_minima: Int  # seeds whose slice has a point lower than both neighbours besides the trained one


@record("SLICE", index="point")
class SlicePoint:
    """Claim 6: the loss at the trained weights plus ``alpha`` times the direction, over the seeds."""

    point: Int
    alpha: Real
    loss: Measured


@record("PLAIN-SETUP")
class PlainSetup:
    """Claim 7: plain stacks of normalized MLP blocks, h = F(LN(h)), with no residual addition."""

    claimed_layers: Int  # the depth the claim says plain stacks cannot train beyond
    width: Int
    steps: Int
    seeds: Int
    trained_bar: Real  # a stack fits when its median final loss is below this (a tenth of the chance loss)


@record("PLAIN-SWEEP", index=("depth", "rate"))
class PlainSweep:
    depth: Int
    rate: Sci  # Adam's learning rate
    final: Measured  # after the last step
    chosen: Bool  # the rate whose median final loss is lowest at this depth


@record("PLAIN-DEPTH", index="depth")
class PlainDepth:
    """Claim 7: one depth at its chosen rate."""

    depth: Int
    rate: Sci
    initial: Measured
    final: Measured
    fit: Fit  # the median final loss against the bar, beyond its uncertainty
    fitted_seeds: Int  # seeds whose final loss is below the bar, as drawn and with their twin


@record("ISOMETRY-SETUP")
class IsometrySetup:
    """Claim 8: tanh stacks of one depth, plain with orthogonal or Gaussian weights, and residual."""

    depth: Int
    width: Int
    steps: Int
    seeds: Int
    orthogonal_vs_gaussian: Order  # the plain stacks' gradient at initialization, orthogonal against Gaussian


@record("ISOMETRY", index="stack")
class Isometry:
    stack: Annotated[str, choice(*ISOMETRY_STACKS)]
    gradient: Measured  # |gradient reaching the input| / |gradient sent into the top| at initialization


@record("ISOMETRY-SWEEP", index=("stack", "rate"))
class IsometrySweep:
    stack: Annotated[str, choice(*TRAINED_STACKS)]
    rate: Sci
    final: Measured
    chosen: Bool


@record("ISOMETRY-TRAINED", index=("stack", "budget"))
class IsometryTrained:
    """Claim 8: a stack at its chosen rate, after ``budget`` steps (0: at initialization)."""

    stack: Annotated[str, choice(*TRAINED_STACKS)]
    budget: Int
    loss: Measured


@record("ISOMETRY-ORDER", index="budget")
class IsometryOrder:
    """Claim 8: the plain orthogonal stack's loss against the residual stack's after ``budget`` steps."""

    budget: Int
    plain: Order


@record("VERDICT", index="claim")
class Verdict:
    claim: Int
    verdict: Annotated[str, choice(*VERDICTS)]


@trace_format("claims-v4")
class Trace:
    scalar_stack: ScalarStack
    cancelling_branch: CancellingBranch
    zero_branch_stack: ZeroBranchStack
    scaled_shortcut: tuple[ScaledShortcut, ...] = lines(depth=SCALED_DEPTHS)
    quadratic_step: QuadraticStep
    stream_config: StreamConfig
    streams: tuple[Stream, ...] = lines({"family": f, "depth": d} for f in FAMILIES for d in STREAM_DEPTHS)
    growth: tuple[Growth, ...] = lines(family=FAMILIES)
    landscape: Landscape
    slice: tuple[SlicePoint, ...] = lines(point=range(SLICE_POINTS))
    plain_setup: PlainSetup
    plain_sweep: tuple[PlainSweep, ...] = lines({"depth": d, "rate": r} for d in PLAIN_DEPTHS for r in PLAIN_RATES)
    plain_depths: tuple[PlainDepth, ...] = lines(depth=PLAIN_DEPTHS)
    isometry_setup: IsometrySetup
    isometry: tuple[Isometry, ...] = lines(stack=ISOMETRY_STACKS)
    isometry_sweep: tuple[IsometrySweep, ...] = lines(
        {"stack": s, "rate": r} for s in TRAINED_STACKS for r in ISOMETRY_RATES
    )
    isometry_trained: tuple[IsometryTrained, ...] = lines(
        {"stack": s, "budget": b} for s in TRAINED_STACKS for b in ISOMETRY_BUDGETS
    )
    isometry_orders: tuple[IsometryOrder, ...] = lines(budget=ISOMETRY_BUDGETS[1:])
    verdicts: tuple[Verdict, ...] = lines(claim=CLAIMS)

    def verdict(self, claim: int) -> str:
        for v in self.verdicts:
            if v.claim == claim:
                return v.verdict
        raise KeyError(f"no VERDICT record for claim {claim}; claims: {', '.join(str(n) for n in CLAIMS)}")

    def stream(self, family: str) -> tuple[Stream, ...]:
        rows = tuple(r for r in self.streams if r.family == family)
        if not rows:
            raise KeyError(f"no STREAM records for family {family!r}; families: {', '.join(FAMILIES)}")
        return rows
