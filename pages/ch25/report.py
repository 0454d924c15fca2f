"""The learner report: one ``key=value`` line each, frozen as the chapter's expected output."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from site_builder.trace import KeyValueReport, format_bool, format_real, format_shape_brackets, format_vector, layout_of

from .trace import Scale, Trace

CHAPTER = "25-rmsnorm"
# The two sentences are report values shared with the course's own implementation of this
# chapter, so that both print the same report byte for byte.
PREDICTION = "positive scaling cancels only in the epsilon-zero ideal; epsilon changes tiny inputs"
NEXT = "project normalized features into Q K V"

REPORT = KeyValueReport(
    (
        "chapter",
        "prediction",
        "config",
        "input",
        "mean_square",
        "inverse_rms",
        "normalized",
        "gain",
        "output",
        "upstream",
        "input_gradient",
        "gain_gradient",
        "rms_target",
        "ideal_scale",
        "production_scale",
        "near_zero_scale",
        "zero_input",
        "batch_output",
        "history",
        "gradcheck",
        "same_fixture_replays_bitwise",
        "next",
    )
)


def _tensor(shape: Sequence[int], values: Iterable[float]) -> str:
    return f"shape:{format_shape_brackets(tuple(shape))} values:{format_vector(values)}"


def _scale(s: Scale) -> str:
    """One scale comparison, its difference written with the decimals the trace gives that mode."""
    (slot,) = [slot for slot in layout_of(Trace).slots if slot.record.kind == "SCALE" and slot.fixed["mode"] == s.mode]
    (diff,) = [f.kind for f in slot.fields if f.name == "max_abs_diff"]
    return (
        f"epsilon:{format_real(s.epsilon)} factor:{format_real(s.factor)} base:{format_vector(s.base)} "
        f"scaled:{format_vector(s.scaled)} max_abs_diff:{diff.write(s.max_abs_diff)}"
    )


# region: report-renderer
def render_report(t: Trace, shapes: Mapping[str, Sequence[int]], replays_bitwise: bool) -> str:
    """The learner report, every value formatted by the trace's number rules."""
    p, h = t.primary, t.history
    ideal, production, near_zero = t.scale
    lines = [
        ("chapter", CHAPTER),
        ("prediction", PREDICTION),
        (
            "config",
            f"epsilon:{format_real(t.meta.epsilon)} feature_width:{t.meta.feature_width} "
            f"gain_name:{t.meta.gain_name} no_decay:{format_bool(t.meta.no_decay)}",
        ),
        *(
            (name, _tensor(shapes[name], getattr(p, name)))
            for name in (
                "input",
                "mean_square",
                "inverse_rms",
                "normalized",
                "gain",
                "output",
            )
        ),
        ("upstream", _tensor(shapes["upstream"], t.backward.upstream)),
        ("input_gradient", format_vector(t.backward.input_gradient)),
        ("gain_gradient", format_vector(t.backward.gain_gradient)),
        ("rms_target", f"normalized_mean_square:{format_real(t.proof.normalized_mean_square)}"),
        ("ideal_scale", _scale(ideal)),
        ("production_scale", _scale(production)),
        ("near_zero_scale", _scale(near_zero)),
        ("zero_input", f"output:{format_vector(t.zero.output)} finite:{format_bool(t.zero.finite)}"),
        ("batch_output", _tensor(t.batch.shape, t.batch.output)),
        (
            "history",
            f"batch_anchor_a:{format_vector(h.batch_anchor_a)} batch_anchor_b:{format_vector(h.batch_anchor_b)} "
            f"layer_norm:{format_vector(h.layer_norm)} rms_norm:{format_vector(h.rms_norm)} "
            f"rms_mean:{format_real(h.rms_mean)}",
        ),
        (
            "gradcheck",
            f"input_checks:{t.proof.input_checks} gain_checks:{t.proof.gain_checks} "
            f"tolerance:{format_real(t.proof.tolerance)} passed:{format_bool(t.proof.gradcheck)}",
        ),
        ("same_fixture_replays_bitwise", format_bool(replays_bitwise)),
        ("next", NEXT),
    ]
    return REPORT.render(lines)


# endregion: report-renderer
