"""Every built page audited by axe-core, and its article by IBM's Equal Access engine, in Debian's Chromium.

axe-core comes from the npm package pinned in ``package.json`` (``make test``
installs it into ``node_modules/``); it is injected into each page from that
file, so the audit needs no network. Each page of the built site (every
``index.html`` under it, and ``404.html``) is audited in the light and the
dark palette, at desktop and phone width, with every ``<details>`` opened (so
that what they hold is audited too; opening one changes nothing else on the
page); the search overlay is audited open, showing results. IBM's engine
(``accessibility-checker-engine``, pinned the same way) audits each page's
article in the same settings. A failure lists each violation's rule, element
and page.

The audit itself is in ``axe_audit.py``: the session runs it in the background, on a thread with a Chromium of its
own, from the moment the site is built, and the tests that read it (``site_audit``) run last (see ``conftest.py``).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from axe_audit import (
    ACE,
    ACE_VERSION,
    AXE,
    AXE_VERSION,
    ROOT,
    SCHEMES,
    WIDTHS,
    SiteAudit,
    audit,
    finish_ace,
    settle,
    site_pages,
    start_ace,
    visit,
)


@pytest.mark.slow  # needs node_modules/, which only `make test` installs
def test_axe_core_is_installed_at_the_pinned_version():
    assert AXE.is_file(), f"{AXE.relative_to(ROOT)} is missing: run `make test` (it installs the npm packages)"
    installed = json.loads((AXE.parent / "package.json").read_text(encoding="utf-8"))["version"]
    assert installed == AXE_VERSION
    pinned = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["devDependencies"]["axe-core"]
    assert pinned == AXE_VERSION, "package.json pins axe-core exactly, to the version this audit names"


@pytest.mark.slow  # needs node_modules/, which only `make test` installs
def test_the_ibm_engine_is_installed_at_the_pinned_version():
    assert ACE.is_file(), f"{ACE.relative_to(ROOT)} is missing: run `make test` (it installs the npm packages)"
    installed = json.loads((ACE.parent / "package.json").read_text(encoding="utf-8"))["version"]
    assert installed == ACE_VERSION
    pinned = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["devDependencies"]
    assert pinned["accessibility-checker-engine"] == ACE_VERSION, "package.json pins it exactly"


def test_every_page_is_found(built_site):
    pages = site_pages(built_site)
    assert "" in pages and "404.html" in pages
    assert len(pages) == len(list(built_site.rglob("*.html")))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_axe_violation_on_any_page(site_audit: SiteAudit, built_site, scheme, width):
    found = site_audit.settings[scheme, width]
    assert len(found.schemes) == len(site_pages(built_site)), "every page was audited"
    assert found.schemes == [SCHEMES[scheme]] * len(found.schemes)
    assert found.versions == {AXE_VERSION}
    assert all(found.contrast_ran), "the audit ran the WCAG AA rules"
    assert found.opened_any, "some page has <details> to open"
    violations = found.violations
    assert not violations, f"{len(violations)} axe-core violations:\n" + "\n".join(map(str, violations))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_axe_violation_with_search_results_open(site_audit: SiteAudit, scheme, width):
    found = site_audit.settings[scheme, width]
    assert found.search_shown
    assert not found.search, f"{len(found.search)} axe-core violations:\n" + "\n".join(map(str, found.search))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_ibm_engine_violation_in_any_pages_article(site_audit: SiteAudit, built_site, scheme, width):
    found = site_audit.settings[scheme, width]
    assert found.ace_pages == len(site_pages(built_site)), "every page was audited"
    assert not found.ace, f"{len(found.ace)} IBM engine violations:\n" + "\n".join(map(str, found.ace))


def test_the_ibm_engine_names_rule_and_element_of_a_violation(browser, server):
    with visit(browser, "light", "desktop") as page:
        page.goto(server, wait_until="load")
        settle(page)
        page.evaluate(
            """() => { const d = document.createElement("div");
                       d.id = "stop"; d.tabIndex = 0; d.textContent = "a tab stop that is no control";
                       document.querySelector(".md-content article").append(d); }"""
        )
        start_ace(page)
        found = finish_ace(page, "light, injected", "")
    stop = [v for v in found if 'id="stop"' in v.html]
    assert [v.rule for v in stop] == ["element_tabbable_role_valid/fail_no_valid_role"], found
    assert str(stop[0]).startswith("/ (light, injected): element_tabbable_role_valid/fail_no_valid_role [violation]")


def test_the_audit_names_rule_element_and_page_of_a_violation(browser, server):
    with visit(browser, "light", "desktop") as page:
        page.goto(server, wait_until="load")
        settle(page)
        page.evaluate(
            """() => { const p = document.createElement("p");
                       p.id = "faint"; p.textContent = "faint text"; p.style.color = "#ccc";
                       document.querySelector(".md-content article").append(p); }"""
        )
        found, _ = audit(page, "light, injected", "")
    faint = [v for v in found if v.target == "#faint"]
    assert [v.rule for v in faint] == ["color-contrast"]
    assert str(faint[0]).startswith('/ (light, injected): color-contrast [serious] at #faint: <p id="faint"')


@pytest.mark.slow  # needs node_modules/, which only `make test` installs
def test_make_test_without_npm_stops_with_one_sentence(tmp_path):
    make = shutil.which("make")
    assert make, "make runs the set-up"
    done = subprocess.run(
        [make, "-B", "--no-print-directory", "node_modules/.installed"],
        cwd=ROOT,
        env={"PATH": str(tmp_path)},  # an empty folder: no npm on the path
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if not line.startswith("make:")]
    assert len(said) == 1 and "'npm' was not found" in said[0] and "apt-get install npm" in said[0]
    assert AXE.is_file(), "stopping early leaves the installed packages alone"


def test_make_site_needs_no_npm():
    plan = subprocess.run(["make", "-n", "-B", "site"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "mkdocs build --strict" in plan
    assert "npm" not in plan


# How far a table sticks out past the right edge of the focusable region that holds it.


def test_wide_tables_scroll_fully_into_view_with_the_keyboard_at_phone_width(site_audit: SiteAudit):
    assert site_audit.stuck == [], "\n".join(site_audit.stuck)
    assert site_audit.wide, "some table is wider than a phone, so this test scrolls one"
