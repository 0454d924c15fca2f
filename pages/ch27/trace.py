"""Trace format ``self-attention-v1``: the chapter's twenty-one lines, ``KIND|field=value|...``, each record declared once.

The course's grammar, as in chapter 26: fields joined by ``|``, field names with
underscores, no BEGIN/END lines. Each mixture row prints its weighted value rows
as a matrix, ``[[a,b],[c,d]]``, read with :data:`TERMS`. The refusals print no
message; each prints the numbers it was refused for, and refusals of different
causes print different fields, so ``ERROR`` is declared by four indexed records.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from site_builder.trace import (
    VECTOR,
    Bool,
    Int,
    Kind,
    Real,
    Shape,
    Vector,
    choice,
    decimals,
    format_real,
    lines,
    literal,
    record,
    trace_format,
)
from site_builder.trace.declare import VectorValue
from site_builder.trace.format import ValueSyntaxError
from site_builder.trace.numbers import flat

VALUE_WIDTH = 2  # the length of each value row the mixture terms print


def _read_terms(text: str) -> tuple[float, ...]:
    """``[[a,b],[c,d]]``: rows of six-decimal reals, each of the value width, read into one row-major tuple."""
    if not (text.startswith("[[") and text.endswith("]]")):
        raise ValueSyntaxError(f"expected rows like [[1.000000,2.000000],[3.000000,4.000000]], found {text!r}")
    values: list[float] = []
    offset = 1
    for row in text[1:-1].split("],["):
        item = ("[" if not row.startswith("[") else "") + row + ("]" if not row.endswith("]") else "")
        start = offset - (1 if not row.startswith("[") else 0)
        try:
            read = VECTOR.read(item)
        except ValueSyntaxError as exc:
            raise ValueSyntaxError(str(exc), start + exc.offset) from None
        if len(read) != VALUE_WIDTH:
            raise ValueSyntaxError(f"each row holds {VALUE_WIDTH} values, found {len(read)}", start)
        values += read
        offset += len(row) + 3
    return tuple(values)


def _write_terms(values: Iterable[float]) -> str:
    items: list[float] = list(flat(values))
    rows = [items[i : i + VALUE_WIDTH] for i in range(0, len(items), VALUE_WIDTH)]
    return "[" + ",".join("[" + ",".join(format_real(v) for v in row) + "]" for row in rows) + "]"


TERMS = Kind("rows of weighted values", _read_terms, _write_terms)
Terms = Annotated[VectorValue, TERMS]
Operand = Annotated[str, choice("query", "key", "value")]


@record("META")
class Meta:
    shape: Shape  # [B, T, d_k] of the queries
    key_width: Int  # d_k
    value_width: Int  # d_v
    scale: Real  # 1 / sqrt(d_k)
    softmax_axis: Annotated[str, literal("key")] = "key"
    masked: Bool = False


@record("QUERY")
class Query:
    shape: Shape
    values: Vector


@record("KEY")
class Key:
    shape: Shape
    values: Vector


@record("VALUE")
class Value:
    shape: Shape
    values: Vector


@record("DOT_PRODUCTS")
class DotProducts:
    shape: Shape
    values: Vector  # Q Kᵀ, row-major [B, T, T]


@record("SCALED_SCORES")
class ScaledScores:
    shape: Shape
    values: Vector  # S = Q Kᵀ / sqrt(d_k)


@record("PROBABILITY_ROW", index="query")
class ProbabilityRow:
    query: Int
    values: Vector  # A_i, the softmax of S_i over the keys
    sum: Real


@record("MIXTURE_ROW", index="query")
class MixtureRow:
    query: Int
    probabilities: Vector  # A_i
    terms: Terms  # row j is A_ij · v_j
    output: Vector  # o_i = Σ_j A_ij v_j


@record("BACKWARD")
class Backward:
    seed: Vector  # Ō
    query_gradient: Vector  # Q̄
    key_gradient: Vector  # K̄
    value_gradient: Vector  # V̄


@record("BATCH_SHAPE")
class BatchShape:
    batches: Int
    query: Shape
    key: Shape
    value: Shape
    probabilities: Shape
    output: Shape
    isolated: Bool  # each batch's output equals its own head run alone


@record("SINGLE_TOKEN")
class SingleToken:
    shape: Shape
    query: Vector
    key: Vector
    value: Vector
    raw: Vector
    scaled: Vector
    probabilities: Vector
    output: Vector
    query_gradient_zero: Bool
    key_gradient_zero: Bool


@record("ERROR", index="case")
class RankError:
    case: Annotated[str, literal("query-rank")]
    kind: Annotated[str, literal("input-rank")]
    operand: Operand
    rank: Int
    rejected: Bool


@record("ERROR", index="case")
class CountError:
    """Batch sizes or token counts that disagree."""

    case: Annotated[str, choice("batch-mismatch", "token-mismatch")]
    kind: Annotated[str, choice("batch-mismatch", "token-mismatch")]
    query: Int
    key: Int
    value: Int
    rejected: Bool


@record("ERROR", index="case")
class EmptyError:
    case: Annotated[str, literal("empty-tokens")]
    kind: Annotated[str, literal("empty-token-axis")]
    tokens: Int
    rejected: Bool


@record("ERROR", index="case")
class WidthError:
    case: Annotated[str, literal("query-key-width")]
    kind: Annotated[str, literal("query-key-width-mismatch")]
    query: Int
    key: Int
    rejected: Bool


@record("HISTORY")
class History:
    earlier: Annotated[str, literal("recurrent-fixed-context")] = "recurrent-fixed-context"
    bridge: Annotated[str, literal("additive-encoder-decoder-alignment")] = "additive-encoder-decoder-alignment"
    transformer: Annotated[str, literal("scaled-dot-product-self-attention")] = "scaled-dot-product-self-attention"
    comparison: Annotated[str, literal("all-sequence-positions")] = "all-sequence-positions"


@record("PROOF")
class Proof:
    """Written only after the fixtures verified each property."""

    row_sum_tolerance: Annotated[float, decimals(12)]
    query_checks: Int
    key_checks: Int
    value_checks: Int
    gradient_tolerance: Real
    gradcheck: Bool
    replay: Annotated[str, literal("bitwise")] = "bitwise"
    unmasked: Bool = True


@record("NEXT")
class Next:
    chapter: Annotated[str, literal("28-causal-masking")] = "28-causal-masking"


# region: trace-format
@trace_format("self-attention-v1", separator="|", bookends=False, field_names="snake")
class Trace:
    meta: Meta = lines({"masked": False})  # this chapter's head has no mask
    query: Query
    key: Key
    value: Value
    dot_products: DotProducts
    scaled_scores: ScaledScores
    probability_row: tuple[ProbabilityRow, ...] = lines(query=range(2))
    mixture_row: tuple[MixtureRow, ...] = lines(query=range(2))
    backward: Backward
    batch_shape: BatchShape
    single_token: SingleToken
    rank_error: tuple[RankError, ...] = lines({"case": "query-rank", "operand": "query"})
    count_error: tuple[CountError, ...] = lines(
        {"case": "batch-mismatch", "kind": "batch-mismatch"}, {"case": "token-mismatch", "kind": "token-mismatch"}
    )
    empty_error: tuple[EmptyError, ...] = lines({"case": "empty-tokens"})
    width_error: tuple[WidthError, ...] = lines({"case": "query-key-width"})
    history: History
    proof: Proof = lines({"unmasked": True})
    next: Next


# endregion: trace-format
