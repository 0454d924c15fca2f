"""Chapter 26 fixtures, layer, seeded build, learner report and command line."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from trace_cases import fixture_error

from helpers import PROJECT, golden, page
from pages.ch26.fixtures import Constants, primary_fixture, run
from pages.ch26.layer import QkvError, QkvProjections, SplitMix64, seeded
from pages.ch26.report import REPORT
from site_builder.autograd import parameter, tensor
from site_builder.cli import main as cli_main
from site_builder.nn import Linear

GOLDEN_REPORT = golden("ch26", "report")
C = Constants()


def same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


# ------------------------------------------------------------------ the report
def test_report_has_twenty_eight_keys_in_order():
    values = REPORT.parse(run().report)
    assert tuple(values) == REPORT.keys and len(values) == 28
    assert values["config"] == "batch:1 tokens:2 d_model:3 d_head:2 bias:false"
    assert values["parameter_count"] == "18 independent:true"
    assert values["shape_rule"] == "[1,2,3]->three*[1,2,2]"
    assert values["empty_tokens"] == "[1,0,3]->three*[1,0,2]"
    assert values["errors"] == "rank:true width:true model_mismatch:true head_mismatch:true duplicate_name:true"


def test_golden_report_matches_a_fresh_run_byte_for_byte():
    assert run().report == GOLDEN_REPORT


def test_cli_prints_the_goldens_without_touching_them(capsys, monkeypatch):
    monkeypatch.chdir(PROJECT.root)
    paths = (page("ch26").golden_trace, page("ch26").golden_report)
    before = {p: p.stat().st_mtime_ns for p in paths}
    assert cli_main(["trace", "--page", "ch26"]) == 0
    assert capsys.readouterr().out == golden("ch26")
    assert cli_main(["report", "--page", "ch26"]) == 0
    assert capsys.readouterr().out == GOLDEN_REPORT
    assert {p: p.stat().st_mtime_ns for p in before} == before


# ------------------------------------------------------------------ the layer
def test_each_view_is_the_engines_linear_layer_and_only_the_last_axis_changes():
    rng = np.random.default_rng(26)
    for shape in [(1, 2, 3), (4, 7, 3), (2, 1, 3)]:
        x = rng.normal(size=shape)
        views = C.layer()(tensor(x))
        for role, w in C.weights().items():
            assert views.of(role).shape == shape[:-1] + (2,)
            assert same_bits(views.of(role).data, Linear(w, name=role)(tensor(x)).data)


def test_tokens_are_never_mixed():
    x = np.random.default_rng(3).normal(size=(2, 5, 3))
    changed = x.copy()
    changed[1, 3] += 1.0
    before, after = C.layer()(tensor(x)), C.layer()(tensor(changed))
    for role in ("query", "key", "value"):
        moved = ~np.all(before.of(role).data == after.of(role).data, axis=-1)
        assert moved.tolist() == [[False] * 5, [False, False, False, True, False]]


@pytest.mark.parametrize(
    "shape,message",
    [
        ((2, 3), "Q/K/V input must have rank three [batch, tokens, model_width], got rank 2"),
        ((3,), "got rank 1"),
        ((1, 1, 2, 3), "got rank 4"),
        ((1, 2, 4), "Q/K/V input final width must equal model width 3, got 4"),
        ((5, 2), "got rank 2"),  # rank is checked before width
    ],
)
def test_forward_refusals_check_rank_then_width(shape, message):
    with pytest.raises(QkvError) as info:
        C.layer()(tensor(np.zeros(shape)))
    assert message in str(info.value)


@pytest.mark.parametrize(
    "shapes,names,message",
    [
        (((3, 2), (4, 2), (3, 2)), None, "Q/K/V model widths must match, got query 3, key 4, value 3"),
        (((3, 2), (4, 3), (3, 2)), None, "model widths must match"),  # model widths before head widths
        (((3, 2), (3, 3), (3, 2)), None, "Q/K/V head widths must match, got query 2, key 3, value 2"),
        (((3, 2),) * 3, ("same", "same", "other"), "parameter names must be unique"),
        (((3, 3), (3, 2), (3, 2)), ("same",) * 3, "head widths must match"),  # head widths before names
    ],
)
def test_construction_refusals_check_model_widths_then_head_widths_then_names(shapes, names, message):
    weights = {role: np.zeros(s) for role, s in zip(("query", "key", "value"), shapes, strict=True)}
    given = C.names() if names is None else dict(zip(("query", "key", "value"), names, strict=True))
    with pytest.raises(QkvError) as info:
        QkvProjections.from_weights(weights, given)
    assert message in str(info.value)


def test_empty_batch_and_token_axes_are_valid():
    for shape in [(0, 2, 3), (2, 0, 3), (0, 0, 3)]:
        x = parameter(np.zeros(shape), name="x")
        views = C.layer()(x)
        (views.query.sum() + views.key.sum() + views.value.sum()).backward()
        assert views.value.shape == shape[:-1] + (2,) and x.grad.shape == shape


def test_backward_sums_three_routes_and_keeps_weight_gradients_local_on_a_batch():
    rng = np.random.default_rng(11)
    x0 = rng.normal(size=(3, 4, 3))
    ups = {role: rng.normal(size=(3, 4, 2)) for role in ("query", "key", "value")}
    layer = C.layer()
    x = parameter(x0, name="x")
    views = layer(x)
    loss = sum((views.of(r) * tensor(u)).sum() for r, u in ups.items()).sum()
    loss.backward()
    weights = C.weights()
    assert np.allclose(x.grad, sum(u @ weights[r].T for r, u in ups.items()), rtol=0, atol=1e-12)
    for role, w in zip(("query", "key", "value"), layer.parameters(), strict=True):
        assert np.allclose(w.grad, x0.reshape(-1, 3).T @ ups[role].reshape(-1, 2), rtol=0, atol=1e-12)


# ------------------------------------------------------------------ the seeded build
def test_a_refused_seeded_build_leaves_the_generator_where_it_was():
    rng = SplitMix64(26)
    with pytest.raises(QkvError):
        seeded(rng, 3, 0, C.names())
    assert rng.state == 26
    seeded(rng, 3, 2, C.names())
    assert rng.state != 26


def test_seeded_builds_repeat_and_their_three_weights_differ():
    a = [w.data for w in seeded(SplitMix64(26), 3, 2, C.names()).parameters()]
    b = [w.data for w in seeded(SplitMix64(26), 3, 2, C.names()).parameters()]
    c = [w.data for w in seeded(SplitMix64(27), 3, 2, C.names()).parameters()]
    assert all(same_bits(x, y) for x, y in zip(a, b, strict=True))
    assert not any(np.array_equal(x, y) for x, y in zip(a, c, strict=True))
    assert not np.array_equal(a[0], a[1]) and not np.array_equal(a[1], a[2]) and not np.array_equal(a[0], a[2])
    limit = math.sqrt(6.0 / 5.0)
    assert all(np.all(np.abs(w) <= limit) for w in a)


def test_splitmix64_gives_its_published_first_outputs():
    # The generator's reference outputs for seed 0 (Vigna's splitmix64.c).
    rng = SplitMix64(0)
    assert [rng.next_u64() for _ in range(2)] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]


# ------------------------------------------------------------------ the fixtures
def test_the_worked_values_are_exact():
    p = primary_fixture(C)
    assert p["query"].tolist() == [[[0.0, 3.0], [2.0, -1.0]]]
    assert p["input_gradient"].tolist() == [[[3.0, 1.5, 1.5], [-1.5, 3.5, -5.0]]]
    assert float(p["loss"]) == -2.0


def test_properties_are_verified_before_they_are_written():
    fixture_error(lambda: run(dataclasses.replace(C, gradcheck_tolerance=0.0, gradcheck_step=1e-1)), "gradient-check")


def test_a_refusal_that_is_not_made_stops_the_build():
    error = fixture_error(lambda: run(dataclasses.replace(C, wide_input=(1, 2, 3))), "errors")
    assert "accepted" in str(error)


@pytest.mark.parametrize("field", ["input", "query_weight"])
def test_non_finite_inputs_fail_naming_the_input(field):
    value = np.full(np.shape(getattr(C, field)), math.nan).tolist()
    error = fixture_error(lambda: Constants(**{field: value}), "constants")
    assert field in str(error)
