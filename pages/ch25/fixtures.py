"""Chapter 25 fixtures: RMSNorm on known values, forward and backward, and the comparisons the page draws.

Every fixture runs on our own autograd engine in float64. The trace is filled
with the values as computed; the build writes it (refusing NaN and
infinities). Each property the trace states as verified (the gradient check,
the bitwise replay, the gain's exclusion from weight decay, each rejected
input) is checked here first, and a failure stops the build.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from site_builder.autograd import GradCheckResult, check_gradients, parameter, tensor
from site_builder.nn import Adam, layer_norm, rms_norm
from site_builder.run import FixtureError, Run

from .layer import LOG_SCALE, RMSNorm, RMSNormError, batch_norm
from .report import render_report
from .trace import Backward, Batch, Error, History, Meta, Next, Primary, Proof, Scale, Trace, Zero

PRIMARY_FIELDS = ("input", "mean_square", "inverse_rms", "normalized", "gain", "output")
HISTORY_FIELDS = ("batch_anchor_a", "batch_anchor_b", "layer_norm", "rms_norm", "rms_mean")


@dataclass(frozen=True)
class Constants:
    """The chapter's inputs (spec: chapter 25, Fixtures)."""

    epsilon: float = 1e-5
    ideal_epsilon: float = 0.0
    input: tuple[float, ...] = (3.0, 4.0)
    gain: tuple[float, ...] = (1.5, 0.5)
    gain_name: str = "decoder.block.0.attention_norm.gain"
    upstream: tuple[float, ...] = (1.0, -2.0)
    factor: float = 10.0
    tiny: tuple[float, ...] = (3e-4, 4e-4)
    zero: tuple[float, ...] = (0.0, 0.0)
    batch: tuple[float, ...] = (3.0, 4.0, 0.0, 5.0)
    batch_shape: tuple[int, ...] = (2, 2)
    anchor: tuple[float, ...] = (1.0, 3.0)
    companion: tuple[float, ...] = (5.0, 7.0)
    rank_zero_input: float = 1.0
    wide_input: tuple[float, ...] = (1.0, 2.0, 3.0)
    gradcheck_step: float = 1e-6
    gradcheck_tolerance: float = 2e-6
    learning_rate: float = 1e-3  # one AdamW step, to see whether weight decay touches the gain
    weight_decay: float = 0.1

    def __post_init__(self) -> None:
        for name in ("input", "gain", "upstream", "tiny", "batch", "anchor", "companion"):
            values = np.array(getattr(self, name), dtype=np.float64)
            if not np.all(np.isfinite(values)):
                bad = "NaN" if np.any(np.isnan(values)) else "an infinity"
                why = f"{name} holds {bad}; every input of the chapter is a finite number"
                raise FixtureError("constants", why)

    def layer(self, *, epsilon: float | None = None, ones: bool = False) -> RMSNorm:
        """The chapter's layer: its gain (or a gain of ones) under its name, with ε (or another ε)."""
        gain = np.ones(len(self.gain)) if ones else self.gain
        eps = self.epsilon if epsilon is None else epsilon
        return RMSNorm(gain, name=self.gain_name, epsilon=eps)


# region: primary-fixture
def primary_fixture(c: Constants) -> dict[str, np.ndarray]:
    """y = RMSNorm(x) with every intermediate, then backward from the upstream gradient."""
    layer = c.layer()
    x = parameter(c.input, name="input")
    forward = layer.forward(x)
    forward.output.backward_with_seed(np.array(c.upstream))
    x_hat = forward.normalized.data
    return {
        "input": x.data,
        "mean_square": forward.mean_square.data,
        "inverse_rms": forward.inverse_rms.data,
        "normalized": x_hat,
        "gain": layer.gain.data,
        "output": forward.output.data,
        "upstream": np.array(c.upstream),
        "input_gradient": x.gradient,
        "gain_gradient": layer.gain.gradient,
        "normalized_mean_square": np.array((x_hat * x_hat).mean()),
    }


# endregion: primary-fixture


# region: scale-fixture
def scale_fixture(c: Constants, values: tuple[float, ...], epsilon: float) -> dict:
    """x̂ of a row and of the row times the factor (gain of ones), and how far apart."""
    layer = c.layer(epsilon=epsilon, ones=True)
    base = layer.forward(tensor(values)).normalized.data
    scaled = layer.forward(tensor(np.array(values) * c.factor)).normalized.data
    diff = float(np.max(np.abs(base - scaled)))
    return {"epsilon": epsilon, "base": base, "scaled": scaled, "max_abs_diff": diff}


# endregion: scale-fixture


# region: history-fixture
def history_fixture(c: Constants) -> dict[str, Any]:
    """One anchor row, three normalizations: BatchNorm sees a batch, the others the row."""
    anchor = tensor(c.anchor)
    with_companion = batch_norm(tensor([c.anchor, c.companion]), c.epsilon).data[0]
    with_itself = batch_norm(tensor([c.anchor, c.anchor]), c.epsilon).data[0]
    width = len(c.anchor)
    layer = layer_norm(anchor, np.ones(width), np.zeros(width), c.epsilon).data
    rms = c.layer(epsilon=c.ideal_epsilon, ones=True).forward(anchor).normalized.data
    return {
        "batch_anchor_a": with_companion,
        "batch_anchor_b": with_itself,
        "layer_norm": layer,
        "rms_norm": rms,
        "rms_mean": float(rms.mean()),
        "layer_norm_mean": float(layer.mean()),
    }


# endregion: history-fixture


def error_fixture(c: Constants) -> dict[str, str]:
    """The three inputs the layer must refuse, each with the message it refuses it with."""
    cases = {
        "rank-zero": (c.layer(), tensor(c.rank_zero_input)),
        "width-mismatch": (c.layer(), tensor(c.wide_input)),
        "zero-energy-epsilon-zero": (c.layer(epsilon=c.ideal_epsilon, ones=True), tensor(c.zero)),
    }
    messages = {}
    for case, (layer, x) in cases.items():
        try:
            layer(x)
        except RMSNormError as err:
            messages[case] = str(err)
        else:
            raise FixtureError("errors", f"the layer accepted the {case} input it must refuse")
    return messages


# region: gradient-check-fixture
def objective(c: Constants, values: dict[str, np.ndarray]) -> float:
    """Σ RMSNorm(x)ᵢ ȳᵢ in plain NumPy, with a square root: the check's independent side."""
    x, g = values["x"], values["g"]
    return float(np.sum(x / np.sqrt(np.mean(x * x) + c.epsilon) * g * np.array(c.upstream)))


def gradient_check_fixture(c: Constants, primary: dict) -> tuple[GradCheckResult, bool]:
    """Engine gradients against central differences at every input and gain coordinate.

    A coordinate passes when |analytic − numeric| / max(1, |analytic|, |numeric|) is within
    the tolerance.
    """
    check = check_gradients(
        lambda values: objective(c, values),
        {"x": primary["input"], "g": primary["gain"]},
        {"x": primary["input_gradient"], "g": primary["gain_gradient"]},
        {"x": [(i,) for i in range(len(c.input))], "g": [(i,) for i in range(len(c.gain))]},
        step=c.gradcheck_step,
        tolerance=c.gradcheck_tolerance,
    )
    errors = [scaled_error(k.analytic, k.numeric) for k in check.checks]
    passed = bool(errors) and all(e <= c.gradcheck_tolerance for e in errors)
    return check, passed


def scaled_error(analytic: float, numeric: float) -> float:
    return abs(analytic - numeric) / max(1.0, abs(analytic), abs(numeric))


# endregion: gradient-check-fixture


# region: no-decay-fixture
def no_decay_fixture(c: Constants, exclude: bool) -> np.ndarray:
    """The gain after one AdamW step with a zero gradient: only weight decay can move it."""
    gain = c.layer().gain
    excluded = {c.gain_name} if exclude else set()
    optimizer = Adam(
        {c.gain_name: gain},
        lr=c.learning_rate,
        weight_decay=c.weight_decay,
        no_decay=excluded,
    )
    gain.grad = np.zeros_like(gain.data)
    optimizer.step()
    return gain.data


# endregion: no-decay-fixture


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def run(c: Constants = Constants()) -> Run:
    """Run every fixture, verify the chapter's properties, and fill the trace."""
    primary = primary_fixture(c)
    replays = all(_same_bits(v, primary_fixture(c)[k]) for k, v in primary.items())
    scales = {
        "ideal": scale_fixture(c, c.input, c.ideal_epsilon),
        "production": scale_fixture(c, c.input, c.epsilon),
        "near-zero": scale_fixture(c, c.tiny, c.epsilon),
    }
    zero = c.layer(ones=True)(tensor(c.zero)).data
    batch_input = np.array(c.batch).reshape(c.batch_shape)
    batch = c.layer()(tensor(batch_input)).data
    history = history_fixture(c)
    errors = error_fixture(c)
    check, check_passed = gradient_check_fixture(c, primary)
    kept, decayed = no_decay_fixture(c, exclude=True), no_decay_fixture(c, exclude=False)
    no_decay = _same_bits(kept, np.array(c.gain)) and not np.array_equal(decayed, np.array(c.gain))

    _verify(c, primary, batch_input, batch, zero, replays, check_passed, no_decay)
    trace = Trace(
        meta=Meta(c.epsilon, len(c.gain), c.gain_name, no_decay),
        primary=Primary(**{k: primary[k] for k in PRIMARY_FIELDS}),
        backward=Backward(primary["upstream"], primary["input_gradient"], primary["gain_gradient"]),
        scale=tuple(
            Scale(mode, s["epsilon"], c.factor, s["base"], s["scaled"], s["max_abs_diff"]) for mode, s in scales.items()
        ),
        zero=Zero(np.array(c.zero), zero, bool(np.all(np.isfinite(zero)))),
        batch=Batch(batch.shape, batch),
        history=History(**{k: history[k] for k in HISTORY_FIELDS}),
        error=tuple(Error(case, True, message) for case, message in errors.items()),
        proof=Proof(
            normalized_mean_square=float(primary["normalized_mean_square"]),
            input_checks=check.count("x"),
            gain_checks=check.count("g"),
            tolerance=c.gradcheck_tolerance,
            gradcheck=check_passed,
        ),
        next=Next(),
    )
    shapes = {k: primary[k].shape for k in (*PRIMARY_FIELDS, "upstream")}
    derived = _derived(c, primary, scales, history, check, shapes, kept, decayed, replays)
    return Run(trace, derived, render_report(trace, shapes, replays))


def _verify(
    c: Constants,
    primary: dict[str, np.ndarray],
    batch_input: np.ndarray,
    batch: np.ndarray,
    zero: np.ndarray,
    replays: bool,
    check_passed: bool,
    no_decay: bool,
) -> None:
    """Check each property the trace states; any failure stops the build."""
    engine = rms_norm(tensor(c.input), np.array(c.gain), c.epsilon).data
    if not _same_bits(engine, primary["output"]):
        raise FixtureError("primary", "the chapter's layer and the engine's rms_norm disagree in the last bits")
    for row, values in enumerate(batch_input):
        if not _same_bits(batch[row], c.layer()(tensor(values)).data):
            raise FixtureError("batch", f"row {row} of the batch is not normalized on its own")
    if not np.all(np.isfinite(zero)):
        raise FixtureError("zero", "an all-zero row gave a value that is not finite")
    if not replays:
        raise FixtureError("primary", "a second run of the same fixture gave different bits")
    if not check_passed:
        raise FixtureError("gradient-check", "analytic and numeric gradients disagree beyond the tolerance")
    r, x_hat = primary["inverse_rms"], primary["normalized"]
    weighted = primary["gain"] * primary["upstream"]
    closed = r * (weighted - x_hat * np.mean(x_hat * weighted))
    if not np.allclose(closed, primary["input_gradient"], rtol=0.0, atol=1e-12):
        raise FixtureError("primary", "the engine's input gradient is not r (g ⊙ ȳ − x̂ · mean(x̂ ⊙ g ⊙ ȳ))")
    if not no_decay:
        why = f"weight decay moved {c.gain_name}, or decay without the exclusion did not"
        raise FixtureError("no-decay", why)


def _derived(
    c: Constants,
    primary: dict[str, np.ndarray],
    scales: dict[str, dict[str, Any]],
    history: dict[str, Any],
    check: GradCheckResult,
    shapes: dict[str, tuple[int, ...]],
    kept: np.ndarray,
    decayed: np.ndarray,
    replays: bool,
) -> dict[str, Any]:
    """The values the page shows that are not trace fields, from full precision."""
    x, x_hat, g, up = primary["input"], primary["normalized"], primary["gain"], primary["upstream"]
    r = float(primary["inverse_rms"][0])
    ms = float(primary["mean_square"][0])
    weighted = g * up  # g ⊙ ȳ, what the output gradient asks of x̂
    projection = float(np.mean(x_hat * weighted))  # mean(x̂ ⊙ g ⊙ ȳ)
    tiny_ms = float(np.mean(np.square(c.tiny)))
    ideal_diff = scales["ideal"]["max_abs_diff"]
    biggest = float(np.max(np.abs(scales["ideal"]["base"])))
    anchor = np.array(c.anchor)
    batch = np.array(c.batch).reshape(c.batch_shape)
    derived: dict[str, Any] = {
        **{f"REPORT.{name}.shape": shape for name, shape in shapes.items()},
        "DERIVED.squares": _floats(x * x),
        "DERIVED.rms": math.sqrt(ms),
        "DERIVED.log-scale": LOG_SCALE,
        "DERIVED.scaled-input": _floats(x * c.factor),
        "DERIVED.tiny": _floats(c.tiny),
        "DERIVED.tiny-scaled": _floats(np.array(c.tiny) * c.factor),
        "DERIVED.tiny-mean-square": tiny_ms,
        "DERIVED.tiny-scaled-mean-square": float(np.mean(np.square(np.array(c.tiny) * c.factor))),
        "DERIVED.epsilon-over-tiny": c.epsilon / tiny_ms,
        "DERIVED.epsilon-over-input": c.epsilon / ms,
        "DERIVED.ideal-is-one-ulp": bool(ideal_diff == np.spacing(biggest)),
        "DERIVED.batch-input": _floats(c.batch),
        "DERIVED.batch-mean-squares": _floats(np.mean(np.square(batch), axis=-1)),
        "DERIVED.wide-input": _floats(c.wide_input),
        "DERIVED.anchor": _floats(anchor),
        "DERIVED.companion": _floats(c.companion),
        "DERIVED.anchor-mean": float(anchor.mean()),
        "DERIVED.anchor-mean-square": float(np.mean(anchor * anchor)),
        "DERIVED.layer-norm-mean": history["layer_norm_mean"],
        "DERIVED.rms-ratio": float(history["rms_norm"][1] / history["rms_norm"][0]),
        "DERIVED.gain-times-upstream": _floats(weighted),
        "DERIVED.projection": projection,
        "DERIVED.input-gradient-closed-form": _floats(r * (weighted - x_hat * projection)),
        "DERIVED.input-dot-gradient": float(np.dot(x, primary["input_gradient"])),
        "DERIVED.gradcheck-step": c.gradcheck_step,
        "MEASURED.gradcheck-max-error": max(scaled_error(k.analytic, k.numeric) for k in check.checks),
        "MEASURED.gain-after-step": _floats(kept),
        "MEASURED.gain-after-decayed-step": _floats(decayed),
        "DERIVED.learning-rate": c.learning_rate,
        "DERIVED.weight-decay": c.weight_decay,
        "REPORT.same_fixture_replays_bitwise": replays,
    }
    for mode, scale in scales.items():
        derived[f"DERIVED.max-abs-diff.{mode}"] = scale["max_abs_diff"]
    return derived


def _floats(values: Any) -> tuple[float, ...]:
    return tuple(float(v) for v in np.ravel(values))
