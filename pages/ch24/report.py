"""The learner report: one ``key=value`` line each, frozen as the chapter's expected output."""

from __future__ import annotations

from typing import Any

from site_builder.trace import KeyValueReport, format_bool, format_real, format_shape_brackets, format_vector

from .trace import Trace

CHAPTER = "24-residual-connections"
# The two sentences are report values shared with the existing implementation of this
# chapter, so that both print the same report byte for byte.
PREDICTION = "zero branch preserves output and input gradient but its weight gradient can be nonzero"
NEXT = "normalize each residual branch input with RMSNorm"

REPORT = KeyValueReport(
    (
        "chapter",
        "prediction",
        "input",
        "branch_parameter",
        "branch_output",
        "residual_output",
        "upstream",
        "identity_gradient",
        "branch_input_gradient",
        "input_gradient",
        "weight_gradient",
        "zero_branch",
        "shape_error",
        "stack[0]",
        "stack[1]",
        "stack[2]",
        "stack[3]",
        "stack[4]",
        "stack_input_gradients",
        "stack_parameters",
        "numeric_gradient",
        "historical",
        "same_fixture_replays_bitwise",
        "next",
    )
)


def _tensor(shape: Any, values: Any) -> str:
    return f"shape:{format_shape_brackets(tuple(shape))} values:{format_vector(values)}"


# region: report-renderer
def render_report(t: Trace, branch_weight: Any, replays_bitwise: bool) -> str:
    """The learner report, every value formatted by the trace's number rules."""
    n = t.config.shape
    lines = [
        ("chapter", CHAPTER),
        ("prediction", PREDICTION),
        ("input", _tensor(n, t.forward.input)),
        ("branch_parameter", f"name:{t.config.branch_parameter} " + _tensor(branch_weight.shape, branch_weight)),
        ("branch_output", _tensor(n, t.forward.branch)),
        ("residual_output", _tensor(n, t.forward.output)),
        ("upstream", _tensor(n, t.backward.upstream)),
        ("identity_gradient", format_vector(t.backward.identity)),
        ("branch_input_gradient", format_vector(t.backward.branch)),
        ("input_gradient", format_vector(t.backward.input)),
        ("weight_gradient", _tensor(t.parameter.shape, t.parameter.gradient)),
        (
            "zero_branch",
            f"output:{format_vector(t.zero_branch.output)} "
            f"input_gradient:{format_vector(t.zero_branch.input_gradient)} "
            f"weight_gradient_nonzero:{format_bool(t.zero_branch.weight_gradient_nonzero)}",
        ),
        (
            "shape_error",
            f"identity:{format_shape_brackets(t.shape_error.identity)} "
            f"branch:{format_shape_brackets(t.shape_error.branch)} "
            f"broadcastable:{format_bool(t.shape_error.broadcastable)} "
            f"rejected:{format_bool(t.shape_error.rejected)}",
        ),
        *(
            (f"stack[{row.depth}]", f"plain:{format_vector(row.plain)} residual:{format_vector(row.residual)}")
            for row in t.stack
        ),
        (
            "stack_input_gradients",
            f"plain:{format_vector(t.stack_gradient.plain)} residual:{format_vector(t.stack_gradient.residual)}",
        ),
        ("stack_parameters", ",".join(t.stack_gradient.parameters)),
        (
            "numeric_gradient",
            f"input_checks:{t.gradcheck.input_checks} weight_checks:{t.gradcheck.weight_checks} "
            f"tolerance:{format_real(t.gradcheck.tolerance)} passed:{format_bool(t.gradcheck.passed)}",
        ),
        (
            "historical",
            f"plain_depth4_retention:{format_real(t.stack_gradient.plain[0])} "
            f"residual_depth4_retention:{format_real(t.stack_gradient.residual[0])}",
        ),
        ("same_fixture_replays_bitwise", format_bool(replays_bitwise)),
        ("next", NEXT),
    ]
    return REPORT.render(lines)


# endregion: report-renderer
