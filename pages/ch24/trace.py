"""Trace format ``residual-connections-v1``: the chapter's sixteen lines, each record declared once."""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import Bool, Int, Name, Names, Real, Shape, ShapeX, Vector, lines, literal, record, trace_format

STACK_DEPTHS = 5  # depth 0 (the input) through depth 4


@record("CONFIG")
class Config:
    name: Name
    shape: ShapeX
    branch_parameter: Name


@record("FORWARD")
class Forward:
    input: Vector
    branch: Vector  # F(x)
    output: Vector  # y


@record("BACKWARD")
class Backward:
    upstream: Vector  # ȳ
    identity: Vector  # what the identity edge sends back
    branch: Vector  # J_F(x)ᵀȳ, measured on a separate probe graph
    input: Vector  # x̄ from the residual graph


@record("PARAMETER")
class Parameter:
    name: Name
    shape: ShapeX
    gradient: Vector  # row-major


@record("ZERO-BRANCH")
class ZeroBranch:
    output: Vector
    input_gradient: Vector
    weight_gradient: Vector
    weight_gradient_nonzero: Bool


@record("SHAPE-ERROR")
class ShapeErrorCase:
    identity: Shape
    branch: Shape
    broadcastable: Bool  # generic addition accepted the pair
    rejected: Bool  # residual_add refused it


@record("STACK", index="depth")
class StackRow:
    depth: Int
    plain: Vector
    residual: Vector


@record("STACK-GRADIENT")
class StackGradient:
    plain: Vector
    residual: Vector
    parameters: Names


@record("GRADCHECK")
class GradCheck:
    input_checks: Int
    weight_checks: Int
    tolerance: Real
    passed: Bool


@record("PROOF")
class Proof:
    """Each property is written only after the fixtures verified it."""

    identity: Annotated[str, literal("exact")] = "exact"
    gradient: Annotated[str, literal("added")] = "added"
    parameters: Annotated[str, literal("branch-owned")] = "branch-owned"
    broadcast: Annotated[str, literal("forbidden")] = "forbidden"


# region: trace-format
@trace_format("residual-connections-v1")
class Trace:
    config: Config
    forward: Forward
    backward: Backward
    parameter: Parameter
    zero_branch: ZeroBranch
    shape_error: ShapeErrorCase
    stack: tuple[StackRow, ...] = lines(depth=range(STACK_DEPTHS))
    stack_gradient: StackGradient
    gradcheck: GradCheck
    proof: Proof


# endregion: trace-format
