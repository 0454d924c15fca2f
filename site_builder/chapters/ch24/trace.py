"""Trace format ``residual-connections-v1``: typed records, writer and strict parser."""

from __future__ import annotations

from dataclasses import dataclass

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
    LaidOut,
    Record,
    TraceLayout,
    literal,
)

VERSION = "residual-connections-v1"
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


@dataclass(frozen=True)
class Trace(LaidOut):
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


# The sixteen lines, in order: each record kind with its fields (STACK repeats once per depth).
LAYOUT = TraceLayout(
    VERSION,
    Trace,
    (
        Record(
            "CONFIG", Config, "config", (Field("name", NAME), Field("shape", SHAPE_X), Field("branch-parameter", NAME))
        ),
        Record("FORWARD", Forward, "forward", (Field("input", VECTOR), Field("branch", VECTOR), Field("output", VECTOR))),
        Record(
            "BACKWARD",
            Backward,
            "backward",
            (Field("upstream", VECTOR), Field("identity", VECTOR), Field("branch", VECTOR), Field("input", VECTOR)),
        ),
        Record(
            "PARAMETER",
            Parameter,
            "parameter",
            (Field("name", NAME), Field("shape", SHAPE_X), Field("gradient", VECTOR)),
        ),
        Record(
            "ZERO-BRANCH",
            ZeroBranch,
            "zero_branch",
            (
                Field("output", VECTOR),
                Field("input-gradient", VECTOR),
                Field("weight-gradient", VECTOR),
                Field("weight-gradient-nonzero", BOOL),
            ),
        ),
        Record(
            "SHAPE-ERROR",
            ShapeErrorCase,
            "shape_error",
            (Field("identity", SHAPE), Field("branch", SHAPE), Field("broadcastable", BOOL), Field("rejected", BOOL)),
        ),
        Record(
            "STACK",
            StackRow,
            "stack",
            (Field("depth", INT), Field("plain", VECTOR), Field("residual", VECTOR)),
            index=("depth",),
            lines=tuple({"depth": depth} for depth in range(STACK_DEPTHS)),
        ),
        Record(
            "STACK-GRADIENT",
            StackGradient,
            "stack_gradient",
            (Field("plain", VECTOR), Field("residual", VECTOR), Field("parameters", NAMES)),
        ),
        Record(
            "GRADCHECK",
            GradCheck,
            "gradcheck",
            (Field("input-checks", INT), Field("weight-checks", INT), Field("tolerance", REAL), Field("passed", BOOL)),
        ),
        Record(
            "PROOF",
            Proof,
            "proof",
            (
                Field("identity", literal("exact")),
                Field("gradient", literal("added")),
                Field("parameters", literal("branch-owned")),
                Field("broadcast", literal("forbidden")),
            ),
        ),
    ),
)


# region: trace-writer
def render(trace: Trace) -> str:
    """One line per record, in order, between the BEGIN and END lines."""
    return LAYOUT.render(trace)
# endregion: trace-writer


parse = LAYOUT.parse  # any deviation raises TraceParseError with its line and column
