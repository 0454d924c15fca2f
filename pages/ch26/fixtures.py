"""Chapter 26 fixtures: one hidden sequence projected into queries, keys and values, forward and backward.

Every fixture runs on our own autograd engine in float64. All values of the
worked example are small dyadic rationals, exact in float64, so no order of
summation can change a bit. Each property the trace states as verified (the
gradient check, the bitwise replay, the independence of the three weights,
unique names, the transactional seeded build, each refused input) is checked
here first, and a failure stops the build.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from site_builder.autograd import GradCheckResult, check_gradients, parameter, tensor
from site_builder.run import FixtureError, Run

from .layer import ROLES, Qkv, QkvError, QkvProjections, SplitMix64, seeded
from .report import render_report
from .trace import (
    TENSORS,
    Backward,
    EmptyShapes,
    Error,
    History,
    Independence,
    Input,
    Meta,
    Next,
    Projection,
    Proof,
    Trace,
    WeightGradient,
)


@dataclass(frozen=True)
class Constants:
    """The chapter's inputs (spec: chapter 26, Fixtures)."""

    input: tuple[tuple[tuple[float, ...], ...], ...] = (((1.0, 2.0, -1.0), (0.0, 1.0, 2.0)),)
    query_weight: tuple[tuple[float, ...], ...] = ((1.0, 0.0), (0.0, 1.0), (1.0, -1.0))
    key_weight: tuple[tuple[float, ...], ...] = ((0.0, 1.0), (1.0, 0.0), (-1.0, 1.0))
    value_weight: tuple[tuple[float, ...], ...] = ((1.0, 1.0), (1.0, -1.0), (0.0, 2.0))
    name_prefix: str = "decoder.block.0.attention"
    query_upstream: tuple[float, ...] = (1.0, 0.0, -1.0, 2.0)
    key_upstream: tuple[float, ...] = (0.5, -1.0, 1.0, 0.0)
    value_upstream: tuple[float, ...] = (2.0, 1.0, 0.0, -0.5)
    changed_entry: tuple[int, int] = (0, 0)  # the entry of W_Q the independence probe changes
    changed_value: float = 2.0
    empty_batch_input: tuple[int, ...] = (0, 2, 3)
    empty_token_input: tuple[int, ...] = (2, 0, 3)
    empty_tokens_report: tuple[int, ...] = (1, 0, 3)
    rank_two_input: tuple[int, ...] = (2, 3)
    wide_input: tuple[int, ...] = (1, 2, 4)
    mismatched_model_widths: tuple[tuple[int, int], ...] = ((3, 2), (4, 2), (3, 2))
    mismatched_head_widths: tuple[tuple[int, int], ...] = ((3, 2), (3, 3), (3, 2))
    duplicate_name: str = "same"
    seed: int = 26
    input_width: int = 3  # d_model of the seeded build
    head_width: int = 2  # d_head of the seeded build
    probe_shape: tuple[int, ...] = (4, 7, 3)  # the shapes question of "Test yourself"
    large_widths: tuple[int, int] = (512, 64)  # the count exercise: d_model, d_head
    gradcheck_step: float = 1e-6
    gradcheck_tolerance: float = 2e-6

    def __post_init__(self) -> None:
        for name in ("input", "query_weight", "key_weight", "value_weight", "query_upstream"):
            values = np.array(getattr(self, name), dtype=np.float64)
            if not np.all(np.isfinite(values)):
                raise FixtureError("constants", f"{name} holds a value that is not a finite number")

    def names(self) -> dict[str, str]:
        return {role: f"{self.name_prefix}.{role}.weight" for role in ROLES}

    def weights(self) -> dict[str, np.ndarray]:
        return {role: np.array(getattr(self, f"{role}_weight")) for role in ROLES}

    def layer(self, **replaced: np.ndarray) -> QkvProjections:
        return QkvProjections.from_weights({**self.weights(), **replaced}, self.names())

    def upstream(self, role: str, shape: tuple[int, ...]) -> np.ndarray:
        return np.array(getattr(self, f"{role}_upstream")).reshape(shape)


# region: primary-fixture
def primary_fixture(c: Constants, upstream_roles: tuple[str, ...] = ROLES) -> dict[str, np.ndarray]:
    """Q, K, V of the input, then backward of L = Σ Q⊙Ū_Q + Σ K⊙Ū_K + Σ V⊙Ū_V (only the given roles' terms)."""
    layer = c.layer()
    x = parameter(np.array(c.input), name="input")
    views = layer(x)
    terms = [views.of(role) * tensor(c.upstream(role, views.of(role).shape)) for role in upstream_roles]
    loss = terms[0].sum()
    for term in terms[1:]:
        loss = loss + term.sum()
    loss.backward()
    assert x.grad is not None  # x is a leaf of the loss
    out = {"input": x.data, "input_gradient": x.grad, "loss": loss.data}
    for role, weight in zip(ROLES, layer.parameters(), strict=True):
        out[role] = views.of(role).data
        out[f"{role}_weight"] = weight.data
        # A weight whose view the loss leaves out collects no gradient: its gradient is zero.
        out[f"{role}_weight_gradient"] = np.zeros_like(weight.data) if weight.grad is None else weight.grad
    return out


# endregion: primary-fixture


# region: shape-fixture
def shapes_fixture(c: Constants, shape: tuple[int, ...], values: np.ndarray | None = None) -> Qkv:
    """The three views of an input of ``shape`` (zeros unless ``values`` are given)."""
    x = tensor(np.zeros(shape) if values is None else values)
    return c.layer()(x)


# endregion: shape-fixture


# region: error-fixture
def refused(build: Any) -> str:
    """The message the layer refuses ``build`` with; a build it accepts stops the fixtures."""
    try:
        build()
    except QkvError as err:
        return str(err)
    raise FixtureError("errors", "the layer accepted an input or weights it must refuse")


def error_fixture(c: Constants) -> dict[str, str]:
    """Every refusal of the chapter: three printed verbatim, two more the report counts."""
    names = c.names()
    model = {role: np.zeros(shape) for role, shape in zip(ROLES, c.mismatched_model_widths, strict=True)}
    head = {role: np.zeros(shape) for role, shape in zip(ROLES, c.mismatched_head_widths, strict=True)}
    same = dict.fromkeys(ROLES, c.duplicate_name)
    return {
        "rank-two": refused(lambda: c.layer()(tensor(np.zeros(c.rank_two_input)))),
        "input-width": refused(lambda: c.layer()(tensor(np.zeros(c.wide_input)))),
        "branch-mismatch": refused(lambda: QkvProjections.from_weights(model, names)),
        "head-mismatch": refused(lambda: QkvProjections.from_weights(head, names)),
        "duplicate-name": refused(lambda: QkvProjections.from_weights(c.weights(), same)),
    }


# endregion: error-fixture


# region: gradient-check-fixture
def objective(c: Constants, values: dict[str, np.ndarray]) -> float:
    """L in plain NumPy: the check's independent side."""
    x = values["x"]
    return float(sum(np.sum(x @ values[role] * c.upstream(role, (1, 2, 2))) for role in ROLES))


def scaled_error(analytic: float, numeric: float) -> float:
    return abs(analytic - numeric) / max(1.0, abs(analytic), abs(numeric))


def gradient_check_fixture(c: Constants, primary: dict[str, np.ndarray]) -> tuple[GradCheckResult, bool]:
    """Engine gradients against central differences at all six coordinates of X and of each weight.

    A coordinate passes when |a − n| / max(1, |a|, |n|) is within the tolerance.
    """
    values = {"x": primary["input"], **{role: primary[f"{role}_weight"] for role in ROLES}}
    analytic = {"x": primary["input_gradient"], **{role: primary[f"{role}_weight_gradient"] for role in ROLES}}
    samples = {name: [tuple(int(i) for i in ix) for ix in np.ndindex(v.shape)] for name, v in values.items()}
    check = check_gradients(
        lambda v: objective(c, v), values, analytic, samples, step=c.gradcheck_step, tolerance=c.gradcheck_tolerance
    )
    errors = [scaled_error(k.analytic, k.numeric) for k in check.checks]
    return check, bool(errors) and all(e <= c.gradcheck_tolerance for e in errors)


# endregion: gradient-check-fixture


# region: initialization-fixture
def initialization_fixture(c: Constants) -> dict[str, bool]:
    """The seeded build: a refused build leaves the generator alone; two builds agree; the weights differ."""
    rng = SplitMix64(c.seed)
    try:
        seeded(rng, c.input_width, 0, c.names())
    except QkvError:
        refused_cleanly = rng.state == c.seed
    else:
        raise FixtureError("initialization", "a head width of zero was accepted")
    first = seeded(SplitMix64(c.seed), c.input_width, c.head_width, c.names()).parameters()
    second = seeded(SplitMix64(c.seed), c.input_width, c.head_width, c.names()).parameters()
    same = all(_same_bits(a.data, b.data) for a, b in zip(first, second, strict=True))
    pairs = [(0, 1), (0, 2), (1, 2)]
    independent = all(not np.array_equal(first[i].data, first[j].data) for i, j in pairs)
    return {"transactional": refused_cleanly, "reproducible": same, "independent": independent}


# endregion: initialization-fixture


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


# region: independence-fixture
def independence_fixture(c: Constants) -> tuple[dict[str, bool], np.ndarray]:
    """W_Q with one entry changed: which of Q, K, V moved (by their bits), and the new Q."""
    x = tensor(np.array(c.input))
    before = c.layer()(x)
    changed = np.array(c.query_weight)
    changed[c.changed_entry] = c.changed_value
    after = c.layer(query=changed)(x)
    moved = {role: not _same_bits(before.of(role).data, after.of(role).data) for role in ROLES}
    return moved, after.query.data


# endregion: independence-fixture


def run(c: Constants = Constants()) -> Run:
    """Run every fixture, verify the chapter's properties, and fill the trace."""
    primary = primary_fixture(c)
    replays = all(_same_bits(v, primary_fixture(c)[k]) for k, v in primary.items())
    batch_input = np.concatenate([np.array(c.input)] * 2)
    batch = shapes_fixture(c, batch_input.shape, batch_input)
    empty_batch = shapes_fixture(c, c.empty_batch_input)
    empty_tokens = shapes_fixture(c, c.empty_token_input)
    empty_tokens_report = shapes_fixture(c, c.empty_tokens_report)
    errors = error_fixture(c)
    check, check_passed = gradient_check_fixture(c, primary)
    moved, changed_query = independence_fixture(c)
    init = initialization_fixture(c)
    layer = c.layer()
    names = layer.names()
    count = sum(w.data.size for w in layer.parameters())

    _verify(c, primary, batch_input, batch, replays, check_passed, moved, init, names)
    x_shape = primary["input"].shape
    out_shape = primary["query"].shape
    trace = Trace(
        meta=Meta(x_shape, layer.model_width, layer.head_width, False, count, ROLES),
        input=Input(primary["input"]),
        projection=tuple(
            Projection(
                role,
                tensor_name,
                name,
                primary[f"{role}_weight"].shape,
                primary[f"{role}_weight"],
                primary[role].shape,
                primary[role],
            )
            for role, tensor_name, name in zip(ROLES, TENSORS, names, strict=True)
        ),
        backward=Backward(
            query_upstream=c.upstream("query", out_shape),
            key_upstream=c.upstream("key", out_shape),
            value_upstream=c.upstream("value", out_shape),
            input_gradient_shape=primary["input_gradient"].shape,
            input_gradient=primary["input_gradient"],
        ),
        weight_gradient=tuple(
            WeightGradient(role, primary[f"{role}_weight_gradient"].shape, primary[f"{role}_weight_gradient"])
            for role in ROLES
        ),
        independence=Independence(
            "query",
            moved["query"],
            *("changed" if moved[role] else "bitwise-unchanged" for role in ("key", "value")),
        ),
        empty_shapes=EmptyShapes(
            batch_input=c.empty_batch_input,
            batch_query=empty_batch.query.shape,
            batch_key=empty_batch.key.shape,
            batch_value=empty_batch.value.shape,
            token_input=c.empty_token_input,
            token_query=empty_tokens.query.shape,
            token_key=empty_tokens.key.shape,
            token_value=empty_tokens.value.shape,
        ),
        error=tuple(Error(case, True, errors[case]) for case in ("rank-two", "input-width", "branch-mismatch")),
        history=History(),
        proof=Proof(
            input_checks=check.count("x"),
            query_weight_checks=check.count("query"),
            key_weight_checks=check.count("key"),
            value_weight_checks=check.count("value"),
            tolerance=c.gradcheck_tolerance,
            gradcheck=check_passed,
        ),
        next=Next(),
    )
    shapes = {
        "batch_probe": (batch_input.shape, batch.query.shape),
        "empty_tokens": (c.empty_tokens_report, empty_tokens_report.query.shape),
    }
    refusals = {case: bool(message) for case, message in errors.items()}
    report = render_report(trace, shapes, init, refusals, c.seed, replays)
    derived = _derived(c, primary, check, changed_query, batch, init, refusals, replays)
    return Run(trace, derived, report)


def _verify(
    c: Constants,
    primary: dict[str, np.ndarray],
    batch_input: np.ndarray,
    batch: Qkv,
    replays: bool,
    check_passed: bool,
    moved: dict[str, bool],
    init: dict[str, bool],
    names: list[str],
) -> None:
    """Check each property the trace states; any failure stops the build."""
    x = primary["input"]
    for role in ROLES:
        if not _same_bits(primary[role], x @ primary[f"{role}_weight"]):
            raise FixtureError("primary", f"the {role} view is not X W for its weight")
        for b in range(batch_input.shape[0]):
            if not _same_bits(batch.of(role).data[b], primary[role][0]):
                raise FixtureError("batch", f"batch row {b} of the {role} view differs from the input projected alone")
    routes = sum(c.upstream(role, (1, 2, 2)) @ primary[f"{role}_weight"].T for role in ROLES)
    if not _same_bits(routes, primary["input_gradient"]):
        raise FixtureError("backward", "the input gradient is not the sum of the three routes")
    rows = x.reshape(-1, x.shape[-1])
    for role in ROLES:
        local = rows.T @ c.upstream(role, (-1, 2))
        if not _same_bits(local, primary[f"{role}_weight_gradient"]):
            raise FixtureError("backward", f"the {role} weight gradient is not Xᵀ Ū over the flattened rows")
    if not replays:
        raise FixtureError("primary", "a second run of the same fixture gave different bits")
    if not check_passed:
        raise FixtureError("gradient-check", "analytic and numeric gradients disagree beyond the tolerance")
    if moved != {"query": True, "key": False, "value": False}:
        raise FixtureError("independence", f"changing W_Q moved {sorted(r for r, m in moved.items() if m)}")
    if not all(init.values()):
        raise FixtureError("initialization", f"the seeded build failed a property: {init}")
    if len(set(names)) != len(names):
        raise FixtureError("names", "two weights share a parameter name")


def _derived(
    c: Constants,
    primary: dict[str, np.ndarray],
    check: GradCheckResult,
    changed_query: np.ndarray,
    batch: Qkv,
    init: dict[str, bool],
    refusals: dict[str, bool],
    replays: bool,
) -> dict[str, Any]:
    """The values the page shows that are not trace fields, from full precision."""
    x = primary["input"]
    value_only = primary_fixture(c, upstream_roles=("value",))
    same_keys = c.layer(key=np.array(c.query_weight))(tensor(x))
    probe = shapes_fixture(c, c.probe_shape)
    d_model, d_head = c.large_widths
    large = seeded(SplitMix64(c.seed), d_model, d_head, c.names())
    derived: dict[str, Any] = {
        **{
            f"DERIVED.route.{role}": _floats(c.upstream(role, (1, 2, 2)) @ primary[f"{role}_weight"].T)
            for role in ROLES
        },
        "DERIVED.sequence-shape": x.shape[1:],
        "DERIVED.view-shape": primary["query"].shape[1:],
        "DERIVED.first-token": _floats(x[0, 0]),
        "DERIVED.second-token": _floats(x[0, 1]),
        "DERIVED.changed-entry": c.changed_entry,
        "DERIVED.changed-value": c.changed_value,
        "DERIVED.changed-query": _floats(changed_query),
        "DERIVED.batch-input-shape": tuple(batch.query.shape[:-1]) + (x.shape[-1],),
        "DERIVED.batch-output-shape": batch.query.shape,
        "DERIVED.probe-input-shape": c.probe_shape,
        "DERIVED.probe-output-shape": probe.query.shape,
        "DERIVED.empty-tokens-input-shape": c.empty_tokens_report,
        "DERIVED.rank-two-shape": c.rank_two_input,
        "DERIVED.wide-shape": c.wide_input,
        **{f"DERIVED.model-mismatch.{r}": s for r, s in zip(ROLES, c.mismatched_model_widths, strict=True)},
        **{f"DERIVED.head-mismatch.{r}": s for r, s in zip(ROLES, c.mismatched_head_widths, strict=True)},
        "DERIVED.loss": float(primary["loss"]),
        "DERIVED.seed": c.seed,
        "DERIVED.gradcheck-step": c.gradcheck_step,
        "DERIVED.gradcheck-count": len(check.checks),
        "MEASURED.gradcheck-max-error": max(scaled_error(k.analytic, k.numeric) for k in check.checks),
        "DERIVED.value-only-input-gradient": _floats(value_only["input_gradient"]),
        "DERIVED.same-keys-equal-queries": _same_bits(same_keys.key.data, same_keys.query.data),
        "DERIVED.large-widths": c.large_widths,
        "DERIVED.large-count": sum(w.data.size for w in large.parameters()),
        "REPORT.initialization.transactional": init["transactional"],
        "REPORT.initialization.independent": init["independent"],
        "REPORT.initialization.reproducible": init["reproducible"],
        "REPORT.errors.head_mismatch": refusals["head-mismatch"],
        "REPORT.errors.duplicate_name": refusals["duplicate-name"],
        "REPORT.same_fixture_replays_bitwise": replays,
    }
    return derived


def _floats(values: Any) -> tuple[float, ...]:
    return tuple(float(v) for v in np.ravel(values))
