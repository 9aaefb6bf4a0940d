"""The documentation site covers the public API and every page is in the navigation."""

import re
from pathlib import Path

import jaxfriction as jf

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_every_public_name_has_an_api_entry():
    text = "\n".join(p.read_text() for p in (DOCS / "api").glob("*.md"))
    rendered = set(re.findall(r"^::: jaxfriction\.(\w+)", text, flags=re.M))
    tabled = set(re.findall(r"^\| `(\w+)` \|", text, flags=re.M))
    missing = sorted(set(jf.__all__) - rendered - tabled)
    assert not missing, f"public names without an API entry in docs/api/: {missing}"
    assert not (rendered | tabled) - set(jf.__all__) - {"testing"}, "API entries for names that are not public"


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "gallery" not in p.parts}
    missing = sorted(p for p in pages if p not in nav)
    assert not missing, f"pages missing from mkdocs.yml nav: {missing}"
    gallery = sorted((ROOT / "examples" / "gallery").glob("plot_*.py"))
    assert len(gallery) >= 10 and all('"""' in g.read_text().split("\n")[0] for g in gallery)


def test_lazy_names_are_visible_to_the_api_docs():
    # the API docs (griffe) read names statically: every lazily loaded name must also be
    # imported under `if TYPE_CHECKING:` in jaxfriction/__init__.py, from the module _LAZY names
    import ast

    tree = ast.parse((ROOT / "jaxfriction" / "__init__.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    static = {a.name: "." + n.module for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert static == jf._LAZY
