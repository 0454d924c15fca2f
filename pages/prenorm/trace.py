"""Trace format ``prenorm-v2``: pre-norm against post-norm residual stacks, at initialization and trained.

Every value that depends on the seeds is a measured result (``Measured``): the median over the seeds, the
smallest and the largest seed, and the uncertainties of the seeds and of the float path, written with only the
digits they leave standing. PROFILE lines hold, for one block of one depth, the norm of the gradient that reaches
that block's two weight matrices in each layout at initialization; START lines the gradient reaching the stack's
input and how the profile changes from the first block to the last. SWEEP lines hold every trained arm's loss at
every learning rate tried; CURVE lines each arm's loss at its chosen rate at each recorded step; VERSUS and ARM
lines the comparisons the page's sentences are chosen by, each
true only where the difference exceeds the uncertainties.
"""

from __future__ import annotations

from typing import Annotated

from site_builder.trace import Bool, Int, Measured, Real, Sci, choice, lines, record, trace_format
from site_builder.training_trace import TaskRecord

LAYOUTS = ("pre", "post")
ARMS = ("pre-norm", "post-norm", "post-norm-warm-up")  # the trained arms: post-norm twice, without and with a warm-up
PROFILE_DEPTHS = (6, 24, 96)
TRAIN_DEPTH = 8
RATES = (1e-3, 3e-3, 1e-2)
SEEDS = tuple(range(1, 9))  # the seeds trained, each with its one-ulp twin
PROFILE_SEEDS = tuple(range(1, 17))  # the seeds measured at initialization, each with its twin too
STEPS = 80
WARMUP = 20  # post-warmup's rate grows linearly over this many steps
BUDGETS = (40, 80)  # the step budgets a result is reported at; the last is STEPS
EVERY = 10
RECORDED = tuple(range(0, STEPS + 1, EVERY))
PAIRS = (("post-norm", "pre-norm"), ("post-norm-warm-up", "pre-norm"), ("post-norm-warm-up", "post-norm"))

Arm = Annotated[str, choice(*ARMS)]


@record("SETUP")
class Setup:
    width: Int
    eps: Sci  # added to each normalization's variance
    parameters: Int  # weights and biases of one trained model, the same in every arm
    depth: Int  # the blocks of every trained stack
    steps: Int
    budget: Int  # the first step budget a result is also reported at
    every: Int
    warmup: Int  # post-warmup: update s uses the rate times min(1, (s + 1) / warmup)
    seeds: Int  # trained, each once as drawn and once with one initial weight nudged by one ulp
    profile_seeds: Int  # measured at initialization, each with its twin too
    rates: Int  # the learning rates of the sweep, every arm at every rate
    fit_bar: Real  # a stack fits the points when its loss is below this beyond its uncertainty: a tenth of ln 2


@record("PROFILE", index=("depth", "block"))
class Profile:
    depth: Int
    block: Int  # 1 = the block next to the input
    pre: Measured  # sqrt(|dL/dW1|^2 + |dL/dW2|^2) at initialization, over the profile seeds
    post: Measured


@record("START", index="depth")
class Start:
    """At initialization, over the profile seeds: each a per-seed quantity's median and spread."""

    depth: Int
    input_pre: Measured  # norm of dL/d(stack input)
    input_post: Measured
    input_ratio: Measured  # pre-norm's input gradient over post-norm's, seed by seed
    pre_growth: Measured  # the last block's gradient over the first block's, seed by seed
    post_growth: Measured
    input_differs: Bool  # input_ratio differs from one beyond its uncertainty (its median says which way)
    pre_tilted: Bool  # pre_growth differs from one beyond its uncertainty: the profile tilts
    post_tilted: Bool


@record("SWEEP", index=("arm", "rate"))
class Sweep:
    arm: Arm
    rate: Sci  # Adam's peak learning rate, default betas and eps
    loss: Measured  # after the last step
    chosen: Bool  # the rate whose median final loss is lowest for this arm
    worse: Bool  # this rate's loss is higher than the chosen rate's beyond both uncertainties


@record("CURVE", index="step")
class Curve:
    """Every arm's training loss at its chosen rate at one recorded step, one field per arm (named as the arm)."""

    step: Int
    pre_norm: Measured
    post_norm: Measured
    post_norm_warm_up: Measured


@record("VERSUS", index=("arm", "other", "budget"))
class Versus:
    """One arm's loss against another's at their chosen rates, after a step budget."""

    arm: Arm
    other: Arm
    budget: Int
    differs: Bool  # the two losses differ beyond both uncertainties (the medians say which way)


@record("ARM", index="arm")
class ArmLine:
    arm: Arm
    rate: Sci  # the chosen rate
    fit_early: Bool  # the loss after the first budget is below the fit bar beyond its uncertainty
    fit: Bool  # the same after the last step
    falling: Bool  # the loss after the last step is lower than after the first budget, beyond both uncertainties


@trace_format("prenorm-v2")
class Trace:
    task: TaskRecord
    setup: Setup
    profiles: tuple[Profile, ...] = lines({"depth": d, "block": b} for d in PROFILE_DEPTHS for b in range(1, d + 1))
    starts: tuple[Start, ...] = lines(depth=PROFILE_DEPTHS)
    sweeps: tuple[Sweep, ...] = lines({"arm": a, "rate": r} for a in ARMS for r in RATES)
    curves: tuple[Curve, ...] = lines(step=RECORDED)
    versus: tuple[Versus, ...] = lines({"arm": a, "other": o, "budget": b} for a, o in PAIRS for b in BUDGETS)
    arms: tuple[ArmLine, ...] = lines(arm=ARMS)
