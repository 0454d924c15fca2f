"""The page's fixtures: a bias-free linear layer on a known input, forward and backward, on our autograd engine."""

from __future__ import annotations

import numpy as np

from site_builder.autograd import parameter
from site_builder.nn import Linear
from site_builder.run import Run

from .trace import Layer, Trace

INPUT = (1.0, 2.0)
WEIGHT = ((0.5, -1.0), (1.5, 0.25))  # [in, out]


# region: layer
def run() -> Run:
    x = parameter(INPUT, name="input")
    layer = Linear(np.array(WEIGHT), name="layer.weight")
    y = layer(x)
    y.backward_with_seed(np.ones(y.shape))
    if x.grad is None:
        raise RuntimeError("backward did not reach the input")
    trace = Trace(layer=Layer(input=x.data, weight=layer.weight.data, output=y.data, input_gradient=x.grad))
    # A value the page shows that is not a trace field, computed at full precision.
    derived = {"DERIVED.output-sum": float(y.data.sum())}
    return Run(trace, derived)


# endregion: layer
