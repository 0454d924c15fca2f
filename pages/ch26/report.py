"""The learner report: one ``key=value`` line each, frozen as the chapter's expected output."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from site_builder.trace import KeyValueReport, format_bool, format_real, format_shape_brackets, format_vector

from .trace import Trace

CHAPTER = "26-qkv-projections"
# The sentences and the history labels are report values shared with the course's own implementation of this
# chapter, so that both print the same report byte for byte.
PREDICTION = "three independent bias-free projections preserve batch and token axes"
HISTORY = "additive_query:decoder_state additive_key_value:encoder_annotations self_attention_qkv:hidden_sequence"
NEXT = "compare queries with keys and mix values"
VIEWS = "three"  # the word the shape rules write for "one shape for each of Q, K and V"

REPORT = KeyValueReport(
    (
        "chapter",
        "prediction",
        "config",
        "input",
        "query_weight",
        "key_weight",
        "value_weight",
        "query",
        "key",
        "value",
        "parameter_names",
        "parameter_count",
        "shape_rule",
        "batch_probe",
        "empty_tokens",
        "history",
        "upstream_query",
        "upstream_key",
        "upstream_value",
        "input_gradient",
        "query_weight_gradient",
        "key_weight_gradient",
        "value_weight_gradient",
        "gradcheck",
        "initialization",
        "errors",
        "same_fixture_replays_bitwise",
        "next",
    )
)


def _tensor(shape: Sequence[int], values: Iterable[float]) -> str:
    return f"shape:{format_shape_brackets(tuple(shape))} values:{format_vector(values)}"


def _rule(shapes: tuple[Sequence[int], Sequence[int]]) -> str:
    """``[1,2,3]->three*[1,2,2]``: an input shape and the one shape all three views share."""
    given, each = shapes
    return f"{format_shape_brackets(tuple(given))}->{VIEWS}*{format_shape_brackets(tuple(each))}"


# region: report-renderer
def render_report(
    t: Trace,
    shapes: Mapping[str, tuple[Sequence[int], Sequence[int]]],
    initialization: Mapping[str, bool],
    refusals: Mapping[str, bool],
    seed: int,
    replays_bitwise: bool,
) -> str:
    """The learner report, every value formatted by the trace's number rules."""
    m, b, p = t.meta, t.backward, t.proof
    projection = {row.role: row for row in t.projection}
    gradient = {row.role: row for row in t.weight_gradient}
    batch, tokens = m.input_shape[0], m.input_shape[1]
    names = ",".join(projection[role].parameter for role in m.branch_order)
    independent = t.independence.query_changed and "changed" not in (
        t.independence.key_output,
        t.independence.value_output,
    )
    lines = [
        ("chapter", CHAPTER),
        ("prediction", PREDICTION),
        (
            "config",
            f"batch:{batch} tokens:{tokens} d_model:{m.model_width} d_head:{m.head_width} bias:{format_bool(m.bias)}",
        ),
        ("input", _tensor(m.input_shape, t.input.values)),
        *(
            (f"{role}_weight", _tensor(projection[role].weight_shape, projection[role].weights))
            for role in m.branch_order
        ),
        *((role, _tensor(projection[role].output_shape, projection[role].output)) for role in m.branch_order),
        ("parameter_names", f"[{names}]"),
        ("parameter_count", f"{m.parameter_count} independent:{format_bool(independent)}"),
        ("shape_rule", _rule((m.input_shape, projection["query"].output_shape))),
        ("batch_probe", _rule(shapes["batch_probe"])),
        ("empty_tokens", _rule(shapes["empty_tokens"])),
        ("history", HISTORY),
        ("upstream_query", format_vector(b.query_upstream)),
        ("upstream_key", format_vector(b.key_upstream)),
        ("upstream_value", format_vector(b.value_upstream)),
        ("input_gradient", format_vector(b.input_gradient)),
        *((f"{role}_weight_gradient", format_vector(gradient[role].values)) for role in m.branch_order),
        (
            "gradcheck",
            f"input_checks:{p.input_checks} query_checks:{p.query_weight_checks} key_checks:{p.key_weight_checks} "
            f"value_checks:{p.value_weight_checks} tolerance:{format_real(p.tolerance)} "
            f"passed:{format_bool(p.gradcheck)}",
        ),
        (
            "initialization",
            f"seed:{seed} transactional:{format_bool(initialization['transactional'])} "
            f"independent:{format_bool(initialization['independent'])}",
        ),
        (
            "errors",
            " ".join(
                f"{word}:{format_bool(refusals[case])}"
                for word, case in (
                    ("rank", "rank-two"),
                    ("width", "input-width"),
                    ("model_mismatch", "branch-mismatch"),
                    ("head_mismatch", "head-mismatch"),
                    ("duplicate_name", "duplicate-name"),
                )
            ),
        ),
        ("same_fixture_replays_bitwise", format_bool(replays_bitwise)),
        ("next", NEXT),
    ]
    return REPORT.render(lines)


# endregion: report-renderer
