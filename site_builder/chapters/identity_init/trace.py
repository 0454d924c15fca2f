"""Trace format ``identity-init-v1``: typed records, writer and strict parser.

Same text rules as ``residual-connections-v1``; deviations of the He-initialized
stack span many orders of magnitude, so they are written in ``%.6e``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...trace import BOOL, INT, REAL, SCI, Field, TraceParseError, parse_record, render_record, split_lines

VERSION = "identity-init-v1"
BEGIN = f"TRACE {VERSION} BEGIN"
END = f"TRACE {VERSION} END"

DEPTHS = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class Config:
    width: int  # of the residual stream
    hidden: int  # of each block's inner layer
    rows: int  # input rows
    seed: int  # default_rng seed: input first, then each block's two weights in order
    he_gain: float  # He: std = sqrt(gain / fan_in)
    he_std: float
    input_norm: float
    upstream: float  # every entry of the upstream gradient


@dataclass(frozen=True)
class DepthRow:
    depth: int
    zero_init_deviation: float  # ||h_depth - x|| with every block's second layer zero
    zero_init_exact: bool  # h_depth == x bit for bit
    he_deviation: float  # ||h_depth - x|| with both layers He-initialized
    he_relative: float  # he_deviation / ||x||


@dataclass(frozen=True)
class ZeroInitGradient:
    depth: int
    input_gradient_exact: bool  # the input gradient is the upstream, bit for bit
    second_layer_gradient_norm: float  # all blocks' zero-initialized layers together
    first_layer_gradient_norm: float  # all blocks' first layers together


@dataclass(frozen=True)
class ReZero:
    alpha: float
    deviation: float  # ||y - x||
    identity_exact: bool
    branch_output_norm: float  # ||F(x)||
    alpha_gradient: float  # dL/dalpha from the engine
    alpha_gradient_by_hand: float  # upstream . F(x) in NumPy
    branch_gradient_norm: float  # the branch weights' gradient at alpha = 0


SCHEMA: dict[str, tuple[type, tuple[Field, ...]]] = {
    "CONFIG": (
        Config,
        (
            Field("width", INT), Field("hidden", INT), Field("rows", INT), Field("seed", INT),
            Field("he-gain", REAL), Field("he-std", REAL), Field("input-norm", REAL), Field("upstream", REAL),
        ),
    ),
    "DEPTH": (
        DepthRow,
        (
            Field("depth", INT), Field("zero-init-deviation", REAL), Field("zero-init-exact", BOOL),
            Field("he-deviation", SCI), Field("he-relative", SCI),
        ),
    ),
    "ZERO-INIT-GRADIENT": (
        ZeroInitGradient,
        (
            Field("depth", INT), Field("input-gradient-exact", BOOL),
            Field("second-layer-gradient-norm", REAL), Field("first-layer-gradient-norm", REAL),
        ),
    ),
    "REZERO": (
        ReZero,
        (
            Field("alpha", REAL), Field("deviation", REAL), Field("identity-exact", BOOL),
            Field("branch-output-norm", REAL), Field("alpha-gradient", REAL), Field("alpha-gradient-by-hand", REAL),
            Field("branch-gradient-norm", REAL),
        ),
    ),
}

# Each line between BEGIN and END: its record kind and the fields whose values the layout fixes.
LAYOUT: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("CONFIG", ()),
    *(("DEPTH", (("depth", d),)) for d in DEPTHS),
    ("ZERO-INIT-GRADIENT", (("depth", max(DEPTHS)),)),
    ("REZERO", ()),
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
    zero_init_gradient: ZeroInitGradient
    rezero: ReZero

    def records(self) -> list[tuple[str, object]]:
        return [
            ("CONFIG", self.config),
            *(("DEPTH", row) for row in self.depths),
            ("ZERO-INIT-GRADIENT", self.zero_init_gradient),
            ("REZERO", self.rezero),
        ]

    def facts(self) -> dict[str, Any]:
        """Every field under its provenance key: ``CONFIG.width``, ``DEPTH[8].he-deviation``, ..."""
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
    return Trace(
        config=records[0], depths=tuple(records[1:-2]), zero_init_gradient=records[-2], rezero=records[-1]
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
