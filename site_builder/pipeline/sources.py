"""The source files a page's fixtures depend on, found by following their imports.

The fixture cache is keyed by these files' bytes. Starting from the page's
``fixtures.py``, every ``import`` of our own code (the ``site_builder``
package, the page's own package) is followed, package ``__init__`` files
included; third-party modules are covered by their versions in the key. A
page's data files (anything in its folder that is not Python, a template, its
``page.toml`` or a golden file) are part of it too. Nothing has to be listed
by hand, so a new page or a new engine module is tracked the day it appears.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # site_builder/
RENDER_SIDE = {"*.j2", "page.toml", "figures.py"}  # read by the build after the fixtures ran


def _module_file(base: Path, parts: tuple[str, ...]) -> Path | None:
    target = base.joinpath(*parts)
    if (target / "__init__.py").is_file():
        return target / "__init__.py"
    if target.with_suffix(".py").is_file():
        return target.with_suffix(".py")
    if target.is_dir():
        return target  # a namespace package (a page folder without __init__.py)
    return None


class Roots:
    """Where an absolute module name of our own code lives: ``site_builder...`` or ``pages...``."""

    def __init__(self, pages_dir: Path):
        self.bases = {"site_builder": PACKAGE_DIR.parent, "pages": Path(pages_dir).resolve().parent}
        self.pages_name = Path(pages_dir).resolve().name
        self._resolved: dict[str, list[Path]] = {}

    def resolve(self, name: str) -> list[Path]:
        """The files executed when ``name`` is imported: each package ``__init__`` on the way, then the module."""
        if name not in self._resolved:
            self._resolved[name] = self._resolve(name)
        return self._resolved[name]

    def _resolve(self, name: str) -> list[Path]:
        parts = name.split(".")
        top = parts[0]
        if top not in self.bases:
            return []
        base = self.bases[top]
        if top == "pages":
            parts = [self.pages_name, *parts[1:]]
        files: list[Path] = []
        for i in range(1, len(parts) + 1):
            found = _module_file(base, tuple(parts[:i]))
            if found is None:
                return files
            if found.is_file():
                files.append(found)
        return files

    def module_name(self, file: Path) -> str | None:
        for top, base in self.bases.items():
            try:
                rel = file.relative_to(base)
            except ValueError:
                continue
            parts = list(rel.with_suffix("").parts)
            if top == "pages":
                if not parts or parts[0] != self.pages_name:
                    continue
                parts[0] = "pages"
            elif parts[0] != "site_builder":
                continue
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts)
        return None


@lru_cache(maxsize=1024)
def _imports(file: Path, mtime_ns: int, size: int, module: str, is_package: bool) -> tuple[str, ...]:
    """Absolute names of the modules ``file`` imports (and, for ``from X import y``, X.y when y is a module)."""
    tree = ast.parse(file.read_bytes(), filename=str(file))
    package = module if is_package else module.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return tuple(names)


def fixture_sources(page_folder: Path, pages_dir: Path, roots: "Roots | None" = None) -> list[Path]:
    """Every file whose bytes decide what the page's fixtures produce, sorted.

    Pass one ``roots`` (``Roots(pages_dir)``) to share module lookups across the pages of one build.
    """
    roots = roots or Roots(pages_dir)
    start = page_folder / "fixtures.py"
    seen: set[Path] = set()
    todo = [start] if start.is_file() else []
    while todo:
        file = todo.pop()
        if file in seen:
            continue
        seen.add(file)
        module = roots.module_name(file)
        if module is None:
            continue
        stat = file.stat()
        try:
            names = _imports(file, stat.st_mtime_ns, stat.st_size, module, file.name == "__init__.py")
        except (SyntaxError, ValueError):
            continue  # the file's bytes are in the key; running the fixtures names the error with its line
        for name in names:
            todo += [f for f in roots.resolve(name) if f not in seen]
    data = [
        p
        for p in page_folder.rglob("*")
        if p.is_file()
        and p.suffix not in (".py", ".pyc")
        and "__pycache__" not in p.parts
        and "golden" not in p.relative_to(page_folder).parts
        and not any(p.match(pattern) for pattern in RENDER_SIDE)
    ]
    return sorted(seen | set(data))
