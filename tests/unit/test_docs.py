"""The README and docs/ stay a guide and a manual that match the code: every variable the settings
read has its row in docs/configuration.md, and every link between the pages lands somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from runtime.settings import PROJECT_ROOT
from tests.deploy.conftest import variables_read

DOCS = PROJECT_ROOT / "docs"
PAGES = [PROJECT_ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+)$", re.M)


def _table_names(text: str) -> set[str]:
    """Variable names in the first cell of a table row (`NAME` or `NAME`, `OTHER`)."""
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {_anchor(heading) for heading in _HEADING.findall(text)}


def test_every_variable_the_settings_read_has_a_row_in_the_configuration_page() -> None:
    table = _table_names((DOCS / "configuration.md").read_text(encoding="utf-8"))
    example = (PROJECT_ROOT / ".env.example").read_text(encoding="utf-8")
    listed = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, re.M))

    assert sorted(variables_read() - table) == []
    assert sorted(listed - table) == []


def test_every_link_between_the_pages_resolves() -> None:
    broken = []
    for page in PAGES:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http(s) and mailto: not ours to check offline
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def test_the_readme_is_a_guide_and_names_every_page_of_the_manual() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    index = (DOCS / "README.md").read_text(encoding="utf-8")

    assert len(readme.splitlines()) <= 250
    for page in DOCS.glob("*.md"):
        assert f"docs/{page.name}" in readme, page.name
        assert page.name == "README.md" or f"({page.name})" in index, page.name
