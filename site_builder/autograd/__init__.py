"""Reverse-mode autograd on NumPy float64 tensors, and gradient checking."""

from .gradcheck import GradCheck, GradCheckResult, central_difference, check_gradients
from .tensor import (
    AutogradError,
    GraphReleasedError,
    ShapeError,
    Tensor,
    concat,
    parameter,
    shape_text,
    tensor,
    unbroadcast,
)

__all__ = [
    "AutogradError",
    "GradCheck",
    "GradCheckResult",
    "GraphReleasedError",
    "ShapeError",
    "Tensor",
    "central_difference",
    "check_gradients",
    "concat",
    "parameter",
    "shape_text",
    "tensor",
    "unbroadcast",
]
