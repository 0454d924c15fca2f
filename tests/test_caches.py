"""The Graphviz and compiled-template caches: nothing unchecked is stored, nothing damaged is used.

Each entry is stored with its SHA-256 when written and checked when read; a
damaged entry is recomputed with one warning naming it, a cache that cannot
be written is a warning, and a ``dot`` that exits 0 with something that is not
SVG fails the diagram without caching it. (The fixture cache has its tests in
``test_pipeline.py``.)
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import jinja2
import pytest

from site_builder.facts import FactBook
from site_builder.files import checksummed
from site_builder.project import EDGE_ROLES, NODE_ROLES
from site_builder.render import templating
from site_builder.render.diagrams import DiagramError, DiagramRenderer, dot_environment
from site_builder.render.templating import page_environment

DOT = 'digraph t {\n{{ defaults }}\nn [{{ node("step") }}, label="value\\n{{ value("n", "K", "short") }}"];\n}\n'
ROLES = {"node_roles": NODE_ROLES, "edge_roles": EDGE_ROLES}


def draw(renderer: DiagramRenderer, value: float = 1.5):
    env = dot_environment(jinja2.DictLoader({"t.dot.j2": DOT}))
    return renderer.render(
        env, "t.dot.j2", FactBook({"K": value}), {}, diagram_id="t", title="T", description_html="d", **ROLES
    )


class Heard(list):
    def __call__(self, line: str) -> None:
        self.append(line)


def entry(cache: Path) -> Path:
    (found,) = [p for p in cache.iterdir() if p.suffix == ".svg"]
    return found


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:300]), id="truncated"),
        pytest.param(lambda p: p.write_bytes(b"\x00garbage\xff"), id="garbage"),
        pytest.param(
            lambda p: p.write_bytes(checksummed(b"<svg><text>not a graph</text></svg>")), id="whole-but-not-a-drawing"
        ),
        pytest.param(lambda p: p.write_bytes(checksummed(b"\xff\xfe")), id="whole-but-not-utf8"),
        pytest.param(lambda p: (p.unlink(), p.mkdir()), id="a-folder"),
    ],
)
def test_a_damaged_diagram_entry_is_drawn_again_with_one_warning(tmp_path, damage):
    first = draw(DiagramRenderer(tmp_path))
    damage(entry(tmp_path))
    heard = Heard()
    again = DiagramRenderer(tmp_path, heard)
    drawn = draw(again)
    assert drawn.svg == first.svg and not drawn.cached
    assert len(heard) == 1 and entry(tmp_path).name in heard[0] and "damaged cache entry" in heard[0], heard
    assert "\n" not in heard[0]
    assert draw(DiagramRenderer(tmp_path, heard)).cached and len(heard) == 1, "the entry was replaced by a good one"


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
            draw(DiagramRenderer(cache))
    message = str(info.value)
    assert "`dot` gave output that is not" in message and "nothing was cached" in message and "\n" not in message
    assert not cache.exists() or not any(cache.iterdir())
    drawn = draw(DiagramRenderer(cache))  # the real dot, under the same key
    assert not drawn.cached and 'data-trace="K"' in drawn.svg


def test_a_diagram_cache_that_cannot_be_written_is_a_warning_and_the_drawing_is_made(tmp_path):
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    heard = Heard()
    drawn = draw(DiagramRenderer(blocked, heard))
    assert 'data-trace="K"' in drawn.svg
    assert len(heard) == 1 and "cannot write the diagram cache" in heard[0] and "built without it" in heard[0]


def test_entries_no_diagram_used_are_pruned(tmp_path):
    draw(DiagramRenderer(tmp_path), 1.5)
    old = entry(tmp_path)
    renderer = DiagramRenderer(tmp_path)
    draw(renderer, 2.5)
    assert len(list(tmp_path.iterdir())) == 2
    renderer.prune()
    assert [p.name for p in tmp_path.iterdir()] == [entry(tmp_path).name] and not old.exists()


def compiled_entries(compiled: Path) -> list[Path]:
    return sorted(compiled.rglob("*.cache"))


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:100]), id="truncated"),
        pytest.param(lambda p: p.write_bytes(b"\x00garbage\xff" * 10), id="garbage"),
        pytest.param(lambda p: p.write_bytes(checksummed(b"j2\x00not marshalled code")), id="whole-but-not-code"),
        pytest.param(lambda p: (p.unlink(), p.mkdir()), id="a-folder"),
    ],
)
def test_a_damaged_compiled_template_is_compiled_again_with_one_warning(tmp_path, damage):
    templates, compiled = tmp_path / "templates", tmp_path / "compiled"
    templates.mkdir()
    (templates / "t.md.j2").write_text("{{ word }} one\n", encoding="utf-8")
    assert page_environment(templates, compiled).get_template("t.md.j2").render(word="a") == "a one\n"
    (cached,) = compiled_entries(compiled)
    damage(cached)
    templating._COMPILED.clear()  # as in the next build's process: only the entry on disk is left
    heard = Heard()
    assert page_environment(templates, compiled, heard).get_template("t.md.j2").render(word="a") == "a one\n"
    assert len(heard) == 1 and cached.name in heard[0] and "damaged cache entry" in heard[0], heard
    templating._COMPILED.clear()
    quiet = Heard()
    assert page_environment(templates, compiled, quiet).get_template("t.md.j2").render(word="b") == "b one\n"
    assert quiet == [], "the entry was replaced by a good one"


def test_environments_of_one_process_share_compiled_code_and_a_changed_source_is_compiled_again(tmp_path):
    templates, compiled = tmp_path / "templates", tmp_path / "compiled"
    templates.mkdir()
    (templates / "t.md.j2").write_text("{{ word }} one\n", encoding="utf-8")
    assert page_environment(templates, compiled).get_template("t.md.j2").render(word="a") == "a one\n"
    shutil.rmtree(compiled)  # the second environment finds the code in memory, not on disk
    assert page_environment(templates, compiled).get_template("t.md.j2").render(word="a") == "a one\n"
    (templates / "t.md.j2").write_text("{{ word }} two\n", encoding="utf-8")
    assert page_environment(templates, compiled).get_template("t.md.j2").render(word="a") == "a two\n"


def test_a_compiled_template_cache_that_cannot_be_written_is_a_warning(tmp_path):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "t.md.j2").write_text("{{ word }}\n", encoding="utf-8")
    blocked = tmp_path / "compiled"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    heard = Heard()
    assert page_environment(templates, blocked, heard).get_template("t.md.j2").render(word="x") == "x\n"
    assert len(heard) == 1 and "cannot create the compiled-template cache" in heard[0]
