"""Trace format ``claims-v1``: typed records, writer and strict parser.

Same text rules as ``residual-connections-v1``. One group of records per
claim, then one ``VERDICT`` per claim, decided by code from the measured
numbers in the records before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...trace import (
    BOOL,
    INT,
    REAL,
    SCI,
    VECTOR,
    Field,
    TraceParseError,
    choice,
    parse_record,
    render_record,
    split_lines,
)

VERSION = "claims-v1"
BEGIN = f"TRACE {VERSION} BEGIN"
END = f"TRACE {VERSION} END"

VERDICTS = ("holds", "does-not-hold", "holds-narrowly")
CLAIMS = (1, 2, 3, 4, 5)
SCALED_DEPTHS = (1, 10, 50)
FAMILIES = ("independent", "tanh", "linear")
STREAM_DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)

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
    bar: float  # |exponent - 1/2| must be at most this for a sqrt(L) law
    sqrt_law: bool


@dataclass(frozen=True)
class Verdict:
    claim: int
    verdict: str


SCHEMA: dict[str, tuple[type, tuple[Field, ...]]] = {
    "SCALAR-STACK": (
        ScalarStack,
        (
            Field("alpha", REAL), Field("layers", INT), Field("residual", SCI), Field("plain", SCI),
            Field("residual-closed-form", SCI), Field("plain-closed-form", SCI), Field("log10-gap", REAL),
            Field("claimed-gap", INT),
        ),
    ),
    "CANCELLING-BRANCH": (
        CancellingBranch,
        (
            Field("input", VECTOR), Field("upstream", VECTOR), Field("output", VECTOR),
            Field("input-gradient", VECTOR), Field("weight-gradient", VECTOR),
        ),
    ),
    "ZERO-BRANCH-STACK": (
        ZeroBranchStack,
        (Field("depth", INT), Field("upstream", VECTOR), Field("input-gradient", VECTOR), Field("exact", BOOL)),
    ),
    "SCALED-SHORTCUT": (
        ScaledShortcut,
        (Field("depth", INT), Field("scale", REAL), Field("gradient", SCI), Field("power", SCI), Field("exact", BOOL)),
    ),
    "QUADRATIC-STEP": (
        QuadraticStep,
        (
            Field("x", REAL), Field("coefficient", REAL), Field("upstream", REAL), Field("gradient", REAL),
            Field("closed-form", REAL), Field("claimed", REAL),
        ),
    ),
    "STREAM-CONFIG": (StreamConfig, (Field("width", INT), Field("seed", INT))),
    "STREAM": (
        Stream,
        (
            Field("family", choice(*FAMILIES)), Field("depth", INT), Field("norm", SCI), Field("branch-rms", SCI),
            Field("sqrt-law", SCI), Field("ratio", REAL),
        ),
    ),
    "GROWTH": (
        Growth,
        (
            Field("family", choice(*FAMILIES)), Field("fit-from", INT), Field("exponent", REAL), Field("bar", REAL),
            Field("sqrt-law", BOOL),
        ),
    ),
    "VERDICT": (Verdict, (Field("claim", INT), Field("verdict", choice(*VERDICTS)))),
}

# Each line between BEGIN and END: its record kind and the fields whose values the layout fixes.
LAYOUT: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("SCALAR-STACK", ()),
    ("CANCELLING-BRANCH", ()),
    ("ZERO-BRANCH-STACK", ()),
    *(("SCALED-SHORTCUT", (("depth", d),)) for d in SCALED_DEPTHS),
    ("QUADRATIC-STEP", ()),
    ("STREAM-CONFIG", ()),
    *(("STREAM", (("family", f), ("depth", d))) for f in FAMILIES for d in STREAM_DEPTHS),
    *(("GROWTH", (("family", f),)) for f in FAMILIES),
    *(("VERDICT", (("claim", n),)) for n in CLAIMS),
)


def key_prefix(kind: str, index: Mapping[str, Any]) -> str:
    """A record's provenance prefix, from the values of its indexing fields."""
    if kind == "SCALED-SHORTCUT":
        return f"{kind}[{index['depth']}]"
    if kind == "STREAM":
        return f"{kind}[{index['family']},{index['depth']}]"
    if kind == "GROWTH":
        return f"{kind}[{index['family']}]"
    if kind == "VERDICT":
        return f"{kind}[{index['claim']}]"
    return kind


def all_keys() -> tuple[str, ...]:
    """Every fact key a trace of this version carries, in trace order (known without running anything)."""
    return tuple(
        f"{key_prefix(kind, dict(fixed))}.{f.name}" for kind, fixed in LAYOUT for f in SCHEMA[kind][1]
    )


@dataclass(frozen=True)
class Trace:
    scalar_stack: ScalarStack
    cancelling_branch: CancellingBranch
    zero_branch_stack: ZeroBranchStack
    scaled_shortcut: tuple[ScaledShortcut, ...]
    quadratic_step: QuadraticStep
    stream_config: StreamConfig
    streams: tuple[Stream, ...]
    growth: tuple[Growth, ...]
    verdicts: tuple[Verdict, ...]

    def records(self) -> list[tuple[str, object]]:
        return [
            ("SCALAR-STACK", self.scalar_stack),
            ("CANCELLING-BRANCH", self.cancelling_branch),
            ("ZERO-BRANCH-STACK", self.zero_branch_stack),
            *(("SCALED-SHORTCUT", r) for r in self.scaled_shortcut),
            ("QUADRATIC-STEP", self.quadratic_step),
            ("STREAM-CONFIG", self.stream_config),
            *(("STREAM", r) for r in self.streams),
            *(("GROWTH", r) for r in self.growth),
            *(("VERDICT", r) for r in self.verdicts),
        ]

    def verdict(self, claim: int) -> str:
        return next(v.verdict for v in self.verdicts if v.claim == claim)

    def stream(self, family: str) -> tuple[Stream, ...]:
        return tuple(r for r in self.streams if r.family == family)

    def facts(self) -> dict[str, Any]:
        """Every field under its key: ``VERDICT[1].verdict``, ``STREAM[tanh,64].norm``, ``GROWTH[linear].exponent``."""
        out: dict[str, Any] = {}
        for kind, record in self.records():
            prefix = key_prefix(kind, vars(record))
            for f in SCHEMA[kind][1]:
                out[f"{prefix}.{f.name}"] = getattr(record, f.attribute)
        return out


def render(trace: Trace) -> str:
    lines = [BEGIN]
    for kind, record in trace.records():
        lines.append(render_record(kind, SCHEMA[kind][1], record))
    lines.append(END)
    return "\n".join(lines) + "\n"


def parse(text: str, source: str = "trace") -> Trace:
    """Read a whole trace; any deviation raises :class:`TraceParseError` with line and column."""
    records = parse_layout(text, source)
    by_kind: dict[str, list[Any]] = {}
    for (kind, _), record in zip(LAYOUT, records):
        by_kind.setdefault(kind, []).append(record)
    return Trace(
        scalar_stack=by_kind["SCALAR-STACK"][0],
        cancelling_branch=by_kind["CANCELLING-BRANCH"][0],
        zero_branch_stack=by_kind["ZERO-BRANCH-STACK"][0],
        scaled_shortcut=tuple(by_kind["SCALED-SHORTCUT"]),
        quadratic_step=by_kind["QUADRATIC-STEP"][0],
        stream_config=by_kind["STREAM-CONFIG"][0],
        streams=tuple(by_kind["STREAM"]),
        growth=tuple(by_kind["GROWTH"]),
        verdicts=tuple(by_kind["VERDICT"]),
    )


def parse_layout(text: str, source: str) -> list[Any]:
    lines = split_lines(text, source)
    if lines[0] != BEGIN:
        raise TraceParseError(f"first line must be {BEGIN!r}", 1, 1, source)
    records: list[Any] = []
    for position, (kind, fixed) in enumerate(LAYOUT):
        number = position + 2
        if number > len(lines):
            raise TraceParseError(f"trace ends early: missing {kind} record", len(lines), len(lines[-1]) + 1, source)
        line = lines[number - 1]
        head = line.split(" ", 1)[0]
        if head != kind:
            previous = LAYOUT[position - 1][0] if position else None
            if line == END:
                why = f"trace ends early: missing {kind} record"
            elif head == previous:
                why = f"too many {head} records: expected {kind}"
            elif head in SCHEMA:
                why = f"{head} record out of place: expected {kind}"
            else:
                why = f"unknown record {head!r}: expected {kind}"
            raise TraceParseError(why, number, 1, source)
        cls, fields = SCHEMA[kind]
        values = parse_record(line, number, kind, fields, source)
        for name, value in fixed:
            found = values[name.replace("-", "_")]
            if found != value:
                column = line.index(f" {name}=") + len(name) + 3
                raise TraceParseError(
                    f"{kind} {name}={found} out of order: expected {name}={value} here", number, column, source
                )
        records.append(cls(**values))
    end_number = len(LAYOUT) + 2
    if len(lines) < end_number:
        raise TraceParseError(f"missing final {END!r} line", len(lines), len(lines[-1]) + 1, source)
    if lines[end_number - 1] != END:
        head = lines[end_number - 1].split(" ", 1)[0]
        raise TraceParseError(f"expected {END!r}, found {head!r}", end_number, 1, source)
    if len(lines) > end_number:
        raise TraceParseError(f"text continues after {END!r}", end_number + 1, 1, source)
    return records
