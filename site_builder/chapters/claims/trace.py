"""Trace format ``claims-v1``: typed records, writer and strict parser.

Same text rules as ``residual-connections-v1``. One group of records per
claim, then one ``VERDICT`` per claim, decided by code from the measured
numbers in the records before it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...trace import BOOL, INT, REAL, SCI, VECTOR, Field, LaidOut, Record, TraceLayout, choice

VERSION = "claims-v1"

VERDICTS = ("holds", "does-not-hold", "holds-narrowly")
CLAIMS = (1, 2, 3, 4, 5)
SCALED_DEPTHS = (1, 10, 50)
FAMILIES = ("independent", "tanh", "linear")
STREAM_DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
# The slope of log ||x_L|| against log L that a sqrt(L) law has; GROWTH.bar is measured from it.
SQRT_LAW_EXPONENT = 0.5

Vector = tuple[float, ...]


@dataclass(frozen=True)
class ScalarStack:
    """Claim 1: scalar stack f(x) = alpha*x; the input gradient of the residual and of the plain stack."""

    alpha: float
    layers: int
    residual: float  # engine: d x_L / d x_0 with x = x + alpha*x
    plain: float  # engine: with x = alpha*x
    residual_closed_form: float  # (1 + alpha)^L
    plain_closed_form: float  # alpha^L
    log10_gap: float  # log10(|residual| / |plain|)
    claimed_gap: int  # orders of magnitude the claim states


@dataclass(frozen=True)
class CancellingBranch:
    """Claim 2: a branch F(x) = x @ W with W = -I cancels the identity."""

    input: Vector
    upstream: Vector
    output: Vector
    input_gradient: Vector
    weight_gradient: Vector  # row-major


@dataclass(frozen=True)
class ZeroBranchStack:
    """Claim 2, the narrower statement: all-zero branch weights at a large depth."""

    depth: int
    upstream: Vector
    input_gradient: Vector
    exact: bool  # the input gradient equals the upstream bit for bit


@dataclass(frozen=True)
class ScaledShortcut:
    """Claim 3: y = scale*x + F(x) with F = 0, stacked ``depth`` times."""

    depth: int
    scale: float
    gradient: float  # engine
    power: float  # scale^depth
    exact: bool  # equal bit for bit, not only as printed


@dataclass(frozen=True)
class QuadraticStep:
    """Claim 4: x' = x + coefficient*x^2, upstream gradient given."""

    x: float
    coefficient: float
    upstream: float
    gradient: float  # engine
    closed_form: float  # upstream * (1 + 2*coefficient*x)
    claimed: float


@dataclass(frozen=True)
class StreamConfig:
    """Claim 5: the streams' width and the seed of every random draw."""

    width: int
    seed: int


@dataclass(frozen=True)
class Stream:
    """Claim 5: the stream norm after ``depth`` residual blocks of one branch family."""

    family: str
    depth: int
    norm: float  # ||x_depth||
    branch_rms: float  # sqrt(mean over the blocks so far of ||f_l||^2)
    sqrt_law: float  # sqrt(depth) * branch_rms
    ratio: float  # norm / sqrt_law


@dataclass(frozen=True)
class Growth:
    """Claim 5: least-squares slope of log ||x_L|| against log L, from ``fit_from`` on."""

    family: str
    fit_from: int
    exponent: float
    bar: float  # |exponent - SQRT_LAW_EXPONENT| must be at most this for a sqrt(L) law
    sqrt_law: bool


@dataclass(frozen=True)
class Verdict:
    claim: int
    verdict: str


@dataclass(frozen=True)
class Trace(LaidOut):
    scalar_stack: ScalarStack
    cancelling_branch: CancellingBranch
    zero_branch_stack: ZeroBranchStack
    scaled_shortcut: tuple[ScaledShortcut, ...]
    quadratic_step: QuadraticStep
    stream_config: StreamConfig
    streams: tuple[Stream, ...]
    growth: tuple[Growth, ...]
    verdicts: tuple[Verdict, ...]

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


# One group of records per claim, then one VERDICT per claim.
LAYOUT = TraceLayout(
    VERSION,
    Trace,
    (
        Record(
            "SCALAR-STACK",
            ScalarStack,
            "scalar_stack",
            (
                Field("alpha", REAL), Field("layers", INT), Field("residual", SCI), Field("plain", SCI),
                Field("residual-closed-form", SCI), Field("plain-closed-form", SCI), Field("log10-gap", REAL),
                Field("claimed-gap", INT),
            ),
        ),
        Record(
            "CANCELLING-BRANCH",
            CancellingBranch,
            "cancelling_branch",
            (
                Field("input", VECTOR), Field("upstream", VECTOR), Field("output", VECTOR),
                Field("input-gradient", VECTOR), Field("weight-gradient", VECTOR),
            ),
        ),
        Record(
            "ZERO-BRANCH-STACK",
            ZeroBranchStack,
            "zero_branch_stack",
            (Field("depth", INT), Field("upstream", VECTOR), Field("input-gradient", VECTOR), Field("exact", BOOL)),
        ),
        Record(
            "SCALED-SHORTCUT",
            ScaledShortcut,
            "scaled_shortcut",
            (
                Field("depth", INT), Field("scale", REAL), Field("gradient", SCI), Field("power", SCI),
                Field("exact", BOOL),
            ),
            index=("depth",),
            lines=tuple({"depth": d} for d in SCALED_DEPTHS),
        ),
        Record(
            "QUADRATIC-STEP",
            QuadraticStep,
            "quadratic_step",
            (
                Field("x", REAL), Field("coefficient", REAL), Field("upstream", REAL), Field("gradient", REAL),
                Field("closed-form", REAL), Field("claimed", REAL),
            ),
        ),
        Record("STREAM-CONFIG", StreamConfig, "stream_config", (Field("width", INT), Field("seed", INT))),
        Record(
            "STREAM",
            Stream,
            "streams",
            (
                Field("family", choice(*FAMILIES)), Field("depth", INT), Field("norm", SCI), Field("branch-rms", SCI),
                Field("sqrt-law", SCI), Field("ratio", REAL),
            ),
            index=("family", "depth"),
            lines=tuple({"family": f, "depth": d} for f in FAMILIES for d in STREAM_DEPTHS),
        ),
        Record(
            "GROWTH",
            Growth,
            "growth",
            (
                Field("family", choice(*FAMILIES)), Field("fit-from", INT), Field("exponent", REAL), Field("bar", REAL),
                Field("sqrt-law", BOOL),
            ),
            index=("family",),
            lines=tuple({"family": f} for f in FAMILIES),
        ),
        Record(
            "VERDICT",
            Verdict,
            "verdicts",
            (Field("claim", INT), Field("verdict", choice(*VERDICTS))),
            index=("claim",),
            lines=tuple({"claim": n} for n in CLAIMS),
        ),
    ),
)

render = LAYOUT.render
parse = LAYOUT.parse  # any deviation raises TraceParseError with its line and column
all_keys = LAYOUT.keys  # every fact key of this version, in trace order, known without running anything
