"""Chapter 27 fixtures, attention head, learner report and command line.

Values computed through np.exp are compared as printed text or with a tolerance, never bit for bit against a
typed float: NumPy's vectorized exp may differ from another libm in the last bit.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import fixture_error

from helpers import PROJECT, golden, page
from pages.ch27.attention import AttentionError, self_attention
from pages.ch27.fixtures import Constants, objective, primary_fixture, probe_fixture, run, single_token_fixture
from pages.ch27.report import REPORT
from site_builder.autograd import parameter, tensor
from site_builder.cli import main as cli_main
from site_builder.trace import format_vector

GOLDEN_REPORT = golden("ch27", "report")
C = Constants()


def test_report_has_twenty_six_keys_in_order():
    values = REPORT.parse(run().report)
    assert tuple(values) == REPORT.keys and len(values) == 26
    assert values["upstream"] == "[1.000000,0.000000,0.000000,1.000000] loss=-1.966576"
    assert values["empty_batch"] == "probabilities:[0,2,2] output:[0,2,3] value_width_probe:[1,2,1]"
    assert values["errors"] == "query_rank:true batch:true tokens:true empty:true width:true"


def test_golden_report_matches_a_fresh_run_byte_for_byte():
    assert run().report == GOLDEN_REPORT


def test_cli_prints_the_goldens_without_touching_them(capsys, monkeypatch):
    monkeypatch.chdir(PROJECT.root)
    paths = (page("ch27").golden_trace, page("ch27").golden_report)
    before = {p: p.stat().st_mtime_ns for p in paths}
    assert cli_main(["trace", "--page", "ch27"]) == 0
    assert capsys.readouterr().out == golden("ch27")
    assert cli_main(["report", "--page", "ch27"]) == 0
    assert capsys.readouterr().out == GOLDEN_REPORT
    assert {p: p.stat().st_mtime_ns for p in before} == before


# ------------------------------------------------------------------ the head
def softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_the_head_is_softmax_of_scaled_scores_times_values_per_example():
    rng = np.random.default_rng(27)
    q, k, v = rng.normal(size=(3, 5, 4)), rng.normal(size=(3, 5, 4)), rng.normal(size=(3, 5, 2))
    head = self_attention(tensor(q), tensor(k), tensor(v))
    a = softmax_rows(q @ np.swapaxes(k, -1, -2) / 2.0)
    assert np.allclose(head.probabilities.data, a, rtol=0, atol=1e-14)
    assert np.allclose(head.output.data, a @ v, rtol=0, atol=1e-14)
    assert np.allclose(head.probabilities.data.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_large_scores_do_not_overflow():
    q = np.array([[[800.0, 0.0], [0.0, 800.0]]])
    head = self_attention(tensor(q), tensor(q), tensor(q))
    assert np.all(np.isfinite(head.output.data)) and np.allclose(head.probabilities.data.sum(axis=-1), 1.0)


@pytest.mark.parametrize(
    "shapes,kind,numbers",
    [
        (((2, 2), (1, 2, 2), (1, 2, 2)), "input-rank", {"rank": 2}),
        (((1, 2, 2), (1, 2), (1, 2, 2)), "input-rank", {"rank": 2}),
        (((1, 2, 2), (2, 2, 2), (1, 2, 2)), "batch-mismatch", {"query": 1, "key": 2, "value": 1}),
        (((1, 2, 2), (1, 3, 2), (1, 2, 2)), "token-mismatch", {"query": 2, "key": 3, "value": 2}),
        (((1, 2, 2), (2, 3, 2), (1, 2, 2)), "batch-mismatch", {"query": 1, "key": 2, "value": 1}),  # batch first
        (((1, 0, 2),) * 3, "empty-token-axis", {"tokens": 0}),
        (((1, 2, 0), (1, 2, 0), (1, 2, 2)), "empty-query-key-width", {"query": 0, "key": 0}),
        (((1, 2, 2), (1, 2, 3), (1, 2, 2)), "query-key-width-mismatch", {"query": 2, "key": 3}),
        (((1, 2, 2), (1, 2, 2), (1, 2, 0)), "empty-value-width", {"value": 0}),
    ],
)
def test_refusals_come_in_the_course_order_with_their_numbers(shapes, kind, numbers):
    with pytest.raises(AttentionError) as info:
        self_attention(*(tensor(np.zeros(s)) for s in shapes))
    assert info.value.kind == kind and info.value.numbers == numbers


def test_gradients_match_central_differences_on_a_batch():
    rng = np.random.default_rng(5)
    values = {n: rng.normal(size=(2, 3, 2)) for n in ("query", "key", "value")}
    seed = rng.normal(size=(2, 3, 2))
    leaves = {n: parameter(x, name=n) for n, x in values.items()}
    (self_attention(*leaves.values()).output * tensor(seed)).sum().backward()

    def loss(vs):
        s = vs["query"] @ np.swapaxes(vs["key"], -1, -2) / math.sqrt(2.0)
        return float(np.sum(softmax_rows(s) @ vs["value"] * seed))

    h = 1e-6
    for name, x in values.items():
        for index in np.ndindex(x.shape):
            up, down = {**values, name: x.copy()}, {**values, name: x.copy()}
            up[name][index] += h
            down[name][index] -= h
            assert leaves[name].grad[index] == pytest.approx((loss(up) - loss(down)) / (2 * h), abs=1e-6)


# ------------------------------------------------------------------ the fixtures
def test_the_worked_example_prints_as_published():
    p = primary_fixture(C)
    assert format_vector(p["probabilities"]) == "[0.014166,0.985834,0.999151,0.000849]"
    assert format_vector(p["output"]) == "[1.028332,2.915004,2.998303,-2.994908]"
    assert format_vector(p["query_gradient"]) == "[0.079000,-0.039500,-0.014389,0.007195]"
    assert objective(C, {n: p[n] for n in ("query", "key", "value")}) == pytest.approx(float(p["loss"]), abs=1e-15)


def test_the_scale_softens_the_probe_and_one_token_has_no_query_or_key_gradient():
    probe = probe_fixture(C)
    assert probe["scaled_focus"] < probe["unscaled_focus"]
    assert probe["scaled_focus"] + probe["orthogonal_probability"] == pytest.approx(1.0, abs=1e-15)
    single = single_token_fixture(C)
    assert np.all(single["query_gradient"] == 0.0) and np.all(single["key_gradient"] == 0.0)
    assert single["output"].tolist() == [[[5.0, -2.0]]]


def test_properties_are_verified_before_they_are_written():
    fixture_error(lambda: run(dataclasses.replace(C, gradcheck_tolerance=0.0, gradcheck_step=1e-1)), "gradient-check")
    fixture_error(lambda: run(dataclasses.replace(C, row_sum_tolerance=-1.0)), "primary")


@pytest.mark.parametrize("field", ["query", "key", "value"])
def test_non_finite_inputs_fail_naming_the_input(field):
    value = ((math.nan, 0.0), (0.0, 0.0))
    error = fixture_error(lambda: Constants(**{field: value}), "constants")
    assert field in str(error)
