"""Chapter 25 fixtures, layer, learner report and command line.

Values computed through np.exp and np.log are compared as printed text or with a
tolerance, never bit for bit against a typed float: NumPy's vectorized exp and
log may differ from another libm in the last bit.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import fixture_error

from helpers import PROJECT, golden, page
from pages.ch25.fixtures import Constants, gradient_check_fixture, no_decay_fixture, objective, primary_fixture, run
from pages.ch25.layer import RMSNorm, RMSNormError, batch_norm
from pages.ch25.report import REPORT
from site_builder.autograd import parameter, tensor
from site_builder.cli import main as cli_main
from site_builder.nn import rms_norm
from site_builder.trace import format_real, format_vector

GOLDEN_REPORT = golden("ch25", "report")
GAIN = "decoder.block.0.attention_norm.gain"


def layer(gain=(1.5, 0.5), epsilon=1e-5) -> RMSNorm:
    return RMSNorm(gain, name=GAIN, epsilon=epsilon)


def same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


# ------------------------------------------------------------------ the report
def test_report_has_twenty_two_keys_in_order():
    values = REPORT.parse(run().report)
    assert tuple(values) == REPORT.keys and len(values) == 22
    assert values["chapter"] == "25-rmsnorm"
    assert values["mean_square"] == "shape:[1] values:[12.500000]"
    assert values["inverse_rms"] == "shape:[1] values:[0.282843]"
    assert values["ideal_scale"].endswith("max_abs_diff:0.000000000000000222")
    assert values["production_scale"].endswith("max_abs_diff:0.000000448")
    assert values["near_zero_scale"].endswith("max_abs_diff:0.717566")
    assert values["gradcheck"] == "input_checks:2 gain_checks:2 tolerance:0.000002 passed:true"
    assert values["next"] == "project normalized features into Q K V"


def test_golden_report_matches_a_fresh_run_byte_for_byte():
    assert run().report == GOLDEN_REPORT


def test_cli_prints_the_goldens_without_touching_them(capsys, monkeypatch):
    monkeypatch.chdir(PROJECT.root)
    paths = (page("ch25").golden_trace, page("ch25").golden_report)
    before = {p: p.stat().st_mtime_ns for p in paths}
    assert cli_main(["trace", "--page", "ch25"]) == 0
    assert capsys.readouterr().out == golden("ch25")
    assert cli_main(["report", "--page", "ch25"]) == 0
    assert capsys.readouterr().out == GOLDEN_REPORT
    assert {p: p.stat().st_mtime_ns for p in before} == before


# ------------------------------------------------------------------ the layer
def test_the_layer_gives_the_bits_of_the_engines_rms_norm():
    rng = np.random.default_rng(25)
    for shape in [(2,), (3, 2), (2, 3, 2)]:
        x = rng.normal(size=shape)
        for eps in (0.0, 1e-5):
            ours = layer(epsilon=eps)(tensor(x)).data
            assert same_bits(ours, rms_norm(tensor(x), np.array([1.5, 0.5]), eps).data), (shape, eps)


def test_rows_with_different_mean_squares_are_normalized_each_on_its_own():
    # The chapter's batch has the same mean square in both rows, so it cannot tell a last-axis
    # statistic from one over the whole batch; these rows can.
    rows = np.array([[3.0, 4.0], [1.0, 1.0], [0.0, 2.0]])
    forward = layer().forward(tensor(rows))
    assert forward.mean_square.shape == (3, 1)
    assert np.allclose(forward.mean_square.data[:, 0], [12.5, 1.0, 2.0], rtol=0, atol=0)
    for r, row in enumerate(rows):
        assert same_bits(forward.output.data[r], layer()(tensor(row)).data)
    whole = rows / np.sqrt(np.mean(rows * rows) + 1e-5) * np.array([1.5, 0.5])
    assert not np.allclose(forward.output.data, whole)
    assert np.allclose(np.mean(forward.normalized.data**2, axis=-1), [m / (m + 1e-5) for m in (12.5, 1.0, 2.0)])


def test_mean_square_keeps_the_last_axis_with_length_one():
    assert layer().forward(tensor([3.0, 4.0])).mean_square.shape == (1,)
    assert layer().forward(tensor(np.ones((2, 3, 2)))).mean_square.shape == (2, 3, 1)


@pytest.mark.parametrize(
    "x,eps,message",
    [
        (1.0, 1e-5, "RMSNorm input must have at least one axis"),
        ([1.0, 2.0, 3.0], 1e-5, "RMSNorm input feature width must be 2, got 3"),
        (np.ones((2, 4)), 0.0, "RMSNorm input feature width must be 2, got 4"),
        ([0.0, 0.0], 0.0, "RMSNorm epsilon is zero but feature row 0 has zero mean square"),
        ([[1.0, 2.0], [0.0, 0.0], [0.0, 0.0]], 0.0, "RMSNorm epsilon is zero but feature row 1 has zero mean square"),
        (np.array([[[1.0, 1.0], [2.0, 2.0]], [[3.0, 3.0], [0.0, 0.0]]]), 0.0, "feature row 3 has zero mean square"),
    ],
)
def test_refusals_name_what_is_wrong(x, eps, message):
    with pytest.raises(RMSNormError) as info:
        layer(epsilon=eps)(tensor(x))
    assert message in str(info.value)


def test_zero_rows_are_checked_only_when_epsilon_is_zero():
    out = layer(epsilon=1e-5)(tensor([[0.0, 0.0], [3.0, 4.0]])).data
    assert np.all(np.isfinite(out)) and np.array_equal(out[0], [0.0, 0.0])


@pytest.mark.parametrize("eps", [-1e-5, math.nan, math.inf])
def test_a_bad_epsilon_is_refused(eps):
    with pytest.raises(RMSNormError, match="epsilon"):
        layer(epsilon=eps)


def test_gradients_match_central_differences_on_a_batch():
    rng = np.random.default_rng(7)
    x0, g0, up = rng.normal(size=(3, 2)), np.array([1.5, 0.5]), rng.normal(size=(3, 2))
    norm = layer(g0)
    x = parameter(x0, name="x")
    norm(x).backward_with_seed(up)

    def loss(xv, gv):
        return float(np.sum(xv / np.sqrt(np.mean(xv * xv, axis=-1, keepdims=True) + 1e-5) * gv * up))

    h = 1e-6
    for index in np.ndindex(x0.shape):
        step = np.zeros_like(x0)
        step[index] = h
        numeric = (loss(x0 + step, g0) - loss(x0 - step, g0)) / (2 * h)
        assert x.grad[index] == pytest.approx(numeric, abs=1e-6)
    for i in range(2):
        step = np.zeros(2)
        step[i] = h
        numeric = (loss(x0, g0 + step) - loss(x0, g0 - step)) / (2 * h)
        assert norm.gain.grad[i] == pytest.approx(numeric, abs=1e-6)


def test_batch_norm_normalizes_each_feature_across_the_batch():
    out = batch_norm(tensor([[1.0, 3.0], [5.0, 7.0]]), 0.0).data
    assert np.array_equal(out, [[-1.0, -1.0], [1.0, 1.0]])


# ------------------------------------------------------------------ the fixtures
def test_the_worked_example_prints_as_published():
    p = primary_fixture(Constants())
    assert format_vector(p["normalized"]) == "[0.848528,1.131370]"
    assert format_vector(p["output"]) == "[1.272792,0.565685]"
    assert format_vector(p["input_gradient"]) == "[0.407293,-0.305470]"
    assert format_vector(p["gain_gradient"]) == "[0.848528,-2.262741]"
    assert format_real(float(p["normalized_mean_square"])) == "0.999999"


def test_gradient_check_objective_is_independent_numpy():
    c = Constants()
    assert objective(c, {"x": np.array([3.0, 4.0]), "g": np.array([1.5, 0.5])}) == pytest.approx(
        1.272792 - 2 * 0.565685, abs=1e-5
    )
    check, passed = gradient_check_fixture(c, primary_fixture(c))
    assert passed and [k.parameter for k in check.checks] == ["x", "x", "g", "g"]
    assert [k.index for k in check.checks] == [(0,), (1,), (0,), (1,)]


def test_the_gain_is_excluded_from_weight_decay_and_only_that_keeps_it():
    c = Constants()
    assert np.array_equal(no_decay_fixture(c, exclude=True), c.gain)
    assert np.all(no_decay_fixture(c, exclude=False) < np.array(c.gain))


def test_properties_are_verified_before_they_are_written():
    fixture_error(
        lambda: run(dataclasses.replace(Constants(), gradcheck_tolerance=0.0, gradcheck_step=1e-1)), "gradient-check"
    )
    fixture_error(lambda: run(dataclasses.replace(Constants(), weight_decay=0.0)), "no-decay")


@pytest.mark.parametrize("field", ["input", "gain", "upstream", "tiny", "batch", "anchor", "companion"])
def test_non_finite_inputs_fail_naming_the_input(field):
    value = (math.nan,) * len(getattr(Constants(), field))
    error = fixture_error(lambda: Constants(**{field: value}), "constants")
    assert field in str(error) and "NaN" in str(error)


def test_derived_values_shown_on_the_page(runs):
    facts = runs["ch25"].facts
    assert facts["DERIVED.ideal-is-one-ulp"] is True
    assert facts["REPORT.mean_square.shape"] == (1,)
    assert facts["DERIVED.batch-mean-squares"] == (12.5, 12.5)
    assert facts["DERIVED.layer-norm-mean"] == 0.0
    assert format_vector(facts["DERIVED.input-gradient-closed-form"]) == "[0.407293,-0.305470]"
    assert facts["MEASURED.gain-after-step"] == (1.5, 0.5)
    assert abs(facts["DERIVED.input-dot-gradient"]) < 1e-6
