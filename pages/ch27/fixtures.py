"""Chapter 27 fixtures: one unmasked attention head on chapter 26's Q, K and V, forward and backward.

Every fixture runs on our own autograd engine in float64. The scores are exact
until they are scaled; after that, no printed value lies within 4e-8 of a
rounding boundary, so another order of the float operations prints the same
digits. Each property the trace states as verified (row sums of one, the
gradient check, the bitwise replay, isolated batches, zero gradients for a
single token, each refused input) is checked here first, and a failure stops
the build.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from site_builder.autograd import GradCheckResult, check_gradients, parameter, tensor
from site_builder.nn import softmax
from site_builder.run import FixtureError, Run

from .attention import OPERANDS, Attention, AttentionError, scale_of, self_attention
from .report import render_report
from .trace import (
    Backward,
    BatchShape,
    CountError,
    DotProducts,
    EmptyError,
    History,
    Key,
    Meta,
    MixtureRow,
    Next,
    ProbabilityRow,
    Proof,
    Query,
    RankError,
    ScaledScores,
    SingleToken,
    Trace,
    Value,
    WidthError,
)

Matrix = tuple[tuple[float, ...], ...]
# The bar under a weight in the page's table, a second cue beside its number: the least weight of each shade.
SHADES = ((0.75, "strong"), (0.25, "medium"), (0.05, "light"), (0.0, "faint"))


@dataclass(frozen=True)
class Constants:
    """The chapter's inputs (spec: chapter 27, Fixtures). Q, K and V are chapter 26's outputs."""

    query: Matrix = ((0.0, 3.0), (2.0, -1.0))
    key: Matrix = ((3.0, 0.0), (-1.0, 2.0))
    value: Matrix = ((3.0, -3.0), (1.0, 3.0))
    seed: Matrix = ((1.0, 0.0), (0.0, 1.0))  # Ō: the loss is O₀₀ + O₁₁
    probe: Matrix = ((1.0, 0.0), (0.0, 1.0))  # Q = K = V for the scale probe
    single_query: tuple[float, ...] = (2.0, -1.0)
    single_key: tuple[float, ...] = (-3.0, 4.0)
    single_value: tuple[float, ...] = (5.0, -2.0)
    equal_keys: Matrix = ((1.0, 1.0), (1.0, 1.0))  # the equal-keys exercise
    wide_probe_width: int = 8  # the probe at d_k = 8, for an exercise
    narrow_value: Matrix = ((2.0,), (4.0,))  # V of value width one
    empty_query: tuple[int, ...] = (0, 2, 2)  # Q and K of the empty batch
    empty_value_width: int = 3
    shape_probe: tuple[int, ...] = (4, 7, 3)  # Q and K of the shapes question of "Test yourself"
    shape_probe_values: tuple[int, ...] = (4, 7, 5)  # V of that question
    row_sum_tolerance: float = 1e-12
    gradcheck_step: float = 1e-6
    gradcheck_tolerance: float = 2e-6

    def __post_init__(self) -> None:
        for name in ("query", "key", "value", "seed", "probe"):
            if not np.all(np.isfinite(np.array(getattr(self, name), dtype=np.float64))):
                raise FixtureError("constants", f"{name} holds a value that is not a finite number")

    def operands(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Q, K, V with the batch axis in front, [1, T, width]."""
        return np.array([self.query]), np.array([self.key]), np.array([self.value])


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


# region: primary-fixture
def primary_fixture(c: Constants) -> dict[str, np.ndarray]:
    """The head on chapter 26's views, then backward of L = Σ O ⊙ Ō."""
    q, k, v = (parameter(x, name=n) for x, n in zip(c.operands(), OPERANDS, strict=True))
    head = self_attention(q, k, v)
    seed = np.array([c.seed])
    loss = (head.output * tensor(seed)).sum()
    loss.backward()
    a, vals = head.probabilities.data, v.data
    terms = a[0][:, :, None] * vals[0][None, :, :]  # terms[i, j] = A_ij · v_j
    return {
        "query": q.data,
        "key": k.data,
        "value": vals,
        "dot_products": head.dot_products.data,
        "scores": head.scores.data,
        "probabilities": a,
        "terms": terms,
        "output": head.output.data,
        "seed": seed,
        "loss": loss.data,
        **{f"{n}_gradient": _grad(t) for n, t in zip(OPERANDS, (q, k, v), strict=True)},
    }


# endregion: primary-fixture


def _grad(t: Any) -> np.ndarray:
    """A leaf's gradient; one the loss does not reach is zero."""
    return np.zeros_like(t.data) if t.grad is None else t.grad


# region: probe-fixture
def probe_fixture(c: Constants, width: int | None = None) -> dict[str, float]:
    """Q = K = V = I: the first query's weight on its own key, without and with the scale."""
    eye = np.eye(width) if width is not None else np.array(c.probe)
    x = tensor(eye[None])
    unscaled = x @ x.transpose()
    raw = _softmax_rows(unscaled.data)
    scaled = self_attention(x, x, x).probabilities.data
    return {
        "unscaled_focus": float(raw[0, 0, 0]),
        "scaled_focus": float(scaled[0, 0, 0]),
        "orthogonal_probability": float(scaled[0, 0, 1]),
    }


def _softmax_rows(scores: np.ndarray) -> np.ndarray:
    return softmax(tensor(scores), axis=-1).data


# endregion: probe-fixture


# region: single-token-fixture
def single_token_fixture(c: Constants) -> dict[str, np.ndarray]:
    """One token: its only weight is one, its output its own value, and Q̄ = K̄ = 0 exactly."""
    q, k, v = (
        parameter(np.array(x).reshape(1, 1, -1), name=n)
        for x, n in zip((c.single_query, c.single_key, c.single_value), OPERANDS, strict=True)
    )
    head = self_attention(q, k, v)
    head.output.sum().backward()
    return {
        "query": q.data,
        "key": k.data,
        "value": v.data,
        "raw": head.dot_products.data,
        "scaled": head.scores.data,
        "probabilities": head.probabilities.data,
        "output": head.output.data,
        "query_gradient": _grad(q),
        "key_gradient": _grad(k),
    }


# endregion: single-token-fixture


# region: error-fixture
def refused(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> AttentionError:
    """What the head refuses these inputs with; inputs it accepts stop the fixtures."""
    try:
        self_attention(tensor(q), tensor(k), tensor(v))
    except AttentionError as err:
        return err
    raise FixtureError("errors", f"the head accepted Q {list(q.shape)}, K {list(k.shape)}, V {list(v.shape)}")


def error_fixture(c: Constants) -> dict[str, AttentionError]:
    """Each probe changes one operand of the fixture (or all three, for the empty token axis)."""
    q, k, v = c.operands()
    return {
        "query-rank": refused(q[0], k, v),
        "batch-mismatch": refused(q, np.concatenate([k, k]), v),
        "token-mismatch": refused(q, np.zeros((1, 3, 2)), v),
        "empty-tokens": refused(*(np.zeros((1, 0, 2)),) * 3),
        "query-key-width": refused(q, np.zeros((1, 2, 3)), v),
    }


# endregion: error-fixture


# region: gradient-check-fixture
def objective(c: Constants, values: dict[str, np.ndarray]) -> float:
    """L = Σ softmax(Q Kᵀ / sqrt(d_k)) V ⊙ Ō in plain NumPy: the check's independent side."""
    q, k, v = values["query"], values["key"], values["value"]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return float(np.sum((e / e.sum(axis=-1, keepdims=True)) @ v * np.array([c.seed])))


def scaled_error(analytic: float, numeric: float) -> float:
    return abs(analytic - numeric) / max(1.0, abs(analytic), abs(numeric))


def gradient_check_fixture(c: Constants, primary: dict[str, np.ndarray]) -> tuple[GradCheckResult, bool]:
    """Engine gradients against central differences at all four coordinates of Q, K and V."""
    values = {n: primary[n] for n in OPERANDS}
    analytic = {n: primary[f"{n}_gradient"] for n in OPERANDS}
    samples = {n: [tuple(int(i) for i in ix) for ix in np.ndindex(v.shape)] for n, v in values.items()}
    check = check_gradients(
        lambda x: objective(c, x), values, analytic, samples, step=c.gradcheck_step, tolerance=c.gradcheck_tolerance
    )
    errors = [scaled_error(k.analytic, k.numeric) for k in check.checks]
    return check, bool(errors) and all(e <= c.gradcheck_tolerance for e in errors)


# endregion: gradient-check-fixture


def _head(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> Attention:
    return self_attention(tensor(q), tensor(k), tensor(v))


def run(c: Constants = Constants()) -> Run:
    """Run every fixture, verify the chapter's properties, and fill the trace."""
    primary = primary_fixture(c)
    replays = all(_same_bits(v, primary_fixture(c)[k]) for k, v in primary.items())
    q, k, v = c.operands()
    stacked = [np.concatenate([x, x]) for x in (q, k, v)]
    batch = _head(*stacked)
    isolated = all(_same_bits(batch.output.data[b], primary["output"][0]) for b in range(2))
    empty = _head(
        np.zeros(c.empty_query), np.zeros(c.empty_query), np.zeros(c.empty_query[:2] + (c.empty_value_width,))
    )
    narrow = _head(q, k, np.array([c.narrow_value]))
    probe = probe_fixture(c)
    single = single_token_fixture(c)
    errors = error_fixture(c)
    check, check_passed = gradient_check_fixture(c, primary)
    a = primary["probabilities"]
    sums = a.sum(axis=-1)[0]
    row_sums_hold = bool(np.all(np.abs(sums - 1.0) <= c.row_sum_tolerance))
    single_zero = {n: bool(np.all(single[f"{n}_gradient"] == 0.0)) for n in ("query", "key")}

    checks: list[tuple[bool, str, str]] = [
        (replays, "primary", "a second run of the same fixture gave different bits"),
        (isolated, "batch", "a batch's output differs from its head run alone"),
        (row_sums_hold, "primary", f"a probability row does not sum to one within {c.row_sum_tolerance}"),
        (check_passed, "gradient-check", "analytic and numeric gradients disagree beyond the tolerance"),
        (all(single_zero.values()), "single-token", "one token's query or key gradient is not exactly zero"),
        (
            _same_bits(single["probabilities"], np.ones((1, 1, 1))),
            "single-token",
            "one token's only weight is not one",
        ),
        (
            np.allclose(primary["value_gradient"][0], a[0].T @ c.seed, rtol=0, atol=1e-15),
            "backward",
            "V̄ is not Aᵀ Ō",
        ),
    ]
    for holds, fixture, why in checks:
        if not holds:
            raise FixtureError(fixture, why)

    shape = q.shape
    trace = Trace(
        meta=Meta(shape, q.shape[2], v.shape[2], scale_of(q.shape[2])),
        query=Query(shape, primary["query"]),
        key=Key(k.shape, primary["key"]),
        value=Value(v.shape, primary["value"]),
        dot_products=DotProducts(primary["dot_products"].shape, primary["dot_products"]),
        scaled_scores=ScaledScores(primary["scores"].shape, primary["scores"]),
        probability_row=tuple(ProbabilityRow(i, a[0, i], float(sums[i])) for i in range(a.shape[1])),
        mixture_row=tuple(
            MixtureRow(i, a[0, i], primary["terms"][i], primary["output"][0, i]) for i in range(a.shape[1])
        ),
        backward=Backward(
            primary["seed"], primary["query_gradient"], primary["key_gradient"], primary["value_gradient"]
        ),
        batch_shape=BatchShape(
            batch.output.shape[0],
            stacked[0].shape,
            stacked[1].shape,
            stacked[2].shape,
            batch.probabilities.shape,
            batch.output.shape,
            isolated,
        ),
        single_token=SingleToken(
            single["query"].shape,
            single["query"],
            single["key"],
            single["value"],
            single["raw"],
            single["scaled"],
            single["probabilities"],
            single["output"],
            single_zero["query"],
            single_zero["key"],
        ),
        rank_error=(_rank(errors["query-rank"]),),
        count_error=tuple(_count(case, errors[case]) for case in ("batch-mismatch", "token-mismatch")),
        empty_error=(_empty(errors["empty-tokens"]),),
        width_error=(_width(errors["query-key-width"]),),
        history=History(),
        proof=Proof(
            row_sum_tolerance=c.row_sum_tolerance,
            query_checks=check.count("query"),
            key_checks=check.count("key"),
            value_checks=check.count("value"),
            gradient_tolerance=c.gradcheck_tolerance,
            gradcheck=check_passed,
            unmasked=True,
        ),
        next=Next(),
    )
    empty_shapes = {
        "probabilities": empty.probabilities.shape,
        "output": empty.output.shape,
        "value_width_probe": narrow.output.shape,
    }
    report = render_report(trace, primary["output"].shape, probe, empty_shapes, float(primary["loss"]), replays)
    derived = _derived(c, primary, probe, check, narrow, replays)
    derived |= {
        "DERIVED.empty.query": c.empty_query,
        "DERIVED.empty.value": c.empty_query[:2] + (c.empty_value_width,),
        "DERIVED.empty.probabilities": empty.probabilities.shape,
        "DERIVED.empty.output": empty.output.shape,
    }
    return Run(trace, derived, report)


def _rank(err: AttentionError) -> RankError:
    if err.kind != "input-rank" or err.operand is None:
        raise FixtureError("errors", f"the query of rank two was refused as {err.kind}")
    return RankError("query-rank", err.kind, err.operand, err.numbers["rank"], True)


def _count(case: str, err: AttentionError) -> CountError:
    if err.kind != case:
        raise FixtureError("errors", f"the {case} probe was refused as {err.kind}")
    n = err.numbers
    return CountError(case, err.kind, n["query"], n["key"], n["value"], True)


def _empty(err: AttentionError) -> EmptyError:
    if err.kind != "empty-token-axis":
        raise FixtureError("errors", f"the empty-tokens probe was refused as {err.kind}")
    return EmptyError("empty-tokens", err.kind, err.numbers["tokens"], True)


def _width(err: AttentionError) -> WidthError:
    if err.kind != "query-key-width-mismatch":
        raise FixtureError("errors", f"the query-key-width probe was refused as {err.kind}")
    return WidthError("query-key-width", err.kind, err.numbers["query"], err.numbers["key"], True)


def _derived(
    c: Constants,
    primary: dict[str, np.ndarray],
    probe: dict[str, float],
    check: GradCheckResult,
    narrow: Attention,
    replays: bool,
) -> dict[str, Any]:
    """The values the page shows that are not trace fields, from full precision."""
    q, k, v = c.operands()
    equal = _head(q, np.array([c.equal_keys]), v)
    wide = probe_fixture(c, c.wide_probe_width)
    permutation = [1, 0]
    permuted = _head(q[:, permutation], k[:, permutation], v[:, permutation])
    a = primary["probabilities"][0]
    favoured = [int(np.argmax(row)) for row in a]
    derived: dict[str, Any] = {
        "DERIVED.matrix-shape": a.shape,
        "DERIVED.key-index": tuple(range(a.shape[1])),
        "DERIVED.weight-shade": tuple(next(word for least, word in SHADES if w >= least) for w in a.ravel()),
        "DERIVED.favoured-key": tuple(favoured),
        "DERIVED.loss": float(primary["loss"]),
        "DERIVED.key-width": q.shape[2],
        "DERIVED.gradcheck-step": c.gradcheck_step,
        "MEASURED.gradcheck-max-error": max(scaled_error(x.analytic, x.numeric) for x in check.checks),
        "DERIVED.probe-unscaled": probe["unscaled_focus"],
        "DERIVED.probe-scaled": probe["scaled_focus"],
        "DERIVED.probe-orthogonal": probe["orthogonal_probability"],
        "DERIVED.probe-softened": probe["scaled_focus"] < probe["unscaled_focus"],
        "DERIVED.probe-matrix": _floats(c.probe),
        "DERIVED.wide-width": c.wide_probe_width,
        "DERIVED.wide-unscaled": wide["unscaled_focus"],
        "DERIVED.wide-scaled": wide["scaled_focus"],
        "DERIVED.equal-keys": _floats(c.equal_keys),
        "DERIVED.equal-keys-probabilities": _floats(equal.probabilities.data),
        "DERIVED.equal-keys-output": _floats(equal.output.data),
        "DERIVED.value-mean": _floats(v[0].mean(axis=0)),
        "DERIVED.narrow-value": _floats(c.narrow_value),
        "DERIVED.narrow-output": _floats(narrow.output.data),
        "DERIVED.narrow-output-shape": narrow.output.shape,
        "DERIVED.permuted-output": _floats(permuted.output.data),
        # The keys are summed in another order, so the last bits may differ; the digits do not.
        "DERIVED.permutation-permutes": bool(
            np.allclose(permuted.output.data, primary["output"][:, permutation], rtol=0, atol=1e-12)
        ),
        "DERIVED.value-gradient-is-transpose": _same_bits(primary["value_gradient"][0], a.T),
        "DERIVED.probe-input-shape": c.shape_probe,
        "DERIVED.probe-value-shape": c.shape_probe_values,
        "REPORT.same_fixture_replays_bitwise": replays,
    }
    probe_q = _head(np.zeros(c.shape_probe), np.zeros(c.shape_probe), np.zeros(c.shape_probe_values))
    derived["DERIVED.probe-scores-shape"] = probe_q.probabilities.shape
    derived["DERIVED.probe-output-shape"] = probe_q.output.shape
    return derived


def _floats(values: Any) -> tuple[float, ...]:
    return tuple(float(x) for x in np.ravel(values))
