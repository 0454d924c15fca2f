"""Trace format ``path-expansion-v1``: typed records, writer and strict parser.

Same text rules as ``residual-connections-v1``; matrices are written as
row-major vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ...trace import INT, REAL, SCI, VECTOR, Field, TraceParseError, parse_record, render_record, split_lines

VERSION = "path-expansion-v1"
BEGIN = f"TRACE {VERSION} BEGIN"
END = f"TRACE {VERSION} END"

BLOCKS = 4  # L
WIDTH = 2

Vector = tuple[float, ...]


@dataclass(frozen=True)
class Config:
    blocks: int
    width: int
    seed: int  # default_rng seed of the branch matrices, drawn in block order
    scale: float  # each branch matrix is standard_normal((width, width)) * scale


@dataclass(frozen=True)
class Branch:
    block: int  # 1-based
    weight: Vector  # W_l, row-major; the block is x -> x + x @ W_l, Jacobian I + W_l (row-vector convention)


@dataclass(frozen=True)
class Jacobian:
    product: Vector  # (I + W_1)(I + W_2)...(I + W_L)
    path_sum: Vector  # sum over all subsets of blocks of the ordered product of their W_l
    autograd: Vector  # one backward pass per output coordinate through the engine
    paths: int  # terms in the path sum
    max_difference: float  # largest |a - b| between any two of the three


@dataclass(frozen=True)
class Length:
    length: int  # how many branches a path goes through
    count: int  # paths of that length, counted while enumerating
    sum: Vector  # the sum of those paths' products
    sum_norm: float  # its Frobenius norm
    mean_path_norm: float  # mean Frobenius norm of a single path of that length


SCHEMA: dict[str, tuple[type, tuple[Field, ...]]] = {
    "CONFIG": (Config, (Field("blocks", INT), Field("width", INT), Field("seed", INT), Field("scale", REAL))),
    "BRANCH": (Branch, (Field("block", INT), Field("weight", VECTOR))),
    "JACOBIAN": (
        Jacobian,
        (
            Field("product", VECTOR), Field("path-sum", VECTOR), Field("autograd", VECTOR), Field("paths", INT),
            Field("max-difference", SCI),
        ),
    ),
    "LENGTH": (
        Length,
        (
            Field("length", INT), Field("count", INT), Field("sum", VECTOR), Field("sum-norm", REAL),
            Field("mean-path-norm", REAL),
        ),
    ),
}

# Each line between BEGIN and END: its record kind and the fields whose values the layout fixes.
LAYOUT: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("CONFIG", ()),
    *(("BRANCH", (("block", n),)) for n in range(1, BLOCKS + 1)),
    ("JACOBIAN", ()),
    *(("LENGTH", (("length", k),)) for k in range(BLOCKS + 1)),
)


def key_prefix(kind: str, index: Mapping[str, Any]) -> str:
    """A record's provenance prefix, from the values of its indexing fields."""
    if kind == "BRANCH":
        return f"BRANCH[{index['block']}]"
    if kind == "LENGTH":
        return f"LENGTH[{index['length']}]"
    return kind


def all_keys() -> tuple[str, ...]:
    """Every fact key a trace of this version carries, in trace order (known without running anything)."""
    return tuple(
        f"{key_prefix(kind, dict(fixed))}.{f.name}" for kind, fixed in LAYOUT for f in SCHEMA[kind][1]
    )


@dataclass(frozen=True)
class Trace:
    config: Config
    branches: tuple[Branch, ...]
    jacobian: Jacobian
    lengths: tuple[Length, ...]

    def records(self) -> list[tuple[str, object]]:
        return [
            ("CONFIG", self.config),
            *(("BRANCH", b) for b in self.branches),
            ("JACOBIAN", self.jacobian),
            *(("LENGTH", k) for k in self.lengths),
        ]

    def facts(self) -> dict[str, Any]:
        """Every field under its provenance key: ``BRANCH[1].weight``, ``LENGTH[2].count``, ..."""
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
        config=records[0],
        branches=tuple(records[1 : 1 + BLOCKS]),
        jacobian=records[1 + BLOCKS],
        lengths=tuple(records[2 + BLOCKS :]),
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
