"""The chapter's exercises, each answered by running it on the autograd engine (the page shows these results)."""

from __future__ import annotations

import numpy as np

from site_builder.autograd import parameter
from site_builder.nn import Linear, residual_add


# region: exercise-cancel
def cancelling_branch(x0: tuple[float, ...], upstream: tuple[float, ...]) -> dict[str, np.ndarray]:
    """W = -I: the branch returns -x, so y = x + F(x) = 0 and the two routes of x̄ cancel."""
    n = len(x0)
    x = parameter(x0, name="input")
    branch = Linear(-np.eye(n), name="exercise.cancel.weight")
    y = residual_add(x, branch(x))
    y.backward_with_seed(np.array(upstream))
    assert x.grad is not None and branch.weight.grad is not None
    return {
        "weight": branch.weight.data,
        "output": y.data,
        "input_gradient": x.grad,
        "weight_gradient": branch.weight.grad,
    }


# endregion: exercise-cancel


# region: exercise-scale
def stack_multipliers(x0: tuple[float, ...], scale: float, depth: int) -> tuple[float, float]:
    """Each branch is F(h) = h (cI): what share of an upstream gradient of ones reaches the input, plain and residual."""
    shares = []
    for residual in (False, True):
        x = parameter(x0, name="input")
        h = x
        for n in range(depth):
            layer = Linear(scale * np.eye(len(x0)), name=f"exercise.stack.{n}.weight")
            h = residual_add(h, layer(h)) if residual else layer(h)
        h.backward_with_seed(np.ones(len(x0)))
        assert x.grad is not None
        shares.append(float(x.grad[0]))
    return shares[0], shares[1]


# endregion: exercise-scale


# region: exercise-depth
def depth_below(x0: tuple[float, ...], scale: float, threshold: float, deepest: int = 200) -> int:
    """The smallest depth at which the plain stack passes less than ``threshold`` of the gradient to its input."""
    for depth in range(1, deepest + 1):
        plain, _ = stack_multipliers(x0, scale, depth)
        if abs(plain) < threshold:
            return depth
    raise ValueError(f"the plain stack keeps at least {threshold} of the gradient up to depth {deepest}")


# endregion: exercise-depth
