"""Chapter 24 fixtures: run the residual merge on known values and record what happened.

Every fixture runs on our own autograd engine in float64. The trace is filled
with the values as computed; the build writes it (refusing NaN and
infinities). Each property of the ``PROOF`` record is verified here before the
record is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from site_builder.autograd import GradCheckResult, check_gradients, parameter, tensor
from site_builder.nn import Linear, ResidualShapeError, residual_add
from site_builder.run import FixtureError, Run

from .exercises import cancelling_branch, depth_below, stack_multipliers
from .report import render_report
from .trace import (
    Backward,
    Config,
    Forward,
    GradCheck,
    Parameter,
    Proof,
    ShapeErrorCase,
    StackGradient,
    StackRow,
    Trace,
    ZeroBranch,
)


@dataclass(frozen=True)
class Constants:
    """The chapter's inputs (spec: chapter 24, Fixtures)."""

    fixture_name: str = "known-residual-linear"
    input: tuple[float, ...] = (2.0, -1.0)
    branch_weight: tuple[float, ...] = (0.5, -1.0, 2.0, 0.25)
    branch_name: str = "residual.branch.weight"
    probe_name: str = "residual.branch_probe.weight"
    zero_name: str = "residual.zero.weight"
    stack_weight: tuple[float, ...] = (-0.25, 0.0, 0.0, -0.25)
    stack_layers: int = 4
    upstream: tuple[float, ...] = (1.0, 1.0)
    gradcheck_step: float = 1e-6
    gradcheck_tolerance: float = 2e-6
    gradcheck_inputs: int = 2
    gradcheck_weights: int = 4
    gradcheck_seed: int = 24
    shape_error_identity: tuple[int, ...] = (2, 2)
    shape_error_branch: tuple[int, ...] = (2,)
    exercise_scale: float = 0.5  # the branch factor c of the second exercise
    exercise_threshold_exponent: int = -6  # the third exercise asks for a share below 10 to this power

    def __post_init__(self) -> None:
        for name in ("input", "branch_weight", "stack_weight", "upstream"):
            values = np.array(getattr(self, name), dtype=np.float64)
            if not np.all(np.isfinite(values)):
                bad = "NaN" if np.any(np.isnan(values)) else "an infinity"
                raise FixtureError("constants", f"{name} holds {bad}; every input of the chapter is a finite number")

    def weight(self, flat: tuple[float, ...]) -> np.ndarray:
        n = len(self.input)
        return np.array(flat, dtype=np.float64).reshape(n, len(flat) // n)


# region: primary-fixture
def primary_fixture(c: Constants) -> dict[str, np.ndarray]:
    """y = residual_add(x, linear(x)); backward seeded with ȳ, keeping the graph."""
    x = parameter(c.input, name="input")
    linear = Linear(c.weight(c.branch_weight), name=c.branch_name)
    branch = linear(x)
    y = residual_add(x, branch)
    y.backward_with_seed(np.array(c.upstream), retain_graph=True)

    # The branch contribution alone, on a separate probe graph with the same weights.
    x_probe = parameter(c.input, name="input")
    probe = Linear(c.weight(c.branch_weight), name=c.probe_name)
    probe(x_probe).backward_with_seed(np.array(c.upstream))

    return {
        "input": x.data,
        "branch": branch.data,
        "output": y.data,
        "upstream": np.array(c.upstream),
        "identity_gradient": np.array(c.upstream),  # the identity edge passes ȳ unchanged
        "branch_gradient": x_probe.gradient,
        "input_gradient": x.gradient,
        "weight_gradient": linear.weight.gradient,
        "weight_shape": np.array(linear.weight.shape),
        "parameters": np.array([p.name for p in y.leaves() if p is not x]),
    }


# endregion: primary-fixture


# region: zero-branch-fixture
def zero_branch_fixture(c: Constants) -> dict[str, np.ndarray]:
    """A zero-weight branch: F(x) = 0 for every x, yet its weight still gets a gradient."""
    x = parameter(c.input, name="input")
    zero = Linear(np.zeros_like(c.weight(c.branch_weight)), name=c.zero_name)
    y = residual_add(x, zero(x))
    y.backward_with_seed(np.array(c.upstream))
    weight_gradient = zero.weight.gradient
    return {
        "output": y.data,
        "input_gradient": x.gradient,
        "weight_gradient": weight_gradient,
        "weight_gradient_nonzero": np.array(
            bool(np.all(np.isfinite(weight_gradient)) and np.any(weight_gradient != 0.0))
        ),
    }


# endregion: zero-branch-fixture


def same_tensor_fixture(c: Constants) -> np.ndarray:
    """residual_add(x, x): two distinct edges into one leaf, so reverse mode adds ȳ twice."""
    x = parameter(c.input, name="input")
    residual_add(x, x).backward_with_seed(np.array(c.upstream))
    assert x.grad is not None
    return x.grad


def shape_error_fixture(c: Constants) -> ShapeErrorCase:
    identity = tensor(np.ones(c.shape_error_identity))
    branch = tensor(np.ones(c.shape_error_branch))
    try:
        broadcastable = (identity + branch).shape == c.shape_error_identity
    except ValueError:
        broadcastable = False
    try:
        residual_add(identity, branch)
        rejected = False
    except ResidualShapeError as err:
        rejected = err.identity == c.shape_error_identity and err.branch == c.shape_error_branch
    return ShapeErrorCase(c.shape_error_identity, c.shape_error_branch, broadcastable, rejected)


# region: stack-fixture
def stack_fixture(c: Constants, *, residual: bool) -> dict[str, object]:
    """Four square branches; plain: h = F(h), residual: h = h + F(h)."""
    kind = "residual" if residual else "plain"
    x = parameter(c.input, name="input")
    layers = [Linear(c.weight(c.stack_weight), name=f"{kind}.stack.{n}.branch.weight") for n in range(c.stack_layers)]
    h = x
    values = [h.data]
    for layer in layers:
        h = residual_add(h, layer(h)) if residual else layer(h)
        values.append(h.data)
    h.backward_with_seed(np.array(c.upstream))
    return {
        "values": values,
        "input_gradient": x.grad,
        "names": [layer.name for layer in layers],
        "parameter_gradients": [layer.weight.grad for layer in layers],
    }


# endregion: stack-fixture


def _stack_parts(stack: dict[str, object]) -> tuple[list[np.ndarray], np.ndarray, list[str]]:
    """A stack_fixture result as the types it builds: the values at every depth, the input's gradient and the
    branch weights' names, after checking that the input and every weight received a finite, nonzero gradient."""
    names = cast("list[str]", stack["names"])
    for name, grad in zip(names, cast("list[np.ndarray | None]", stack["parameter_gradients"])):
        if grad is None or not np.all(np.isfinite(grad)) or not np.any(grad != 0.0):
            raise FixtureError("stack", f"parameter {name} received no finite, nonzero gradient")
    input_gradient = cast("np.ndarray | None", stack["input_gradient"])
    if input_gradient is None:
        raise FixtureError("stack", "the input received no gradient")
    return cast("list[np.ndarray]", stack["values"]), input_gradient, names


# region: gradient-check-fixture
def objective(values: dict[str, np.ndarray]) -> float:
    """Σ (x + xW)ᵢ² in plain NumPy: the independent side of the check."""
    x, w = values["x"], values["w"]
    return float(np.sum((x + x @ w) ** 2))


def gradient_check_fixture(c: Constants) -> GradCheckResult:
    x = parameter(c.input, name="input")
    linear = Linear(c.weight(c.branch_weight), name=c.branch_name)
    residual_add(x, linear(x)).square().sum().backward()
    rng = np.random.default_rng(c.gradcheck_seed)
    w_shape = linear.weight.shape
    samples = {
        "x": [tuple(np.unravel_index(i, x.shape)) for i in sorted(rng.permutation(x.data.size)[: c.gradcheck_inputs])],
        "w": [
            tuple(np.unravel_index(i, w_shape))
            for i in sorted(rng.permutation(linear.weight.data.size)[: c.gradcheck_weights])
        ],
    }
    return check_gradients(
        objective,
        {"x": x.data, "w": linear.weight.data},
        {"x": x.gradient, "w": linear.weight.gradient},
        samples,
        step=c.gradcheck_step,
        tolerance=c.gradcheck_tolerance,
    )


# endregion: gradient-check-fixture


def _bits_equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    for key in a:
        left, right = np.asarray(a[key]), np.asarray(b[key])
        if left.dtype == np.float64:
            if left.shape != right.shape or not np.array_equal(left.view(np.uint64), right.view(np.uint64)):
                return False
        elif not np.array_equal(left, right):
            return False
    return True


def run(c: Constants = Constants()) -> Run:
    """Run every fixture, verify the chapter's properties, and fill the trace."""
    primary = primary_fixture(c)
    replays = _bits_equal(primary, primary_fixture(c))
    zero = zero_branch_fixture(c)
    shape_case = shape_error_fixture(c)
    values_plain, gradient_plain, _ = _stack_parts(stack_fixture(c, residual=False))
    values_resid, gradient_resid, names_resid = _stack_parts(stack_fixture(c, residual=True))
    check = gradient_check_fixture(c)
    proof = _verify_properties(c, primary, zero, shape_case, check.passed)
    same = same_tensor_fixture(c)
    if not np.array_equal(same, np.array(c.upstream) + np.array(c.upstream)):
        raise FixtureError("same-tensor", f"x + x gave the leaf {same.tolist()}, not twice the upstream gradient")

    weight_shape = tuple(int(d) for d in primary["weight_shape"])
    trace = Trace(
        config=Config(c.fixture_name, tuple(np.shape(c.input)), c.branch_name),
        forward=Forward(input=primary["input"], branch=primary["branch"], output=primary["output"]),
        backward=Backward(
            upstream=primary["upstream"],
            identity=primary["identity_gradient"],
            branch=primary["branch_gradient"],
            input=primary["input_gradient"],
        ),
        parameter=Parameter(c.branch_name, weight_shape, primary["weight_gradient"]),
        zero_branch=ZeroBranch(
            output=zero["output"],
            input_gradient=zero["input_gradient"],
            weight_gradient=zero["weight_gradient"],
            weight_gradient_nonzero=bool(zero["weight_gradient_nonzero"]),
        ),
        shape_error=shape_case,
        stack=tuple(StackRow(depth, pv, rv) for depth, (pv, rv) in enumerate(zip(values_plain, values_resid))),
        stack_gradient=StackGradient(plain=gradient_plain, residual=gradient_resid, parameters=tuple(names_resid)),
        gradcheck=GradCheck(
            input_checks=check.count("x"),
            weight_checks=check.count("w"),
            tolerance=c.gradcheck_tolerance,
            passed=check.passed,
        ),
        proof=proof,
    )
    branch_weight = c.weight(c.branch_weight)
    # Per layer, the plain stack multiplies by the branch's factor, the residual stack by one plus it.
    plain_m = float(values_plain[1][0] / values_plain[0][0])
    resid_m = float(values_resid[1][0] / values_resid[0][0])
    depth = c.stack_layers
    derived = {
        "REPORT.branch_parameter.values": branch_weight.reshape(-1),
        "REPORT.branch_parameter.shape": branch_weight.shape,
        "REPORT.same_fixture_replays_bitwise": replays,
        "DERIVED.plain-multiplier": plain_m,
        "DERIVED.residual-multiplier": resid_m,
        "DERIVED.identity-multiplier": resid_m - plain_m,
        "DERIVED.depth": depth,
        "DERIVED.plain-retention-exact": plain_m**depth,
        "DERIVED.residual-retention-exact": resid_m**depth,
        "DERIVED.zero-branch-output": zero["output"] - primary["input"],  # what the zero branch added to x
        "MEASURED.same-tensor-gradient": same,
        "DERIVED.gradcheck-step": c.gradcheck_step,
        "DERIVED.input-size": len(c.input),
        "DERIVED.weight-size": branch_weight.size,
        **exercises(c),
    }
    return Run(trace, derived, render_report(trace, branch_weight, replays))


def exercises(c: Constants) -> dict[str, object]:
    """The exercises' answers, each run on the engine."""
    cancel = cancelling_branch(c.input, c.upstream)
    plain, residual = stack_multipliers(c.input, c.exercise_scale, c.stack_layers)
    if (plain, residual) != (c.exercise_scale**c.stack_layers, (1.0 + c.exercise_scale) ** c.stack_layers):
        raise FixtureError("exercise-scale", f"the engine gave {plain} and {residual}, not c^L and (1 + c)^L")
    threshold = 10.0**c.exercise_threshold_exponent
    depth = depth_below(c.input, c.stack_weight[0], threshold)
    deep_plain, deep_residual = stack_multipliers(c.input, c.stack_weight[0], depth)
    return {
        "MEASURED.exercise-cancel.weight": cancel["weight"].reshape(-1),
        "MEASURED.exercise-cancel.output": cancel["output"],
        "MEASURED.exercise-cancel.input-gradient": cancel["input_gradient"],
        "MEASURED.exercise-cancel.weight-gradient": cancel["weight_gradient"].reshape(-1),
        "DERIVED.exercise-scale.c": c.exercise_scale,
        "DERIVED.exercise-scale.one-plus-c": 1.0 + c.exercise_scale,
        "MEASURED.exercise-scale.plain": plain,
        "MEASURED.exercise-scale.residual": residual,
        "DERIVED.exercise-depth.threshold": threshold,
        "MEASURED.exercise-depth.depth": depth,
        "MEASURED.exercise-depth.plain": deep_plain,
        "MEASURED.exercise-depth.residual": deep_residual,
        "MEASURED.exercise-depth.previous-plain": stack_multipliers(c.input, c.stack_weight[0], depth - 1)[0],
    }


def _verify_properties(
    c: Constants,
    primary: dict[str, np.ndarray],
    zero: dict[str, np.ndarray],
    shape_case: ShapeErrorCase,
    gradcheck_passed: bool,
) -> Proof:
    """Check each PROOF property on the fixtures' own results; any failure stops the build."""
    x, upstream = np.array(c.input), np.array(c.upstream)
    if not (np.array_equal(zero["output"], x) and np.array_equal(zero["input_gradient"], upstream)):
        raise FixtureError("zero-branch", "identity=exact failed: a zero branch did not return x and ȳ exactly")
    if not np.array_equal(primary["input_gradient"], primary["identity_gradient"] + primary["branch_gradient"]):
        raise FixtureError("primary", "gradient=added failed: x̄ is not ȳ + J_F(x)ᵀȳ")
    if list(primary["parameters"]) != [c.branch_name]:
        raise FixtureError(
            "primary", f"parameters=branch-owned failed: graph parameters are {list(primary['parameters'])}"
        )
    if not (shape_case.broadcastable and shape_case.rejected):
        raise FixtureError("shape-error", "broadcast=forbidden failed: residual_add accepted a broadcastable pair")
    if not gradcheck_passed:
        raise FixtureError("gradient-check", "analytic and numeric gradients disagree beyond the tolerance")
    return Proof()
