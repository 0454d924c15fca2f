"""Trace format ``deep-stack-v1``: typed records, writer and strict parser.

Same text rules as ``residual-connections-v1``; plain-stack gradient norms
span dozens of orders of magnitude, so they are written in ``%.6e``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...trace import BOOL, INT, REAL, SCI, Field, TraceParseError, choice, parse_record, render_record, split_lines

VERSION = "deep-stack-v1"
BEGIN = f"TRACE {VERSION} BEGIN"
END = f"TRACE {VERSION} END"

# The depths the spec publishes, then the extension past the 20-matrix bank.
PUBLISHED_DEPTHS = (1, 5, 10, 20)
EXTENDED_DEPTHS = (30, 40, 50, 60, 70, 80, 90, 100)
DEPTHS = PUBLISHED_DEPTHS + EXTENDED_DEPTHS


@dataclass(frozen=True)
class Config:
    seed: int  # np.random.seed for the weight bank
    width: int  # C
    batch: int  # B
    scale: float  # numerator of the weight scale: randn(C, C) * (scale / sqrt(C))
    published_bank: int  # matrices in the spec's bank
    drawn: int  # matrices drawn in all (the bank first, then more from the same stream)
    input_seed: int  # RandomState seed of the input
    upstream: float  # every entry of the upstream gradient
    upstream_norm: float


@dataclass(frozen=True)
class DepthRow:
    depth: int
    part: str  # "published" (within the spec's bank) or "extended"
    plain_norm: float
    plain_norm_by_hand: float
    residual_norm: float
    residual_norm_by_hand: float
    survival: float  # residual norm / upstream norm


@dataclass(frozen=True)
class GradCheck:
    seed: int
    width: int
    rows: int
    step: float
    checks: int
    max_relative_error: float
    bar: float
    passed: bool


SCHEMA: dict[str, tuple[type, tuple[Field, ...]]] = {
    "CONFIG": (
        Config,
        (
            Field("seed", INT), Field("width", INT), Field("batch", INT), Field("scale", REAL),
            Field("published-bank", INT), Field("drawn", INT), Field("input-seed", INT),
            Field("upstream", REAL), Field("upstream-norm", REAL),
        ),
    ),
    "DEPTH": (
        DepthRow,
        (
            Field("depth", INT), Field("part", choice("published", "extended")),
            Field("plain-norm", SCI), Field("plain-norm-by-hand", SCI),
            Field("residual-norm", REAL), Field("residual-norm-by-hand", REAL), Field("survival", REAL),
        ),
    ),
    "GRADCHECK": (
        GradCheck,
        (
            Field("seed", INT), Field("width", INT), Field("rows", INT), Field("step", SCI), Field("checks", INT),
            Field("max-relative-error", SCI), Field("bar", SCI), Field("passed", BOOL),
        ),
    ),
}

# Each line between BEGIN and END: its record kind and the fields whose values the layout fixes.
LAYOUT: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("CONFIG", ()),
    *(("DEPTH", (("depth", d), ("part", "published" if d in PUBLISHED_DEPTHS else "extended"))) for d in DEPTHS),
    ("GRADCHECK", ()),
)


def key_prefix(kind: str, index: Mapping[str, Any]) -> str:
    """A record's provenance prefix, from the values of its indexing fields."""
    if kind == "DEPTH":
        return f"DEPTH[{index['depth']}]"
    return kind


def all_keys() -> tuple[str, ...]:
    """Every fact key a trace of this version carries, in trace order (known without running anything)."""
    return tuple(
        f"{key_prefix(kind, dict(fixed))}.{f.name}" for kind, fixed in LAYOUT for f in SCHEMA[kind][1]
    )


@dataclass(frozen=True)
class Trace:
    config: Config
    depths: tuple[DepthRow, ...]
    gradcheck: GradCheck

    def records(self) -> list[tuple[str, object]]:
        return [("CONFIG", self.config), *(("DEPTH", row) for row in self.depths), ("GRADCHECK", self.gradcheck)]

    def depth(self, depth: int) -> DepthRow:
        for row in self.depths:
            if row.depth == depth:
                return row
        raise KeyError(f"no DEPTH record for depth {depth}")

    def facts(self) -> dict[str, Any]:
        """Every field under its provenance key: ``CONFIG.seed``, ``DEPTH[20].residual-norm``, ..."""
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
    return Trace(config=records[0], depths=tuple(records[1:-1]), gradcheck=records[-1])  # type: ignore[arg-type]


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
