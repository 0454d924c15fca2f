"""Trace format ``qkv-projections-v1``: the chapter's seventeen lines, ``KIND|field=value|...``, each record declared once.

The course publishes this chapter's trace in its own grammar: fields joined by
``|``, field names with underscores, no BEGIN/END lines. Its shapes may hold a
zero (an empty batch or token axis is a valid input here), which the shared
``Shape`` kind refuses, so the empty-shape record reads its shapes with
:data:`SHAPE_WITH_ZEROS`. Fixed tokens of the grammar (the history labels,
``replay=bitwise``, the next chapter's id) are declared as words, so the strict
reader refuses anything else; the fixtures verify each before it is written.
"""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import (
    Bool,
    Int,
    Kind,
    Name,
    Names,
    Real,
    Shape,
    Text,
    Vector,
    choice,
    format_shape_brackets,
    lines,
    literal,
    record,
    trace_format,
)
from site_builder.trace.format import ValueSyntaxError
from site_builder.trace.numbers import INT_RE

ROLES = ("query", "key", "value")
TENSORS = ("Q", "K", "V")
ERROR_CASES = ("rank-two", "input-width", "branch-mismatch")
Role = Annotated[str, choice(*ROLES)]
Unchanged = Annotated[str, choice("bitwise-unchanged", "changed")]


def _read_shape_with_zeros(text: str) -> tuple[int, ...]:
    """``[0,2,3]``: like the shared shape kind, but a dimension may be zero (never ``00`` or ``-1``)."""
    if not (text.startswith("[") and text.endswith("]")) or len(text) < 3:
        raise ValueSyntaxError(f"expected a shape like [0,2,3], found {text!r}")
    dims: list[int] = []
    offset = 1
    for item in text[1:-1].split(","):
        if not INT_RE.fullmatch(item):
            raise ValueSyntaxError(f"expected a dimension (a whole number, zero allowed), found {item!r}", offset)
        dims.append(int(item))
        offset += len(item) + 1
    return tuple(dims)


SHAPE_WITH_ZEROS = Kind("shape with zeros", _read_shape_with_zeros, lambda v: format_shape_brackets(tuple(v)))
EmptyShape = Annotated[tuple[int, ...], SHAPE_WITH_ZEROS]


@record("META")
class Meta:
    input_shape: Shape  # [batch, tokens, d_model]
    model_width: Int  # d_model
    head_width: Int  # d_head
    bias: Bool  # the projections have a bias (they have none)
    parameter_count: Int  # 3 · d_model · d_head
    branch_order: Names  # the roles, in the order the layer holds them


@record("INPUT")
class Input:
    values: Vector  # X, row-major


@record("PROJECTION", index="role")
class Projection:
    role: Role
    tensor: Annotated[str, choice(*TENSORS)]
    parameter: Name  # the weight's parameter name
    weight_shape: Shape  # [d_model, d_head]
    weights: Vector  # W_r, row-major
    output_shape: Shape  # [batch, tokens, d_head]
    output: Vector  # X W_r, row-major


@record("BACKWARD")
class Backward:
    query_upstream: Vector  # Ū_Q, the gradient of the loss with respect to Q
    key_upstream: Vector  # Ū_K
    value_upstream: Vector  # Ū_V
    input_gradient_shape: Shape
    input_gradient: Vector  # X̄ = Ū_Q W_Qᵀ + Ū_K W_Kᵀ + Ū_V W_Vᵀ


@record("WEIGHT_GRADIENT", index="role")
class WeightGradient:
    role: Role
    shape: Shape
    values: Vector  # W̄_r = X_(BT)ᵀ Ū_r,(BT)


@record("INDEPENDENCE")
class Independence:
    """One entry of W_Q changed: which outputs moved, bit for bit."""

    changed: Role
    query_changed: Bool
    key_output: Unchanged
    value_output: Unchanged


@record("EMPTY_SHAPES")
class EmptyShapes:
    batch_input: EmptyShape  # an empty batch axis
    batch_query: EmptyShape
    batch_key: EmptyShape
    batch_value: EmptyShape
    token_input: EmptyShape  # an empty token axis
    token_query: EmptyShape
    token_key: EmptyShape
    token_value: EmptyShape


@record("ERROR", index="case")
class Error:
    case: Name
    rejected: Bool
    message: Text  # the layer's message, verbatim


@record("HISTORY")
class History:
    """What the two sources project from: a retrospective reading, fixed words of the course."""

    earlier_left: Annotated[str, literal("decoder-state")] = "decoder-state"
    earlier_right: Annotated[str, literal("encoder-annotations")] = "encoder-annotations"
    transformer_source: Annotated[str, literal("one-sequence")] = "one-sequence"
    mapping: Annotated[str, literal("retrospective")] = "retrospective"


@record("PROOF")
class Proof:
    """Written only after the fixtures verified each property."""

    input_checks: Int
    query_weight_checks: Int
    key_weight_checks: Int
    value_weight_checks: Int
    tolerance: Real
    gradcheck: Bool
    replay: Annotated[str, literal("bitwise")] = "bitwise"
    names: Annotated[str, literal("unique")] = "unique"
    initialization: Annotated[str, literal("transactional")] = "transactional"


@record("NEXT")
class Next:
    chapter: Annotated[str, literal("27-self-attention")] = "27-self-attention"


# region: trace-format
@trace_format("qkv-projections-v1", separator="|", bookends=False, field_names="snake")
class Trace:
    meta: Meta = lines({"branch_order": ROLES})
    input: Input
    projection: tuple[Projection, ...] = lines(
        {"role": role, "tensor": tensor} for role, tensor in zip(ROLES, TENSORS, strict=True)
    )
    backward: Backward
    weight_gradient: tuple[WeightGradient, ...] = lines(role=ROLES)
    independence: Independence = lines({"changed": "query"})
    empty_shapes: EmptyShapes
    error: tuple[Error, ...] = lines(case=ERROR_CASES)
    history: History
    proof: Proof
    next: Next


# endregion: trace-format
