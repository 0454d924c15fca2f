"""Trace format ``rmsnorm-v1``: the chapter's fourteen lines, ``KIND|field=value|...``, each record declared once.

The course publishes this chapter's trace in its own grammar: fields joined by
``|``, field names with underscores, no BEGIN/END lines. Fixed tokens of that
grammar (``axis=last``, ``replay=bitwise``, ``trace=rust-authored``, the next
chapter's id) are declared as words, so the strict reader refuses anything else.
"""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import (
    Bool,
    Int,
    Name,
    Real,
    Shape,
    Text,
    Vector,
    decimals,
    lines,
    literal,
    record,
    trace_format,
)

ERROR_CASES = ("rank-zero", "width-mismatch", "zero-energy-epsilon-zero")


@record("META")
class Meta:
    epsilon: Real  # ε of the production layer
    feature_width: Int  # d, the length of the last axis
    gain_name: Name  # the gain's parameter name
    no_decay: Bool  # the gain sits in the optimizer's no-decay group, and only there


@record("PRIMARY")
class Primary:
    input: Vector  # x
    mean_square: Vector  # ms = mean(x²) over the last axis, kept as an axis of length one
    inverse_rms: Vector  # exp(-0.5 · log(ms + ε))
    normalized: Vector  # x̂ = x · inverse_rms
    gain: Vector  # g
    output: Vector  # y = x̂ · g


@record("BACKWARD")
class Backward:
    upstream: Vector  # ȳ
    input_gradient: Vector  # x̄
    gain_gradient: Vector  # ḡ


@record("SCALE", index="mode")
class Scale:
    """x̂ of a base vector and of the same vector times a factor, with a gain of ones."""

    mode: Name
    epsilon: Real
    factor: Real
    base: Vector
    scaled: Vector
    max_abs_diff: Real  # printed with 18, 9 or 6 decimals, by mode


@record("ZERO")
class Zero:
    input: Vector
    output: Vector
    finite: Bool


@record("BATCH")
class Batch:
    shape: Shape
    output: Vector  # row-major
    axis: Annotated[str, literal("last")] = "last"


@record("HISTORY")
class History:
    batch_anchor_a: Vector  # BatchNorm of the anchor inside the batch {companion, anchor}
    batch_anchor_b: Vector  # BatchNorm of the anchor inside a batch of copies of itself
    layer_norm: Vector  # LayerNorm of the anchor
    rms_norm: Vector  # RMSNorm of the anchor, ε = 0
    rms_mean: Real  # the mean of that RMSNorm output


@record("ERROR", index="case")
class Error:
    case: Name
    rejected: Bool
    message: Text


@record("PROOF")
class Proof:
    """Written only after the fixtures verified each property."""

    normalized_mean_square: Real
    input_checks: Int
    gain_checks: Int
    tolerance: Real
    gradcheck: Bool
    replay: Annotated[str, literal("bitwise")] = "bitwise"
    trace: Annotated[str, literal("rust-authored")] = "rust-authored"  # a fixed token of the course's trace grammar


@record("NEXT")
class Next:
    chapter: Annotated[str, literal("26-qkv-projections")] = "26-qkv-projections"


# region: trace-format
@trace_format("rmsnorm-v1", separator="|", bookends=False, field_names="snake")
class Trace:
    meta: Meta
    primary: Primary
    backward: Backward
    scale: tuple[Scale, ...] = lines(
        {"mode": "ideal", "max_abs_diff": decimals(18)},
        {"mode": "production", "max_abs_diff": decimals(9)},
        {"mode": "near-zero", "max_abs_diff": decimals(6)},
    )
    zero: Zero
    batch: Batch
    history: History
    error: tuple[Error, ...] = lines(case=ERROR_CASES)
    proof: Proof
    next: Next


# endregion: trace-format
