"""Trace format ``residual-connections-v1``: typed records, writer and strict parser."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...trace import (
    BOOL,
    INT,
    NAME,
    NAMES,
    REAL,
    SHAPE,
    SHAPE_X,
    VECTOR,
    Field,
    TraceParseError,
    literal,
    parse_record,
    render_record,
    split_lines,
)

VERSION = "residual-connections-v1"
BEGIN = f"TRACE {VERSION} BEGIN"
END = f"TRACE {VERSION} END"
STACK_DEPTHS = 5  # depth 0 (the input) through depth 4

Vector = tuple[float, ...]
Shape = tuple[int, ...]


@dataclass(frozen=True)
class Config:
    name: str
    shape: Shape
    branch_parameter: str


@dataclass(frozen=True)
class Forward:
    input: Vector
    branch: Vector
    output: Vector


@dataclass(frozen=True)
class Backward:
    upstream: Vector
    identity: Vector
    branch: Vector
    input: Vector


@dataclass(frozen=True)
class Parameter:
    name: str
    shape: Shape
    gradient: Vector


@dataclass(frozen=True)
class ZeroBranch:
    output: Vector
    input_gradient: Vector
    weight_gradient: Vector
    weight_gradient_nonzero: bool


@dataclass(frozen=True)
class ShapeErrorCase:
    identity: Shape
    branch: Shape
    broadcastable: bool
    rejected: bool


@dataclass(frozen=True)
class StackRow:
    depth: int
    plain: Vector
    residual: Vector


@dataclass(frozen=True)
class StackGradient:
    plain: Vector
    residual: Vector
    parameters: tuple[str, ...]


@dataclass(frozen=True)
class GradCheck:
    input_checks: int
    weight_checks: int
    tolerance: float
    passed: bool


@dataclass(frozen=True)
class Proof:
    identity: str = "exact"
    gradient: str = "added"
    parameters: str = "branch-owned"
    broadcast: str = "forbidden"


# Record kind, its fields in order, and the dataclass it fills.
SCHEMA: dict[str, tuple[type, tuple[Field, ...]]] = {
    "CONFIG": (Config, (Field("name", NAME), Field("shape", SHAPE_X), Field("branch-parameter", NAME))),
    "FORWARD": (Forward, (Field("input", VECTOR), Field("branch", VECTOR), Field("output", VECTOR))),
    "BACKWARD": (
        Backward,
        (Field("upstream", VECTOR), Field("identity", VECTOR), Field("branch", VECTOR), Field("input", VECTOR)),
    ),
    "PARAMETER": (Parameter, (Field("name", NAME), Field("shape", SHAPE_X), Field("gradient", VECTOR))),
    "ZERO-BRANCH": (
        ZeroBranch,
        (
            Field("output", VECTOR),
            Field("input-gradient", VECTOR),
            Field("weight-gradient", VECTOR),
            Field("weight-gradient-nonzero", BOOL),
        ),
    ),
    "SHAPE-ERROR": (
        ShapeErrorCase,
        (Field("identity", SHAPE), Field("branch", SHAPE), Field("broadcastable", BOOL), Field("rejected", BOOL)),
    ),
    "STACK": (StackRow, (Field("depth", INT), Field("plain", VECTOR), Field("residual", VECTOR))),
    "STACK-GRADIENT": (
        StackGradient,
        (Field("plain", VECTOR), Field("residual", VECTOR), Field("parameters", NAMES)),
    ),
    "GRADCHECK": (
        GradCheck,
        (Field("input-checks", INT), Field("weight-checks", INT), Field("tolerance", REAL), Field("passed", BOOL)),
    ),
    "PROOF": (
        Proof,
        (
            Field("identity", literal("exact")),
            Field("gradient", literal("added")),
            Field("parameters", literal("branch-owned")),
            Field("broadcast", literal("forbidden")),
        ),
    ),
}

# The sixteen lines, in order (STACK repeats once per depth).
ORDER: tuple[str, ...] = (
    "CONFIG", "FORWARD", "BACKWARD", "PARAMETER", "ZERO-BRANCH", "SHAPE-ERROR",
    *("STACK",) * STACK_DEPTHS,
    "STACK-GRADIENT", "GRADCHECK", "PROOF",
)


@dataclass(frozen=True)
class Trace:
    config: Config
    forward: Forward
    backward: Backward
    parameter: Parameter
    zero_branch: ZeroBranch
    shape_error: ShapeErrorCase
    stack: tuple[StackRow, ...]
    stack_gradient: StackGradient
    gradcheck: GradCheck
    proof: Proof

    def records(self) -> list[tuple[str, object]]:
        """(kind, record) in trace order."""
        out: list[tuple[str, object]] = [
            ("CONFIG", self.config),
            ("FORWARD", self.forward),
            ("BACKWARD", self.backward),
            ("PARAMETER", self.parameter),
            ("ZERO-BRANCH", self.zero_branch),
            ("SHAPE-ERROR", self.shape_error),
        ]
        out += [("STACK", row) for row in self.stack]
        out += [("STACK-GRADIENT", self.stack_gradient), ("GRADCHECK", self.gradcheck), ("PROOF", self.proof)]
        return out

    def facts(self) -> dict[str, Any]:
        """Every field under its provenance key: ``FORWARD.output``, ``STACK[4].plain``, ..."""
        out: dict[str, Any] = {}
        for kind, record in self.records():
            prefix = f"STACK[{record.depth}]" if kind == "STACK" else kind  # type: ignore[attr-defined]
            for f in SCHEMA[kind][1]:
                out[f"{prefix}.{f.name}"] = getattr(record, f.attribute)
        return out


# region: trace-writer
def render(trace: Trace) -> str:
    """One line per record, in order, between the BEGIN and END lines."""
    lines = [BEGIN]
    for kind, record in trace.records():
        lines.append(render_record(kind, SCHEMA[kind][1], record))
    lines.append(END)
    return "\n".join(lines) + "\n"
# endregion: trace-writer


def parse(text: str, source: str = "trace") -> Trace:
    """Read a whole trace; any deviation raises :class:`TraceParseError` with line and column."""
    lines = split_lines(text, source)
    if lines[0] != BEGIN:
        raise TraceParseError(f"first line must be {BEGIN!r}", 1, 1, source)
    parsed: list[object] = []
    seen: set[str] = set()
    position = 0  # index into ORDER
    for number, line in enumerate(lines[1:], start=2):
        kind = line.split(" ", 1)[0]
        if position == len(ORDER):
            if line == END:
                if number != len(lines):
                    raise TraceParseError(f"text continues after {END!r}", number + 1, 1, source)
                break
            raise TraceParseError(f"expected {END!r}, found {kind!r}", number, 1, source)
        expected = ORDER[position]
        if kind != expected:
            if line == END:
                why = f"trace ends early: missing {expected} record"
            elif kind in seen and kind != "STACK":
                why = f"duplicate {kind} record (expected {expected})"
            elif kind == "STACK" and "STACK" in seen:
                why = f"too many STACK records: expected {expected}"
            elif kind in SCHEMA:
                why = f"{kind} record out of order: missing {expected} record before it"
            else:
                why = f"unknown record {kind!r}: expected {expected}"
            raise TraceParseError(why, number, 1, source)
        cls, fields = SCHEMA[kind]
        values = parse_record(line, number, kind, fields, source)
        if kind == "STACK":
            depth = position - ORDER.index("STACK")
            if values["depth"] != depth:
                raise TraceParseError(
                    f"STACK depth {values['depth']} out of order: expected depth={depth}",
                    number,
                    len("STACK depth=") + 1,
                    source,
                )
        parsed.append(cls(**values))
        seen.add(kind)
        position += 1
    else:
        why = f"trace ends early: missing {ORDER[position]} record" if position < len(ORDER) else f"missing final {END!r} line"
        raise TraceParseError(why, len(lines), len(lines[-1]) + 1, source)
    stack_start = ORDER.index("STACK")
    return Trace(
        config=parsed[0],  # type: ignore[arg-type]
        forward=parsed[1],  # type: ignore[arg-type]
        backward=parsed[2],  # type: ignore[arg-type]
        parameter=parsed[3],  # type: ignore[arg-type]
        zero_branch=parsed[4],  # type: ignore[arg-type]
        shape_error=parsed[5],  # type: ignore[arg-type]
        stack=tuple(parsed[stack_start : stack_start + STACK_DEPTHS]),  # type: ignore[arg-type]
        stack_gradient=parsed[stack_start + STACK_DEPTHS],  # type: ignore[arg-type]
        gradcheck=parsed[stack_start + STACK_DEPTHS + 1],  # type: ignore[arg-type]
        proof=parsed[stack_start + STACK_DEPTHS + 2],  # type: ignore[arg-type]
    )


def record_fields(kind: str) -> tuple[str, ...]:
    return tuple(f.name for f in SCHEMA[kind][1])

