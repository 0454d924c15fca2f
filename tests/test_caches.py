"""The one cache store, and the diagram and compiled-template kinds: nothing unchecked is stored, nothing damaged
is used, nothing unused is kept.

Each entry is stored with its SHA-256 when written and checked when read; a
damaged entry is recomputed with one warning naming it, a cache that cannot
be written is one warning, and a ``dot`` that exits 0 with something that is
not SVG fails the diagram without caching it. (The fixture and rendered-page
kinds have their tests in ``test_pipeline.py`` and ``test_render_cache.py``.)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import jinja2
import pytest

from site_builder.cache import Store, checksummed, entry_body, name
from site_builder.facts import FactBook
from site_builder.project import EDGE_ROLES, NODE_ROLES
from site_builder.render import templating
from site_builder.render.diagrams import DiagramError, DiagramRenderer, dot_environment
from site_builder.render.templating import page_environment

DOT = 'digraph t {\n{{ defaults }}\nn [{{ node("step") }}, label="value\\n{{ value("n", "K", "short") }}"];\n}\n'
ROLES = {"node_roles": NODE_ROLES, "edge_roles": EDGE_ROLES}


class Heard(list):
    def __call__(self, line: str) -> None:
        self.append(line)


def store(folder: Path, heard: Heard | None = None) -> Store:
    return Store(folder, heard if heard is not None else Heard())


def test_an_entry_is_its_body_after_a_line_with_the_bodys_sha256():
    assert checksummed(b"body") == b"230d8358dc8e8890b4c58deeb62912ee2f20357ae92a5cc861b98e68fe31acb5\nbody"
    assert entry_body(checksummed(b"two\nlines")) == b"two\nlines"
    assert entry_body(checksummed(b"body")[:-1]) is None
    assert entry_body(b"body") is None


def test_an_entry_name_hashes_its_parts_each_ended_so_none_runs_into_the_next():
    assert name("ab", "c") != name("a", "bc") and name("ab", "c") == name(b"ab", b"c")
    assert len(name("x")) == 64


def test_an_entry_written_is_read_back_and_one_never_written_is_none(tmp_path):
    s = store(tmp_path)
    s.put("kind", "e1", b"body")
    assert s.get("kind", "e1", "redo") == b"body" and s.get("kind", "e2", "redo") is None
    s.put_json("kind", "e3", {"b": [1, 2], "a": None})
    assert s.get_json("kind", "e3", "redo") == {"a": None, "b": [1, 2]}
    assert (tmp_path / "kind" / "e3").read_bytes() == checksummed(b'{"a": null, "b": [1, 2]}')


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda p: p.write_bytes(p.read_bytes()[:-2]), "its content does not match its checksum"),
        (lambda p: p.write_bytes(b"\x00garbage\xff"), "its content does not match its checksum"),
        (lambda p: (p.unlink(), p.mkdir()), "it is a folder, not a file"),
        (lambda p: p.write_bytes(checksummed(b"{not json")), "it does not hold JSON (JSONDecodeError)"),
    ],
    ids=["cut", "garbage", "a-folder", "whole-but-not-json"],
)
def test_a_damaged_entry_is_one_warning_naming_it_and_is_removed(tmp_path, damage, why):
    store(tmp_path).put_json("kind", "e", [1])
    damage(tmp_path / "kind" / "e")
    heard = Heard()
    assert store(tmp_path, heard).get_json("kind", "e", "computing it again") is None
    assert heard == [f"{tmp_path}/kind/e: damaged cache entry ({why}); computing it again"]
    assert not (tmp_path / "kind" / "e").exists()


def test_a_store_that_cannot_be_written_says_so_once_per_kind_and_cause(tmp_path):
    (tmp_path / "kind").write_text("a file where the folder should be", encoding="utf-8")
    heard = Heard()
    s = store(tmp_path, heard)
    for entry in ("e1", "e2", "e3"):
        s.put("kind", entry, b"body")
    assert len(heard) == 1 and "cannot write the kind cache" in heard[0] and "built without it" in heard[0], heard
    assert s.get("kind", "e1", "redo") is None


def test_prune_removes_what_the_build_neither_read_wrote_nor_kept_in_the_kinds_it_used(tmp_path):
    first = store(tmp_path)
    for entry in ("read", "written", "kept", "unused"):
        first.put("kind", entry, b"x")
    first.put("other", "untouched", b"x")
    second = store(tmp_path)
    second.get("kind", "read", "redo")
    second.put("kind", "written", b"y")
    second.keep("kind", ["kept"])
    second.prune()
    assert sorted(os.listdir(tmp_path / "kind")) == ["kept", "read", "written"]
    assert os.listdir(tmp_path / "other") == ["untouched"], "a kind this build did not use is left alone"


def draw(renderer: DiagramRenderer, value: float = 1.5):
    env = dot_environment(jinja2.DictLoader({"t.dot.j2": DOT}))
    return renderer.render(
        env, "t.dot.j2", FactBook({"K": value}), {}, diagram_id="t", title="T", description_html="d", **ROLES
    )


def entry(cache: Path) -> Path:
    (found,) = list((cache / "diagrams").iterdir())
    return found


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:300]), id="truncated"),
        pytest.param(
            lambda p: p.write_bytes(checksummed(b"<svg><text>not a graph</text></svg>")), id="whole-but-not-a-drawing"
        ),
        pytest.param(lambda p: p.write_bytes(checksummed(b"\xff\xfe")), id="whole-but-not-utf8"),
    ],
)
def test_a_damaged_diagram_entry_is_drawn_again_with_one_warning(tmp_path, damage):
    first = draw(DiagramRenderer(store(tmp_path)))
    damage(entry(tmp_path))
    heard = Heard()
    drawn = draw(DiagramRenderer(store(tmp_path, heard)))
    assert drawn.svg == first.svg and not drawn.cached
    assert len(heard) == 1 and entry(tmp_path).name in heard[0] and "damaged cache entry" in heard[0], heard
    assert "\n" not in heard[0]
    assert draw(DiagramRenderer(store(tmp_path, heard))).cached and len(heard) == 1, "replaced by a good entry"


def fake_dot(folder: Path, output: bytes) -> Path:
    """A ``dot`` that reads its input, prints ``output`` and exits 0 (``-V`` answers like the real one)."""
    folder.mkdir()
    (folder / "out").write_bytes(output)
    script = folder / "dot"
    real = os.popen("dot -V 2>&1").read().strip()
    script.write_text(
        f"#!/bin/sh\nif [ \"$1\" = -V ]; then echo '{real}' >&2; exit 0; fi\ncat >/dev/null\n"
        f"cat '{folder / 'out'}'\nexit 0\n",
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


@pytest.mark.parametrize(
    "output", [b"<svg><g>", b"garbage", b"<html/>", b"\xff\xfe<svg/>"], ids=["cut", "garbage", "not-svg", "not-utf8"]
)
def test_a_dot_that_exits_0_with_no_drawing_fails_and_poisons_nothing(tmp_path, monkeypatch, output):
    cache = tmp_path / "cache"
    fake = fake_dot(tmp_path / "bin", output)
    with monkeypatch.context() as patch:
        patch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
        with pytest.raises(DiagramError) as info:
            draw(DiagramRenderer(store(cache)))
    message = str(info.value)
    assert "`dot` gave output that is not" in message and "nothing was cached" in message and "\n" not in message
    assert not cache.exists() or not any(cache.rglob("*"))
    drawn = draw(DiagramRenderer(store(cache)))  # the real dot, under the same key
    assert not drawn.cached and 'data-trace="K"' in drawn.svg


def compiled_entries(cache: Path) -> list[Path]:
    return sorted((cache / "templates").iterdir())


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:100]), id="truncated"),
        pytest.param(lambda p: p.write_bytes(checksummed(b"j2\x00not marshalled code")), id="whole-but-not-code"),
    ],
)
def test_a_damaged_compiled_template_is_compiled_again_with_one_warning(tmp_path, damage):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "t.md.j2").write_text("{{ word }} one\n", encoding="utf-8")
    assert page_environment(templates, store(cache)).get_template("t.md.j2").render(word="a") == "a one\n"
    (cached,) = compiled_entries(cache)
    damage(cached)
    templating._COMPILED.clear()  # as in the next build's process: only the entry on disk is left
    heard = Heard()
    assert page_environment(templates, store(cache, heard)).get_template("t.md.j2").render(word="a") == "a one\n"
    assert len(heard) == 1 and cached.name in heard[0] and "damaged cache entry" in heard[0], heard
    templating._COMPILED.clear()
    quiet = Heard()
    assert page_environment(templates, store(cache, quiet)).get_template("t.md.j2").render(word="b") == "b one\n"
    assert quiet == [], "the entry was replaced by a good one"


def test_environments_of_one_process_share_compiled_code_and_a_changed_source_is_compiled_again(tmp_path):
    templates, cache = tmp_path / "templates", tmp_path / "cache"
    templates.mkdir()
    (templates / "t.md.j2").write_text("{{ word }} one\n", encoding="utf-8")
    assert page_environment(templates, store(cache)).get_template("t.md.j2").render(word="a") == "a one\n"
    (entry_,) = compiled_entries(cache)
    entry_.unlink()  # the second environment finds the code in memory, not on disk, and keeps its entry alive
    again = store(cache)
    assert page_environment(templates, again).get_template("t.md.j2").render(word="a") == "a one\n"
    assert again.live == {"templates": {entry_.name}}
    (templates / "t.md.j2").write_text("{{ word }} two\n", encoding="utf-8")
    assert page_environment(templates, store(cache)).get_template("t.md.j2").render(word="a") == "a two\n"


def search_plugin():
    from material.plugins.search.plugin import SearchIndex, SearchPlugin

    plugin = SearchPlugin()
    plugin.load_config({})
    plugin.search_index = SearchIndex(**plugin.config)  # what the plugin's on_config makes for each build
    return plugin


def indexed(page, folder: Path, heard: Heard | None = None) -> list[dict]:
    """The entries a build's search index holds after indexing ``page``, with the store at ``folder``."""
    from site_builder.search import index_from_store

    plugin = search_plugin()
    index_from_store({"material/search": plugin}, store(folder, heard))
    plugin.search_index.add_entry_from_context(page)
    return plugin.search_index.entries


def a_page(content: str):
    from types import SimpleNamespace

    return SimpleNamespace(meta={}, url="a/", title="A page", toc=[], content=content)


def test_a_pages_search_entries_are_kept_and_taken_until_its_content_changes(tmp_path):
    page = a_page('<h1 id="a">A page</h1><p>Residual <b>streams</b> add.</p><h2 id="b">B</h2><p>Then this.</p>')
    plain = search_plugin()
    plain.search_index.add_entry_from_context(page)  # Material's own indexing, nothing cached
    first = indexed(page, tmp_path)
    assert first == plain.search_index.entries and "Then this." in first[1]["text"]
    (entry,) = (tmp_path / "search").iterdir()
    kept = entry_body(entry.read_bytes())
    assert kept is not None
    entry.write_bytes(checksummed(kept.replace(b"Then this.", b"Taken from the store.")))
    taken = indexed(page, tmp_path)
    assert "Taken from the store." in taken[1]["text"], "the same page is not parsed again"
    assert [list(e) for e in taken] == [list(e) for e in first], "in Material's key order, as the index writes them"
    edited = a_page(page.content.replace("Then this.", "Now that."))
    assert "Now that." in indexed(edited, tmp_path)[1]["text"], "a page whose content changed is indexed again"


def test_a_damaged_search_entry_is_one_warning_and_the_page_is_indexed_again(tmp_path):
    page = a_page('<h1 id="a">A page</h1><p>Text.</p>')
    first = indexed(page, tmp_path)
    (entry,) = (tmp_path / "search").iterdir()
    entry.write_bytes(checksummed(b'{"not": "a list"}'))
    heard = Heard()
    assert indexed(page, tmp_path, heard) == first
    assert len(heard) == 1 and "damaged cache entry (it does not hold search entries (ValueError))" in heard[0], heard
