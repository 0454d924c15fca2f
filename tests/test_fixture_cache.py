"""The plugin's fixture cache: fresh pages run together once, cached pages are reused, results are equal."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_builder.chapters import PAGES
from site_builder.render.fixtures import DEFAULT_PAGES, FixtureRunError, run_fixtures

ROOT = Path(__file__).resolve().parent.parent


def test_cold_then_warm_then_one_page_stale(tmp_path):
    pages = PAGES[:3]
    cold = run_fixtures(pages, DEFAULT_PAGES, tmp_path, ROOT)
    assert [r.cached for r in cold] == [False, False, False]
    assert [r.result.trace_text for r in cold] == [p.golden_trace.read_text(encoding="utf-8") for p in pages]

    warm = run_fixtures(pages, DEFAULT_PAGES, tmp_path, ROOT)
    assert [r.cached for r in warm] == [True, True, True]
    assert [r.result.trace_text for r in warm] == [r.result.trace_text for r in cold]

    (entry,) = tmp_path.glob(f"{pages[1].slug}-*.pickle")
    entry.write_bytes(b"not a pickle")
    mixed = run_fixtures(pages, DEFAULT_PAGES, tmp_path, ROOT)
    assert [r.cached for r in mixed] == [True, False, True]
    assert dict(mixed[1].result.facts) == dict(cold[1].result.facts)


def test_an_unknown_page_fails_with_its_name(tmp_path):
    ghost = PAGES[0].__class__(**{**PAGES[0].__dict__, "slug": "ghost"})
    with pytest.raises(FixtureRunError, match="ghost"):
        run_fixtures([ghost], DEFAULT_PAGES, tmp_path, ROOT)
