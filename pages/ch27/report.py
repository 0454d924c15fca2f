"""The learner report: one ``key=value`` line each, frozen as the chapter's expected output."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from site_builder.trace import KeyValueReport, format_bool, format_real, format_shape_brackets, format_vector

from .trace import TERMS, CountError, EmptyError, RankError, Trace, WidthError

CHAPTER = "27-self-attention"
# The sentences are report values shared with the course's own implementation of this chapter, so that both
# print the same report byte for byte.
PREDICTION = "each query scores every key, then one probability row mixes the value rows"
NEXT = "mask future key positions before row normalization"

REPORT = KeyValueReport(
    (
        "chapter",
        "prediction",
        "config",
        "query",
        "key",
        "value",
        "dot_products",
        "scaled_scores",
        "probabilities",
        "row_sums",
        "mixture_query_0",
        "mixture_query_1",
        "output",
        "scale_probe",
        "single_token",
        "batch_probe",
        "empty_batch",
        "upstream",
        "query_gradient",
        "key_gradient",
        "value_gradient",
        "gradcheck",
        "errors",
        "history",
        "same_fixture_replays_bitwise",
        "next",
    )
)


def _tensor(shape: Sequence[int], values: Iterable[float]) -> str:
    return f"shape:{format_shape_brackets(tuple(shape))} values:{format_vector(values)}"


def _shapes(**shapes: Sequence[int]) -> str:
    return " ".join(f"{name}:{format_shape_brackets(tuple(shape))}" for name, shape in shapes.items())


# region: report-renderer
def render_report(
    t: Trace,
    output_shape: Sequence[int],
    probe: Mapping[str, float],
    empty: Mapping[str, Sequence[int]],
    loss: float,
    replays_bitwise: bool,
) -> str:
    """The learner report, every value formatted by the trace's number rules."""
    m, b, s, p, h = t.meta, t.batch_shape, t.single_token, t.proof, t.history
    batch, tokens = m.shape[0], m.shape[1]
    output = [value for row in t.mixture_row for value in row.output]
    probabilities = [value for row in t.probability_row for value in row.values]
    refused: list[RankError | CountError | EmptyError | WidthError] = [
        t.rank_error[0],
        *t.count_error,
        t.empty_error[0],
        t.width_error[0],
    ]
    words = ("query_rank", "batch", "tokens", "empty", "width")
    lines = [
        ("chapter", CHAPTER),
        ("prediction", PREDICTION),
        (
            "config",
            f"batch:{batch} tokens:{tokens} d_k:{m.key_width} d_v:{m.value_width} scale:{format_real(m.scale)} "
            f"masked:{format_bool(m.masked)} softmax_axis:{m.softmax_axis}",
        ),
        ("query", _tensor(t.query.shape, t.query.values)),
        ("key", _tensor(t.key.shape, t.key.values)),
        ("value", _tensor(t.value.shape, t.value.values)),
        ("dot_products", _tensor(t.dot_products.shape, t.dot_products.values)),
        ("scaled_scores", _tensor(t.scaled_scores.shape, t.scaled_scores.values)),
        ("probabilities", _tensor(t.scaled_scores.shape, probabilities)),
        ("row_sums", format_vector([row.sum for row in t.probability_row])),
        *(
            (f"mixture_query_{row.query}", f"terms:{TERMS.write(row.terms)} output:{format_vector(row.output)}")
            for row in t.mixture_row
        ),
        ("output", _tensor(output_shape, output)),
        (
            "scale_probe",
            f"unscaled_focus:{format_real(probe['unscaled_focus'])} scaled_focus:{format_real(probe['scaled_focus'])} "
            f"orthogonal_probability:{format_real(probe['orthogonal_probability'])} "
            f"softened:{format_bool(probe['scaled_focus'] < probe['unscaled_focus'])}",
        ),
        (
            "single_token",
            f"probabilities:{format_vector(s.probabilities)} output:{format_vector(s.output)} "
            f"query_gradient_zero:{format_bool(s.query_gradient_zero)} "
            f"key_gradient_zero:{format_bool(s.key_gradient_zero)}",
        ),
        (
            "batch_probe",
            _shapes(query=b.query, key=b.key, value=b.value, probabilities=b.probabilities, output=b.output)
            + f" isolated:{format_bool(b.isolated)}",
        ),
        ("empty_batch", _shapes(**empty)),
        ("upstream", f"{format_vector(t.backward.seed)} loss={format_real(loss)}"),
        ("query_gradient", format_vector(t.backward.query_gradient)),
        ("key_gradient", format_vector(t.backward.key_gradient)),
        ("value_gradient", format_vector(t.backward.value_gradient)),
        (
            "gradcheck",
            f"query_checks:{p.query_checks} key_checks:{p.key_checks} value_checks:{p.value_checks} "
            f"tolerance:{format_real(p.gradient_tolerance)} passed:{format_bool(p.gradcheck)}",
        ),
        ("errors", " ".join(f"{w}:{format_bool(e.rejected)}" for w, e in zip(words, refused, strict=True))),
        (
            "history",
            f"earlier:{h.earlier} bridge:{h.bridge} transformer:{h.transformer} comparison:{h.comparison}",
        ),
        ("same_fixture_replays_bitwise", format_bool(replays_bitwise)),
        ("next", NEXT),
    ]
    return REPORT.render(lines)


# endregion: report-renderer
