"""Trace format ``$version``: what this page's fixtures measured, one record per line."""

from __future__ import annotations

from site_builder.trace import Vector, record, trace_format


@record("LAYER")
class Layer:
    input: Vector  # x
    weight: Vector  # W, row-major
    output: Vector  # y = xW
    input_gradient: Vector  # x̄ = ȳWᵀ for an upstream gradient of ones


@trace_format("$version")
class Trace:
    layer: Layer
