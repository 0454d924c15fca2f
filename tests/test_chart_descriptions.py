"""Chart descriptions (read by screen readers) say only what the measured data supports."""

from __future__ import annotations

import dataclasses

from site_builder.chapters import claims, deep_stack, identity_init, path_expansion
from site_builder.chapters.claims.figures import _stream_description
from site_builder.chapters.deep_stack.figures import _gradient_summary
from site_builder.chapters.identity_init.figures import _deviation_description
from site_builder.chapters.path_expansion.figures import _single_path_summary


def test_deep_stack_summary_follows_the_norms():
    t = deep_stack.run().trace
    assert "stays at or above the upstream norm" in _gradient_summary(t)
    low = dataclasses.replace(t.depths[0], residual_norm=t.config.upstream_norm / 2)
    dipped = dataclasses.replace(t, depths=(low, *t.depths[1:]))
    assert "drops below the upstream norm" in _gradient_summary(dipped)
    rising = tuple(dataclasses.replace(r, plain_norm=float(r.depth)) for r in t.depths)
    assert "does not fall" in _gradient_summary(dataclasses.replace(t, depths=rising))


def test_identity_init_description_follows_the_deviations():
    t = identity_init.run().trace
    text = _deviation_description(t)
    assert "growing with depth" in text and "exactly zero at every depth" in text
    inexact = tuple(dataclasses.replace(r, zero_init_exact=False) for r in t.depths)
    assert "not zero at every depth" in _deviation_description(dataclasses.replace(t, depths=inexact))
    flat = tuple(dataclasses.replace(r, he_deviation=1.0) for r in t.depths)
    assert "not growing" in _deviation_description(dataclasses.replace(t, depths=flat))


def test_path_expansion_description_follows_the_mean_path_norms():
    t = path_expansion.run().trace
    assert "weaker with every extra branch" in _single_path_summary(t)
    same = tuple(dataclasses.replace(k, mean_path_norm=1.0) for k in t.lengths)
    assert "not always weaker" in _single_path_summary(dataclasses.replace(t, lengths=same))


def test_claims_stream_description_follows_the_fitted_laws():
    t = claims.run().trace
    text = _stream_description(t)
    assert "tanh branches rise along a square-root slope" in text
    assert "The linear branches do not follow the square-root law" in text
    flipped = tuple(dataclasses.replace(g, sqrt_law=not g.sqrt_law) for g in t.growth)
    text = _stream_description(dataclasses.replace(t, growth=flipped))
    assert "The linear branches rise along a square-root slope" in text
