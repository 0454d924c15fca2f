"""Chapter 24 fixtures, learner report and command line."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from site_builder import chapters
from site_builder.chapters import ch24
from site_builder.chapters.ch24 import Constants, FixtureError
from site_builder.chapters.ch24.report import REPORT_KEYS, parse_report
from site_builder.chapters.ch24.fixtures import objective
from site_builder.cli import main as cli_main

from trace_cases import fixture_error

REPO = Path(__file__).resolve().parent.parent
GOLDEN_REPORT = ch24.GOLDEN_REPORT.read_text(encoding="utf-8")


def test_report_keys_in_order_and_values():
    values = parse_report(ch24.run().report_text)
    assert tuple(values) == REPORT_KEYS
    assert values["chapter"] == "24-residual-connections"
    assert values["input"] == "shape:[2] values:[2.000000,-1.000000]"
    assert values["branch_parameter"] == (
        "name:residual.branch.weight shape:[2,2] values:[0.500000,-1.000000,2.000000,0.250000]"
    )
    assert values["residual_output"] == "shape:[2] values:[1.000000,-3.250000]"
    assert values["identity_gradient"] == "[1.000000,1.000000]"
    assert values["branch_input_gradient"] == "[-0.500000,2.250000]"
    assert values["input_gradient"] == "[0.500000,3.250000]"
    assert values["weight_gradient"] == "shape:[2,2] values:[2.000000,2.000000,-1.000000,-1.000000]"
    assert values["zero_branch"] == (
        "output:[2.000000,-1.000000] input_gradient:[1.000000,1.000000] weight_gradient_nonzero:true"
    )
    assert values["shape_error"] == "identity:[2,2] branch:[2] broadcastable:true rejected:true"
    assert values["stack[4]"] == "plain:[0.007812,-0.003906] residual:[0.632812,-0.316406]"
    assert values["stack_input_gradients"] == "plain:[0.003906,0.003906] residual:[0.316406,0.316406]"
    assert values["numeric_gradient"] == "input_checks:2 weight_checks:4 tolerance:0.000002 passed:true"
    assert values["historical"] == "plain_depth4_retention:0.003906 residual_depth4_retention:0.316406"
    assert values["same_fixture_replays_bitwise"] == "true"
    assert values["prediction"] == (
        "zero branch preserves output and input gradient but its weight gradient can be nonzero"
    )
    assert values["next"] == "normalize each residual branch input with RMSNorm"
    assert values["stack_parameters"] == ",".join(f"residual.stack.{n}.branch.weight" for n in range(4))


def test_golden_report_matches_a_fresh_run_byte_for_byte():
    assert ch24.run().report_text == GOLDEN_REPORT


def test_two_processes_give_byte_identical_trace_and_report():
    outputs = []
    for _ in range(2):
        trace = subprocess.run(
            [sys.executable, "-m", "site_builder.cli", "trace"], capture_output=True, check=True, cwd=REPO
        ).stdout
        report = subprocess.run(
            [sys.executable, "-m", "site_builder.cli", "report"], capture_output=True, check=True, cwd=REPO
        ).stdout
        outputs.append((trace, report))
    assert outputs[0] == outputs[1]
    assert outputs[0][0].decode() == ch24.GOLDEN_TRACE.read_text()
    assert outputs[0][1].decode() == GOLDEN_REPORT


@pytest.mark.parametrize(
    "field,value,fixture",
    [
        ("input", (math.nan, -1.0), "primary"),
        ("branch_weight", (0.5, math.inf, 2.0, 0.25), "primary"),
        ("stack_weight", (math.nan, 0.0, 0.0, -0.25), "stack"),
    ],
)
def test_non_finite_values_fail_naming_the_fixture(field, value, fixture):
    error = fixture_error(lambda: ch24.run(dataclasses.replace(Constants(), **{field: value})), fixture)
    assert "NaN" in str(error) or "infinity" in str(error)


def test_a_nan_upstream_names_the_record():
    bad = dataclasses.replace(Constants(), upstream=(math.nan, 1.0))
    assert "BACKWARD.upstream" in str(fixture_error(lambda: ch24.run(bad), "primary"))


def test_properties_are_verified_before_they_are_written():
    # A branch that broadcasts nothing is fine; a gradient check with an impossible tolerance is not.
    impossible = dataclasses.replace(Constants(), gradcheck_tolerance=0.0, gradcheck_step=1e-1)
    fixture_error(lambda: ch24.run(impossible), "gradient-check")


def test_fixture_error_is_the_shared_one_under_its_chapter_names():
    import site_builder.chapters.ch24.fixtures
    import site_builder.fixtures

    assert FixtureError is site_builder.chapters.ch24.fixtures.FixtureError is site_builder.fixtures.FixtureError


def test_gradient_check_objective_is_independent_numpy():
    x = np.array([2.0, -1.0])
    w = np.array([[0.5, -1.0], [2.0, 0.25]])
    assert objective({"x": x, "w": w}) == pytest.approx(1.0**2 + 3.25**2)
    fx = ch24.run().fixtures
    check = fx.gradcheck
    assert [c.parameter for c in check.checks] == ["x", "x", "w", "w", "w", "w"]
    assert all(c.error <= 2e-6 for c in check.checks)
    # x̄ of Σ(x + xW)² is 2(y)(I + W)ᵀ: compare the engine with the closed form.
    y = x + x @ w
    closed = 2.0 * (y + y @ w.T)
    analytic = {c.index: c.analytic for c in check.checks if c.parameter == "x"}
    assert analytic == {(0,): closed[0], (1,): closed[1]}


def test_replay_is_bitwise():
    assert ch24.run().fixtures.replays_bitwise is True


def test_zero_branch_and_shape_error_records():
    trace = ch24.run().trace
    assert trace.zero_branch.output == trace.forward.input
    assert trace.zero_branch.input_gradient == trace.backward.upstream
    assert trace.zero_branch.weight_gradient_nonzero is True
    assert (trace.shape_error.broadcastable, trace.shape_error.rejected) == (True, True)


def test_stack_multipliers_are_exact():
    trace = ch24.run().trace
    assert trace.stack_gradient.plain == (0.003906, 0.003906)  # (-0.25)^4 = 0.00390625 printed
    assert trace.stack_gradient.residual == (0.316406, 0.316406)  # 0.75^4 = 0.31640625 printed
    facts = ch24.run().facts
    assert facts["DERIVED.plain-retention-exact"] == 0.00390625
    assert facts["DERIVED.residual-retention-exact"] == 0.31640625


def test_cli_prints_without_touching_goldens(capsys, tmp_path):
    before = {p: p.stat().st_mtime_ns for p in (ch24.GOLDEN_TRACE, ch24.GOLDEN_REPORT)}
    assert cli_main(["trace"]) == 0
    assert capsys.readouterr().out == ch24.GOLDEN_TRACE.read_text()
    assert cli_main(["report"]) == 0
    assert capsys.readouterr().out == GOLDEN_REPORT
    assert {p: p.stat().st_mtime_ns for p in before} == before


def test_write_golden_is_atomic_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "trace.txt"
    target.write_text("old\n")
    real_page = chapters.page
    monkeypatch.setattr(chapters, "page", lambda slug: dataclasses.replace(real_page(slug), golden_trace=target))
    assert cli_main(["trace", "--write-golden"]) == 0
    assert target.read_text() == ch24.run().trace_text
    assert sorted(os.listdir(tmp_path)) == ["trace.txt"]


def test_cli_reports_a_fixture_error_in_one_line(monkeypatch, capsys):
    bad = dataclasses.replace(Constants(), input=(math.nan, 1.0))
    real_run = ch24.run
    monkeypatch.setattr(ch24, "run", lambda constants=bad: real_run(constants))
    assert cli_main(["trace"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fixture 'primary'" in err[0] and "NaN" in err[0]


def test_same_tensor_on_both_sides_is_measured_by_the_engine():
    facts = ch24.run().facts
    assert facts["MEASURED.same-tensor-gradient"] == (2.0, 2.0)
    other = ch24.run(dataclasses.replace(Constants(), upstream=(1.0, 3.0)))
    assert other.facts["MEASURED.same-tensor-gradient"] == (2.0, 6.0)
