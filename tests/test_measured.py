"""Measured results: written and shown with only the digits their seeds and float path leave standing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from site_builder.autograd import parameter
from site_builder.facts import FactBook, TooManyDigits
from site_builder.measure import MIN_SEEDS, compare, interval_rank, measure, nudge
from site_builder.nn import Adam
from site_builder.render.charts import Axis, ChartError, Series, line_chart
from site_builder.tasks import block_draws, measured, with_twins
from site_builder.trace import MEASURED, Measurement, TraceParseError, parse_record
from site_builder.trace.format import Field

positive = st.floats(min_value=1e-9, max_value=1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(
    median=positive,
    low=st.floats(min_value=0.01, max_value=1.0),
    high=st.floats(min_value=1.0, max_value=100.0),
    seeds=st.floats(min_value=0.0, max_value=3.0),
    path=st.floats(min_value=0.0, max_value=3.0),
    sign=st.sampled_from([1.0, -1.0]),
)
def test_a_measurement_reads_back_as_the_text_it_was_written_as(median, low, high, seeds, path, sign):
    m = Measurement(sign * median, sign * median * low, sign * median * high, median * seeds, median * path)
    text = MEASURED.write(m)
    again = MEASURED.read(text)
    assert MEASURED.write(again) == text
    book = FactBook({"A.x": m, "B.x": again})
    for fmt in ("measured", "measured-range", "measured-uncertainty", "measured-float-path"):
        assert book.text("A.x", fmt) == book.text("B.x", fmt)  # the page says the same from the run and the trace


def test_only_the_digits_the_uncertainty_leaves_standing_are_written_and_shown():
    m = Measurement(0.28341, 0.2134567, 0.3512, 0.0283, 1.3e-4)
    assert MEASURED.write(m) == "28e-2[213e-3,351e-3]~3e-2~2e-4"
    book = FactBook({"X.loss": m})
    assert book.text("X.loss", "measured") == "0.28"  # known to 0.04: the 8 is the first digit that may move
    assert book.text("X.loss", "measured-range") == "0.213 to 0.351"
    assert book.text("X.loss", "measured-uncertainty") == "\u00b10.04"
    small = FactBook({"X.loss": Measurement(6.1234e-5, 3e-5, 9e-4, 2e-6, 1e-7)})
    assert small.text("X.loss", "measured") == "6.1 \u00d7 10\u207b\u2075"
    known = FactBook({"X.loss": Measurement(6.1234e-5, 3e-5, 9e-4, 2e-7, 1e-8)})
    assert known.text("X.loss", "measured") == "6.12 \u00d7 10\u207b\u2075"
    # An exact result (no spread at all) keeps three significant digits, never the float's seventeen.
    assert FactBook({"X.loss": Measurement(0.99962, 0.9, 1.2, 0.0, 0.0)}).text("X.loss", "measured") == "1.00"


def test_a_median_no_digit_of_which_stands_is_shown_as_a_bound():
    book = FactBook({"X.loss": Measurement(0.004, 0.0006, 0.14, 0.03, 0.0)})
    assert book.text("X.loss", "measured") == "below 0.04"  # half the last place, plus the uncertainty


def test_a_russian_sentence_gets_the_same_digits_in_russian_words():
    book = FactBook({"X.loss": Measurement(0.28341, 0.2134567, 0.3512, 0.0283, 1.3e-4)})
    assert book.text("X.loss", "measured-ru") == "0.28"
    assert book.text("X.loss", "measured-range-ru") == "от 0.213 до 0.351"
    bound = FactBook({"X.loss": Measurement(0.004, 0.0006, 0.14, 0.03, 0.0)})
    assert bound.text("X.loss", "measured-ru") == "меньше 0.04"
    both = FactBook({"X.loss": Measurement(0.004, -0.0006, 0.14, 0.03, 0.0)})
    assert both.text("X.loss", "measured-ru") == "от \u22120.04 до 0.04"
    assert both.text("X.loss", "measured") == "between \u22120.04 and 0.04"


@pytest.mark.parametrize("fmt", ["sci", "six", "short", "exact", "short-or-sci", "percent"])
def test_showing_a_measured_result_in_a_number_format_is_refused(fmt):
    book = FactBook({"FINAL.loss": Measurement(0.28341, 0.21, 0.35, 0.0283, 1.3e-4)})
    with pytest.raises(TooManyDigits, match="FINAL.loss is a measured result"):
        book.text("FINAL.loss", fmt)


def test_a_measured_format_refuses_a_plain_number():
    with pytest.raises(TypeError, match="shows a measured result"):
        FactBook({"X.y": 0.5}).text("X.y", "measured")


@pytest.mark.parametrize(
    "text, why",
    [
        ("283e-3[213e-3,351e-3]~3e-2~2e-4", "digits its uncertainty leaves standing"),  # one digit too many
        ("3e-1[213e-3,351e-3]~3e-2", "expected a measured result"),
        ("3e-1[213e-3,351e-3]~-3e-2~2e-4", "never negative"),
        ("0.28[0.213,0.351]~0.03~0.0002", "expected a measured result"),
    ],
)
def test_a_trace_that_writes_more_digits_than_stand_is_refused_at_its_column(text, why):
    with pytest.raises(TraceParseError, match=why) as caught:
        parse_record(f"ARM loss={text}", 3, "ARM", (Field("loss", MEASURED),))
    assert (caught.value.line, caught.value.column) == (3, len("ARM loss=") + 1)


def test_measure_takes_the_median_its_interval_and_the_largest_move_of_a_twin():
    runs = np.array([0.5, 0.1, 0.3, 0.2, 0.9, 0.4, 0.7, 0.6])
    twins = runs + np.array([0, 0, 0.01, 0, 0, -0.02, 0, 0])
    m = measure(runs, twins, what="arm")
    assert interval_rank(8) == 2  # [x(2), x(7)] holds the median with probability 1 - 2 * 9/256 > 0.9
    assert (m.median, m.low, m.high) == (0.45, 0.1, 0.9)
    assert m.seeds == pytest.approx(max(0.45 - 0.2, 0.7 - 0.45))
    assert m.float_path == pytest.approx(0.02)
    with pytest.raises(ValueError, match=f"at least {MIN_SEEDS} seeds"):
        measure(runs[:3], twins[:3], what="arm")


def test_two_arms_are_ordered_only_when_their_gap_exceeds_how_far_both_shown_medians_can_move():
    a = Measurement(0.1, 0.05, 0.2, 0.002, 0.0)  # shown 0.100: it may lie 0.0005 + 0.002 away
    b = Measurement(0.2, 0.1, 0.3, 0.002, 0.001)
    assert compare(a, b) == "lower" and compare(b, a) == "higher"
    assert compare(a, Measurement(0.104, 0.1, 0.3, 0.002, 0.0)) == "indistinguishable"
    # Known to 0.05 each, 0.10 against 0.20 is within their reach (0.005 + 0.05 each).
    assert compare(Measurement(0.1, 0.05, 0.2, 0.05, 0.0), Measurement(0.2, 0.1, 0.3, 0.05, 0.0)) == "indistinguishable"


def test_a_twin_differs_from_its_seed_in_one_weight_by_one_unit_in_the_last_place():
    draws = [block_draws(seed, width=4, blocks=2) for seed in (1, 2)]
    both = with_twins(draws)
    assert len(both) == 4
    for seed, twin in zip(both[:2], both[2:]):
        moved = seed.ends.embed != twin.ends.embed
        assert moved.sum() == 1 and twin.ends.embed.flat[0] == np.nextafter(seed.ends.embed.flat[0], np.inf)
        np.testing.assert_array_equal(seed.first[1], twin.first[1])
    assert measured(np.arange(16.0), what="arm").median == 3.5  # the first half are the seeds
    np.testing.assert_array_equal(nudge(np.zeros(3)) != 0, [True, False, False])


def test_models_side_by_side_may_each_train_at_their_own_rate():
    weights = parameter(np.ones((2, 1, 1)), name="w")
    weights.grad = np.ones((2, 1, 1))
    optimizer = Adam([weights], lr=np.array([0.1, 0.01])[:, None, None])
    optimizer.step()
    np.testing.assert_allclose(weights.data.ravel(), [0.9, 0.99])


def test_a_chart_draws_the_seeds_band_of_a_measured_series_and_refuses_one_of_plain_numbers():
    facts = {
        "T.ticks": (0, 10),
        "L.ticks": (0.01, 1.0),
        "A[0].x": 0,
        "A[10].x": 10,
        "A[0].y": Measurement(0.5, 0.4, 0.7, 0.1, 0.0),
        "A[10].y": Measurement(0.05, 0.02, 0.09, 0.01, 0.0),
        "P.y": 0.5,
    }
    axes = {"x": Axis("step", "T.ticks", "count"), "y": Axis("loss", "L.ticks", "short", kind="log")}
    points = (("A[0].x", "A[0].y"), ("A[10].x", "A[10].y"))
    svg = line_chart(
        facts, chart_id="c", title="t", description="d", series=[Series("arm", points, "identity", band=True)], **axes
    )
    assert svg.count("<polygon") == 1 and 'class="ev-band"' in svg
    with pytest.raises(ChartError, match="not a measured result"):
        line_chart(
            facts,
            chart_id="c",
            title="t",
            description="d",
            series=[Series("arm", (("A[0].x", "P.y"),), "identity", band=True)],
            **axes,
        )
